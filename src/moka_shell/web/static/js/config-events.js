// The config file changed under Moka (an editor, `moka servers add` in a terminal, another Moka):
// the core has merged it already; the screens fetch what they show again. A file that can't be
// read (often one half-way through an edit) is said once, in words; the last good settings stay.
// A change made here that can't be saved yet stays in use and is saved as soon as it can: both
// moments are said (config.problem with `unsaved`, then config.saved).

import { api } from "./api.js";
import { store } from "./store.js";
import { toast } from "./ui.js";

export function initConfigEvents() {
  let problems = []; // the toasts of problems a save has since resolved are taken down with it
  api.on("config.changed", (d) => {
    // Servers arrive by servers.changed; any other top-level key may show on some screen.
    if ((d?.keys || []).length) store.refreshSettings().catch(() => {});
  });
  api.on("config.problem", (err) => {
    const what = err?.message || "the config file can't be read";
    const then = err?.unsaved
      ? "your change is in use, and Moka saves it as soon as it can."
      : "Moka keeps the settings it had; fix the file and they are picked up.";
    problems.push(toast(`${what} — ${then}`, { tone: "error", timeout: 12000 }));
  });
  api.on("config.saved", () => {
    for (const item of problems) item.remove();
    problems = [];
    toast("Your changes are saved in the config file now.", { tone: "success" });
  });
}
