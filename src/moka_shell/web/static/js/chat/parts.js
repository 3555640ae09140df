// Small pieces of the chat thread: errors and notes in place, model-context markers, and
// the text of a message whatever shape its content has.

import { h } from "../dom.js";
import { icon } from "../icons.js";
import { button } from "../ui.js";

export const textOf = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (typeof p === "string" ? p : p?.text || "")).join("")
      : content
        ? JSON.stringify(content)
        : "";

export function errorBlock(message, kind, onSettings) {
  if (kind === "stopped") {
    return h(
      "div",
      { class: "chat-note", role: "status", "data-kind": kind },
      icon("stop", { size: 12 }),
      h("span", { text: "Stopped" }),
    );
  }
  const needsSetup = /backend|key|auth|model|setting/i.test(`${kind} ${message}`);
  return h(
    "div",
    { class: "chat-error", role: "alert", "data-kind": kind || "" },
    icon("alert", { size: 16 }),
    h(
      "div",
      { class: "grow" },
      h("strong", { text: "Something went wrong" }),
      h("p", { text: message || "Unknown error" }),
    ),
    needsSetup && onSettings ? button("Settings", { small: true, onclick: onSettings }) : null,
  );
}

/** "Context from <server>": a small marker that opens to show what the view told the model. */
export function contextMarker(d) {
  return h(
    "details",
    { class: "ctx-marker", "data-view-id": d.viewId || "" },
    h("summary", {}, icon("sparkle", { size: 13 }), h("span", { text: `Context from ${d.server || "an app"}` })),
    h("pre", { class: "block", text: d.summary || "" }),
  );
}
