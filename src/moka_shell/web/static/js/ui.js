// Shared widgets: buttons, native <dialog> wrappers, toasts and a small popup menu.
// Native <dialog> gives focus trapping and Esc-to-close for free.

import { h, clear } from "./dom.js";
import { icon } from "./icons.js";

/** A text button, optionally with a leading icon. variant: primary | secondary | ghost | danger. */
export function button(
  label,
  { icon: iconName, variant = "secondary", onclick, id, title, type = "button", small, ...rest } = {},
) {
  return h(
    "button",
    { type, id, title, onclick, class: `btn btn-${variant}${small ? " btn-sm" : ""}`, ...rest },
    iconName ? icon(iconName, { size: small ? 15 : 16 }) : null,
    label ? h("span", { text: label }) : null,
  );
}

/** A square icon-only button; `label` becomes its accessible name and tooltip. */
export function iconButton(name, label, { onclick, id, className = "", pressed, size = 18, ...rest } = {}) {
  const btn = h(
    "button",
    {
      type: "button",
      id,
      class: `icon-btn ${className}`.trim(),
      "aria-label": label,
      title: label,
      onclick,
      ...rest,
    },
    icon(name, { size }),
  );
  if (pressed !== undefined) btn.setAttribute("aria-pressed", String(Boolean(pressed)));
  return btn;
}

export function badge(text, tone = "neutral", extra = {}) {
  return h("span", { class: `badge badge-${tone}`, text, ...extra });
}

export function spinner(label = "Working") {
  return h("span", { class: "spinner", role: "status", "aria-label": label });
}

// ---- dialogs -------------------------------------------------------------------------------

const layer = () => document.getElementById("overlay-root") || document.body;

/**
 * Open a modal dialog. `body` is a node; `actions` are buttons. Returns {dialog, close}.
 * `onClose` runs once however it closes (button, Esc, or code).
 */
export function openDialog({ title, body, actions = [], onClose, className = "", id, labelledBy }) {
  const titleId = `dlg-title-${Math.random().toString(36).slice(2, 8)}`;
  const dialog = h(
    "dialog",
    { class: `dialog ${className}`.trim(), id, "aria-labelledby": labelledBy || titleId },
    h(
      "form",
      { method: "dialog", class: "dialog-inner", onsubmit: (e) => e.preventDefault() },
      h(
        "header",
        { class: "dialog-head" },
        h("h2", { id: titleId, class: "dialog-title", text: title }),
        iconButton("close", "Close", { className: "dialog-x", onclick: () => close() }),
      ),
      h("div", { class: "dialog-body" }, body),
      actions.length ? h("footer", { class: "dialog-actions" }, actions) : null,
    ),
  );
  let closed = false;
  const close = (value) => {
    if (closed) return;
    closed = true;
    if (dialog.open) dialog.close();
    dialog.remove();
    onClose?.(value);
  };
  dialog.addEventListener("close", () => close());
  // Clicking the dimmed backdrop (the dialog element itself, outside the inner form) closes it.
  dialog.addEventListener("mousedown", (e) => {
    if (e.target === dialog) close();
  });
  layer().append(dialog);
  dialog.showModal();
  return { dialog, close };
}

/** Ask a yes/no question; resolves true/false. */
export function confirmDialog({ title, message, confirmLabel = "OK", danger = false }) {
  return new Promise((resolve) => {
    let answer = false;
    const ok = button(confirmLabel, {
      variant: danger ? "danger" : "primary",
      onclick: () => {
        answer = true;
        dlg.close();
      },
    });
    const cancel = button("Cancel", { onclick: () => dlg.close() });
    const dlg = openDialog({
      title,
      body: h("p", { class: "dialog-text", text: message }),
      actions: [cancel, ok],
      onClose: () => resolve(answer),
    });
    ok.focus();
  });
}

