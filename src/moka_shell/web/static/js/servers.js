// The Servers screen: each MCP server's status, last error and stderr, with enable/disable,
// restart and remove; plus "Add server" (stdio or HTTP) and "Import config".

import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { button, iconButton, badge, openDialog, confirmDialog, toast, toastError, emptyState } from "./ui.js";
import { store } from "./store.js";

const TONE = { ready: "success", connecting: "warning", failed: "danger", stopped: "neutral", disabled: "neutral" };
const STDERR_LINES = 200;
let list;
let ctx;

function render(servers) {
  if (!document.getElementById("screen-servers")?.hidden) ctx.setSubtitle(subtitle());
  clear(list);
  if (!servers.length) {
    list.append(emptyState("servers", "No servers yet", "Add an MCP server, or import the config of Claude Desktop, Cursor or VS Code.",
      h("div", { class: "row" }, button("Add server", { icon: "plus", variant: "primary", onclick: addDialog }), button("Import config", { icon: "upload", onclick: importDialog }))));
    return;
  }
  for (const s of servers) list.append(serverCard(s));
}

function serverCard(s) {
  const busy = (btn, work) => async () => {
    btn.disabled = true;
    try { await work(); } catch (err) { toastError(err); } finally { btn.disabled = false; }
  };
  const enabled = s.status !== "disabled";
  const toggle = button(enabled ? "Disable" : "Enable", { small: true, icon: "power", "data-action": "toggle" });
  toggle.addEventListener("click", busy(toggle, () => api.call("servers.setEnabled", { name: s.name, enabled: !enabled })));
  const restart = button("Restart", { small: true, icon: "restart", "data-action": "restart", disabled: !enabled });
  restart.addEventListener("click", busy(restart, () => api.call("servers.restart", { name: s.name })));
  const remove = iconButton("trash", `Remove ${s.name}`, { "data-action": "remove", className: "danger-hover" });
  remove.addEventListener("click", busy(remove, async () => {
    const ok = await confirmDialog({ title: `Remove ${s.name}?`, message: "Moka stops the server and removes it from the config file.", confirmLabel: "Remove", danger: true });
    if (ok) { await api.call("servers.remove", { name: s.name }); store.refreshServers(); }
  }));
  const stderr = s.stderr || [];
  const facts = [
    ["Transport", s.transport],
    ["Tools", s.status === "ready" ? String(s.toolCount ?? 0) : "—"],
    ["Server", s.serverInfo ? `${s.serverInfo.name} ${s.serverInfo.version || ""}`.trim() : "—"],
    ["Protocol", s.protocolVersion || "—"],
  ];
  return h("article", { class: "card server-card", "data-server": s.name, "data-status": s.status },
    h("header", { class: "server-head" },
      h("div", { class: "server-icon" }, icon("servers", { size: 18 })),
      h("div", { class: "grow" }, h("h3", { class: "server-name", text: s.name })),
      h("span", { class: "status-badge badge badge-dot badge-" + (TONE[s.status] || "neutral"), "data-status": s.status, text: s.status })),
    h("dl", { class: "server-facts" }, facts.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { text: v || "—", title: v || "" })))),
    s.error ? h("div", { class: "server-error", role: "alert" }, icon("alert", { size: 15 }), h("div", { class: "grow" }, h("strong", { text: "Last error" }), h("p", { text: s.error }))) : null,
    stderr.length ? h("details", { class: "fold server-stderr" },
      h("summary", {}, icon("chevron", { size: 14 }), `stderr (${stderr.length} line${stderr.length === 1 ? "" : "s"})`),
      h("pre", { class: "block", text: stderr.slice(-STDERR_LINES).join("\n") })) : null,
    h("footer", { class: "server-actions" }, toggle, restart, h("span", { class: "grow" }),
      iconButton("runner", `Run ${s.name}'s tools`, { "data-action": "tools", disabled: s.status !== "ready", onclick: () => ctx.navigate("runner", { server: s.name }) }),
      iconButton("inspector", `${s.name}'s messages in the Inspector`, { "data-action": "messages", onclick: () => ctx.navigate("inspector", { server: s.name }) }),
      remove));
}

// ---- add and import ------------------------------------------------------------------------

/** Split a command line like a shell would for quotes: `node "my dir/x.js" --flag`. */
export function splitArgs(text) {
  const out = [];
  let cur = "";
  let quote = null;
  let has = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === '"' || c === "'") { quote = c; has = true; }
    else if (/\s/.test(c)) { if (cur || has) out.push(cur); cur = ""; has = false; }
    else if (c === "\\" && i + 1 < text.length) { cur += text[++i]; has = true; }
    else { cur += c; has = true; }
  }
  if (cur || has) out.push(cur);
  return out;
}

/** "KEY=value" (or "Name: value") lines into an object. */
function parsePairs(text, sep) {
  const out = {};
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t || t.startsWith("#")) continue;
    const i = t.indexOf(sep);
    if (i <= 0) throw new Error(`"${t}" should look like NAME${sep}value`);
    out[t.slice(0, i).trim()] = t.slice(i + 1).trim();
  }
  return out;
}

function field(label, control, help) {
  return h("label", { class: "field" }, h("span", { class: "field-label", text: label }), control, help ? h("span", { class: "field-help", text: help }) : null);
}

