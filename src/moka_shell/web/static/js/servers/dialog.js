// The Add / Edit server dialog: name, transport, command and arguments, environment, working
// directory, URL, headers and a plugin transport type. Adding under a name that is taken asks
// before replacing; the core refuses a replacement it was not told about (servers.add).

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { button, openDialog, confirmDialog, toast } from "../ui.js";
import { store } from "../store.js";

const HTTP_TYPES = new Set(["http", "streamable-http", "streamablehttp", "streamable_http", "streamableHttp"]);
const REPLACING = "Replacing it stops it and uses these settings instead.";

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
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (/\s/.test(c)) {
      if (cur || has) out.push(cur);
      cur = "";
      has = false;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      has = true;
    } else {
      cur += c;
      has = true;
    }
  }
  if (cur || has) out.push(cur);
  return out;
}

/** The reverse of splitArgs, for showing a command: quote what has spaces or quotes. */
export function joinArgs(parts) {
  return parts.map((p) => (p === "" || /[\s"'\\]/.test(p) ? `"${p.replace(/["\\]/g, "\\$&")}"` : p)).join(" ");
}

/** What a server runs or where it lives, in one line (for its card). */
export function serverTarget(config) {
  if (!config) return "";
  if (config.url) return config.url;
  return joinArgs([config.command || "", ...(config.args || [])]).trim();
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

const pairsText = (obj, sep) =>
  Object.entries(obj || {})
    .map(([k, v]) => `${k}${sep}${v}`)
    .join("\n");

function field(label, control, help) {
  return h(
    "label",
    { class: "field" },
    h("span", { class: "field-label", text: label }),
    control,
    help ? h("span", { class: "field-help", text: help }) : null,
  );
}

/** Open the dialog; `existing` ({name, config}) makes it an Edit of that server. */
export function serverDialog(existing = null) {
  const cfg = existing?.config || {};
  const isHttp = Boolean(cfg.url) || HTTP_TYPES.has(cfg.type);
  const name = h("input", {
    class: "input",
    id: "server-name",
    placeholder: "my-server",
    autocomplete: "off",
    value: existing?.name || "",
  });
  if (existing) name.readOnly = true; // an edit keeps the name; Remove and Add to rename
  const kindStdio = h("input", { type: "radio", name: "server-kind", value: "stdio", checked: !isHttp });
  const kindHttp = h("input", { type: "radio", name: "server-kind", value: "http", checked: isHttp });
  const command = h("input", {
    class: "input code",
    id: "server-command",
    placeholder: "npx -y @modelcontextprotocol/server-everything",
    autocomplete: "off",
    value: cfg.command ? joinArgs([cfg.command, ...(cfg.args || [])]) : "",
  });
  const env = h("textarea", { class: "textarea code", id: "server-env", rows: 3, placeholder: "API_KEY=…" });
  env.value = pairsText(cfg.env, "=");
  const cwd = h("input", {
    class: "input code",
    id: "server-cwd",
    placeholder: "(Moka's own)",
    autocomplete: "off",
    value: cfg.cwd || "",
  });
  const url = h("input", {
    class: "input code",
    id: "server-url",
    type: "url",
    placeholder: "http://127.0.0.1:3001/mcp",
    autocomplete: "off",
    value: cfg.url || "",
  });
  const headers = h("textarea", {
    class: "textarea code",
    id: "server-headers",
    rows: 3,
    placeholder: "Authorization: Bearer …",
  });
  headers.value = pairsText(cfg.headers, ": ");
  // A plugin transport's id; http's spellings are covered by the Remote choice.
  const type = h("input", {
    class: "input code",
    id: "server-type",
    placeholder: "(stdio or http)",
    autocomplete: "off",
    value: cfg.type && !HTTP_TYPES.has(cfg.type) && cfg.type !== "stdio" ? cfg.type : "",
  });
  const error = h("div", { class: "field-error", role: "alert", hidden: true });
  const stdioPart = h(
    "div",
    { class: "stack" },
    field("Command and arguments", command, "Quote arguments that contain spaces."),
    field("Environment", env, "One NAME=value per line."),
    field("Working directory", cwd, "Where the command runs."),
  );
  const httpPart = h(
    "div",
    { class: "stack", hidden: true },
    field("URL", url, "A Streamable HTTP endpoint."),
    field("Headers", headers, "One Name: value per line."),
  );
  const more = h(
    "details",
    { class: "fold", open: Boolean(type.value) },
    h("summary", {}, icon("chevron", { size: 14 }), "Advanced"),
    field("Transport type", type, "Only for a transport a plugin provides."),
  );
  const sync = () => {
    stdioPart.hidden = !kindStdio.checked;
    httpPart.hidden = kindStdio.checked;
  };
  kindStdio.addEventListener("change", sync);
  kindHttp.addEventListener("change", sync);
  sync();
  const save = button(existing ? "Save" : "Add server", { variant: "primary", id: "server-add-save" });
  const dlg = openDialog({
    title: existing ? `Edit ${existing.name}` : "Add a server",
    className: "wide",
    id: "server-add-dialog",
    body: h(
      "div",
      { class: "stack" },
      field("Name", name),
      h(
        "div",
        { class: "segmented", role: "radiogroup", "aria-label": "Transport" },
        h("label", {}, kindStdio, h("span", { text: "Local command (stdio)" })),
        h("label", {}, kindHttp, h("span", { text: "Remote (HTTP)" })),
      ),
      stdioPart,
      httpPart,
      more,
      error,
    ),
    actions: [button("Cancel", { onclick: () => dlg.close() }), save],
  });
  (existing ? command : name).focus();

  function read() {
    if (!name.value.trim()) throw new Error("Give the server a name.");
    let config;
    if (kindStdio.checked) {
      const parts = splitArgs(command.value.trim());
      if (!parts.length) throw new Error("Enter the command that starts the server.");
      config = { command: parts[0], args: parts.slice(1) };
      const envs = parsePairs(env.value, "=");
      if (Object.keys(envs).length) config.env = envs;
      if (cwd.value.trim()) config.cwd = cwd.value.trim();
    } else {
      if (!/^https?:\/\//.test(url.value.trim())) throw new Error("The URL must start with http:// or https://.");
      config = { type: "http", url: url.value.trim() };
      const hs = parsePairs(headers.value, ":");
      if (Object.keys(hs).length) config.headers = hs;
    }
    if (type.value.trim()) config.type = type.value.trim();
    return config;
  }

  save.addEventListener("click", async () => {
    error.hidden = true;
    try {
      const config = read();
      const serverName = name.value.trim();
      let replace = Boolean(existing);
      if (!existing && (store.servers || []).some((s) => s.name === serverName)) {
        replace = await confirmDialog({
          title: `Replace ${serverName}?`,
          danger: true,
          confirmLabel: "Replace",
          message: `A server named ${serverName} already exists. ${REPLACING}`,
        });
        if (!replace) return;
      }
      save.disabled = true;
      await api.call("servers.add", { name: serverName, config, replace });
      dlg.close();
      toast(existing ? `Saved ${serverName}` : replace ? `Replaced ${serverName}` : `Added ${serverName}`, {
        tone: "success",
      });
      store.refreshServers();
    } catch (err) {
      error.hidden = false;
      error.textContent = err.message;
    } finally {
      save.disabled = false;
    }
  });
}
