// The composer: the message box, attachments (paste, drop or pick files; shown as chips),
// the model picker of this conversation (model-picker.js), Send and Stop.
// Enter sends, Shift+Enter breaks the line.

import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { iconButton, toast } from "../ui.js";
import { base64Size, fileName, MAX_FILE, refusal, sizeLabel, tooBig } from "./attachments.js";

/** A file's contents as base64 (without the data: prefix). */
function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error || new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** A picked, pasted or dropped file, read, as an attachment (the `count`-th of the message). */
function fileAttachment(file, data, count) {
  return {
    name: fileName(file, count),
    mimeType: file.type || "application/octet-stream",
    size: file.size,
    data,
    url: file.type.startsWith("image/") ? URL.createObjectURL(file) : null,
  };
}

/** Read `files` into the attachments (current() is the list now), saying what is refused and why. */
async function readFiles(files, current) {
  for (const file of files) {
    const refused = refusal(current(), file);
    if (refused) {
      toast(refused.message, { tone: "error" });
      if (refused.stop) break;
      continue;
    }
    try {
      const data = await readBase64(file);
      current().push(fileAttachment(file, data, current().length));
    } catch (err) {
      toast(err.message, { tone: "error" });
    }
  }
}

/** An attachment made from data (a resource's contents), or null (said in a toast) when too big. */
function dataAttachment(att) {
  const size = base64Size(att.data);
  if (size > MAX_FILE) {
    toast(tooBig(att.name, size), { tone: "error" });
    return null;
  }
  const url = att.mimeType.startsWith("image/") ? `data:${att.mimeType};base64,${att.data}` : null;
  return { ...att, size, url };
}

/** One attachment chip: a thumbnail for images, the name and size, and a remove button when editable. */
export function attachmentChip(att, { onRemove, onOpen } = {}) {
  const isImage = (att.mimeType || "").startsWith("image/");
  const thumb =
    isImage && att.url
      ? h("img", { class: "attach-thumb", alt: "", src: att.url })
      : h("span", { class: "attach-icon", "aria-hidden": "true" }, icon(isImage ? "app" : "paperclip", { size: 14 }));
  const chip = h(
    "div",
    {
      class: "attach-chip",
      "data-name": att.name,
      role: "listitem",
      title: `${att.name} · ${sizeLabel(att.size || 0)}`,
    },
    thumb,
    h(
      onOpen ? "button" : "span",
      { class: "attach-text", type: onOpen ? "button" : null, onclick: onOpen || null },
      h("span", { class: "attach-name", text: att.name }),
      h("span", { class: "attach-size", text: sizeLabel(att.size || 0) }),
    ),
    onRemove
      ? iconButton("close", `Remove ${att.name}`, { className: "attach-remove", size: 13, onclick: onRemove })
      : null,
  );
  return chip;
}

/** The composer's buttons: attach (through the hidden file input), send, and stop (while a reply runs). */
function composerButtons({ fileInput, onSend, onStop }) {
  const attachBtn = iconButton("paperclip", "Attach files or images", {
    id: "composer-attach",
    className: "composer-tool",
    size: 17,
    onclick: () => fileInput.click(),
  });
  const sendBtn = iconButton("send", "Send message", {
    id: "send",
    className: "composer-send",
    size: 18,
    onclick: () => onSend(),
  });
  const stopBtn = iconButton("stop", "Stop the reply", {
    id: "stop",
    className: "composer-stop",
    hidden: true,
    size: 16,
    onclick: () => onStop(),
  });
  return { attachBtn, sendBtn, stopBtn };
}

/** The line under the box that says which keys send and how to attach. */
function composerHint() {
  return h(
    "p",
    { class: "composer-hint" },
    h("kbd", { text: "Enter" }),
    " to send · ",
    h("kbd", { text: "Shift" }),
    " + ",
    h("kbd", { text: "Enter" }),
    " for a new line · paste or drop files to attach",
  );
}

