// Markdown to a tree of plain objects, with no DOM: an element is {tag, attrs, children} (children
// are elements and strings), a fenced code block is {code, lang}. render.js turns the tree into
// DOM nodes; the tests in tests/js read it directly. Supported: headings, paragraphs, emphasis,
// strikethrough, inline code, fenced code, lists (nested by indentation, task items), blockquotes,
// rules, pipe tables and links (http, https and mailto only: any other target is dropped).

/** An element of the tree. */
export const el = (tag, attrs = {}, ...children) => ({ tag, attrs, children });

/** The block nodes of `text`. */
export function parseMarkdown(text) {
  const out = [];
  blocks(
    String(text ?? "")
      .replace(/\r\n?/g, "\n")
      .split("\n"),
    out,
  );
  return out;
}

// ---- blocks ------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

const startsTable = (lines, i) => lines[i].includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]);

/** Parse lines into `out` (an array of nodes). */
function blocks(lines, out) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) i++;
    else if (FENCE.test(line)) i = fence(lines, i, out);
    else if (HEADING.test(line)) {
      const m = line.match(HEADING);
      out.push(inline(el(`h${Math.min(m[1].length + 1, 6)}`, { class: "md-h" }), m[2]));
      i++;
    } else if (RULE.test(line)) {
      out.push(el("hr"));
      i++;
    } else if (QUOTE.test(line)) i = quote(lines, i, out);
    else if (LIST_ITEM.test(line)) i = list(lines, i, out);
    else if (startsTable(lines, i)) i = table(lines, i, out);
    else i = paragraph(lines, i, out);
  }
}

function startsBlock(lines, i) {
  const line = lines[i];
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line) ||
    startsTable(lines, i)
  );
}

function fence(lines, start, out) {
  const m = lines[start].match(FENCE);
  const body = [];
  let i = start + 1;
  // An unclosed fence (still streaming) runs to the end of the text.
  while (i < lines.length && !lines[i].trimStart().startsWith(m[1])) body.push(lines[i++]);
  out.push({ code: body.join("\n"), lang: m[2] });
  return i + 1;
}

function quote(lines, start, out) {
  const inner = [];
  let i = start;
  for (let m = lines[i]?.match(QUOTE); m; m = lines[i]?.match(QUOTE)) {
    inner.push(m[1]);
    i++;
  }
  const node = el("blockquote");
  blocks(inner, node.children);
  out.push(node);
  return i;
}

function paragraph(lines, start, out) {
  const para = [];
  let i = start;
  while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++]);
  if (!para.length) para.push(lines[i++]);
  const p = el("p");
  para.forEach((text, n) => {
    // A line ending in two spaces or a backslash is a hard break; otherwise a soft one.
    if (n) p.children.push(/( {2}|\\)$/.test(para[n - 1]) ? el("br") : " ");
    inline(p, text.replace(/( {2,}|\\)$/, "").trim());
  });
  out.push(p);
  return i;
}

const leading = (line) => line.length - line.trimStart().length;

/** Whether a blank line at i keeps the list going: the next line is an item or indented past it. */
function listGoesOn(lines, i, indent) {
  const next = lines[i + 1] || "";
  const nm = next.match(LIST_ITEM);
  return (nm && nm[1].length >= indent) || (next.trim() && /^\s{2,}/.test(next) && leading(next) > indent);
}

function list(lines, start, out) {
  const first = lines[start].match(LIST_ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.attrs.start = parseInt(first[2], 10);
  const items = node.children;
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = line.match(LIST_ITEM);
    const item = items[items.length - 1];
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      items.push(listItem(m[3]));
      i++;
    } else if (!line.trim()) {
      if (!listGoesOn(lines, i, indent)) break;
      i++;
    } else if (m && m[1].length > indent) {
      // A nested list belongs to the current item.
      i = list(lines, i, item ? item.children : items);
    } else if (item && (leading(line) > indent || !(m || startsBlock(lines, i)))) {
      // An indented or lazy continuation line of the item's paragraph.
      item.children.push(" ");
      inline(item, line.trim());
      i++;
    } else break;
  }
  out.push(node);
  return i;
}

function listItem(text) {
  const task = text.match(/^\[([ xX])\]\s+(.*)$/);
  if (!task) return inline(el("li"), text);
  const box = el("input", { type: "checkbox", checked: task[1] !== " ", disabled: true, "aria-label": "task" });
  return inline(el("li", { class: "md-task" }, box, " "), task[2]);
}

function splitRow(line) {
  const trimmed = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  const cells = [];
  let cur = "";
  for (let k = 0; k < trimmed.length; k++) {
    if (trimmed[k] === "\\" && trimmed[k + 1] === "|") {
      cur += "|";
      k++;
    } else if (trimmed[k] === "|") {
      cells.push(cur.trim());
      cur = "";
    } else cur += trimmed[k];
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, start, out) {
  const head = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : "",
  );
  const cell = (tag, n, text) => inline(el(tag, { style: aligns[n] ? `text-align:${aligns[n]}` : null }), text);
  const thead = el("thead", {}, el("tr", {}, ...head.map((c, n) => cell("th", n, c))));
  const tbody = el("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const cells = splitRow(lines[i]);
    tbody.children.push(el("tr", {}, ...head.map((_, n) => cell("td", n, cells[n] || ""))));
    i++;
  }
  out.push(el("div", { class: "md-table" }, el("table", {}, thead, tbody)));
  return i;
}

