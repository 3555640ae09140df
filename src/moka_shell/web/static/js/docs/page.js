// Help → Documentation: Moka's own docs, read from this install at /docs/ and shown with the
// chat's Markdown renderer, in the system's light or dark look.

import { clear, h } from "../dom.js";
import { renderMarkdown } from "../markdown/render.js";
import { linkPages, pageOf, slug } from "./links.js";

const list = document.getElementById("docs-list");
const body = document.getElementById("docs-body");
const origin = location.origin;
const dark = matchMedia("(prefers-color-scheme: dark)");

function followTheSystem() {
  document.documentElement.dataset.theme = dark.matches ? "dark" : "light";
}

async function fetchText(url) {
  const reply = await fetch(url, { cache: "no-store" });
  if (!reply.ok) throw new Error(`${url}: ${reply.status} ${await reply.text()}`);
  return reply.text();
}

async function show(pages) {
  const want = pageOf(location.href, origin);
  const page = pages.find((p) => p.name === want?.name) || pages.find((p) => p.name === "install") || pages[0];
  for (const item of list.querySelectorAll("a")) item.toggleAttribute("aria-current", item.dataset.page === page.name);
  document.title = `${page.title} · Moka documentation`;
  try {
    clear(body).append(renderMarkdown(linkPages(await fetchText(`/docs/${page.name}.md`), origin)));
  } catch (err) {
    clear(body).append(h("p", { class: "docs-error", text: `This page could not be read: ${err.message}` }));
    return;
  }
  for (const heading of body.querySelectorAll(".md-h")) heading.id = slug(heading.textContent);
  const target = want?.part && document.getElementById(want.part);
  if (target) target.scrollIntoView();
  else window.scrollTo(0, 0);
}

function keepLinksHere() {
  // A link to another docs page changes the page in place; any other link opens where it would.
  body.addEventListener("click", (event) => {
    const link = event.target.closest("a[href]");
    if (!link || !pageOf(link.href, origin)) return;
    event.preventDefault();
    location.hash = new URL(link.href).hash;
  });
}

async function start() {
  followTheSystem();
  dark.addEventListener("change", followTheSystem);
  let pages;
  try {
    pages = JSON.parse(await fetchText("/docs/pages.json"));
  } catch (err) {
    body.append(h("p", { class: "docs-error", text: `Moka could not list its docs: ${err.message}` }));
    return;
  }
  if (!pages.length) {
    body.append(h("p", { class: "docs-error", text: "This install of Moka carries no docs." }));
    return;
  }
  for (const page of pages) {
    list.append(h("li", {}, h("a", { href: `#${page.name}`, "data-page": page.name, text: page.title })));
  }
  keepLinksHere();
  addEventListener("hashchange", () => show(pages));
  await show(pages);
}

start();
