// The Tool runner: pick a server and a tool, fill a form generated from its inputSchema (or
// raw JSON), run it with no model involved, and see the result and its view below. A running
// call shows the server's progress and questions in its entry, and has a Stop button.

import { api } from "./api.js";
import { h, append, clear } from "./dom.js";
import { icon } from "./icons.js";
import { button, badge, emptyState, toastError } from "./ui.js";
import { createSchemaForm } from "./schema-form.js";
import { renderToolResult } from "./toolcard.js";
import { jsonView } from "./json.js";
import { store } from "./store.js";
import { renderInline } from "./markdown/render.js";
import { followEntry } from "./runner-follow.js";
import { toolMarks } from "./servers/extras.js";
import { SCREEN_INFO } from "./screens.js";

let ctx;
let serverSel, toolSel, toolInfo, formHost, rawArea, rawError, rawToggle, runBtn, results, pickCard;
let form = null;
let raw = false;
let current = null; // the selected ToolInfo
const drafts = new Map(); // "server/tool" -> last arguments, so switching tools keeps work
const runs = []; // result entries, newest first
let wanted = null; // {server, tool} from a deep link, applied once the lists have loaded

const keyOf = (t) => `${t.server}/${t.name}`;

function renderServers() {
  const chosen = wanted?.server || serverSel.value;
  clear(serverSel);
  const servers = store.servers || [];
  if (!servers.length) serverSel.append(h("option", { value: "", text: "No servers configured" }));
  for (const s of servers) {
    serverSel.append(h("option", { value: s.name, text: s.status === "ready" ? s.name : `${s.name} (${s.status})` }));
  }
  if (servers.some((s) => s.name === chosen)) serverSel.value = chosen;
  renderTools();
}

function renderTools(preferred) {
  const chosen = preferred || (wanted?.server === serverSel.value && wanted.tool) || toolSel.value;
  const tools = (store.tools || []).filter((t) => t.server === serverSel.value);
  // A server restarting (`moka dev` after a save, Restart) lists no tools for a while: keep the
  // tool picked, to pick it again when they are back rather than the server's first.
  if (!tools.length && current?.server === serverSel.value && !wanted)
    wanted = { server: current.server, tool: current.name };
  clear(toolSel);
  if (!tools.length)
    toolSel.append(h("option", { value: "", text: store.toolsLoaded ? "No tools" : "Loading tools…" }));
  for (const t of tools)
    toolSel.append(
      h("option", { value: t.name, text: t.title && t.title !== t.name ? `${t.name} — ${t.title}` : t.name }),
    );
  if (tools.some((t) => t.name === chosen)) {
    toolSel.value = chosen;
    if (wanted?.tool === chosen) wanted = null;
  }
  selectTool(tools.find((t) => t.name === toolSel.value) || null);
}

function selectTool(tool) {
  if (current && form && !raw) drafts.set(keyOf(current), form.getValue({ validate: false }).value);
  if (current && raw) {
    try {
      drafts.set(keyOf(current), JSON.parse(rawArea.value || "{}"));
    } catch {
      /* keep the older draft */
    }
  }
  const same =
    current &&
    tool &&
    keyOf(current) === keyOf(tool) &&
    JSON.stringify(current.inputSchema) === JSON.stringify(tool.inputSchema);
  current = tool;
  runBtn.disabled = !tool;
  if (same) return;
  clear(toolInfo);
  clear(formHost);
  form = null;
  if (!tool) {
    toolInfo.append(
      h("p", { class: "muted", text: serverSel.value ? "Choose a tool." : "Add a server to run its tools." }),
    );
    return;
  }
  const vis = tool.visibility || ["model", "app"];
  append(toolInfo, [
    h(
      "div",
      { class: "row wrap" },
      h("code", { class: "runner-tool-name", text: tool.name }),
      toolMarks(tool),
      tool.title && tool.title !== tool.name ? h("span", { class: "muted", text: tool.title }) : null,
      tool.resourceUri ? badge("Has app", "accent", { title: tool.resourceUri }) : null,
      !vis.includes("model")
        ? badge("App-only", "warning", { title: "Hidden from the model; its app can call it" })
        : null,
    ),
    tool.description ? h("p", { class: "runner-desc" }, renderInline(tool.description)) : null,
    tool.resourceUri
      ? h("p", { class: "muted small" }, icon("app", { size: 13 }), " ", h("code", { text: tool.resourceUri }))
      : null,
    // What is wrong with the tool's metadata (a resourceUri that is not ui://: no app will be shown).
    ...(tool.problems || []).map((problem, i) =>
      h(
        "p",
        { class: "notice warn small runner-problem", id: i ? null : "runner-problem", role: "note" },
        icon("alert", { size: 14 }),
        h("span", { text: problem }),
      ),
    ),
  ]);
  form = createSchemaForm(tool.inputSchema, { onChange: () => {} });
  const draft = drafts.get(keyOf(tool));
  if (draft) form.setValue(draft);
  formHost.append(form.el);
  if (raw) rawArea.value = JSON.stringify(form.getValue({ validate: false }).value, null, 2);
}