function addDialog() {
  const name = h("input", { class: "input", id: "server-name", placeholder: "my-server", autocomplete: "off" });
  const kindStdio = h("input", { type: "radio", name: "server-kind", value: "stdio", checked: true });
  const kindHttp = h("input", { type: "radio", name: "server-kind", value: "http" });
  const command = h("input", { class: "input code", id: "server-command", placeholder: "npx -y @modelcontextprotocol/server-everything", autocomplete: "off" });
  const env = h("textarea", { class: "textarea code", id: "server-env", rows: 3, placeholder: "API_KEY=…" });
  const url = h("input", { class: "input code", id: "server-url", type: "url", placeholder: "http://127.0.0.1:3001/mcp", autocomplete: "off" });
  const headers = h("textarea", { class: "textarea code", id: "server-headers", rows: 3, placeholder: "Authorization: Bearer …" });
  const error = h("div", { class: "field-error", role: "alert", hidden: true });
  const stdioPart = h("div", { class: "stack" }, field("Command and arguments", command, "Quote arguments that contain spaces."), field("Environment", env, "One NAME=value per line."));
  const httpPart = h("div", { class: "stack", hidden: true }, field("URL", url, "A Streamable HTTP endpoint."), field("Headers", headers, "One Name: value per line."));
  const sync = () => { stdioPart.hidden = !kindStdio.checked; httpPart.hidden = kindStdio.checked; };
  kindStdio.addEventListener("change", sync);
  kindHttp.addEventListener("change", sync);
  const save = button("Add server", { variant: "primary", id: "server-add-save" });
  const dlg = openDialog({
    title: "Add a server", className: "wide", id: "server-add-dialog",
    body: h("div", { class: "stack" },
      field("Name", name),
      h("div", { class: "segmented", role: "radiogroup", "aria-label": "Transport" },
        h("label", {}, kindStdio, h("span", { text: "Local command (stdio)" })),
        h("label", {}, kindHttp, h("span", { text: "Remote (HTTP)" }))),
      stdioPart, httpPart, error),
    actions: [button("Cancel", { onclick: () => dlg.close() }), save],
  });
  name.focus();
  save.addEventListener("click", async () => {
    error.hidden = true;
    try {
      if (!name.value.trim()) throw new Error("Give the server a name.");
      let config;
      if (kindStdio.checked) {
        const parts = splitArgs(command.value.trim());
        if (!parts.length) throw new Error("Enter the command that starts the server.");
        config = { command: parts[0], args: parts.slice(1) };
        const envs = parsePairs(env.value, "=");
        if (Object.keys(envs).length) config.env = envs;
      } else {
        if (!/^https?:\/\//.test(url.value.trim())) throw new Error("The URL must start with http:// or https://.");
        config = { type: "http", url: url.value.trim() };
        const hs = parsePairs(headers.value, ":");
        if (Object.keys(hs).length) config.headers = hs;
      }
      save.disabled = true;
      await api.call("servers.add", { name: name.value.trim(), config });
      dlg.close();
      toast(`Added ${name.value.trim()}`, { tone: "success" });
      store.refreshServers();
    } catch (err) {
      error.hidden = false;
      error.textContent = err.message;
    } finally { save.disabled = false; }
  });
}

function importDialog() {
  const path = h("input", { class: "input code", id: "import-path", placeholder: "~/Library/Application Support/Claude/claude_desktop_config.json", autocomplete: "off" });
  const text = h("textarea", { class: "textarea code", id: "import-text", rows: 6, placeholder: '{"mcpServers": {…}}' });
  const out = h("div", { class: "stack", "aria-live": "polite" });
  const go = button("Import", { variant: "primary", id: "import-go" });
  const dlg = openDialog({
    title: "Import servers", className: "wide", id: "import-dialog",
    body: h("div", { class: "stack" },
      h("p", { class: "dialog-text", text: "Moka reads Claude Desktop, Cursor and VS Code MCP configs. Give a file path, or paste the JSON." }),
      field("Config file path", path), field("…or paste the config", text), out),
    actions: [button("Close", { onclick: () => dlg.close() }), go],
  });
  path.focus();
  go.addEventListener("click", async () => {
    clear(out);
    const params = path.value.trim() ? { path: path.value.trim() } : text.value.trim() ? { text: text.value } : null;
    if (!params) { out.append(h("div", { class: "field-error", text: "Give a path or paste a config." })); return; }
    go.disabled = true;
    try {
      const res = await api.call("servers.import", params);
      const added = res?.added || [];
      const skipped = res?.skipped || [];
      out.append(h("p", { class: added.length ? "tone-success" : "muted", text: added.length ? `Added ${added.join(", ")}.` : "No new servers were added." }));
      for (const s of skipped) out.append(h("p", { class: "muted small", text: `Skipped ${s.name}: ${s.reason}` }));
      store.refreshServers();
    } catch (err) {
      out.append(h("div", { class: "field-error", role: "alert", text: err.message }));
    } finally { go.disabled = false; }
  });
}

function subtitle() {
  const s = store.servers || [];
  return s.length ? `${s.filter((x) => x.status === "ready").length} of ${s.length} ready` : "";
}

export default {
  id: "servers",
  title: "Servers",
  icon: "servers",

  init(section, context) {
    ctx = context;
    list = h("div", { class: "server-list", id: "server-list" });
    section.append(h("div", { class: "screen-scroll" }, h("div", { class: "screen-inner" }, list)));
    store.on("servers", render);
  },

  show() { store.refreshServers().catch(toastError); },

  subtitle,

  actions() {
    return [
      button("Import config", { small: true, icon: "upload", id: "servers-import", onclick: importDialog }),
      button("Add server", { small: true, icon: "plus", variant: "primary", id: "servers-add", onclick: addDialog }),
    ];
  },
};
