// The server card's "Tool approvals" fold: the person's standing choices for this server's tools
// (config `approval.servers`, applied by core/chat/approval.py), shown and edited in place with
// approval.set. "Decided by its annotations" clears a choice.

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { toastError } from "../ui.js";
import { store } from "../store.js";

const SERVER_CHOICES = [
  ["", "Decided by each tool"],
  ["ask", "Ask every time"],
  ["allow", "Always allow"],
  ["deny", "Never allow"],
];
const TOOL_CHOICES = [
  ["", "Server's default"],
  ["ask", "Ask"],
  ["allow", "Always allow"],
  ["deny", "Never allow"],
];
const WORDS = { ask: "ask", allow: "always allow", deny: "never allow" };

function saved(server) {
  return store.settings?.approval?.servers?.[server] || { default: null, tools: {} };
}

function summary(rule) {
  const count = Object.keys(rule.tools || {}).length;
  const parts = [rule.default ? `every tool: ${WORDS[rule.default]}` : "decided by each tool"];
  if (count) parts.push(`${count} tool choice${count === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

function choiceSelect(options, value, label, onchange) {
  const sel = h(
    "select",
    { class: "select select-small", "aria-label": label, onchange: (e) => onchange(e.target.value || null) },
    options.map(([v, text]) => h("option", { value: v, text, selected: (value || "") === v })),
  );
  return sel;
}

function annotationWords(tool, trusted) {
  const a = tool.annotations || {};
  if (a.readOnlyHint) return trusted ? "read-only" : "says read-only";
  if (a.destructiveHint) return "destructive";
  if (a.openWorldHint) return "reaches outside";
  return "";
}

async function choose(server, tool, choice, label) {
  try {
    await api.call("approval.set", tool ? { server, tool, choice } : { server, choice });
    await store.refreshSettings();
    label.textContent = `Tool approvals (${summary(saved(server))})`;
  } catch (err) {
    toastError(err);
  }
}

// Settings may arrive after the cards (both load at start) or change in Settings: relabel the folds.
store.on("settings", () => {
  for (const fold of document.querySelectorAll(".server-approvals")) {
    const label = fold.querySelector(".server-approvals-label");
    if (label) label.textContent = `Tool approvals (${summary(saved(fold.dataset.server))})`;
  }
});

/** The switch for trusting the server's tool annotations (config `trustAnnotations`, security finding G3). */
function trustRow(s) {
  const box = h("input", {
    type: "checkbox",
    class: "server-trust",
    checked: Boolean(s.trustsAnnotations),
    onchange: async () => {
      try {
        await api.call("servers.trustAnnotations", { name: s.name, trust: box.checked });
        s.trustsAnnotations = box.checked;
      } catch (err) {
        box.checked = !box.checked;
        toastError(err);
      }
    },
  });
  return h(
    "label",
    { class: "server-trust-row" },
    box,
    h(
      "span",
      { class: "grow" },
      h("span", { text: "Trust this server's tool hints" }),
      h("span", {
        class: "field-help",
        text:
          "Hints such as “read-only” are the server's own claims. Trusted, the tools it marks read-only " +
          "run without asking; otherwise they ask like any other.",
      }),
    ),
  );
}

/** The fold for server `s` (its tools are listed once it is open and ready). */
export function approvalsFold(s) {
  const body = h("div", { class: "server-approvals-body stack" });
  const label = h("span", { class: "server-approvals-label", text: `Tool approvals (${summary(saved(s.name))})` });
  const fold = h(
    "details",
    { class: "fold server-approvals", "data-server": s.name },
    h("summary", {}, icon("chevron", { size: 14 }), label),
    body,
  );
  let filled = false;
  const fill = async () => {
    if (filled) return;
    filled = true;
    const rule = saved(s.name); // read when opened: settings have arrived by then
    clear(body).append(
      trustRow(s),
      h(
        "div",
        { class: "server-approvals-row" },
        h("span", { class: "grow", text: "Every tool of this server" }),
        choiceSelect(SERVER_CHOICES, rule.default, `Every tool of ${s.name}`, (c) => choose(s.name, null, c, label)),
      ),
    );
    let tools = [];
    if (s.status === "ready") {
      try {
        tools = await api.call("tools.list", { server: s.name });
      } catch {
        tools = [];
      }
    }
    const names = new Set([...Object.keys(rule.tools || {}), ...tools.map((t) => t.name)]);
    const byName = new Map(tools.map((t) => [t.name, t]));
    if (!names.size)
      body.append(h("p", { class: "small muted", text: "No tools to list (the server is not connected)." }));
    for (const name of [...names].sort()) {
      const tool = byName.get(name) || { name };
      const words = annotationWords(tool, s.trustsAnnotations);
      body.append(
        h(
          "div",
          { class: "server-approvals-row", "data-tool": name },
          h("code", { class: "grow server-approvals-tool", text: name, title: tool.title || tool.description || name }),
          words ? h("span", { class: "badge badge-neutral", text: words }) : null,
          choiceSelect(TOOL_CHOICES, rule.tools?.[name], `${name} on ${s.name}`, (c) => choose(s.name, name, c, label)),
        ),
      );
    }
  };
  fold.addEventListener("toggle", () => {
    if (fold.open) fill();
  });
  return fold;
}
