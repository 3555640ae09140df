// The DOM around a view: its card (header with title, origin, state and host controls), and
// the cards that replace the frame when it cannot be shown (failed, parked, in its own
// window). Pure builders: host.js owns the frames and decides which one to show.

import { h, clear } from "../dom.js";
import { icon, hasIcon } from "../icons.js";
import { button, iconButton, showMenu } from "../ui.js";

// A built-in mode has an icon of its own name; a plugin's mode brings path data, or gets the
// generic "mode" icon — never a wire mode's, which would make it look like the built-in.
const modeIcon = (m) => (m.builtin && hasIcon(m.id) ? m.id : m.icon ? { d: m.icon } : "mode");

/**
 * The card for a view. `on` holds the host actions: inspect(), close(), mode(id).
 * Returns the parts views/host.js updates: {slot, note, card, head, status, modes, body}.
 */
export function buildCard(data, on) {
  const parts = {};
  parts.status = h("span", { class: "view-state", "data-state": "loading", title: "Loading" });
  parts.modes = h("div", { class: "view-modes", role: "group", "aria-label": "Display mode" });
  parts.head = h(
    "div",
    { class: "view-head" },
    h("span", { class: "view-icon" }, icon("app", { size: 15 })),
    h("span", { class: "view-title", text: data.title || data.tool || "App view" }),
    h("span", { class: "view-origin", text: `${data.server} · ${data.tool}` }),
    parts.status,
    h("span", { class: "grow" }),
    h(
      "div",
      { class: "view-controls" },
      parts.modes,
      iconButton("inspector", "Show this view's messages in the Inspector", { onclick: on.inspect }),
      iconButton("close", "Close view", { "data-action": "close", onclick: on.close }),
    ),
  );
  parts.body = h("div", { class: "view-body" });
  // The card's border and header mark where the sandboxed content begins and ends.
  parts.card = h(
    "div",
    {
      class: `view-card${data.prefersBorder === false ? " borderless" : ""}`,
      "data-view-id": data.viewId,
      "data-server": data.server,
      "data-mode": "inline",
      role: "region",
      "aria-label": `App view: ${data.title || data.tool} from ${data.server}`,
    },
    parts.head,
    parts.body,
  );
  parts.note = h("div", { class: "view-note", hidden: true });
  parts.slot = h("div", { class: "view-slot", "data-view-id": data.viewId }, parts.note, parts.card);
  return parts;
}

/**
 * A button for each built-in display mode, the current one pressed; the modes plugins add are
 * in a "More display modes" menu, each with its icon and label (its button shows the current one).
 */
export function fillModeButtons(container, modes, current, onMode) {
  clear(container);
  const extra = modes.filter((m) => !m.builtin);
  for (const m of modes.filter((mode) => mode.builtin)) {
    container.append(
      iconButton(modeIcon(m), m.label || m.id, {
        "data-mode": m.id,
        pressed: m.id === current,
        onclick: () => onMode(m.id),
      }),
    );
  }
  if (!extra.length) return;
  const chosen = extra.find((m) => m.id === current);
  const label = chosen ? `More display modes (now: ${chosen.label || chosen.id})` : "More display modes";
  const more = iconButton(chosen ? modeIcon(chosen) : "more", label, {
    "data-mode-menu": "",
    "aria-haspopup": "menu",
    pressed: Boolean(chosen),
    onclick: () =>
      showMenu(
        more,
        extra.map((m) => ({
          label: m.id === current ? `${m.label || m.id} (now)` : m.label || m.id,
          icon: modeIcon(m),
          onclick: () => onMode(m.id),
          mode: m.id,
        })),
      ),
  });
  container.append(more);
}

export function failureCard(reason, detail, on) {
  const hasDetail = detail && (typeof detail === "string" || Object.keys(detail).length);
  return h(
    "div",
    { class: "view-error", role: "alert" },
    h("div", { class: "view-error-icon" }, icon("alert", { size: 20 })),
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: "This view could not run" }),
      h("p", { class: "muted", text: reason || "The view failed." }),
      hasDetail
        ? h(
            "details",
            { class: "fold" },
            h("summary", {}, icon("chevron", { size: 14 }), "Details"),
            h("pre", { class: "block", text: typeof detail === "string" ? detail : JSON.stringify(detail, null, 2) }),
          )
        : null,
      detail?.needsEval ? evalStrip(detail.server, on.allowEval) : null,
      h(
        "div",
        { class: "row" },
        button("Open in Inspector", { icon: "inspector", small: true, onclick: on.inspect, "data-action": "inspect" }),
        button("Close", { small: true, variant: "ghost", onclick: on.close }),
      ),
    ),
  );
}

