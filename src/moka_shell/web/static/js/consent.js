// Asks the person before a view acts outside its sandbox (consent.request), one question at a
// time, and saves files the core hands over in browser mode (download.ready).

import { api } from "./api.js";
import { h, downloadBlob } from "./dom.js";
import { icon } from "./icons.js";
import { button, openDialog } from "./ui.js";

const queue = [];
const known = new Set(); // request ids queued or shown: one asked again after a reconnect is not shown twice
let showing = false;

const ACTIONS = {
  open_link: { icon: "external", verb: "wants to open a link in your browser" },
  message: { icon: "message", verb: "wants to post a message in the chat" },
  download: { icon: "download", verb: "wants to save a file" },
  sampling: { icon: "sparkle", verb: "wants to ask the model a question" },
  display_mode: { icon: "shield", verb: "wants to change how it is shown", once: true },
  permissions: { icon: "shield", verb: "wants to use devices of this computer", once: true },
};

const MODES = { fullscreen: "fill the whole window", pip: "float above the chat (picture in picture)" };
const DEVICES = {
  camera: "your camera",
  microphone: "your microphone",
  geolocation: "your location",
  clipboardWrite: "writing to your clipboard",
};

/** Every block the app sends, as the model or the person will get it: text, resources, images, data. */
function blockParts(blocks) {
  const parts = [];
  for (const b of Array.isArray(blocks) ? blocks : [blocks]) {
    if (!b || typeof b !== "object") continue;
    if (b.type === "text") parts.push(h("blockquote", { class: "consent-quote", text: String(b.text ?? "") }));
    else if (b.type === "resource" && b.resource && typeof b.resource === "object") {
      const r = b.resource;
      parts.push(h("div", { class: "consent-label", text: `Resource ${r.uri || ""} (${r.mimeType || "no type"})` }));
      const body =
        typeof r.text === "string"
          ? r.text
          : typeof r.blob === "string"
            ? `[${r.blob.length} characters of base64 data]`
            : "";
      if (body) parts.push(h("blockquote", { class: "consent-quote", text: body }));
    } else if (b.type === "image" || b.type === "audio") {
      parts.push(
        h("div", {
          class: "consent-label",
          text:
            `${b.type === "image" ? "An image" : "Audio"} (${b.mimeType || "no type"}, ` +
            `${String(b.data || "").length} characters of base64 data)`,
        }),
      );
    } else {
      // resource_link, structured content and anything newer: shown whole, as JSON.
      parts.push(h("div", { class: "consent-label", text: b.type ? `A "${b.type}" block` : "Data" }));
      parts.push(h("pre", { class: "block consent-quote", text: JSON.stringify(b, null, 2) }));
    }
  }
  return parts;
}

function describe(action, detail = {}) {
  const parts = [];
  if (action === "open_link" && detail.url) {
    // The host comes from the core's browser-exact reading of the address (core/links.py): where the link goes.
    if (detail.host) {
      const note = detail.international ? " (an international name, written as your browser sends it)" : "";
      parts.push(
        h(
          "p",
          { class: "small consent-host" },
          "Opens ",
          h("strong", { text: detail.host }),
          ` in your browser${note}`,
        ),
      );
    }
    parts.push(h("code", { class: "consent-value", text: detail.url }));
  } else if (action === "download") {
    const names = Array.isArray(detail.files) ? detail.files : [detail.filename || detail.name || "a file"];
    for (const name of names) parts.push(h("code", { class: "consent-value", text: String(name) }));
  } else if (action === "sampling" && Array.isArray(detail.messages)) {
    // Everything the model will get: the system prompt first, then every block of every message (S10).
    if (typeof detail.systemPrompt === "string" && detail.systemPrompt) {
      parts.push(
        h("div", { class: "consent-label", text: "System prompt" }),
        h("blockquote", { class: "consent-quote", text: detail.systemPrompt }),
      );
    }
    for (const m of detail.messages) {
      parts.push(
        h("div", { class: "consent-label", text: m?.role === "assistant" ? "As the model" : "As the person" }),
      );
      parts.push(...blockParts(m?.content));
    }
  } else if (action === "message") {
    // Every block, not only text: a resource block reaches the model too (S1).
    parts.push(...blockParts(detail.content ?? (detail.text !== undefined ? { type: "text", text: detail.text } : [])));
  } else if (action === "display_mode") {
    parts.push(
      h("p", {
        class: "small",
        text: `It asks to ${MODES[detail.mode] || detail.mode}. You did not click in it just before, so Moka asks.`,
      }),
    );
  } else if (action === "permissions" && Array.isArray(detail.permissions)) {
    for (const p of detail.permissions) parts.push(h("code", { class: "consent-value", text: DEVICES[p] || p }));
    parts.push(
      h("p", {
        class: "small",
        text: "Your browser or system may ask as well. The answer holds for this app until Moka quits.",
      }),
    );
  } else if (detail && Object.keys(detail).length) {
    parts.push(h("pre", { class: "block", text: JSON.stringify(detail, null, 2) }));
  }
  return parts;
}

