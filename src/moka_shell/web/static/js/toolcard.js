// Tool-call cards (chat) and tool results (chat and Tool runner): name, server, arguments
// and result folded in <details>, errors in place, slots for the server's questions and progress
// while the call runs, and a slot where the call's views mount.

import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { jsonView } from "./json.js";
import { approvalPanel } from "./approval.js";
import { spinner } from "./ui.js";

const STATUS_TEXT = {
  streaming: "Preparing",
  approval: "Waiting for you",
  running: "Running",
  done: "Done",
  error: "Failed",
  cancelled: "Cancelled",
  denied: "Not allowed",
};

function fold(label, content, open = false) {
  const d = h("details", { class: "fold" }, h("summary", {}, icon("chevron", { size: 14 }), label), content);
  d.open = open;
  return d;
}

function statusIcon(status) {
  if (status === "running" || status === "streaming") return spinner(STATUS_TEXT[status]);
  if (status === "error") return icon("alert", { size: 15, className: "tone-danger" });
  if (status === "cancelled") return icon("stop", { size: 15, className: "tone-muted" });
  if (status === "approval") return icon("shield", { size: 15, className: "tone-warning" });
  if (status === "denied") return icon("shield", { size: 15, className: "tone-muted" });
  return icon("check", { size: 15, className: "tone-success" });
}

/** Render an MCP CallToolResult: content items, then structuredContent folded as JSON. */
export function renderToolResult(result, { openStructured = false } = {}) {
  const out = h("div", { class: "tool-result" });
  if (!result || typeof result !== "object") {
    out.append(jsonView(result));
    return out;
  }
  for (const item of Array.isArray(result.content) ? result.content : []) out.append(renderContent(item));
  if (result.structuredContent !== undefined)
    out.append(fold("structuredContent", jsonView(result.structuredContent), openStructured));
  if (result._meta !== undefined) out.append(fold("_meta", jsonView(result._meta)));
  if (!out.childNodes.length) out.append(h("p", { class: "muted", text: "The tool returned no content." }));
  return out;
}

function renderContent(item) {
  if (!item || typeof item !== "object") return jsonView(item);
  switch (item.type) {
    case "text":
      return h("pre", { class: "block tool-text", text: item.text ?? "" });
    case "image":
      // A data: URL built from the server's base64; an <img> cannot run script.
      if (typeof item.data === "string" && /^image\/[\w.+-]+$/.test(item.mimeType || ""))
        return h("img", {
          class: "tool-image",
          alt: "Image returned by the tool",
          src: `data:${item.mimeType};base64,${item.data}`,
        });
      return jsonView(item);
    case "audio":
      if (typeof item.data === "string" && /^audio\/[\w.+-]+$/.test(item.mimeType || ""))
        return h("audio", { controls: true, src: `data:${item.mimeType};base64,${item.data}` });
      return jsonView(item);
    case "resource_link":
      return h(
        "div",
        { class: "tool-resource" },
        icon("link", { size: 14 }),
        h("code", { text: item.uri || "" }),
        item.name ? h("span", { class: "muted", text: item.name }) : null,
      );
    case "resource":
      return fold(
        `resource ${item.resource?.uri || ""}`,
        item.resource?.text !== undefined
          ? h("pre", { class: "block", text: item.resource.text })
          : jsonView(item.resource),
      );
    default:
      return jsonView(item);
  }
}

