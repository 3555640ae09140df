// The app shell: connects to the core, builds the rail, routes between the five screens
// (#chat, #runner, #servers, #inspector?view=ID, #settings); keys and menu commands are in shortcuts.js.
// Only Chat's and the Tool runner's code load with the page (the runner places the views that have
// no conversation); the other screens load once it has said hello (screens.js).

import { api } from "./api.js";
import { h, clear, debounce } from "./dom.js";
import { icon } from "./icons.js";
import { toastError } from "./ui.js";
import { store } from "./store.js";
import { initTheme, applyTheme } from "./theme.js";
import { initConsent } from "./consent.js";
import { initElicitation } from "./elicitation.js";
import { initProgress } from "./progress.js";
import { initResync } from "./resync.js";
import { initShortcuts, MOD } from "./shortcuts.js";
import { initNotifications } from "./notify.js";
import { initConfigEvents } from "./config-events.js";
import { initProblems } from "./app-problems.js";
import { viewHost } from "./views/host.js";
import chat from "./chat/screen.js";
import runner from "./runner.js";
import { SCREEN_LOADERS, SCREEN_ORDER } from "./screens.js";

const SCREENS = SCREEN_ORDER; // names and icons; a screen's code is in `loaded` once it is there
const loaded = new Map([
  ["chat", chat],
  ["runner", runner],
]);
const loading = new Map();
let ctx = null; // what every screen's init() gets (set in boot)
// A browser-mode pop-out window is this same page opened as /?token=…&view=<viewId>.
const POPOUT_VIEW = new URLSearchParams(location.search).get("view");
// `moka check` opens the pop-out page with check=1: the view inline, at the size a chat gives it.
const CHECK_PAGE = new URLSearchParams(location.search).has("check");
let current = null;

