// Global keys and the desktop menu's commands, handled in one place so both do the same thing:
// Ctrl/Cmd+1…5 screens, +N new chat, +, Settings, +K (or "/") search, +W closes a pop-out,
// +Q quits, += / +- / +0 zoom (the desktop app; a browser keeps its own zoom and windows).

import { api } from "./api.js";
import { copyText, h, isTyping } from "./dom.js";
import { store } from "./store.js";
import { button, openDialog, toast } from "./ui.js";

export const MOD = /Mac|iPhone|iPad/.test(navigator.platform) ? "Cmd" : "Ctrl";
const desktop = () => store.info?.mode === "desktop";

let nav = null; // { screens, navigate, current() }

function newChat() {
  nav.navigate("chat");
  // The chat screen puts its New chat button in the top bar when it is shown.
  requestAnimationFrame(() => document.getElementById("chat-new")?.click());
}

function focusSearch() {
  const screen = nav.current();
  if (screen?.focusSearch) {
    screen.focusSearch();
    return true;
  }
  return false;
}

function aboutDialog() {
  const info = store.info || {};
  const close = button("Close", { variant: "primary", onclick: () => dlg.close() });
  const dlg = openDialog({
    title: "About Moka",
    id: "about-dialog",
    body: h(
      "div",
      { class: "about" },
      h("p", { text: "A desktop host for MCP Apps, with a chat for any model." }),
      h(
        "dl",
        { class: "facts" },
        [
          ["Version", info.version],
          ["Running as", info.mode],
          ["Platform", info.platform],
        ].map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { class: "mono", text: String(v ?? "") }))),
      ),
    ),
    actions: [close],
  });
  close.focus();
}

// There is no public tracker to send people to: give them what a useful report contains.
function reportDialog() {
  const info = store.info || {};
  const facts = [
    `Moka ${info.version} (${info.mode}) on ${info.platform}`,
    `Config: ${info.configFile}`,
    `Data: ${info.dataDir}`,
  ].join("\n");
  const close = button("Close", { variant: "primary", onclick: () => dlg.close() });
  const copy = button("Copy these facts", {
    icon: "copy",
    onclick: async () => toast((await copyText(facts)) ? "Copied" : "Copy failed"),
  });
  const dlg = openDialog({
    title: "Report an issue",
    id: "report-dialog",
    body: h(
      "div",
      { class: "about" },
      h("p", {
        text:
          "A good report says what you did, what you expected and what happened. Attach these facts, " +
          "and an Inspector export (Inspector → Export) of the moment it went wrong.",
      }),
      h("pre", { class: "json", text: facts }),
      h("p", {
        class: "muted small",
        text: "For a misbehaving app, `moka check SERVER --tool TOOL --json` in a terminal gives a full report.",
      }),
    ),
    actions: [copy, close],
  });
  close.focus();
}

/** Run a named command (from a key or the desktop menu). */
export function runCommand(command, params = {}) {
  switch (command) {
    case "new-chat":
      newChat();
      break;
    case "screen":
      if (nav.screens.some((s) => s.id === params.screen)) nav.navigate(params.screen);
      break;
    case "find":
      focusSearch();
      break;
    case "about":
      aboutDialog();
      break;
    case "report":
      reportDialog();
      break;
    default:
      break;
  }
}

function onKey(e, popoutView) {
  const mod = e.ctrlKey || e.metaKey;
  if (!mod || e.altKey) {
    if (e.key === "/" && !mod && !isTyping(e.target) && !popoutView && focusSearch()) e.preventDefault();
    return;
  }
  const key = e.key.toLowerCase();
  if (desktop() && !e.shiftKey && (key === "=" || key === "+" || key === "-" || key === "0")) {
    e.preventDefault();
    api.call("window.zoom", { step: key === "0" ? 0 : key === "-" ? -1 : 1 }).catch(() => {});
    return;
  }
  if (key === "q" && desktop()) {
    e.preventDefault();
    api.call("window.quit").catch(() => {});
    return;
  }
  if (popoutView) {
    // A pop-out window closes and its view goes back inline, as closing the window would.
    if (key === "w") {
      e.preventDefault();
      api.call("view.event", { viewId: popoutView, kind: "popout-closed" }).catch(() => {});
    }
    return;
  }
  if (!e.shiftKey && /^[1-5]$/.test(key)) {
    e.preventDefault();
    nav.navigate(nav.screens[Number(key) - 1].id);
  } else if (key === "k") {
    if (focusSearch()) e.preventDefault();
  } else if (key === "n" && !e.shiftKey) {
    e.preventDefault();
    newChat();
  } else if (key === "," && !e.shiftKey) {
    e.preventDefault();
    nav.navigate("settings");
  }
}

/** Install the keys (and the menu's commands) for the main page or a pop-out showing one view. */
export function initShortcuts({ screens, navigate, current, popoutView = null }) {
  nav = { screens, navigate, current };
  document.addEventListener("keydown", (e) => onKey(e, popoutView));
  if (!popoutView) api.on("shell.command", (d) => runCommand(d?.command, d || {}));
}
