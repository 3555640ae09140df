// One message of a thread: its bubble or reply (streamed Markdown), "From app" label,
// attachments, and its actions: Copy, Edit (the person's own), Regenerate (the last answer),
// and Continue on a reply a crash cut off.

import { api } from "../api.js";
import { h, clear, copyText } from "../dom.js";
import { icon } from "../icons.js";
import { button, iconButton, toast, toastError, confirmDialog } from "../ui.js";
import { renderMarkdown } from "../markdown/render.js";
import { attachmentChip } from "./composer.js";
import { laterThan } from "./history-window.js";

let follow = () => {};
let isRunning = () => false;

/** Called once by chat/screen.js: how to keep the thread in view and whether a conversation is busy. */
export function initMessages(opts) {
  follow = opts.follow;
  isRunning = opts.isRunning;
}

/** "From app: notes (server a)": whose message this is, never shown as the person's. */
function fromAppLabel(app) {
  return app?.tool ? `From app: ${app.tool} (server ${app.server})` : "From app";
}

/**
 * The message `id` of the thread, made if new. A stored one goes where `place.before` says (null: at
 * the end) with its `place.seq`; one arriving live goes at the end, hidden while the thread shows an
 * older stretch of the conversation (chat/thread-window.js fetches it when the window gets there).
 */
export function ensureMsg(conv, id, role = "assistant", source, app, place = null) {
  let msg = conv.msgs.get(id);
  if (msg) return msg;
  conv.el.querySelector(".welcome")?.remove();
  const body = h("div", { class: "msg-body" });
  const tools = h("div", { class: "msg-tools" });
  const files = h("div", { class: "msg-files", role: "list", "aria-label": "Attachments", hidden: true });
  const actions = h("div", { class: "msg-actions" });
  const fromApp = source === "app";
  const el = h(
    "article",
    { class: `msg msg-${role}${fromApp ? " msg-app" : ""}`, "data-role": role, "data-message-id": id },
    role === "assistant" ? h("div", { class: "msg-avatar", "aria-hidden": "true" }, icon("logo", { size: 17 })) : null,
    h(
      "div",
      { class: "msg-main" },
      fromApp
        ? h("div", { class: "msg-from-app" }, icon("app", { size: 13 }), h("span", { text: fromAppLabel(app) }))
        : null,
      files,
      body,
      tools,
      actions,
    ),
  );
  msg = { id, el, body, tools, files, actions, role, source, text: "", conv, seq: place?.seq };
  conv.msgs.set(id, msg);
  if (place?.before) conv.el.insertBefore(el, place.before);
  else conv.el.append(el);
  if (!place && conv.win?.hasNewer) {
    msg.out = true;
    el.classList.add("out-of-window");
  }
  if (!place) renderActions(msg); // a page of stored ones gets its actions once, after the batch
  return msg;
}

export function setText(msg, text) {
  msg.text = text;
  msg.el.classList.toggle("is-empty", !text);
  // Screen readers hear the reply once it is complete, not every streamed fragment.
  msg.el.setAttribute("aria-busy", String(Boolean(msg.streaming)));
  if (msg.role !== "assistant") {
    // People's own words are shown as typed, never interpreted.
    if (!msg.editing) msg.body.textContent = text;
    return;
  }
  if (msg.frame) return;
  // A delta after a quiet spell is written at once: waiting for the next animation frame added up
  // to a frame (16.7 ms at 60 Hz) to every word (issue 19). Only a fast run of deltas, closer
  // together than a frame, is batched into one render per frame.
  if (performance.now() - (msg.renderedAt || 0) >= FRAME_MS) {
    renderBody(msg);
    return;
  }
  msg.frame = requestAnimationFrame(() => {
    msg.frame = 0;
    renderBody(msg);
  });
}

const FRAME_MS = 16;

const PAUSE_MS = 600;

function renderBody(msg) {
  msg.renderedAt = performance.now();
  // The caret's blink is an animation on every frame; it only starts once the words stop coming.
  clearTimeout(msg.pauseTimer);
  msg.el.classList.remove("is-paused");
  if (msg.streaming) msg.pauseTimer = setTimeout(() => msg.el.classList.add("is-paused"), PAUSE_MS);
  clear(msg.body).append(renderMarkdown(msg.text));
  if (msg.streaming && msg.text) msg.body.append(h("span", { class: "caret", "aria-hidden": "true" }));
  // Before the first word arrives, show that the model is working.
  if (msg.streaming && !msg.text)
    msg.body.append(
      h("span", { class: "typing", role: "status", "aria-label": "The model is thinking" }, h("i"), h("i"), h("i")),
    );
  follow();
}

/** The files that went with a message; stored images are fetched once to show their thumbnails. */
export function setAttachments(msg, list) {
  clear(msg.files);
  msg.files.hidden = !list?.length;
  msg.hasFiles = Boolean(list?.length);
  for (const att of list || []) {
    const chip = attachmentChip(att);
    msg.files.append(chip);
    if (!att.url && att.id && (att.mimeType || "").startsWith("image/")) {
      api
        .call("chat.attachment", { id: att.id })
        .then((full) => {
          const img = h("img", { class: "attach-thumb", alt: "", src: `data:${full.mimeType};base64,${full.data}` });
          chip.querySelector(".attach-icon")?.replaceWith(img);
        })
        .catch(() => {});
    }
  }
}

