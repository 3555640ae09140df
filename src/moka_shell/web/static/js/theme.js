// Applies the core's Theme to the page: `resolved` picks the built-in light/dark token set
// ([data-theme]) and `ui` overrides individual --moka-* tokens, so a plugin theme restyles
// Moka itself, not just the views. "system" mode follows prefers-color-scheme.

import { api } from "./api.js";

const root = document.documentElement;
const media = matchMedia("(prefers-color-scheme: dark)");
let applied = []; // custom properties set by the last theme, removed before the next one
let current = null;

export function applyTheme(theme) {
  if (!theme) return;
  current = theme;
  const resolved = theme.resolved === "dark" ? "dark" : "light";
  root.dataset.theme = resolved;
  root.style.colorScheme = resolved;
  for (const name of applied) root.style.removeProperty(name);
  applied = [];
  for (const [name, value] of Object.entries(theme.ui || {})) {
    // Only custom properties: a theme must not be able to set arbitrary inline styles.
    if (!name.startsWith("--") || typeof value !== "string") continue;
    root.style.setProperty(name, value);
    applied.push(name);
  }
  applyFonts(theme.fonts);
  api.emit("theme.applied", theme);
}

// The theme's fonts CSS (the @font-face rules views get as styles.css.fonts), so Moka's own page
// draws in the same fonts its views are told about. A constructed sheet: no inline <style> needed.
let fontSheet = null;
function applyFonts(css) {
  if (typeof CSSStyleSheet !== "function" || !("adoptedStyleSheets" in document)) return;
  if (!fontSheet) {
    fontSheet = new CSSStyleSheet();
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, fontSheet];
  }
  fontSheet.replaceSync(typeof css === "string" ? css : "");
}

export const currentTheme = () => current;

/** Tell the core what the OS prefers; it answers with the Theme to use. */
export async function reportSystemTheme() {
  try {
    applyTheme(await api.call("theme.system", { dark: media.matches }));
  } catch (err) {
    console.warn("theme.system failed", err);
  }
}

export function initTheme() {
  // Before the core answers, follow the mode the desktop read from the config (?mode=, the page
  // loads while the core starts), else the OS, so the first paint is not a white flash at night.
  const asked = new URLSearchParams(location.search).get("mode");
  const first = asked === "dark" || asked === "light" ? asked : media.matches ? "dark" : "light";
  root.dataset.theme = first;
  api.on("theme.changed", applyTheme);
  media.addEventListener("change", reportSystemTheme);
}