// ---- inline ------------------------------------------------------------------------------

const ESCAPABLE = /[\\`*_{}[\]()#+\-.!~|<>]/;
const BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>"'.,:;!?)\]]/;
const AUTOLINK = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/**
 * Only the inline markup of `text` (code spans, emphasis, links), as a list of nodes: for short
 * texts from servers, such as tool descriptions, that are read as one paragraph. Line breaks stay.
 */
export function parseInline(text) {
  return inline(el("span"), String(text ?? "")).children;
}

/** Append the inline nodes of `text` to `parent`'s children; returns parent. */
export function inline(parent, text) {
  const out = parent.children;
  let buf = "";
  let i = 0;
  while (i < text.length) {
    const found = inlineAt(text, i);
    if (!found) {
      buf += text[i++];
      continue;
    }
    if (found.node === undefined) buf += found.text;
    else {
      if (buf) out.push(buf);
      buf = "";
      out.push(found.node);
    }
    i = found.end;
  }
  if (buf) out.push(buf);
  return parent;
}

/** What starts at text[i]: {node, end} for markup, {text, end} for literal text, or null. */
function inlineAt(text, i) {
  const ch = text[i];
  const rest = text.slice(i);
  if (ch === "\\" && ESCAPABLE.test(text[i + 1] || "")) return { text: text[i + 1], end: i + 2 };
  if (ch === "`") return codeSpan(text, i);
  if (ch === "[") {
    const m = matchLink(text, i);
    if (m) return { node: link(m.url, m.label), end: m.end };
  }
  if (ch === "<") {
    const m = rest.match(AUTOLINK);
    if (m) return { node: link(m[1], null), end: i + m[0].length };
  }
  if (ch === "h" && /[\s(]|^$/.test(text[i - 1] || "")) {
    const m = rest.match(BARE_URL);
    if (m) return { node: link(m[0], null), end: i + m[0].length };
  }
  if (ch === "*" || ch === "_" || ch === "~") {
    const m = matchEmphasis(text, i);
    if (m) return { node: inline(el(m.tag), m.inner), end: m.end };
  }
  return null;
}

function codeSpan(text, i) {
  const run = text.slice(i).match(/^`+/)[0];
  const end = text.indexOf(run, i + run.length);
  // No closing run: the backticks are literal.
  if (end <= 0) return { text: run, end: i + run.length };
  let code = text.slice(i + run.length, end);
  if (/^ .* $/.test(code)) code = code.slice(1, -1);
  return { node: el("code", { class: "md-inline", text: code }), end: end + run.length };
}

function matchLink(text, i) {
  // [label](url "title") with balanced brackets in the label.
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    if (text[j] === "\\") {
      j++;
      continue;
    }
    if (text[j] === "[") depth++;
    else if (text[j] === "]" && --depth === 0) break;
  }
  if (j >= text.length || text[j + 1] !== "(") return null;
  // The target may hold balanced parentheses, e.g. a Wikipedia URL "…/Foo_(bar)".
  let close = -1;
  for (let k = j + 2, open = 0; k < text.length; k++) {
    if (text[k] === "(") open++;
    else if (text[k] === ")" && open-- === 0) {
      close = k;
      break;
    }
  }
  if (close < 0) return null;
  const target = text
    .slice(j + 2, close)
    .trim()
    .replace(/\s+"[^"]*"$/, "")
    .replace(/^<|>$/g, "");
  return { label: text.slice(i + 1, j), url: target, end: close + 1 };
}

function matchEmphasis(text, i) {
  const ch = text[i];
  const run = text.slice(i).match(ch === "~" ? /^~~/ : new RegExp(`^\\${ch}{1,3}`));
  if (!run) return null;
  const marker = run[0];
  const after = text[i + marker.length] || "";
  if (!after || /\s/.test(after)) return null; // "* item" or "a * b" is not emphasis
  // Underscores inside words (snake_case) are literal.
  if (ch === "_" && /\w/.test(text[i - 1] || "")) return null;
  for (let k = text.indexOf(marker, i + marker.length); k > 0; k = text.indexOf(marker, k + 1)) {
    const before = text[k - 1];
    const next = text[k + marker.length] || "";
    if (!/\s/.test(before) && !(ch === "_" && /\w/.test(next)) && text[k + marker.length] !== ch) {
      const inner = text.slice(i + marker.length, k);
      const tag = ch === "~" ? "del" : marker.length === 1 ? "em" : "strong";
      if (marker.length === 3) return { tag: "strong", inner: `${ch}${inner}${ch}`, end: k + 3 };
      return { tag, inner, end: k + marker.length };
    }
  }
  return null;
}

/** Whether `url` may be a link's target: http, https or mailto, and a URL the browser can parse. */
export function isSafeUrl(url) {
  if (!SAFE_URL.test(url.trim())) return false;
  try {
    new URL(url.trim());
    return true;
  } catch {
    return false;
  }
}

function link(url, label) {
  const node = isSafeUrl(url)
    ? el("a", { href: url.trim(), target: "_blank", rel: "noopener noreferrer nofollow" })
    : // Not a link we allow (javascript:, data:, relative…): keep the words, drop the target.
      el("span", { class: "md-unsafe-link", title: "Link removed: only http, https and mailto links are allowed" });
  if (label === null) node.children.push(url);
  else inline(node, label);
  return node;
}
