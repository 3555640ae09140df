// Tiny DOM helpers. Everything is built with createElement + textContent so text from
// models, servers or views can never become markup.

/**
 * h("button", {class: "btn", onclick: fn, "aria-label": "Close"}, child, "text", [more])
 * Attribute keys: class, text, dataset-style "data-*", "aria-*", on<event> handlers,
 * and DOM properties (value, checked, disabled, hidden, ...).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (
      key.startsWith("data-") ||
      key.startsWith("aria-") ||
      key === "role" ||
      key === "for" ||
      key === "type" ||
      key === "name" ||
      key === "tabindex" ||
      key === "title" ||
      key === "id" ||
      key === "placeholder" ||
      key === "autocomplete" ||
      key === "spellcheck" ||
      key === "list"
    )
      el.setAttribute(key, value === true ? "" : String(value));
    else el[key] = value;
  }
  append(el, children);
  return el;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

/** Pretty JSON for display (never parsed back as markup). */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? "undefined";
  } catch {
    return String(value);
  }
}

/** Save text as a file through a temporary Blob link (browser and most webviews). */
export function downloadText(filename, content, mimeType = "application/octet-stream") {
  downloadBlob(filename, new Blob([content], { type: mimeType }));
}

export function downloadBlob(filename, blob) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: filename || "download", hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke later: some engines start reading the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API needs a secure context or permission; fall back to a hidden textarea.
    const ta = h("textarea", { value: text, "aria-hidden": "true", class: "offscreen" });
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  }
}

export function relativeTime(value) {
  const t = typeof value === "number" ? (value < 1e12 ? value * 1000 : value) : Date.parse(value);
  if (!Number.isFinite(t)) return "";
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  if (s < 7 * 86400) return `${Math.round(s / 86400)} d ago`;
  return new Date(t).toLocaleDateString();
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** True when the person is typing somewhere, so single-key shortcuts must not fire. */
export function isTyping(target) {
  const el = target instanceof Element ? target : null;
  return Boolean(el?.closest("input, textarea, select, [contenteditable=true]"));
}

export const prefersReducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
