// Progress of a running tool call (tool.progress): the server's message, and a bar when it says how
// far there is to go. It shows in the call's place: the chat's tool card or the Tool runner's entry.
// When the call ends (tool.progress.done) the bar goes; the result takes its place.

import { api } from "./api.js";
import { h, clear } from "./dom.js";

/** Where a call's progress goes: the slot of its chat card or runner entry, if it is on the page. */
export function slotFor(where, callId, slot) {
  if (!callId) return null;
  const id = CSS.escape(String(callId));
  if (where === "chat") return document.querySelector(`.tool-card[data-call-id="${id}"] .${slot}`);
  if (where === "runner") return document.querySelector(`.runner-result[data-run-id="${id}"] .${slot}`);
  return null;
}

const percent = (p) => {
  const v = p.progress / p.total;
  return Math.max(0, Math.min(100, Math.round(v * 100)));
};

/** The progress element for one report (replaces the previous one in the slot). */
export function progressView(p) {
  const hasTotal = typeof p.total === "number" && p.total > 0;
  const label = p.message || (hasTotal ? `${p.progress} of ${p.total}` : `${p.progress} so far`);
  const bar = h(
    "div",
    {
      class: `progress-bar${hasTotal ? "" : " indeterminate"}`,
      role: "progressbar",
      "aria-label": label,
      "aria-valuemin": "0",
      ...(hasTotal ? { "aria-valuemax": "100", "aria-valuenow": String(percent(p)) } : {}),
    },
    h("div", { class: "progress-fill", style: hasTotal ? `width: ${percent(p)}%` : "" }),
  );
  return h(
    "div",
    { class: "progress" },
    h(
      "div",
      { class: "progress-line" },
      h("span", { class: "progress-message", text: label }),
      hasTotal ? h("span", { class: "progress-percent", text: `${percent(p)}%` }) : null,
    ),
    bar,
  );
}

function show(p) {
  const slot = slotFor(p.where, p.callId, p.where === "chat" ? "tool-progress" : "runner-progress");
  if (!slot) return;
  slot.hidden = false;
  const fill = slot.querySelector(".progress-fill");
  const hasTotal = typeof p.total === "number" && p.total > 0;
  // Update in place when the shape is the same, so the bar animates instead of jumping.
  if (fill && hasTotal && !slot.querySelector(".indeterminate")) {
    fill.style.width = `${percent(p)}%`;
    slot.querySelector(".progress-bar").setAttribute("aria-valuenow", String(percent(p)));
    slot.querySelector(".progress-message").textContent = p.message || `${p.progress} of ${p.total}`;
    slot.querySelector(".progress-percent").textContent = `${percent(p)}%`;
    return;
  }
  clear(slot).append(progressView(p));
}

function hide(p) {
  const slot = slotFor(p?.where, p?.callId, p?.where === "chat" ? "tool-progress" : "runner-progress");
  if (slot) {
    clear(slot);
    slot.hidden = true;
  }
}

export function initProgress() {
  api.on("tool.progress", (p) => {
    if (p && typeof p.progress === "number") show(p);
  });
  api.on("tool.progress.done", hide);
}