function setRaw(on) {
  if (on === raw) return;
  if (on) {
    rawArea.value = JSON.stringify(form ? form.getValue({ validate: false }).value : {}, null, 2);
  } else {
    let value;
    try {
      value = rawArea.value.trim() ? JSON.parse(rawArea.value) : {};
    } catch (err) {
      showRawError(`Fix the JSON before going back to the form: ${err.message}`);
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      showRawError("Arguments must be a JSON object.");
      return;
    }
    form?.setValue(value);
  }
  raw = on;
  showRawError("");
  rawToggle.setAttribute("aria-pressed", String(raw));
  formHost.hidden = raw;
  rawArea.parentElement.hidden = !raw;
  (raw ? rawArea : formHost.querySelector("input, select, textarea"))?.focus();
}

function showRawError(message) {
  rawError.hidden = !message;
  rawError.textContent = message;
  rawArea.setAttribute("aria-invalid", String(Boolean(message)));
}

function readArguments() {
  if (raw) {
    try {
      const value = rawArea.value.trim() ? JSON.parse(rawArea.value) : {};
      if (!value || typeof value !== "object" || Array.isArray(value))
        throw new Error("Arguments must be a JSON object.");
      showRawError("");
      return value;
    } catch (err) {
      showRawError(err.message);
      return null;
    }
  }
  const got = form.getValue();
  if (!got.ok) {
    form.focusFirstError();
    return null;
  }
  return got.value;
}

// ---- runs and results ----------------------------------------------------------------------

let runSeq = 0;
const newRunId = () => `run-${Date.now().toString(36)}-${++runSeq}`;

function newEntry(server, tool, args, runId = null) {
  const status = badge("Running", "info");
  const views = h("div", { class: "runner-views" });
  const body = h(
    "div",
    { class: "runner-result-body" },
    h("div", { class: "row muted small" }, h("span", { class: "spinner" }), "Waiting for the server…"),
  );
  // Stop cancels the call as the chat's Stop does: the server is told (notifications/cancelled).
  const stop = runId
    ? button("Stop", {
        small: true,
        variant: "secondary",
        icon: "stop",
        "aria-label": `Stop ${tool}`,
        onclick: () => stopRun(entry),
      })
    : null;
  stop?.classList.add("runner-stop");
  const el = h(
    "article",
    { class: "card runner-result", "data-server": server, "data-tool": tool, "data-run-id": runId || undefined },
    h(
      "header",
      { class: "runner-result-head" },
      icon("tool", { size: 15, className: "tone-muted" }),
      h("code", { class: "tool-name", text: tool }),
      h("span", { class: "tool-server", text: `on ${server}` }),
      h("span", { class: "grow" }),
      h("span", { class: "muted small", text: new Date().toLocaleTimeString() }),
      status,
      stop,
    ),
    args
      ? h(
          "details",
          { class: "fold runner-args" },
          h("summary", {}, icon("chevron", { size: 14 }), "Arguments"),
          jsonView(args),
        )
      : null,
    // A server's question (js/elicitation.js) and its progress (js/progress.js) while the call runs.
    h("div", { class: "runner-elicit" }),
    h("div", { class: "runner-progress", hidden: true }),
    body,
    views,
  );
  const entry = { server, tool, el, status, body, views, stop, runId, running: true, hasView: false };
  runs.unshift(entry);
  results.querySelector(".empty")?.remove();
  results.prepend(el);
  // A new run lands at the top of the results, which may be off screen: it is kept in view as it grows.
  requestAnimationFrame(() => followEntry(el));
  return entry;
}