/** Ask for one line of text; resolves the string or null. */
export function promptDialog({ title, label, value = "", confirmLabel = "Save" }) {
  return new Promise((resolve) => {
    let answer = null;
    const input = h("input", { class: "input", value, "aria-label": label });
    const submit = () => {
      answer = input.value;
      dlg.close();
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        submit();
      }
    });
    const dlg = openDialog({
      title,
      body: h("label", { class: "field" }, h("span", { class: "field-label", text: label }), input),
      actions: [
        button("Cancel", { onclick: () => dlg.close() }),
        button(confirmLabel, { variant: "primary", onclick: submit }),
      ],
      onClose: () => resolve(answer),
    });
    input.select();
  });
}

// ---- toasts --------------------------------------------------------------------------------

export function toast(message, { tone = "info", timeout = 4500, action } = {}) {
  let host = document.getElementById("toasts");
  if (!host) {
    host = h("div", { id: "toasts", class: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(host);
  }
  const item = h(
    "div",
    { class: `toast toast-${tone}` },
    icon(tone === "error" ? "alert" : tone === "success" ? "check" : "info", { size: 16 }),
    h("span", { text: message }),
    action
      ? h("button", {
          type: "button",
          class: "toast-action",
          text: action.label,
          onclick: () => {
            item.remove();
            action.onclick();
          },
        })
      : null,
    iconButton("close", "Dismiss", { className: "toast-x", size: 14, onclick: () => item.remove() }),
  );
  host.append(item);
  if (timeout) setTimeout(() => item.remove(), timeout);
  return item;
}

/** Show an error from a failed call as a toast (for actions with no better place). */
export const toastError = (err) => toast(err?.message || String(err), { tone: "error", timeout: 7000 });

// ---- popup menu ----------------------------------------------------------------------------

let openMenu = null;

/** Show a menu anchored to `anchor`; items: [{label, icon, onclick, danger, mode}] (`mode`: data-mode). */
export function showMenu(anchor, items) {
  closeMenu();
  const menu = h(
    "div",
    { class: "menu", role: "menu" },
    items.map((item) =>
      h(
        "button",
        {
          type: "button",
          role: "menuitem",
          class: `menu-item${item.danger ? " danger" : ""}`,
          "data-mode": item.mode,
          onclick: () => {
            closeMenu();
            item.onclick();
          },
        },
        item.icon ? icon(item.icon, { size: 15 }) : null,
        h("span", { text: item.label }),
      ),
    ),
  );
  document.body.append(menu);
  const r = anchor.getBoundingClientRect();
  const left = Math.min(r.left, window.innerWidth - menu.offsetWidth - 8);
  const top = r.bottom + menu.offsetHeight + 4 > window.innerHeight ? r.top - menu.offsetHeight - 4 : r.bottom + 4;
  menu.style.left = `${Math.max(8, left)}px`;
  menu.style.top = `${Math.max(8, top)}px`;
  const onKey = (e) => {
    const buttons = Array.from(menu.querySelectorAll("button"));
    const i = buttons.indexOf(document.activeElement);
    if (e.key === "Escape") {
      closeMenu();
      anchor.focus();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      buttons[(i + 1) % buttons.length].focus();
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      buttons[(i - 1 + buttons.length) % buttons.length].focus();
    }
  };
  const onDown = (e) => {
    if (!menu.contains(e.target) && e.target !== anchor) closeMenu();
  };
  menu.addEventListener("keydown", onKey);
  setTimeout(() => document.addEventListener("mousedown", onDown), 0);
  openMenu = { menu, cleanup: () => document.removeEventListener("mousedown", onDown) };
  menu.querySelector("button")?.focus();
}

export function closeMenu() {
  if (!openMenu) return;
  openMenu.cleanup();
  openMenu.menu.remove();
  openMenu = null;
}

/** An empty-state block: icon, title and a line of help. */
export function emptyState(iconName, title, text, ...extra) {
  return h(
    "div",
    { class: "empty" },
    h("div", { class: "empty-icon" }, icon(iconName, { size: 28 })),
    h("h3", { class: "empty-title", text: title }),
    text ? h("p", { class: "empty-text", text }) : null,
    extra,
  );
}

export { clear };
