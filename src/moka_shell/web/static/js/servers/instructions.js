// The server card's instructions: what the server tells the model about its tools (its
// `instructions`), folded, with a switch for whether they go into the model's system prompt
// (`servers.setInstructions`, saved as "useInstructions" in the server's config entry).

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { toastError } from "../ui.js";

/** The instructions fold for server info `s` (nothing when the server has none). */
export function instructionsFold(s) {
  if (!s.instructions) return null;
  const on = s.config?.useInstructions !== false;
  const box = h("input", {
    type: "checkbox",
    checked: on,
    "data-action": "use-instructions",
    "aria-label": `Send ${s.name}'s instructions to the model`,
  });
  box.addEventListener("change", async () => {
    box.disabled = true;
    try {
      await api.call("servers.setInstructions", { name: s.name, enabled: box.checked });
    } catch (err) {
      box.checked = !box.checked;
      toastError(err);
    } finally {
      box.disabled = false;
    }
  });
  return h(
    "details",
    { class: "fold server-instructions" },
    h(
      "summary",
      {},
      icon("chevron", { size: 14 }),
      "Instructions for the model",
      h("span", {
        class: `badge badge-${on ? "accent" : "neutral"} server-instructions-state`,
        text: on ? "Sent" : "Off",
      }),
    ),
    h("pre", { class: "block server-instructions-text", text: s.instructions }),
    h(
      "label",
      { class: "check-row small" },
      box,
      h("span", { text: "Send these to the model in every chat (labelled as this server's words)" }),
    ),
  );
}
