// A small, safe Markdown renderer for model text. It builds DOM nodes directly: every piece
// of text goes through textContent, so no markup in the input can reach the page. Supported:
// headings, paragraphs, emphasis, strikethrough, inline code, fenced code (with a copy
// button), lists (nested by indentation), blockquotes, rules, pipe tables and links
// (http, https and mailto only).

import { h, copyText } from "./dom.js";
import { icon } from "./icons.js";

const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** Render `text` into a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  blocks(
    String(text ?? "")
      .replace(/\r\n?/g, "\n")
      .split("\n"),
    frag,
  );
  return frag;
}

// ---- blocks ------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function blocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let m;
    if ((m = line.match(FENCE))) {
      const fence = m[1];
      const body = [];
      i++;
      // An unclosed fence (still streaming) runs to the end of the text.
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++;
      parent.append(codeBlock(body.join("\n"), m[2]));
    } else if ((m = line.match(HEADING))) {
      parent.append(inline(h(`h${Math.min(m[1].length + 1, 6)}`, { class: "md-h" }), m[2]));
      i++;
    } else if (RULE.test(line)) {
      parent.append(h("hr"));
      i++;
    } else if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = lines[i].match(QUOTE))) {
        inner.push(m[1]);
        i++;
      }
      const quote = h("blockquote");
      blocks(inner, quote);
      parent.append(quote);
    } else if (LIST_ITEM.test(line)) {
      i = list(lines, i, parent);
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      i = table(lines, i, parent);
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++]);
      if (!para.length) para.push(lines[i++]);
      const p = h("p");
      para.forEach((text, n) => {
        // A line ending in two spaces or a backslash is a hard break; otherwise a soft one.
        if (n) p.append(/( {2}|\\)$/.test(para[n - 1]) ? h("br") : " ");
        inline(p, text.replace(/( {2,}|\\)$/, "").trim());
      });
      parent.append(p);
    }
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
    (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]))
  );
}

function list(lines, start, parent) {
  const first = lines[start].match(LIST_ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const el = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) el.start = parseInt(first[2], 10);
  let i = start;
  let item = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = line.match(LIST_ITEM);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      item = { text: [m[3]], children: [] };
      el.append(renderItem(item));
      i++;
      continue;
    }
    if (!line.trim()) {
      // A blank line ends the list unless the next line continues it (indented or another item).
      const next = lines[i + 1] || "";
      const nm = next.match(LIST_ITEM);
      if ((nm && nm[1].length >= indent) || (next.trim() && /^\s{2,}/.test(next) && leading(next) > indent)) {
        i++;
        continue;
      }
      break;
    }
    if (m && m[1].length > indent) {
      // A nested list belongs to the current item.
      const holder = el.lastElementChild || el;
      i = list(lines, i, holder);
      continue;
    }
    if (leading(line) > indent && item) {
      el.lastElementChild.append(" ");
      inline(el.lastElementChild, line.trim());
      i++;
      continue;
    }
    if (m || startsBlock(lines, i)) break;
    // A lazy continuation line of the item's paragraph.
    if (item) {
      el.lastElementChild.append(" ");
      inline(el.lastElementChild, line.trim());
      i++;
      continue;
    }
    break;
  }
  parent.append(el);
  return i;
}

const leading = (line) => line.length - line.trimStart().length;

function renderItem(item) {
  const li = h("li");
  const task = item.text[0].match(/^\[([ xX])\]\s+(.*)$/);
  if (task) {
    li.className = "md-task";
    li.append(h("input", { type: "checkbox", checked: task[1] !== " ", disabled: true, "aria-label": "task" }), " ");
    return inline(li, task[2]);
  }
  return inline(li, item.text[0]);
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

function table(lines, start, parent) {
  const head = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : "",
  );
  const thead = h(
    "thead",
    {},
    h(
      "tr",
      {},
      head.map((c, n) => inline(h("th", { style: aligns[n] ? `text-align:${aligns[n]}` : null }), c)),
    ),
  );
  const tbody = h("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const cells = splitRow(lines[i]);
    tbody.append(
      h(
        "tr",
        {},
        head.map((_, n) => inline(h("td", { style: aligns[n] ? `text-align:${aligns[n]}` : null }), cells[n] || "")),
      ),
    );
    i++;
  }
  parent.append(h("div", { class: "md-table" }, h("table", {}, thead, tbody)));
  return i;
}

