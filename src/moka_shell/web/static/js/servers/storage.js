// The server card's storage line: what this server's views keep in the localStorage and
// sessionStorage Moka gives them (core/views/storage.py), and a Clear button.

import { api } from "../api.js";
import { h } from "../dom.js";
import { button, confirmDialog, toastError } from "../ui.js";

function amount(units) {
  if (units < 1000) return `${units}`;
  if (units < 1e6) return `${(units / 1000).toFixed(1)} K`;
  return `${(units / 1e6).toFixed(2)} M`;
}

function describe(u) {
  const items = u.localItems + u.sessionItems;
  if (!items) return "Nothing stored";
  const used = u.localUnits + u.sessionUnits;
  return `${items} item${items === 1 ? "" : "s"} · ${amount(used)} characters`;
}

/** The storage line for server `name`; fills itself in when the usage arrives. */
export function storageLine(name) {
  const text = h("span", { class: "server-storage-text", text: "…" });
  const clearBtn = button("Clear", {
    small: true,
    variant: "ghost",
    icon: "trash",
    "data-action": "clear-storage",
    title: `Forget what ${name}'s views stored`,
    disabled: true,
  });
  const show = (u) => {
    text.textContent = describe(u);
    text.title =
      `localStorage: ${amount(u.localUnits)} of ${amount(u.quota)} characters (per server); ` +
      `sessionStorage: ${amount(u.sessionUnits)} (up to ${amount(u.quota)} per view)`;
    clearBtn.disabled = !(u.localItems + u.sessionItems);
  };
  clearBtn.addEventListener("click", async () => {
    const ok = await confirmDialog({
      title: `Clear ${name}'s stored data?`,
      danger: true,
      confirmLabel: "Clear",
      message:
        "Its views lose what they saved (drawings, positions, form input). Open views see empty storage at once.",
    });
    if (!ok) return;
    clearBtn.disabled = true;
    try {
      show(await api.call("storage.clear", { server: name }));
    } catch (err) {
      toastError(err);
      clearBtn.disabled = false;
    }
  });
  api
    .call("storage.usage", { server: name })
    .then(show)
    .catch(() => {
      text.textContent = "—";
    });
  return h(
    "div",
    { class: "server-storage", "data-server": name },
    h("span", { class: "server-storage-label", text: "Storage" }),
    text,
    h("span", { class: "grow" }),
    clearBtn,
  );
}