/** Messages after this one in the conversation (the thread may hold only part of it). */
function laterCount(msg) {
  const known = laterThan(msg.conv.win, msg.seq);
  if (known !== null) return known;
  let n = 0;
  for (let el = msg.el.nextElementSibling; el; el = el.nextElementSibling) if (el.matches("article.msg")) n++;
  return n;
}

/** The newest reply shown, if the thread reaches the newest message and ends with a reply. */
function lastAssistant(conv) {
  if (conv.win?.hasNewer) return null;
  for (let el = conv.el.lastElementChild; el; el = el.previousElementSibling) {
    if (!el.matches("article.msg") || el.classList.contains("out-of-window")) continue;
    const msg = conv.msgs.get(el.dataset.messageId);
    return msg?.role === "assistant" ? msg : null;
  }
  return null;
}

/** Copy for every message; Edit for the person's own; Regenerate on the last answer when idle. */
export function renderActions(msg, last = lastAssistant(msg.conv)) {
  clear(msg.actions);
  const conv = msg.conv;
  if (!conv.id || String(msg.id).startsWith("pending") || msg.editing) return;
  msg.actions.append(
    iconButton("copy", "Copy message", {
      className: "msg-action",
      size: 14,
      "data-action": "copy",
      onclick: async () => {
        if (await copyText(msg.text)) toast("Copied", { tone: "success", timeout: 1500 });
      },
    }),
  );
  if (msg.role === "user" && msg.source !== "app") {
    msg.actions.append(
      iconButton("edit", "Edit and resend", {
        className: "msg-action",
        size: 14,
        "data-action": "edit",
        disabled: isRunning(conv),
        onclick: () => startEdit(msg),
      }),
    );
  }
  if (msg.role === "assistant" && last === msg && !isRunning(conv)) {
    msg.actions.append(
      iconButton("restart", "Regenerate this answer", {
        className: "msg-action",
        size: 14,
        "data-action": "regenerate",
        onclick: () => api.call("chat.regenerate", { conversationId: conv.id }).catch(toastError),
      }),
    );
  }
}

/** Re-render the messages' actions (after a turn starts or ends, messages go, or a page came). */
export function refreshActions(conv, only = null) {
  const last = lastAssistant(conv);
  // After a page of stored messages, only they (and the reply that gains or loses Regenerate) change.
  const todo = only ? new Set([...only, conv.lastReply, last]) : conv.msgs.values();
  for (const msg of todo) if (msg && conv.msgs.get(msg.id) === msg) renderActions(msg, last);
  conv.lastReply = last;
}

/** Save the edited text of `msg` and answer it again (after asking, when later messages go); `done` ends the edit. */
async function resendEdited(msg, area, done) {
  const text = area.value.trim();
  if (!text && !msg.hasFiles) {
    area.focus();
    return;
  }
  const later = laterCount(msg);
  if (
    later &&
    !(await confirmDialog({
      title: "Resend from here?",
      message:
        `The ${later} later message${later === 1 ? "" : "s"} will be replaced by a new answer. ` +
        "Tool calls they made are not undone.",
      confirmLabel: "Resend",
    }))
  )
    return;
  try {
    await api.call("chat.edit", { conversationId: msg.conv.id, messageId: msg.id, text });
    msg.text = text;
    done();
  } catch (err) {
    toastError(err);
  }
}

function startEdit(msg) {
  if (isRunning(msg.conv)) return;
  msg.editing = true;
  renderActions(msg);
  const area = h("textarea", {
    class: "input msg-edit-input",
    rows: 3,
    "aria-label": "Edit your message",
    value: msg.text,
  });
  area.value = msg.text;
  const done = () => {
    msg.editing = false;
    msg.body.textContent = msg.text;
    renderActions(msg);
  };
  const save = button("Save & resend", {
    small: true,
    variant: "primary",
    "data-action": "save-edit",
    onclick: () => resendEdited(msg, area, done),
  });
  const cancel = button("Cancel", { small: true, variant: "ghost", onclick: done });
  area.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      done();
    }
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      save.click();
    }
  });
  clear(msg.body).append(area, h("div", { class: "row msg-edit-actions" }, cancel, save));
  area.focus();
}

/** A reply a crash or kill cut off: said in place, with Continue while it is the latest turn. */
export function interruptedNote(msg, { canContinue }) {
  msg.el.querySelector(".interrupted-note")?.remove();
  const note = h(
    "div",
    { class: "chat-note interrupted-note", role: "status", "data-kind": "interrupted" },
    icon("alert", { size: 12 }),
    h("span", { text: "Interrupted: Moka stopped before this reply finished." }),
    canContinue
      ? button("Continue", {
          small: true,
          variant: "ghost",
          "data-action": "continue",
          onclick: async (e) => {
            e.currentTarget.disabled = true;
            try {
              await api.call("chat.continue", { conversationId: msg.conv.id });
              e.target.closest("button")?.remove();
            } catch (err) {
              toastError(err);
            }
          },
        })
      : null,
  );
  msg.el.after(note);
  follow();
  return note;
}
