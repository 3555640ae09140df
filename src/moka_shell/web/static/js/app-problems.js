// What Moka could not do for itself, said where the person sees it: a plugin that blocked or
// broke, a server entry that failed to load, an inspector log that can't be written, a damaged
// conversation database shown from a read-only copy. The core lists them in app.info `problems`;
// this strip shows them under the top bar until dismissed (a dismissed problem stays hidden for
// the rest of the page's life, a new one shows the strip again).

import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { store } from "./store.js";

const SHOWN = 3; // problems listed before "and N more"

export function initProblems() {
  const strip = h("div", { class: "banner problems", id: "app-problems", role: "status", hidden: true });
  document.getElementById("conn-banner")?.after(strip);
  const dismissed = new Set();
  const render = (info) => {
    const problems = (info?.problems || []).filter((p) => typeof p === "string" && !dismissed.has(p));
    strip.hidden = problems.length === 0;
    clear(strip);
    if (!problems.length) return;
    const list = h(
      "ul",
      { class: "problems-list" },
      ...problems.slice(0, SHOWN).map((p) => h("li", { text: p.split("\n")[0], title: p })),
    );
    if (problems.length > SHOWN)
      list.append(h("li", { class: "problems-more", text: `and ${problems.length - SHOWN} more` }));
    strip.append(
      h("span", { class: "problems-icon", "aria-hidden": "true" }, icon("alert", { size: 16 })),
      h(
        "div",
        { class: "problems-body" },
        h("strong", {
          text: problems.length === 1 ? "Moka found a problem" : `Moka found ${problems.length} problems`,
        }),
        list,
      ),
      h(
        "button",
        {
          class: "icon-btn problems-dismiss",
          type: "button",
          title: "Dismiss",
          "aria-label": "Dismiss",
          onclick: () => {
            for (const p of problems) dismissed.add(p);
            render(store.info);
          },
        },
        icon("close", { size: 14 }),
      ),
    );
  };
  store.on("info", render);
  render(store.info);
}
