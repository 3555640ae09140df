// The composer: the message box, attachments (paste, drop or pick files; shown as chips),
// the model picker of this conversation (model-picker.js), Send and Stop.
// Enter sends, Shift+Enter breaks the line.

import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { iconButton, toast } from "../ui.js";

export const MAX_FILE = 8 * 1024 * 1024; // the core's caps (core/chat/media.py), said here before a file is read
export const MAX_TOTAL = 10 * 1024 * 1024;
export const MAX_FILES = 10;

export function sizeLabel(n) {
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** A file's contents as base64 (without the data: prefix). */
function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error || new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
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

export function createComposer({ onSend, onStop, tools = [] }) {
  let attachments = []; // {name, mimeType, size, data, url}
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
    onclick: () => send(),
  });
  const stopBtn = iconButton("stop", "Stop the reply", {
    id: "stop",
    className: "composer-stop",
    hidden: true,
    size: 16,
    onclick: () => onStop(),
  });
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
  const el = h(
    "div",
    { class: "composer" },
    box,
    h(
      "p",
      { class: "composer-hint" },
      h("kbd", { text: "Enter" }),
      " to send · ",
      h("kbd", { text: "Shift" }),
      " + ",
      h("kbd", { text: "Enter" }),
      " for a new line · paste or drop files to attach",
    ),
  );

  const empty = () => !input.value.trim() && !attachments.length;
  function sync() {
    sendBtn.disabled = empty();
  }
  function autosize() {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, Math.round(window.innerHeight * 0.4))}px`;
    sync();
  }
  function renderChips() {
    clear(chips);
    chips.hidden = !attachments.length;
    for (const att of attachments) {
      chips.append(
        attachmentChip(att, {
          onRemove: () => {
            attachments = attachments.filter((a) => a !== att);
            if (att.url) URL.revokeObjectURL(att.url);
            renderChips();
            input.focus();
          },
        }),
      );
    }
    sync();
  }

  async function addFiles(files) {
    for (const file of files) {
      if (attachments.length >= MAX_FILES) {
        toast(`At most ${MAX_FILES} files go with one message.`, { tone: "error" });
        break;
      }
      if (file.size > MAX_FILE) {
        toast(`${file.name} is ${sizeLabel(file.size)}; a file may be at most ${sizeLabel(MAX_FILE)}.`, {
          tone: "error",
        });
        continue;
      }
      const total = attachments.reduce((n, a) => n + a.size, 0) + file.size;
      if (total > MAX_TOTAL) {
        toast(`The files of one message may be at most ${sizeLabel(MAX_TOTAL)} together.`, { tone: "error" });
        continue;
      }
      try {
        const data = await readBase64(file);
        const name =
          file.name ||
          `pasted-${attachments.length + 1}.${(file.type.split("/")[1] || "bin").replace(/[^a-z0-9]/gi, "")}`;
        attachments.push({
          name,
          mimeType: file.type || "application/octet-stream",
          size: file.size,
          data,
          url: file.type.startsWith("image/") ? URL.createObjectURL(file) : null,
        });
      } catch (err) {
        toast(err.message, { tone: "error" });
      }
    }
    renderChips();
  }

  function send() {
    if (empty() || sendBtn.hidden) return;
    const text = input.value.trim();
    const files = attachments;
    input.value = "";
    attachments = [];
    renderChips();
    autosize();
    onSend(text, files);
  }

  input.addEventListener("input", autosize);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  // Pasted images (a screenshot) and files become attachments; pasted text stays text.
  input.addEventListener("paste", (e) => {
    const files = Array.from(e.clipboardData?.files || []);
    if (!files.length) return;
    e.preventDefault();
    addFiles(files);
  });
  fileInput.addEventListener("change", () => {
    addFiles(Array.from(fileInput.files || []));
    fileInput.value = "";
  });
  for (const target of [box]) {
    target.addEventListener("dragover", (e) => {
      if (e.dataTransfer?.types?.includes("Files")) {
        e.preventDefault();
        box.classList.add("dropping");
      }
    });
    target.addEventListener("dragleave", () => box.classList.remove("dropping"));
    target.addEventListener("drop", (e) => {
      box.classList.remove("dropping");
      const files = Array.from(e.dataTransfer?.files || []);
      if (!files.length) return;
      e.preventDefault();
      addFiles(files);
    });
  }

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
    addAttachment(att) {
      const size =
        Math.floor((att.data.length * 3) / 4) - (att.data.endsWith("==") ? 2 : att.data.endsWith("=") ? 1 : 0);
      if (size > MAX_FILE) {
        toast(`${att.name} is ${sizeLabel(size)}; a file may be at most ${sizeLabel(MAX_FILE)}.`, { tone: "error" });
        return;
      }
      attachments.push({
        ...att,
        size,
        url: att.mimeType.startsWith("image/") ? `data:${att.mimeType};base64,${att.data}` : null,
      });
      renderChips();
    },
    sync,
  };
}
