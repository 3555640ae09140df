// The config file changed under Moka (an editor, `moka servers add` in a terminal, another Moka):
// the core has merged it already; the screens fetch what they show again. A file that can't be
// read (often one half-way through an edit) is said once, in words; the last good settings stay.

import { api } from "./api.js";
import { store } from "./store.js";
import { toast } from "./ui.js";

export function initConfigEvents() {
  api.on("config.changed", (d) => {
    // Servers arrive by servers.changed; any other top-level key may show on some screen.
    if ((d?.keys || []).length) store.refreshSettings().catch(() => {});
  });
  api.on("config.problem", (err) => {
    const what = err?.message || "the config file can't be read";
    toast(`${what} — Moka keeps the settings it had; fix the file and they are picked up.`, {
      tone: "error",
      timeout: 9000,
    });
  });
}