function parseHash() {
  const raw = location.hash.replace(/^#/, "");
  const [name, query = ""] = raw.split("?");
  const id = SCREENS.some((s) => s.id === name) ? name : "chat";
  return { id, params: Object.fromEntries(new URLSearchParams(query)) };
}

/** A screen's module, loaded and initialized once (a promise until it is). */
function loadScreen(id) {
  if (loaded.has(id)) return Promise.resolve(loaded.get(id));
  if (!loading.has(id)) {
    const done = SCREEN_LOADERS[id]().then((module) => {
      const screen = module.default;
      screen.init(document.getElementById(`screen-${id}`), ctx);
      loaded.set(id, screen);
      return screen;
    });
    // A failed load (the core went away) may be tried again by the next navigation.
    done.catch(() => loading.delete(id));
    loading.set(id, done);
  }
  return loading.get(id);
}

/** Go to a screen; params become the hash query so deep links and Back work. */
export function navigate(id, params = {}) {
  const query = new URLSearchParams(params).toString();
  const hash = `#${id}${query ? `?${query}` : ""}`;
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  const { id, params } = parseHash();
  const screen = loaded.get(id);
  if (!screen) {
    // Its code is still on the way: show it when it is here, unless the hash has moved on.
    loadScreen(id).then(
      () => parseHash().id === id && route(),
      (err) => {
        if (current) return toastError(err);
        fatal(err);
        const off = api.on("api.reconnected", () => {
          off();
          route();
        });
      },
    );
    return;
  }
  document.getElementById("boot")?.remove();
  document.getElementById("boot-fail")?.remove();
  if (current !== screen) {
    current?.hide?.();
    for (const s of SCREENS) {
      document.getElementById(`screen-${s.id}`).hidden = s.id !== screen.id;
      document.getElementById(`nav-${s.id}`).toggleAttribute("aria-current", s.id === screen.id);
      if (s.id === screen.id) document.getElementById(`nav-${s.id}`).setAttribute("aria-current", "page");
    }
    document.getElementById("screen-title").textContent = screen.title;
    clear(document.getElementById("topbar-actions")).append(...(screen.actions?.() || []));
    current = screen;
  }
  setSubtitle(screen.subtitle?.() || "");
  screen.show?.(params);
  updateTitle();
}

export function setSubtitle(text) {
  document.getElementById("screen-sub").textContent = text;
  updateTitle();
}

// "Roll three dice — Moka" in a conversation, "Servers — Moka" elsewhere; the desktop window
// takes the same title (a browser tab reads document.title itself).
let lastTitle = "";
function updateTitle() {
  if (!current) return;
  const sub = document.getElementById("screen-sub").textContent.trim();
  const title = `${current.id === "chat" && sub && sub !== "New conversation" ? sub : current.title} — Moka`;
  if (title === lastTitle) return;
  lastTitle = title;
  document.title = title;
  if (store.info?.mode === "desktop") api.call("window.setTitle", { title }).catch(() => {});
}

function buildRail() {
  document.getElementById("brand").append(icon("logo", { size: 24 }));
  const spacer = document.querySelector(".rail-spacer");
  SCREENS.forEach((s, i) => {
    spacer.before(
      h(
        "button",
        {
          type: "button",
          class: "nav-btn",
          id: `nav-${s.id}`,
          "data-testid": `nav-${s.id}`,
          title: `${s.title} (${MOD}+${i + 1})`,
          onclick: () => navigate(s.id),
        },
        icon(s.icon, { size: 21 }),
        h("span", { text: s.label || s.title }),
      ),
    );
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

/** Show why the page could not start, in place of the screens (which stay as they are). */
function fatal(err) {
  document.getElementById("boot")?.remove();
  document.getElementById("boot-fail")?.remove();
  for (const s of SCREENS) document.getElementById(`screen-${s.id}`).hidden = true;
  // A lost socket is not the core's answer: the page says hello again once it is back.
  const lost = err?.code === undefined || api.status !== "online";
  document.getElementById("screens").append(
    h(
      "div",
      { class: "screen-scroll", id: "boot-fail" },
      h(
        "div",
        { class: "empty" },
        h("div", { class: "empty-icon" }, icon("alert", { size: 28 })),
        h("h3", { class: "empty-title", text: "Moka's core did not answer" }),
        h("p", { class: "empty-text", text: err?.message || String(err) }),
        h("p", {
          class: "empty-text",
          text: lost ? "Moka tries again as soon as the connection is back." : "Reload the page to try again.",
        }),
      ),
    ),
  );
}

/** The first hello and the shared state; until they are in, try again after each reconnect. */
async function firstContact(afterFirstTry) {
  for (let attempt = 0; ; attempt++) {
    try {
      store.set("info", await hello());
      viewHost.configure(store.info);
      await Promise.all([store.refreshSettings(), store.refreshServers()]);
      return;
    } catch (err) {
      fatal(err);
    } finally {
      if (attempt === 0) afterFirstTry();
    }
    await new Promise((resolve) => {
      const off = api.on("api.reconnected", () => {
        off();
        resolve();
      });
    });
  }
}

/** Tell the core about this page (locale, time zone, colour scheme, size); get info + theme. */
async function hello() {
  const params = {
    // Qt with no LANG reports "en-POSIX" (the C locale): views get a tag people and apps use.
    locale: /^c$|posix/i.test(navigator.language || "") ? "en-US" : navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    dark: matchMedia("(prefers-color-scheme: dark)").matches,
    touch: matchMedia("(pointer: coarse)").matches,
    hover: matchMedia("(hover: hover)").matches,
    viewport: { width: window.innerWidth, height: window.innerHeight },
  };
  const { theme, ...info } = await api.call("app.hello", params);
  applyTheme(theme);
  return info;
}

async function bootPopout(viewId) {
  document.getElementById("app").hidden = true;
  document.getElementById("boot")?.remove();
  const root = h("div", { class: CHECK_PAGE ? "popout-root check-root" : "popout-root", id: "popout-root" });
  document.body.prepend(root);
  viewHost.setPopout(viewId, { inline: CHECK_PAGE });
  initResync(viewHost); // its view gets what it missed while the socket was down
  initShortcuts({ screens: SCREENS, navigate, current: () => null, popoutView: viewId });
  await api.connect();
  api.start();
  try {
    store.set("info", await hello());
    viewHost.configure(store.info);
    await store.refreshSettings();
    const data = await api.call("views.get", { viewId });
    document.title = `${data.title || data.tool} — Moka`;
    await viewHost.mount(data);
  } catch (err) {
    root.append(
      h(
        "div",
        { class: "empty" },
        h("div", { class: "empty-icon" }, icon("alert", { size: 28 })),
        h("h3", { class: "empty-title", text: "This view is no longer available" }),
        h("p", { class: "empty-text", text: err?.message || String(err) }),
      ),
    );
  }
}

async function boot() {
  initTheme();
  if (POPOUT_VIEW) return bootPopout(POPOUT_VIEW);
  buildRail();
  watchConnection();
  initShortcuts({ screens: SCREENS, navigate, current: () => current });
  initNotifications();
  initConfigEvents();
  initProblems(); // app.info problems (plugins, the log, the database) under the top bar
  initConsent();
  initProgress(); // a running call's progress on its card
  initElicitation({ navigate }); // servers' questions, in the place of the call that asked
  initResync(viewHost); // views created while the socket was down are mounted when it is back
  ctx = { navigate, setSubtitle, views: viewHost };
  chat.init(document.getElementById("screen-chat"), ctx);
  runner.init(document.getElementById("screen-runner"), ctx);
  // A view the core announces before the other screens are here waits for them (the runner places it).
  let othersLoaded;
  viewHost.placersComing(new Promise((resolve) => (othersLoaded = resolve)));
  window.addEventListener("hashchange", route);
  await api.connect();
  api.start();
  // After the first try, the other screens load in the background: a click on the rail then finds
  // them ready, and a view the core announces (after a reconnect too, when that try failed) has its place.
  await firstContact(() => Promise.allSettled(Object.keys(SCREEN_LOADERS).map(loadScreen)).then(othersLoaded));
  route();
  // After a reconnect the core may have restarted pieces: fetch the shared state again.
  api.on("api.reconnected", () => {
    hello().catch(() => {});
    store.refreshSettings().catch(() => {});
    store.refreshServers().catch(() => {});
  });
  // The core sizes fixed-mode views from the window when a view has not reported its own box.
  window.addEventListener(
    "resize",
    debounce(() => hello().catch(() => {}), 500),
  );
}

boot();