function codeBlock(code, lang) {
  const copy = h(
    "button",
    { type: "button", class: "md-copy", "aria-label": "Copy code", title: "Copy code" },
    icon("copy", { size: 14 }),
    h("span", { text: "Copy" }),
  );
  copy.addEventListener("click", async () => {
    const ok = await copyText(code);
    copy.lastChild.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => {
      copy.lastChild.textContent = "Copy";
    }, 1600);
  });
  return h(
    "div",
    { class: "md-code" },
    h("div", { class: "md-code-head" }, h("span", { text: lang || "text" }), copy),
    h("pre", {}, h("code", { class: lang ? `language-${lang.replace(/[^\w-]/g, "")}` : "", text: code })),
  );
}

// ---- inline ------------------------------------------------------------------------------

const ESCAPABLE = /[\\`*_{}[\]()#+\-.!~|<>]/;
const BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>"'.,:;!?)\]]/;

/** Append inline-formatted `text` to `parent`; returns parent. */
export function inline(parent, text) {
  let buf = "";
  const flush = () => {
    if (buf) {
      parent.append(buf);
      buf = "";
    }
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const rest = text.slice(i);
    let m;
    if (ch === "\\" && ESCAPABLE.test(text[i + 1] || "")) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      const run = rest.match(/^`+/)[0];
      const end = text.indexOf(run, i + run.length);
      if (end > 0) {
        flush();
        let code = text.slice(i + run.length, end);
        if (/^ .* $/.test(code)) code = code.slice(1, -1);
        parent.append(h("code", { class: "md-inline", text: code }));
        i = end + run.length;
        continue;
      }
      buf += run;
      i += run.length;
      continue;
    }
    if (ch === "[" && (m = matchLink(text, i))) {
      flush();
      parent.append(link(m.url, m.label));
      i = m.end;
      continue;
    }
    if (ch === "<" && (m = rest.match(/^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i))) {
      flush();
      parent.append(link(m[1], null));
      i += m[0].length;
      continue;
    }
    if (ch === "h" && /[\s(]|^$/.test(text[i - 1] || "") && (m = rest.match(BARE_URL))) {
      flush();
      parent.append(link(m[0], null));
      i += m[0].length;
      continue;
    }
    if ((ch === "*" || ch === "_" || ch === "~") && (m = matchEmphasis(text, i))) {
      flush();
      parent.append(inline(h(m.tag), m.inner));
      i = m.end;
      continue;
    }
    buf += ch;
    i++;
  }
  flush();
  return parent;
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
  let k = i + marker.length;
  while ((k = text.indexOf(marker, k)) > 0) {
    const before = text[k - 1];
    const next = text[k + marker.length] || "";
    if (!/\s/.test(before) && !(ch === "_" && /\w/.test(next)) && text[k + marker.length] !== ch) {
      const inner = text.slice(i + marker.length, k);
      const tag = ch === "~" ? "del" : marker.length === 1 ? "em" : "strong";
      if (marker.length === 3) return { tag: "strong", inner: `${ch}${inner}${ch}`, end: k + 3 };
      return { tag, inner, end: k + marker.length };
    }
    k += 1;
  }
  return null;
}

function link(url, label) {
  const safe = SAFE_URL.test(url.trim()) && isParsable(url.trim());
  if (!safe) {
    // Not a link we allow (javascript:, data:, relative…): keep the words, drop the target.
    const span = h("span", {
      class: "md-unsafe-link",
      title: "Link removed: only http, https and mailto links are allowed",
    });
    return label !== null ? inline(span, label) : (span.append(url), span);
  }
  const a = h("a", { href: url.trim(), target: "_blank", rel: "noopener noreferrer nofollow" });
  return label !== null ? inline(a, label) : (a.append(url), a);
}

function isParsable(url) {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}