function ask(req) {
  if (!req?.requestId || known.has(req.requestId)) return;
  known.add(req.requestId);
  queue.push(req);
  next();
}

function catchUp() {
  api
    .call("consent.pending")
    .then((reqs) => {
      for (const req of reqs || []) ask(req);
    })
    .catch(() => {});
}

/** What is asked: who asks for what, the details, and the box that remembers the answer. */
function consentBody(req, a, remember) {
  return h(
    "div",
    { class: "stack" },
    h(
      "div",
      { class: "consent-head" },
      h("div", { class: "consent-icon" }, icon(a.icon, { size: 20 })),
      h("p", {}, h("strong", { text: req.server || "An app" }), ` ${a.verb}.`),
    ),
    describe(req.action, req.detail || {}),
    // A one-off question (display mode, devices) has no setting to remember.
    a.once
      ? null
      : h(
          "label",
          { class: "check-row small" },
          remember,
          h("span", { text: "Remember my choice for every app (you can change it in Settings)" }),
        ),
  );
}

function next() {
  if (showing || !queue.length) return;
  showing = true;
  const req = queue.shift();
  const a = ACTIONS[req.action] || { icon: "shield", verb: `asks for "${req.action}"` };
  let answered = false;
  const remember = h("input", { type: "checkbox", id: "consent-remember" });
  const answer = (allow) => {
    if (answered) return;
    answered = true;
    // `action` tells the core which setting a remembered answer changes.
    api
      .call("consent.answer", { requestId: req.requestId, allow, remember: remember.checked, action: req.action })
      .catch(() => {});
  };
  const allow = button("Allow", {
    variant: "primary",
    id: "consent-allow",
    onclick: () => {
      answer(true);
      dlg.close();
    },
  });
  const deny = button("Deny", {
    id: "consent-deny",
    onclick: () => {
      answer(false);
      dlg.close();
    },
  });
  const dlg = openDialog({
    title: "Allow this app?",
    id: "consent-dialog",
    className: "consent",
    body: consentBody(req, a, remember),
    actions: [deny, allow],
    // Closing without a choice (Esc, ×) is a "no": nothing happens without a yes.
    onClose: () => {
      answer(false);
      showing = false;
      next();
    },
  });
  deny.focus();
}

function b64ToBytes(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

export function initConsent() {
  api.on("consent.request", ask);
  // A request made while the socket was down (or before a reload) went to no page: ask for them.
  api.on("api.reconnected", catchUp);
  catchUp();
  api.on("download.ready", (d) => {
    if (!d?.dataBase64) return;
    downloadBlob(
      d.filename || "download",
      new Blob([b64ToBytes(d.dataBase64)], { type: d.mimeType || "application/octet-stream" }),
    );
  });
}