// With an app view, the text result is what the model would read: kept, but folded away.
function foldText(entry) {
  const result = entry.body.querySelector(":scope > .tool-result");
  if (!entry.hasView || !result || entry.body.querySelector(".runner-text-fold")) return;
  const fold = h(
    "details",
    { class: "fold runner-text-fold" },
    h("summary", {}, icon("chevron", { size: 14 }), "Text result"),
  );
  result.replaceWith(fold);
  fold.append(result);
}

async function run() {
  if (!current) return;
  const args = readArguments();
  if (args === null) return;
  const runId = newRunId();
  const entry = newEntry(current.server, current.name, args, runId);
  const started = performance.now();
  runBtn.disabled = true;
  setTimeout(() => {
    runBtn.disabled = !current;
  }, 300); // guard against double clicks, not against re-runs
  try {
    const res = await api.call("tools.run", { server: current.server, tool: current.name, arguments: args, runId });
    if (res?.stopped) {
      setStatus(entry, badge("Stopped", "neutral"));
      clear(entry.body).append(
        h("p", { class: "muted small runner-stopped", text: "Stopped. The server was told to cancel the call." }),
      );
      return;
    }
    const ms = Math.round(performance.now() - started);
    const isError = Boolean(res?.result?.isError);
    setStatus(entry, badge(isError ? `Tool error · ${ms} ms` : `Done · ${ms} ms`, isError ? "warning" : "success"));
    clear(entry.body).append(renderToolResult(res?.result));
    foldText(entry);
    entry.el.dataset.callId = res?.callId || "";
  } catch (err) {
    setStatus(entry, badge("Failed", "danger"));
    clear(entry.body).append(
      h("div", { class: "tool-error", role: "alert" }, icon("alert", { size: 14 }), h("span", { text: err.message })),
    );
  } finally {
    entry.running = false;
    entry.stop?.remove();
    clearSlot(entry.el.querySelector(".runner-progress"));
  }
}

function clearSlot(slot) {
  if (slot) {
    clear(slot);
    slot.hidden = true;
  }
}

async function stopRun(entry) {
  if (!entry.running || !entry.runId) return;
  entry.stop.disabled = true;
  try {
    await api.call("tools.stop", { runId: entry.runId });
  } catch (err) {
    entry.stop.disabled = false;
    toastError(err);
  }
}

/** Show `next` as the run's status badge. */
function setStatus(entry, next) {
  entry.status.replaceWith(next);
  entry.status = next;
}

/** Views with no conversation come from the Tool runner: mount them under their run. */
function placeView(data) {
  if (data.conversationId) return null;
  let entry =
    runs.find((r) => r.running && !r.hasView && r.server === data.server && r.tool === data.tool) ||
    runs.find((r) => !r.hasView && r.server === data.server && r.tool === data.tool);
  if (!entry) {
    entry = newEntry(data.server, data.tool, null);
    entry.running = false;
    setStatus(entry, badge("View", "accent"));
    clear(entry.body);
  }
  entry.hasView = true;
  if (!entry.running) foldText(entry);
  return entry.views;
}

// ---- screen --------------------------------------------------------------------------------

