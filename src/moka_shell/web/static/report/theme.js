// The `moka check --html` report's theme: the system's, until the button picks the other one.
// Inlined into the report and allowed by its hash (shells/check/html_report.py); a file:// page
// keeps nothing, so the choice lasts until the page is closed.
(() => {
  const root = document.documentElement;
  const system = matchMedia("(prefers-color-scheme: dark)");
  const button = document.getElementById("theme-toggle");
  const apply = (theme) => {
    root.dataset.theme = theme;
    if (button) button.textContent = theme === "dark" ? "Light" : "Dark";
  };
  apply(system.matches ? "dark" : "light");
  system.addEventListener("change", (e) => apply(e.matches ? "dark" : "light"));
  button?.addEventListener("click", () => apply(root.dataset.theme === "dark" ? "light" : "dark"));
  if (button) button.hidden = false;
})();