// An app that needs eval() (some bundlers and template engines do): the per-server opt-in, in place.
function evalStrip(server, allow) {
  const status = h("span", {
    class: "grow",
    text:
      `This app needs eval(), which views may not use unless you allow it for ${server}. ` +
      "Allow it only for servers you trust.",
  });
  const btn = button(`Allow eval for ${server}`, {
    small: true,
    variant: "secondary",
    icon: "shield",
    "data-action": "allow-eval",
    onclick: async () => {
      btn.disabled = true;
      if (await allow()) status.textContent = `Allowed for ${server}. Run the tool again to load the app with eval.`;
      else btn.disabled = false;
    },
  });
  return h("div", { class: "view-problem view-eval", role: "note" }, icon("shield", { size: 14 }), status, btn);
}

export function parkedCard(height) {
  return h(
    "div",
    { class: "view-placeholder parked", style: height ? `height:${height}px` : null },
    icon("pause", { size: 18 }),
    h("span", { class: "muted", text: "Paused while off screen. It resumes when you scroll back." }),
  );
}

/** Shown in place of a view that lives in its own window. Returns {el, blockedNote}. */
export function windowCard(on) {
  const blockedNote = h("p", {
    class: "muted",
    hidden: true,
    text: "The window was blocked. Allow pop-ups for Moka, or open it here:",
  });
  const el = h(
    "div",
    { class: "view-placeholder" },
    icon("popout", { size: 22 }),
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: "Open in its own window" }),
      h("p", {
        class: "muted",
        text:
          "Bringing it back inline starts the app again here: its storage, input and result, and what it " +
          "told the model come along.",
      }),
      blockedNote,
      h(
        "div",
        { class: "row" },
        button("Show window", { small: true, icon: "external", "data-action": "show-window", onclick: on.show }),
        button("Bring back inline", { small: true, icon: "inline", onclick: on.inline }),
      ),
    ),
  );
  return { el, blockedNote };
}

/**
 * Asked before a live view moves into a window of its own: its app starts again there, since no
 * engine keeps a frame alive across windows. `on`: go(dontAsk), stay(). Returns the strip.
 */
export function restartStrip(on) {
  const dontAsk = h("input", { type: "checkbox", "data-action": "dont-ask" });
  return h(
    "div",
    { class: "view-problem view-restart", role: "alertdialog", "aria-label": "The app will start again" },
    icon("popout", { size: 14 }),
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: "The app starts again in its own window" }),
      h("span", {
        class: "muted",
        text:
          "What it saved in its storage, its input and result, and what it told the model come along " +
          "(and again when it comes back here). Anything else it shows now starts over.",
      }),
      h("label", { class: "check-row" }, dontAsk, h("span", { text: "Don't ask again" })),
    ),
    button("Keep it here", { small: true, variant: "ghost", "data-action": "stay", onclick: on.stay }),
    button("Open in its own window", {
      small: true,
      variant: "primary",
      icon: "external",
      "data-action": "go",
      onclick: () => on.go(dontAsk.checked),
    }),
  );
}

/** The in-flow note left behind while the card floats (fullscreen or pip). */
export function fillNote(note, wire, onReturn) {
  // The button comes first: the pip panel floats at the right, where it could cover it.
  clear(note).append(
    button("Return inline", { small: true, variant: "ghost", "data-action": "return-inline", onclick: onReturn }),
    icon(wire === "pip" ? "pip" : "fullscreen", { size: 16 }),
    h("span", { text: wire === "pip" ? "Showing in picture-in-picture" : "Showing full screen" }),
  );
}

/** A live view's problem (CSP block, uncaught error), shown between header and frame. */
export function problemStrip(d, count, on) {
  return h(
    "div",
    { class: "view-problem", role: "status", "data-kind": d.kind || "" },
    icon("alert", { size: 14 }),
    h("span", { class: "grow", text: d.reason || "The view reported a problem." }),
    count > 1 ? h("span", { class: "badge badge-warning", text: `${count}` }) : null,
    button("Inspector", { small: true, variant: "ghost", onclick: on.inspect }),
    iconButton("close", "Dismiss", { size: 14, onclick: on.dismiss }),
  );
}

/** Shown in a closed view's place when the conversation can bring it back. */
export function closedNote(recordId, title, onReopen) {
  return h(
    "div",
    { class: "view-closed-note", "data-record-id": recordId },
    icon("app", { size: 14 }),
    h("span", { text: `${title} was closed` }),
    button("Reopen", { small: true, variant: "ghost", onclick: onReopen }),
  );
}
