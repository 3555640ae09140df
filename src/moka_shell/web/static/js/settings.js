// Settings: model backend, model and API key (kept in the OS keyring), theme and light/dark
// mode, and what app views may do without asking.

import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { button, badge, toast, toastError } from "./ui.js";
import { store } from "./store.js";
import { applyTheme } from "./theme.js";

const CONSENT = [
  ["open_link", "Open links", "An app opens a web page in your browser."],
  ["message", "Post messages", "An app writes into the chat, which starts a model turn."],
  ["download", "Save files", "An app hands you a file to save."],
  ["sampling", "Ask the model", "An app sends its own prompt to your model."],
];
let body;

async function set(key, value) {
  try { store.set("settings", await api.call("settings.set", { key, value })); } catch (err) { toastError(err); store.refreshSettings(); }
}

function card(iconName, title, subtitle, ...content) {
  return h("section", { class: "card settings-card" },
    h("header", { class: "card-head" }, h("div", { class: "card-head-icon" }, icon(iconName, { size: 17 })),
      h("div", { class: "grow" }, h("h2", { class: "card-title", text: title }), subtitle ? h("p", { class: "muted small", text: subtitle }) : null)),
    h("div", { class: "card-body stack" }, content));
}

function row(label, help, control, forId) {
  return h("div", { class: "setting-row" },
    h("div", { class: "setting-text" }, h("label", { class: "field-label", for: forId, text: label }), help ? h("p", { class: "field-help", text: help }) : null),
    h("div", { class: "setting-control" }, control));
}

function modelCard(s) {
  const backends = s.backends || [];
  const agent = s.agent || {};
  const current = backends.find((b) => b.id === agent.backend);
  const backendSel = h("select", { class: "select", id: "settings-backend", onchange: (e) => set("agent.backend", e.target.value || null) },
    h("option", { value: "", text: "None (Tool runner only)" }),
    // `available` means a local model server answered just now (Ollama, LM Studio…).
    backends.map((b) => h("option", { value: b.id, text: b.available ? `${b.name} — running on this computer` : b.name })));
  backendSel.value = agent.backend || "";
  const model = h("input", { class: "input", id: "settings-model", value: agent.model || "", placeholder: current?.defaultModel || "model name", autocomplete: "off", spellcheck: "false" });
  const saveModel = () => { if (model.value.trim() !== (agent.model || "")) set("agent.model", model.value.trim() || null); };
  model.addEventListener("change", saveModel);
  model.addEventListener("keydown", (e) => { if (e.key === "Enter") saveModel(); });
  const parts = [row("Backend", "Which service answers in the chat.", backendSel, "settings-backend")];
  if (current) {
    parts.push(row("Model", current.defaultModel ? `Leave empty for ${current.defaultModel}.` : "The model id the backend expects.", model, "settings-model"));
    if (current.needsKey) parts.push(keyRow(current));
  } else if (s.noBackendHelp) {
    parts.push(h("div", { class: "notice" }, icon("info", { size: 16 }), h("p", { class: "notice-text", text: s.noBackendHelp })));
  }
  return card("sparkle", "Model", "Chat needs a model backend; the Tool runner works without one.", parts);
}

function keyRow(b) {
  const input = h("input", { class: "input", id: "settings-key", type: "password", placeholder: b.hasKey ? "•••••••• (stored)" : "Paste your API key", autocomplete: "off", spellcheck: "false" });
  const status = h("span", { id: "settings-key-status" },
    b.hasKey ? badge("Stored in keyring", "success", { class: "badge badge-success badge-dot" }) : badge("No key", "neutral"));
  const save = button("Save key", { small: true, variant: "primary", id: "settings-key-save" });
  const remove = b.hasKey ? button("Remove", { small: true, variant: "ghost", id: "settings-key-delete" }) : null;
  save.addEventListener("click", async () => {
    if (!input.value.trim()) { input.focus(); return; }
    save.disabled = true;
    try {
      await api.call("keys.set", { backend: b.id, key: input.value.trim() });
      input.value = "";
      toast("Key stored in your system keyring", { tone: "success" });
      await store.refreshSettings();
    } catch (err) { toastError(err); } finally { save.disabled = false; }
  });
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") save.click(); });
  remove?.addEventListener("click", async () => {
    try { await api.call("keys.delete", { backend: b.id }); await store.refreshSettings(); } catch (err) { toastError(err); }
  });
  const help = `Kept in your operating system's keyring, never in Moka's files.${b.keyEnvVar ? ` Setting ${b.keyEnvVar} in the environment works too.` : ""}`;
  return row("API key", help, h("div", { class: "stack" }, h("div", { class: "row" }, input, save), h("div", { class: "row" }, status, remove)), "settings-key");
}

function appearanceCard(s) {
  const theme = s.theme || {};
  const mode = h("select", { class: "select", id: "theme-mode" },
    [["system", "Match system"], ["light", "Light"], ["dark", "Dark"]].map(([v, t]) => h("option", { value: v, text: t })));
  mode.value = theme.mode || "system";
  const themes = s.themes || [];
  const themeSel = h("select", { class: "select", id: "theme-id" }, themes.map((t) => h("option", { value: t.id, text: t.label || t.id })));
  themeSel.value = theme.themeId || themes[0]?.id || "";
  const change = async (params) => {
    try {
      applyTheme(await api.call("theme.set", params));
      await store.refreshSettings();
    } catch (err) { toastError(err); }
  };
  mode.addEventListener("change", () => change({ mode: mode.value }));
  themeSel.addEventListener("change", () => change({ themeId: themeSel.value }));
  return card("palette", "Appearance", "Apps receive the same theme, so they match Moka.",
    row("Mode", "Light, dark, or follow your system.", mode, "theme-mode"),
    themes.length ? row("Theme", "Plugins can add more themes.", themeSel, "theme-id") : null);
}

function consentCard(s) {
  const consent = s.consent || {};
  return card("shield", "App permissions", "What app views may do without asking you first.",
    CONSENT.map(([key, label, help]) => {
      const sel = h("select", { class: "select", id: `consent-${key}`, onchange: (e) => set(`consent.${key}`, e.target.value) },
        [["ask", "Ask every time"], ["allow", "Allow"], ["deny", "Deny"]].map(([v, t]) => h("option", { value: v, text: t })));
      sel.value = consent[key] || "ask";
      return row(label, help, sel, `consent-${key}`);
    }));
}

function aboutCard() {
  const info = store.info || {};
  const modes = store.displayModes().map((m) => m.label || m.id).join(", ");
  const facts = [["Version", info.version], ["Running as", info.mode], ["Platform", info.platform], ["Sandbox origin", info.sandboxOrigin], ["Display modes", modes]];
  return card("info", "About Moka", null,
    h("dl", { class: "facts" }, facts.filter(([, v]) => v).map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { text: String(v) })))));
}

function render(s) {
  if (!body || !s) return;
  // Keep focus where it was across a re-render caused by the person's own change.
  const focused = document.activeElement?.id;
  clear(body).append(modelCard(s), appearanceCard(s), consentCard(s), aboutCard());
  if (focused && body.contains(document.getElementById(focused))) document.getElementById(focused).focus();
}

export default {
  id: "settings",
  title: "Settings",
  icon: "settings",

  init(section) {
    body = h("div", { class: "screen-inner settings", id: "settings" });
    section.append(h("div", { class: "screen-scroll" }, body));
    store.on("settings", render);
    store.on("info", () => render(store.settings));
  },

  show() { store.refreshSettings().catch(toastError); },
};
