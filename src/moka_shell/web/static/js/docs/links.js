// The docs' own links, made absolute before the Markdown renderer sees them: it keeps only http,
// https and mailto targets, so "plugins.md#hooks" becomes this page's address for that page.

const PAGE_LINK = /\]\((?:\.\/)?([a-z0-9][a-z0-9-]*)\.md(#[^)\s]*)?\)/g;

const COMMENT = /<!--[\s\S]*?-->\n?/g; // marks for the docs' own tests, not for readers

/** `text` with every link to a sibling page (`name.md`, `./name.md#part`) pointing at `/docs/#name`. */
export function linkPages(text, origin) {
  return text
    .replace(COMMENT, "")
    .replace(PAGE_LINK, (_whole, name, part) => `](${origin}/docs/#${name}${part ? `:${part.slice(1)}` : ""})`);
}

/** The page and heading a docs address names (`#plugins:hooks`), or null for another address. */
export function pageOf(href, origin) {
  let url;
  try {
    url = new URL(href, `${origin}/docs/`);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.pathname !== "/docs/") return null;
  const [name, part] = decodeURIComponent(url.hash.slice(1)).split(":");
  return { name: name || "", part: part || "" };
}

/** The anchor GitHub would give a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}
