// The approval card: shown in a tool call's place while the core waits for the person to
// allow it (status "approval"). Everything the call would do is visible, and the arguments
// can be edited as JSON before allowing. Answers go to `chat.approve`.

import { api } from "./api.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { button, toastError } from "./ui.js";

const pretty = (value) => JSON.stringify(value ?? {}, null, 2);

/** Parse the edited arguments; a readable message when they are not one JSON object. */
function parseArguments(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Not valid JSON: ${err.message}` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    return { error: "The arguments must be one JSON object ({ … })." };
  return { value };
}

/** Deny, Trust the server's hints (when that lets it run), Always allow (not in an app's turn), Allow once. */
function decisionButtons(a, server, answer) {
  return [
    button("Deny", { variant: "secondary", small: true, "data-decision": "deny", onclick: () => answer("deny") }),
    // Annotations are the server's claims: trusting them is a standing choice about the server (G3).
    a.offerTrust
      ? button(`Trust ${server}'s hints`, {
          variant: "secondary",
          small: true,
          "data-decision": "trust",
          title: `Go by what ${server} says about its tools from now on: its read-only tools run without asking`,
          onclick: () => answer("trust"),
        })
      : null,
    // An app-started turn cannot save "always": the person's standing choices are for their own requests.
    a.fromApp
      ? null
      : button("Always allow this tool", {
          variant: "secondary",
          small: true,
          "data-decision": "always",
          onclick: () => answer("always"),
        }),
    button("Allow once", { variant: "primary", small: true, "data-decision": "once", onclick: () => answer("once") }),
  ];
}

/** Says that an app, not the person, started this turn. */
function appOrigin(fromApp) {
  return h(
    "div",
    { class: "approval-origin" },
    icon("app", { size: 13 }),
    h("span", {
      text: `A message from the ${fromApp.tool} app of server ${fromApp.server} started this turn, not you.`,
    }),
  );
}

/** The call's arguments as JSON in a text area, and the line that says what is wrong with an edit. */
function argumentsEditor(args) {
  const original = pretty(args);
  const editor = h("textarea", {
    class: "approval-args",
    spellcheck: false,
    autocomplete: "off",
    "aria-label": "Arguments (JSON)",
    value: original,
    rows: Math.min(12, Math.max(3, original.split("\n").length)),
  });
  const problem = h("div", { class: "approval-problem", role: "alert", hidden: true });
  editor.addEventListener("input", () => {
    problem.hidden = true;
  });
  /** The edited arguments: undefined when unchanged, null (said, the editor focused) when not one JSON object. */
  const edited = () => {
    if (editor.value === original) return undefined;
    const parsed = parseArguments(editor.value);
    problem.hidden = !parsed.error;
    problem.textContent = parsed.error || "";
    if (!parsed.error) return parsed.value;
    editor.focus();
    return null;
  };
  return { editor, problem, edited };
}

/** Build the approval panel for `call` (which carries `approval` from the core). */
export function approvalPanel(call) {
  const a = call.approval || {};
  const { editor, problem, edited } = argumentsEditor(call.arguments);
  const buttons = [];
  const answer = async (decision) => {
    const args = decision === "deny" ? undefined : edited();
    if (args === null) return;
    for (const b of buttons) b.disabled = true;
    try {
      await api.call("chat.approve", { callId: call.id, decision, ...(args ? { arguments: args } : {}) });
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      toastError(err);
    }
  };
  buttons.push(...decisionButtons(a, call.server, answer).filter(Boolean));
  const title = a.title && a.title !== call.tool ? a.title : null;
  const owner = call.app ? ` of the ${call.app.title || "app"} view` : "";
  return h(
    "section",
    { class: "approval", "aria-label": `Allow ${call.tool} on ${call.server}?` },
    // The card's head already names the tool and its server; this says what is asked.
    h("div", {
      class: "approval-question",
      text: title ? `Allow “${title}”${owner} to run?` : `Allow this tool${owner} to run?`,
    }),
    a.fromApp ? appOrigin(a.fromApp) : null,
    h(
      "ul",
      { class: "approval-hints" },
      (a.words || []).map((w) => h("li", { text: w })),
    ),
    h("label", { class: "approval-label", text: "Arguments (you can edit them)" }),
    editor,
    problem,
    h(
      "div",
      { class: "approval-actions" },
      h("span", { class: "approval-reason", text: a.reason ? `Asked because ${a.reason}.` : "" }),
      h("span", { class: "grow" }),
      buttons,
    ),
  );
}
