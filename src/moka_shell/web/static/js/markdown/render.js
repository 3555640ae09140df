// A small, safe Markdown renderer for model text: parse.js reads the text into a tree, and this
// builds DOM nodes from it directly. Every piece of text goes through textContent (dom.js's h),
// so no markup in the input can reach the page; code blocks get a copy button.

import { copyText, h } from "../dom.js";
import { icon } from "../icons.js";
import { parseInline, parseMarkdown } from "./parse.js";

/** Render `text` into a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  frag.append(...parseMarkdown(text).map(toDom));
  return frag;
}

/** Render only the inline markup of `text` (a tool's description): code, emphasis and links. */
export function renderInline(text) {
  const frag = document.createDocumentFragment();
  frag.append(...parseInline(text).map(toDom));
  return frag;
}

function toDom(node) {
  if (typeof node === "string") return node;
  if (node.code !== undefined) return codeBlock(node.code, node.lang);
  return h(node.tag, node.attrs, node.children.map(toDom));
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
