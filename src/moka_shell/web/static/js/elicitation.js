// A server's question to the person (elicitation.request), shown in the place of the call that asked:
// the chat's tool card or the Tool runner's entry (a dialog when that call is not on the page).
// Form mode: a form built from the server's requestedSchema (the Tool runner's schema-form). URL mode:
// the server's message, the host and the address as the core normalised them (core/links.py reads it the
// way browsers do, so the host shown is the host opened); it is opened only when the person says so.
// Accept / Decline / Cancel go to `elicitation.answer`; `elicitation.done` removes the card.

import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { button, openDialog, toast, toastError } from "./ui.js";
import { createSchemaForm } from "./schema-form.js";
import { slotFor } from "./progress.js";

const open = new Map(); // requestId -> {el, close?}
let navigate = () => {};

/** URL mode: where the link goes, in full, before the person opens it. */
function urlBody(req) {
  return h(
    "div",
    { class: "elicit-url" },
    h(
      "div",
      { class: "elicit-domain" },
      icon("external", { size: 15 }),
      // The host as the browser will send it (core/links.py); an international name in its xn-- form.
      h(
        "span",
        {},
        "Opens ",
        h("strong", { class: "elicit-host", text: req.domain || "a web page" }),
        " in your browser",
        req.international ? " (an international name, written as your browser sends it)" : "",
      ),
    ),
    h("code", { class: "elicit-address", text: req.url || "" }),
  );
}

/** Form mode: the form, and a reminder of who reads it. */
function formBody(req, form) {
  return h(
    "div",
    { class: "elicit-form" },
    form.el,
    h("p", {
      class: "elicit-note",
      text: `What you send goes to ${req.server || "the server"}. Never enter passwords or keys here.`,
    }),
  );
}

/** Cancel, Decline, and Send (form) or Open (URL). */
function answerButtons(req, answer) {
  return [
    button("Cancel", { variant: "ghost", small: true, "data-action": "cancel", onclick: () => answer("cancel") }),
    button("Decline", {
      variant: "secondary",
      small: true,
      "data-action": "decline",
      onclick: () => answer("decline"),
    }),
    button(req.mode === "url" ? `Open ${req.domain || "page"}` : "Send", {
      variant: "primary",
      small: true,
      "data-action": "accept",
      icon: req.mode === "url" ? "external" : undefined,
      onclick: () => answer("accept"),
    }),
  ];
}

/** The card's frame: who asks and what, then `body` (the form or the address), `problem` and `buttons`. */
function questionCard(req, body, problem, buttons) {
  const who = h("strong", { text: req.server || "A server" });
  return h(
    "section",
    {
      class: "elicit",
      "data-request-id": req.requestId,
      "data-mode": req.mode,
      "aria-label": `${req.server || "A server"} asks you something`,
    },
    h(
      "div",
      { class: "elicit-head" },
      h("span", { class: "elicit-icon" }, icon(req.mode === "url" ? "link" : "message", { size: 15 })),
      h("span", {}, who, req.mode === "url" ? " wants to send you to a web page" : " asks you"),
    ),
    req.message ? h("p", { class: "elicit-message", text: req.message }) : null,
    body,
    problem,
    h("div", { class: "elicit-actions" }, h("span", { class: "grow" }), buttons),
  );
}

/** The card for one question; `onAnswered` runs once the core took the answer. */
export function elicitationPanel(req, { onAnswered } = {}) {
  const problem = h("div", { class: "elicit-problem", role: "alert", hidden: true });
  const buttons = [];
  const say = (text) => {
    problem.hidden = !text;
    problem.textContent = text || "";
  };
  // After a refused Send, fixing the fields clears the messages as the person types.
  const recheck = () => {
    if (!problem.hidden && form.getValue().ok) say("");
  };
  const form =
    req.mode === "form" ? createSchemaForm(req.requestedSchema || { type: "object" }, { onChange: recheck }) : null;
  const answer = async (action) => {
    let content;
    if (action === "accept" && form) {
      const got = form.getValue();
      if (!got.ok) {
        form.focusFirstError();
        say("Check the fields marked above.");
        return;
      }
      content = got.value;
    }
    say("");
    for (const b of buttons) b.disabled = true;
    try {
      await api.call("elicitation.answer", { requestId: req.requestId, action, ...(content ? { content } : {}) });
      onAnswered?.(action);
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      say(err.message);
    }
  };
  buttons.push(...answerButtons(req, answer));
  const el = questionCard(req, req.mode === "url" ? urlBody(req) : formBody(req, form), problem, buttons);
  el.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      answer("accept");
    }
  });
  return el;
}

function isShown(el) {
  return Boolean(el.offsetParent) && !el.closest("[hidden]");
}

function place(req) {
  if (!req?.requestId || open.has(req.requestId)) return;
  const slot = slotFor(req.where, req.callId, req.where === "chat" ? "tool-elicit" : "runner-elicit");
  if (slot) {
    const el = elicitationPanel(req, { onAnswered: () => done(req) });
    clear(slot).append(el);
    slot.closest(".tool-card, .runner-result")?.classList.add("is-asking");
    open.set(req.requestId, { el });
    if (!isShown(el)) {
      toast(`${req.server || "A server"} asks you something`, {
        timeout: 8000,
        action: {
          label: "Show",
          onclick: () => {
            navigate(req.where === "chat" ? "chat" : "runner");
            el.scrollIntoView({ block: "center" });
          },
        },
      });
    } else el.scrollIntoView({ block: "nearest" });
    (el.querySelector("input, select, textarea") || el.querySelector('[data-action="accept"]'))?.focus({
      preventScroll: true,
    });
    return;
  }
  // Asked by a call with no card on this page (a view's own call, another window's run): a dialog.
  let dlg;
  const el = elicitationPanel(req, {
    onAnswered: () => {
      open.delete(req.requestId);
      dlg?.close();
    },
  });
  dlg = openDialog({
    title: "A server asks you something",
    id: "elicit-dialog",
    className: "elicit-dialog",
    body: el,
    // Closing without a choice is a Cancel: the server is told, nothing is sent.
    onClose: () => {
      if (open.has(req.requestId))
        api.call("elicitation.answer", { requestId: req.requestId, action: "cancel" }).catch(() => {});
      open.delete(req.requestId);
    },
  });
  open.set(req.requestId, { el, close: () => dlg.close() });
}

function done(d) {
  const entry = open.get(d?.requestId);
  if (!entry) return;
  open.delete(d.requestId);
  entry.el.closest(".tool-card, .runner-result")?.classList.remove("is-asking");
  if (entry.close) entry.close();
  else entry.el.remove();
}

async function catchUp() {
  try {
    for (const req of (await api.call("elicitation.pending")) || []) place(req);
  } catch (err) {
    toastError(err);
  }
}

export function initElicitation(opts = {}) {
  navigate = opts.navigate || navigate;
  api.on("elicitation.request", place);
  api.on("elicitation.done", done);
  api.on("api.reconnected", catchUp);
  catchUp();
}