/** The server and tool pickers, in their card. */
function buildPicker() {
  serverSel = h("select", {
    class: "select",
    id: "runner-server",
    "aria-label": "Server",
    onchange: () => {
      wanted = null;
      renderTools();
    },
  });
  toolSel = h("select", {
    class: "select",
    id: "runner-tool",
    "aria-label": "Tool",
    onchange: () => {
      wanted = null;
      renderTools(toolSel.value);
    },
  });
  toolInfo = h("div", { class: "runner-info", id: "runner-info" });
  pickCard = h(
    "section",
    { class: "card runner-pick" },
    h(
      "div",
      { class: "split" },
      h("label", { class: "field" }, h("span", { class: "field-label", text: "Server" }), serverSel),
      h("label", { class: "field" }, h("span", { class: "field-label", text: "Tool" }), toolSel),
    ),
    toolInfo,
  );
}

/** The arguments card: the generated form or raw JSON, and Run (Ctrl+Enter runs too). */
function buildArguments() {
  formHost = h("div", { class: "runner-form", id: "runner-form" });
  rawArea = h("textarea", {
    class: "textarea code",
    id: "runner-raw",
    rows: 10,
    spellcheck: "false",
    "aria-label": "Arguments as JSON",
  });
  rawError = h("div", { class: "field-error", hidden: true, role: "alert" });
  rawToggle = h(
    "button",
    {
      type: "button",
      class: "btn btn-sm btn-ghost",
      id: "runner-raw-toggle",
      "aria-pressed": "false",
      onclick: () => setRaw(!raw),
    },
    icon("filter", { size: 14 }),
    h("span", { text: "Raw JSON" }),
  );
  runBtn = button("Run", { variant: "primary", icon: "play", id: "runner-run", onclick: run });
  const card = h(
    "section",
    { class: "card runner-args-card" },
    h(
      "header",
      { class: "card-head" },
      h("h2", { class: "card-title", text: "Arguments" }),
      h("span", { class: "grow" }),
      rawToggle,
    ),
    h("div", { class: "card-body" }, formHost, h("div", { class: "stack", hidden: true }, rawArea, rawError)),
    h(
      "footer",
      { class: "card-foot" },
      h("span", { class: "muted small" }, h("kbd", { text: "Ctrl" }), " + ", h("kbd", { text: "Enter" }), " runs"),
      h("span", { class: "grow" }),
      runBtn,
    ),
  );
  card.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  return card;
}

export default {
  ...SCREEN_INFO.runner,

  init(section, context) {
    ctx = context;
    buildPicker();
    const formCard = buildArguments();
    results = h(
      "div",
      { class: "runner-results", id: "runner-results" },
      emptyState("runner", "No runs yet", "Results and app views of the tools you run appear here."),
    );
    // Wide windows put the form and the results side by side (css: .runner-layout).
    section.append(
      h(
        "div",
        { class: "screen-scroll" },
        h(
          "div",
          { class: "screen-inner runner runner-layout" },
          h("div", { class: "runner-side" }, pickCard, formCard),
          h("div", { class: "runner-main" }, h("h2", { class: "section-title", text: "Results" }), results),
        ),
      ),
    );
    store.on("servers", renderServers);
    store.on("tools", () => renderTools());
    ctx.views.addPlacer(placeView);
  },

  show(params = {}) {
    if (params.server) {
      wanted = { server: params.server, tool: params.tool };
      renderServers();
    } else if (!current) renderServers();
  },

  actions() {
    return [
      button("Clear results", {
        small: true,
        variant: "ghost",
        icon: "trash",
        id: "runner-clear",
        onclick: () => {
          // Entries holding a live view stay: removing them would tear the view down silently.
          for (const r of runs.filter((x) => !x.running && !x.views.childElementCount)) {
            r.el.remove();
            runs.splice(runs.indexOf(r), 1);
          }
          if (!runs.length)
            clear(results).append(
              emptyState("runner", "No runs yet", "Results and app views of the tools you run appear here."),
            );
        },
      }),
    ];
  },

  focusSearch() {
    toolSel.focus();
  },
};
