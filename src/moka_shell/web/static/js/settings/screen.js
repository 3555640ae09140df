// Settings: model backend, base URL, model and API key (model.js), theme and
// light/dark mode, and what app views may do without asking.

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { toastError } from "../ui.js";
import { store } from "../store.js";
import { applyTheme } from "../theme.js";
import { modelRows, row, set } from "./model.js";
import { SCREEN_INFO } from "../screens.js";

const CONSENT = [
  ["open_link", "Open links", "An app opens a web page in your browser."],
  ["message", "Post messages", "An app writes into the chat, which starts a model turn."],
  ["download", "Save files", "An app hands you a file to save."],
  ["sampling", "Ask the model", "An app sends its own prompt to your model."],
];
let body;
const testStatus = h("div", { class: "settings-test-status", id: "settings-test-status" }); // kept across re-renders

function card(iconName, title, subtitle, ...content) {
  return h(
    "section",
    { class: "card settings-card" },
    h(
      "header",
      { class: "card-head" },
      h("div", { class: "card-head-icon" }, icon(iconName, { size: 17 })),
      h(
        "div",
        { class: "grow" },
        h("h2", { class: "card-title", text: title }),
        subtitle ? h("p", { class: "muted small", text: subtitle }) : null,
      ),
    ),
    h("div", { class: "card-body stack" }, content),
  );
}

function modelCard(s) {
  return card(
    "sparkle",
    "Model",
    "Chat needs a model backend; the Tool runner works without one.",
    modelRows(s, testStatus),
  );
}

function appearanceCard(s) {
  const theme = s.theme || {};
  const mode = h(
    "select",
    { class: "select", id: "theme-mode" },
    [
      ["system", "Match system"],
      ["light", "Light"],
      ["dark", "Dark"],
    ].map(([v, t]) => h("option", { value: v, text: t })),
  );
  mode.value = theme.mode || "system";
  const themes = s.themes || [];
  const themeSel = h(
    "select",
    { class: "select", id: "theme-id" },
    themes.map((t) => h("option", { value: t.id, text: t.label || t.id })),
  );
  themeSel.value = theme.themeId || themes[0]?.id || "";
  const change = async (params) => {
    try {
      applyTheme(await api.call("theme.set", params));
      await store.refreshSettings();
    } catch (err) {
      toastError(err);
    }
  };
  mode.addEventListener("change", () => change({ mode: mode.value }));
  themeSel.addEventListener("change", () => change({ themeId: themeSel.value }));
  return card(
    "palette",
    "Appearance",
    "Apps receive the same theme, so they match Moka.",
    row("Mode", "Light, dark, or follow your system.", mode, "theme-mode"),
    themes.length ? row("Theme", "Plugins can add more themes.", themeSel, "theme-id") : null,
  );
}

function consentCard(s) {
  const consent = s.consent || {};
  return card(
    "shield",
    "App permissions",
    "What app views may do without asking you first.",
    CONSENT.map(([key, label, help]) => {
      const sel = h(
        "select",
        { class: "select", id: `consent-${key}`, onchange: (e) => set(`consent.${key}`, e.target.value) },
        [
          ["ask", "Ask every time"],
          ["allow", "Allow"],
          ["deny", "Deny"],
        ].map(([v, t]) => h("option", { value: v, text: t })),
      );
      sel.value = consent[key] || "ask";
      return row(label, help, sel, `consent-${key}`);
    }),
  );
}

function aboutCard() {
  const info = store.info || {};
  const modes = store
    .displayModes()
    .map((m) => m.label || m.id)
    .join(", ");
  const facts = [
    ["Version", info.version],
    ["Running as", info.mode],
    ["Platform", info.platform],
    ["Sandbox origin", info.sandboxOrigin],
    ["Display modes", modes],
  ];
  const list = facts
    .filter(([, v]) => v)
    .map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { text: String(v) })));
  // The install's own docs (served at /docs/); the desktop has them in Help → Documentation.
  if (info.mode !== "desktop") {
    const docs = h("a", { href: "/docs/", target: "_blank", rel: "noopener", id: "about-docs", text: "Open the docs" });
    list.push(h("div", {}, h("dt", { text: "Documentation" }), h("dd", {}, docs)));
  }
  return card("info", "About Moka", null, h("dl", { class: "facts" }, list));
}

function render(s) {
  if (!body || !s) return;
  // Keep focus where it was across a re-render caused by the person's own change.
  const focused = document.activeElement?.id;
  clear(body).append(modelCard(s), appearanceCard(s), consentCard(s), aboutCard());
  if (focused && body.contains(document.getElementById(focused))) document.getElementById(focused).focus();
}

export default {
  ...SCREEN_INFO.settings,

  init(section) {
    body = h("div", { class: "screen-inner settings", id: "settings" });
    section.append(h("div", { class: "screen-scroll" }, body));
    store.on("settings", render);
    store.on("info", () => render(store.settings));
    render(store.settings); // loaded after the page's hello (screens.js): the settings may be here already
  },

  show() {
    store.refreshSettings().catch(toastError);
  },
};
