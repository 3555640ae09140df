// The app shell: connects to the core, builds the rail, routes between the five screens
// (#chat, #runner, #servers, #inspector?view=ID, #settings) and owns global shortcuts.

import { api } from "./api.js";
import { h, clear, isTyping } from "./dom.js";
import { icon } from "./icons.js";
import { store } from "./store.js";
import { initTheme, reportSystemTheme } from "./theme.js";
import { initConsent } from "./consent.js";
import { viewHost } from "./views.js";
import chat from "./chat.js";
import runner from "./runner.js";
import servers from "./servers.js";
import inspector from "./inspector.js";
import settings from "./settings.js";

const SCREENS = [chat, runner, servers, inspector, settings];
let current = null;

function parseHash() {
  const raw = location.hash.replace(/^#/, "");
  const [name, query = ""] = raw.split("?");
  const screen = SCREENS.find((s) => s.id === name) || chat;
  return { screen, params: Object.fromEntries(new URLSearchParams(query)) };
}

/** Go to a screen; params become the hash query so deep links and Back work. */
export function navigate(id, params = {}) {
  const query = new URLSearchParams(params).toString();
  const hash = `#${id}${query ? `?${query}` : ""}`;
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  const { screen, params } = parseHash();
  if (current !== screen) {
    current?.hide?.();
    for (const s of SCREENS) {
      document.getElementById(`screen-${s.id}`).hidden = s !== screen;
      document.getElementById(`nav-${s.id}`).toggleAttribute("aria-current", s === screen);
      if (s === screen) document.getElementById(`nav-${s.id}`).setAttribute("aria-current", "page");
    }
    document.getElementById("screen-title").textContent = screen.title;
    clear(document.getElementById("topbar-actions")).append(...(screen.actions?.() || []));
    current = screen;
  }
  setSubtitle(screen.subtitle?.() || "");
  screen.show?.(params);
  document.title = `${screen.title} · Moka`;
}

export function setSubtitle(text) {
  document.getElementById("screen-sub").textContent = text;
}

function buildRail() {
  document.getElementById("brand").append(icon("logo", { size: 24 }));
  const spacer = document.querySelector(".rail-spacer");
  SCREENS.forEach((s, i) => {
    spacer.before(h("button", {
      type: "button", class: "nav-btn", id: `nav-${s.id}`, "data-testid": `nav-${s.id}`,
      title: `${s.title} (Ctrl+${i + 1})`, onclick: () => navigate(s.id),
    }, icon(s.icon, { size: 21 }), h("span", { text: s.label || s.title })));
  });
}

function watchConnection() {
  const conn = document.getElementById("conn");
  const banner = document.getElementById("conn-banner");
  const text = {
    connecting: "Connecting to Moka…",
    online: "Connected to Moka",
    reconnecting: "Lost the connection to Moka. Reconnecting…",
    offline: "Can't reach Moka. If you restarted it, open the new URL it printed (the old token no longer works).",
  };
  api.onStatus((status) => {
    conn.dataset.status = status;
    conn.setAttribute("aria-label", text[status]);
    conn.title = text[status];
    banner.hidden = status === "online" || status === "connecting";
    banner.classList.toggle("danger", status === "offline");
    banner.textContent = text[status];
  });
}

function shortcuts() {
  document.addEventListener("keydown", (e) => {
    const mod = e.ctrlKey || e.metaKey;
    if (mod && !e.shiftKey && !e.altKey && /^[1-5]$/.test(e.key)) {
      e.preventDefault();
      navigate(SCREENS[Number(e.key) - 1].id);
    } else if ((mod && e.key.toLowerCase() === "k") || (e.key === "/" && !mod && !isTyping(e.target))) {
      // Ctrl/Cmd+K (or "/") jumps to the current screen's search box.
      if (current?.focusSearch) {
        e.preventDefault();
        current.focusSearch();
      }
    }
  });
}

function fatal(err) {
  const section = document.getElementById("screen-chat");
  section.hidden = false;
  clear(section).append(h("div", { class: "screen-scroll" }, h("div", { class: "empty" },
    h("div", { class: "empty-icon" }, icon("alert", { size: 28 })),
    h("h3", { class: "empty-title", text: "Moka's core did not answer" }),
    h("p", { class: "empty-text", text: err?.message || String(err) }))));
}

async function boot() {
  initTheme();
  buildRail();
  watchConnection();
  shortcuts();
  initConsent();
  const ctx = { navigate, setSubtitle, views: viewHost };
  for (const s of SCREENS) s.init(document.getElementById(`screen-${s.id}`), ctx);
  window.addEventListener("hashchange", route);
  await api.connect();
  api.start();
  try {
    store.set("info", await api.call("app.info"));
    viewHost.configure(store.info);
    await Promise.all([store.refreshSettings(), reportSystemTheme(), store.refreshServers()]);
  } catch (err) {
    fatal(err);
    return;
  }
  route();
  // After a reconnect the core may have restarted pieces: fetch the shared state again.
  api.on("api.reconnected", () => {
    store.refreshSettings().catch(() => {});
    store.refreshServers().catch(() => {});
    reportSystemTheme();
  });
}

boot();
