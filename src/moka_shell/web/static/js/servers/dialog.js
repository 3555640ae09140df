// The Add / Edit server dialog: name, transport, command and arguments, environment, working
// directory, URL, headers, the OAuth client (oauth-fields.js) and a plugin transport type.
// Adding under a name that is taken asks before replacing; the core refuses a replacement it was
// not told about (servers.add).

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { button, openDialog, confirmDialog, toast } from "../ui.js";
import { store } from "../store.js";
import { configFrom, joinArgs, pairsText } from "./config.js";
import { oauthFields, saveOAuth } from "./oauth-fields.js";

const REPLACING = "Replacing it stops it and uses these settings instead.";

/** A labelled field with its help line. */
export function field(label, control, help) {
  return h(
    "label",
    { class: "field" },
    h("span", { class: "field-label", text: label }),
    control,
    help ? h("span", { class: "field-help", text: help }) : null,
  );
}

/** The dialog's inputs, filled from `existing` ({name, config, transport}: an edit) or empty. */
function inputs(existing) {
  const cfg = existing?.config || {};
  // The core names the transport an entry uses (ServerInfo.transport): its spellings of http live there.
  const transport = existing?.transport || "stdio";
  const isHttp = Boolean(cfg.url) || transport === "http";
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
    value: cfg.type && transport !== "http" && transport !== "stdio" ? cfg.type : "",
  });
  return { name, kindStdio, kindHttp, command, env, cwd, url, headers, type, oauth: oauthFields(existing, field) };
}

/** The "trust its tool hints" box: off for a server a person adds, until they say so (security finding G3). */
function trustBox(existing) {
  return h("input", { type: "checkbox", id: "server-trust", checked: Boolean(existing?.trustsAnnotations) });
}

/** The "trust its tool hints" choice, with what it means. */
function trustField(trust) {
  return h(
    "label",
    { class: "check-field" },
    trust,
    h(
      "span",
      {},
      h("span", { text: "Trust this server's tool hints" }),
      h("span", {
        class: "field-help",
        text:
          "A tool's hints (such as “read-only”) are the server's own claims. Trusted, the tools it marks " +
          "read-only run without asking; otherwise every call asks as the approval settings say.",
      }),
    ),
  );
}

/** The fields, grouped: the local command's, the remote server's, and Advanced. */
function parts({ command, env, cwd, url, headers, type, oauth }) {
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
    oauth.fold,
  );
  const more = h(
    "details",
    { class: "fold", open: Boolean(type.value) },
    h("summary", {}, icon("chevron", { size: 14 }), "Advanced"),
    field("Transport type", type, "Only for a transport a plugin provides."),
  );
  return { stdioPart, httpPart, more };
}

export function serverDialog(existing = null) {
  const fields = { ...inputs(existing), trust: trustBox(existing) };
  const { name, kindStdio, kindHttp, command } = fields;
  const { stdioPart, httpPart, more } = parts(fields);
  const error = h("div", { class: "field-error", role: "alert", hidden: true });
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
      trustField(fields.trust),
      more,
      error,
    ),
    actions: [button("Cancel", { onclick: () => dlg.close() }), save],
  });
  (existing ? command : name).focus();

  save.addEventListener("click", () => saveServer(existing, fields, { dlg, save, error }));
}

/** Add (or replace, after asking) or save the server the fields describe; problems go in `error`. */
async function saveServer(existing, fields, { dlg, save, error }) {
  const { name, kindStdio, command, env, cwd, url, headers, type, trust } = fields;
  error.hidden = true;
  try {
    const config = configFrom({
      name: name.value,
      stdio: kindStdio.checked,
      command: command.value,
      env: env.value,
      cwd: cwd.value,
      url: url.value,
      headers: headers.value,
      type: type.value,
    });
    if (trust.checked) config.trustAnnotations = true;
    else if (existing?.trustsAnnotations) config.trustAnnotations = false;
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
    if (!kindStdio.checked) await saveOAuth(serverName, fields.oauth);
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
}
