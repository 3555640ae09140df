// Pretty, coloured JSON for display. The text is split into tokens and every token goes in
// through textContent; nothing is parsed as markup.

import { h } from "./dom.js";

const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false)\b|\bnull\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** A <pre class="json"> for `value`; `limit` caps very large payloads (chars) to keep the UI fast. */
export function jsonView(value, { limit = 200000, className = "" } = {}) {
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = "undefined";
  const pre = h("pre", { class: `json ${className}`.trim() });
  let truncated = false;
  if (text.length > limit) {
    text = text.slice(0, limit);
    truncated = true;
  }
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) pre.append(text.slice(last, m.index));
    let cls = "json-number";
    if (m[1]) cls = m[2] ? "json-key" : "json-string";
    else if (m[3]) cls = "json-bool";
    else if (m[0] === "null") cls = "json-null";
    pre.append(h("span", { class: cls, text: m[1] || m[0] }));
    if (m[2]) pre.append(m[2]);
    last = m.index + m[0].length;
  }
  if (last < text.length) pre.append(text.slice(last));
  if (truncated)
    pre.append(h("span", { class: "json-null", text: "\n… (truncated for display; export to see everything)" }));
  return pre;
}