/** Create a tool-call card for `call`; update it later with updateToolCard. */
export function createToolCard(call) {
  const card = h("div", { class: "tool-card", "data-call-id": call.id });
  card._parts = {
    icon: h("span", { class: "tool-status-icon" }),
    status: h("span", { class: "tool-status" }),
    kind: h("span", { class: "tool-kind" }),
    name: h("code", { class: "tool-name" }),
    appBadge: h("span", { class: "badge tool-app-badge", text: "App tool", hidden: true }),
    server: h("span", { class: "tool-server" }),
    details: h("div", { class: "tool-details" }),
    error: h("div", { class: "tool-error", role: "alert", hidden: true }),
    approval: h("div", { class: "tool-approval" }),
    // A server's question (js/elicitation.js) and its progress (js/progress.js) while the call runs.
    elicit: h("div", { class: "tool-elicit" }),
    progress: h("div", { class: "tool-progress", hidden: true }),
    views: h("div", { class: "tool-views" }),
  };
  const p = card._parts;
  card.append(
    h(
      "div",
      { class: "tool-head" },
      p.icon,
      p.kind,
      p.name,
      p.appBadge,
      p.server,
      h("span", { class: "grow" }),
      p.status,
    ),
    p.approval,
    p.elicit,
    p.progress,
    p.details,
    p.error,
    p.views,
  );
  updateToolCard(card, call);
  return card;
}

export function updateToolCard(card, call) {
  const p = card._parts;
  const prev = card._call || {};
  const merged = { ...prev, ...call };
  card._call = merged;
  card.dataset.status = merged.status || "running";
  p.name.textContent = merged.tool || merged.modelName || "tool";
  showOwner(card, merged);
  p.status.textContent = STATUS_TEXT[merged.status] || merged.status || "";
  clear(p.icon).append(statusIcon(merged.status));
  // The approval card stands in the call's place while the core waits; it goes once answered.
  const waiting = merged.status === "approval" && merged.approval;
  if (!waiting) {
    delete merged.approval;
    clear(p.approval);
    card._approvalFor = null;
  } else if (card._approvalFor !== merged.id) {
    clear(p.approval).append(approvalPanel(merged));
    card._approvalFor = merged.id;
  }
  p.details.hidden = Boolean(waiting);
  // Progress belongs to a running call; a question ends with its call (elicitation.done also says so).
  if (merged.status !== "running") {
    clear(p.progress);
    p.progress.hidden = true;
    clear(p.elicit);
    card.classList.remove("is-asking");
  }
  // Rebuild the folds only when their data changed, so an open <details> stays open.
  const argsKey = JSON.stringify(merged.arguments ?? null);
  const resultKey = merged.result === undefined ? "" : JSON.stringify(merged.result);
  if (argsKey !== card._argsKey || resultKey !== card._resultKey) {
    const wasOpen = Array.from(p.details.querySelectorAll(":scope > details")).map((d) => d.open);
    card._argsKey = argsKey;
    card._resultKey = resultKey;
    clear(p.details).append(fold("Arguments", jsonView(merged.arguments ?? {}), wasOpen[0]));
    if (merged.result !== undefined)
      p.details.append(
        fold(merged.result?.isError ? "Result (error)" : "Result", renderToolResult(merged.result), wasOpen[1]),
      );
  }
  const err = merged.error
    ? typeof merged.error === "string"
      ? merged.error
      : merged.error.message || JSON.stringify(merged.error)
    : "";
  p.error.hidden = !err;
  clear(p.error);
  if (err) p.error.append(icon("alert", { size: 14 }), h("span", { text: err }));
  return card;
}

/** Whose tool this is: a server's, or (draft spec, app-provided tools) a live app view's. */
function showOwner(card, call) {
  const p = card._parts;
  const app = call.app && typeof call.app === "object" ? call.app : null;
  card.classList.toggle("is-app-tool", Boolean(app));
  p.appBadge.hidden = !app;
  const kind = app ? "app" : "tool";
  if (p.kind.dataset.kind !== kind) {
    p.kind.dataset.kind = kind;
    clear(p.kind).append(icon(kind, { size: 14, className: "tone-muted" }));
  }
  if (app) p.server.textContent = `of the ${app.title || "app"} view · ${call.server}`;
  else p.server.textContent = call.server ? `on ${call.server}` : "";
}

export const toolCardViews = (card) => card._parts.views;
