// Asks the person before a view acts outside its sandbox (consent.request), one question at a
// time, and saves files the core hands over in browser mode (download.ready).

import { api } from "./api.js";
import { h, downloadBlob } from "./dom.js";
import { icon } from "./icons.js";
import { button, openDialog } from "./ui.js";

const queue = [];
let showing = false;

const ACTIONS = {
  open_link: { icon: "external", verb: "wants to open a link in your browser" },
  message: { icon: "message", verb: "wants to post a message in the chat" },
  download: { icon: "download", verb: "wants to save a file" },
  sampling: { icon: "sparkle", verb: "wants to ask the model a question" },
};

function describe(action, detail = {}) {
  const parts = [];
  if (action === "open_link" && detail.url) parts.push(h("code", { class: "consent-value", text: detail.url }));
  else if (action === "download") {
    const names = Array.isArray(detail.files) ? detail.files : [detail.filename || detail.name || "a file"];
    for (const name of names) parts.push(h("code", { class: "consent-value", text: String(name) }));
  } else if (action === "sampling" && Array.isArray(detail.messages)) {
    // Show what the app wants to ask, as plain text.
    const text = detail.messages.map((m) => {
      const blocks = Array.isArray(m?.content) ? m.content : [m?.content];
      return blocks.map((b) => (b && b.type === "text" ? b.text : "")).join("\n");
    }).join("\n\n").trim();
    if (text) parts.push(h("blockquote", { class: "consent-quote", text }));
  } else if (action === "message") {
    const text = detail.text ?? (Array.isArray(detail.content) ? detail.content.map((c) => c?.text || "").join("\n") : detail.content?.text);
    if (text) parts.push(h("blockquote", { class: "consent-quote", text }));
  } else if (detail && Object.keys(detail).length) {
    parts.push(h("pre", { class: "block", text: JSON.stringify(detail, null, 2) }));
  }
  return parts;
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
    api.call("consent.answer", { requestId: req.requestId, allow, remember: remember.checked, action: req.action }).catch(() => {});
  };
  const allow = button("Allow", { variant: "primary", id: "consent-allow", onclick: () => { answer(true); dlg.close(); } });
  const deny = button("Deny", { id: "consent-deny", onclick: () => { answer(false); dlg.close(); } });
  const dlg = openDialog({
    title: "Allow this app?", id: "consent-dialog", className: "consent",
    body: h("div", { class: "stack" },
      h("div", { class: "consent-head" }, h("div", { class: "consent-icon" }, icon(a.icon, { size: 20 })),
        h("p", {}, h("strong", { text: req.server || "An app" }), ` ${a.verb}.`)),
      describe(req.action, req.detail || {}),
      h("label", { class: "check-row small" }, remember, h("span", { text: "Remember my choice for every app (you can change it in Settings)" }))),
    actions: [deny, allow],
    // Closing without a choice (Esc, ×) is a "no": nothing happens without a yes.
    onClose: () => { answer(false); showing = false; next(); },
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
  api.on("consent.request", (req) => { if (req?.requestId) { queue.push(req); next(); } });
  api.on("download.ready", (d) => {
    if (!d?.dataBase64) return;
    downloadBlob(d.filename || "download", new Blob([b64ToBytes(d.dataBase64)], { type: d.mimeType || "application/octet-stream" }));
  });
}