/** The composer's elements: the box with its chips, text area and tools, and the hint below. */
function composerFrame({ tools, onSend, onStop }) {
  const input = h("textarea", {
    id: "composer",
    class: "composer-input",
    rows: 1,
    placeholder: "Message Moka…",
    "aria-label": "Message",
  });
  const chips = h("div", {
    class: "composer-chips",
    id: "composer-chips",
    role: "list",
    "aria-label": "Attachments",
    hidden: true,
  });
  const fileInput = h("input", { type: "file", multiple: true, hidden: true, id: "composer-file" });
  const { attachBtn, sendBtn, stopBtn } = composerButtons({ fileInput, onSend, onStop });
  const box = h(
    "div",
    { class: "composer-box" },
    chips,
    h("div", { class: "composer-row" }, input),
    h(
      "div",
      { class: "composer-tools" },
      attachBtn,
      fileInput,
      ...tools,
      h("span", { class: "grow" }),
      sendBtn,
      stopBtn,
    ),
  );
  const el = h("div", { class: "composer" }, box, composerHint());

  return { el, box, input, chips, fileInput, sendBtn, stopBtn };
}

/** Enter sends (Shift+Enter breaks the line); pasted files become attachments, pasted text stays. */
function watchInput(input, { autosize, send, addFiles }) {
  input.addEventListener("input", autosize);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  input.addEventListener("paste", (e) => {
    const files = Array.from(e.clipboardData?.files || []);
    if (!files.length) return;
    e.preventDefault();
    addFiles(files);
  });
}

/** Files picked with the paperclip or dropped on the box become attachments. */
function watchFiles(box, fileInput, addFiles) {
  fileInput.addEventListener("change", () => {
    addFiles(Array.from(fileInput.files || []));
    fileInput.value = "";
  });
  box.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types?.includes("Files")) {
      e.preventDefault();
      box.classList.add("dropping");
    }
  });
  box.addEventListener("dragleave", () => box.classList.remove("dropping"));
  box.addEventListener("drop", (e) => {
    box.classList.remove("dropping");
    const files = Array.from(e.dataTransfer?.files || []);
    if (!files.length) return;
    e.preventDefault();
    addFiles(files);
  });
}

/** The chips of the attachments about to be sent, each with its remove button. */
function showChips(chips, attachments, onRemove) {
  clear(chips);
  chips.hidden = !attachments.length;
  for (const att of attachments) chips.append(attachmentChip(att, { onRemove: () => onRemove(att) }));
}

/** The attachments about to be sent, shown as chips in `chips`; `changed` runs after each change. */
function attachmentTray(chips, { focus, changed }) {
  let list = []; // {name, mimeType, size, data, url}
  function show() {
    showChips(chips, list, (att) => {
      list = list.filter((a) => a !== att);
      if (att.url) URL.revokeObjectURL(att.url);
      show();
      focus();
    });
    changed();
  }
  return {
    count: () => list.length,
    /** The attachments, handed over to be sent: the tray is empty after. */
    take() {
      const taken = list;
      list = [];
      show();
      return taken;
    },
    async addFiles(files) {
      await readFiles(files, () => list);
      show();
    },
    add(att) {
      const made = dataAttachment(att);
      if (!made) return;
      list.push(made);
      show();
    },
  };
}

export function createComposer({ onSend, onStop, tools = [] }) {
  const { el, box, input, chips, fileInput, sendBtn, stopBtn } = composerFrame({
    tools,
    onSend: () => send(),
    onStop: () => onStop(),
  });
  const tray = attachmentTray(chips, { focus: () => input.focus(), changed: () => sync() });
  const addFiles = (files) => tray.addFiles(files);
  const empty = () => !input.value.trim() && !tray.count();
  function sync() {
    sendBtn.disabled = empty();
  }
  function autosize() {
    // As tall as its text, up to 40% of the window.
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, Math.round(window.innerHeight * 0.4))}px`;
    sync();
  }

  function send() {
    if (empty() || sendBtn.hidden) return;
    const text = input.value.trim();
    input.value = "";
    const files = tray.take();
    autosize();
    onSend(text, files);
  }

  watchInput(input, { autosize, send, addFiles });
  watchFiles(box, fileInput, addFiles);

  return {
    el,
    input,
    focus: () => input.focus(),
    setRunning(running) {
      sendBtn.hidden = running;
      stopBtn.hidden = !running;
      sync();
    },
    /** Put text back (a failed send, or an edit), keeping what is there otherwise. */
    setText(text) {
      input.value = text;
      autosize();
    },
    addFiles,
    /** An attachment made here (a resource's contents): {name, mimeType, data (base64)}. */
    addAttachment: (att) => tray.add(att),
    sync,
  };
}
