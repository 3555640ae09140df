// `moka dev`'s live reload, on the view cards: while the app's server restarts after an edit its
// cards say so, and when the reload fails (the server does not start, its resource cannot be read)
// the card says why and keeps showing the last good version, until the next good edit reloads it.
// The core re-renders the views themselves (a new view.created for the same card: views/host.js).

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { spinner } from "../ui.js";

const MAX_SHOWN = 4000; // characters of an error a card shows (the Inspector keeps it whole)

const cardsOf = (server) =>
  [...document.querySelectorAll(".view-card[data-server]")].filter((c) => c.dataset.server === server);

/** The card's reload strip, made (right below its header) if it has none. */
function stripOf(card) {
  let strip = card.querySelector(":scope > .view-reload");
  if (!strip) {
    strip = h("div", { class: "view-reload", role: "status" });
    card.querySelector(":scope > .view-head")?.after(strip);
  }
  return strip;
}

function show(card, state, message) {
  const strip = stripOf(card);
  strip.dataset.state = state;
  strip.setAttribute("role", state === "failed" ? "alert" : "status");
  strip.replaceChildren(
    state === "failed" ? icon("alert", { size: 14 }) : spinner("Reloading"),
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: state === "failed" ? "Reload failed" : "Restarting the server after your edit…" }),
      message ? h("pre", { class: "view-reload-error", text: message.slice(0, MAX_SHOWN) }) : null,
      state === "failed"
        ? h("span", {
            class: "muted small",
            text: "This is the last version that worked; Moka reloads it when you save again.",
          })
        : null,
    ),
  );
}

/** One dev.reload event from the core (core/dev/reload.py). */
export function onDevReload(d) {
  if (!d || typeof d.server !== "string") return;
  const errors = d.errors && typeof d.errors === "object" ? d.errors : {};
  for (const card of cardsOf(d.server)) {
    if (d.state === "restarting") show(card, "reloading", "");
    else if (d.state === "failed") show(card, "failed", String(d.error || "The server did not start."));
    else if (typeof errors[card.dataset.viewId] === "string") show(card, "failed", errors[card.dataset.viewId]);
    else card.querySelector(":scope > .view-reload")?.remove();
  }
}

api.on("dev.reload", onDevReload);
