// The Servers screen: each MCP server's status, last error and stderr, with enable/disable,
// restart and remove; plus "Add server" (stdio or HTTP) and "Import config".

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { button, iconButton, openDialog, confirmDialog, toastError, emptyState } from "../ui.js";
import { store } from "../store.js";
import { serverTarget } from "./config.js";
import { field, serverDialog } from "./dialog.js";
import { authButton, statusLabel } from "./auth.js";
import { storageLine } from "./storage.js";
import { instructionsFold } from "./instructions.js";
import { serverExtras, serverIcon } from "./extras.js";
import { approvalsFold } from "./approvals.js";
import { SCREEN_INFO } from "../screens.js";

const addDialog = () => serverDialog();

const TONE = {
  ready: "success",
  connecting: "warning",
  failed: "danger",
  stopped: "neutral",
  disabled: "neutral",
  signin: "warning",
};
const STDERR_LINES = 200;
let list;
let ctx;

function render(servers) {
  if (!document.getElementById("screen-servers")?.hidden) ctx.setSubtitle(subtitle());
  clear(list);
  if (!servers.length) {
    list.append(
      emptyState(
        "servers",
        "No servers yet",
        "Add an MCP server, or import the config of Claude Desktop, Cursor or VS Code.",
        h(
          "div",
          { class: "row" },
          button("Add server", { icon: "plus", variant: "primary", onclick: addDialog }),
          button("Import config", { icon: "upload", onclick: importDialog }),
        ),
      ),
    );
    return;
  }
  for (const s of servers) list.append(serverCard(s));
}

/** A click handler that keeps `btn` disabled while `work` runs, and says what went wrong. */
const busy = (btn, work) => async () => {
  btn.disabled = true;
  try {
    await work();
  } catch (err) {
    toastError(err);
  } finally {
    btn.disabled = false;
  }
};

/** Enable or Disable, Restart, Edit and Remove, for the card's footer. */
function cardButtons(s) {
  const enabled = s.status !== "disabled";
  const toggle = button(enabled ? "Disable" : "Enable", { small: true, icon: "power", "data-action": "toggle" });
  toggle.addEventListener(
    "click",
    busy(toggle, () => api.call("servers.setEnabled", { name: s.name, enabled: !enabled })),
  );
  const restart = button("Restart", { small: true, icon: "restart", "data-action": "restart", disabled: !enabled });
  restart.addEventListener(
    "click",
    busy(restart, () => api.call("servers.restart", { name: s.name })),
  );
  const remove = iconButton("trash", `Remove ${s.name}`, { "data-action": "remove", className: "danger-hover" });
  remove.addEventListener(
    "click",
    busy(remove, async () => {
      const ok = await confirmDialog({
        title: `Remove ${s.name}?`,
        message: "Moka stops the server and removes it from the config file.",
        confirmLabel: "Remove",
        danger: true,
      });
      if (ok) {
        await api.call("servers.remove", { name: s.name });
        store.refreshServers();
      }
    }),
  );
  const edit = button("Edit", {
    small: true,
    icon: "edit",
    "data-action": "edit",
    onclick: () =>
      serverDialog({ name: s.name, config: s.config || {}, transport: s.transport, oauthSecrets: s.oauthSecrets }),
  });
  return { toggle, restart, edit, remove };
}

/** The last lines the server wrote to stderr, folded. */
function stderrFold(stderr) {
  if (!stderr.length) return null;
  return h(
    "details",
    { class: "fold server-stderr" },
    h("summary", {}, icon("chevron", { size: 14 }), `stderr (${stderr.length} line${stderr.length === 1 ? "" : "s"})`),
    h("pre", { class: "block", text: stderr.slice(-STDERR_LINES).join("\n") }),
  );
}

/** The card's head: the server's icon, name, command or URL, and status. */
function cardHead(s) {
  const target = serverTarget(s.config);
  return h(
    "header",
    { class: "server-head" },
    h("div", { class: "server-icon" }, serverIcon(s) || icon("servers", { size: 18 })),
    h(
      "div",
      { class: "grow server-titles" },
      h("h3", { class: "server-name", text: s.name }),
      target ? h("code", { class: "server-target", text: target, title: target }) : null,
    ),
    h("span", {
      class: `status-badge badge badge-dot badge-${TONE[s.status] || "neutral"}`,
      "data-status": s.status,
      text: statusLabel(s.status),
    }),
  );
}

/** The card's actions: sign in, enable, restart, edit; its tools and messages; remove. */
function cardFooter(s) {
  const { toggle, restart, edit, remove } = cardButtons(s);
  return h(
    "footer",
    { class: "server-actions" },
    authButton(s),
    toggle,
    restart,
    edit,
    h("span", { class: "grow" }),
    iconButton("runner", `Run ${s.name}'s tools`, {
      "data-action": "tools",
      disabled: s.status !== "ready",
      onclick: () => ctx.navigate("runner", { server: s.name }),
    }),
    iconButton("inspector", `${s.name}'s messages in the Inspector`, {
      "data-action": "messages",
      onclick: () => ctx.navigate("inspector", { server: s.name }),
    }),
    remove,
  );
}

function serverCard(s) {
  const facts = [
    ["Transport", s.transport],
    ["Tools", s.status === "ready" ? String(s.toolCount ?? 0) : "—"],
    ["Server", s.serverInfo ? `${s.serverInfo.title || s.serverInfo.name} ${s.serverInfo.version || ""}`.trim() : "—"],
    ["Protocol", s.protocolVersion || "—"],
  ];
  return h(
    "article",
    { class: "card server-card", "data-server": s.name, "data-status": s.status },
    cardHead(s),
    h(
      "dl",
      { class: "server-facts" },
      facts.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { text: v || "—", title: v || "" }))),
    ),
    storageLine(s.name),
    s.error
      ? h(
          "div",
          { class: "server-error", role: "alert" },
          icon("alert", { size: 15 }),
          h("div", { class: "grow" }, h("strong", { text: "Last error" }), h("p", { text: s.error })),
        )
      : null,
    instructionsFold(s),
    serverExtras(s),
    approvalsFold(s),
    stderrFold(s.stderr || []),
    cardFooter(s),
  );
}

// ---- import (add and edit: js/servers/dialog.js) --------------------------------------------

function importDialog() {
  const path = h("input", {
    class: "input code",
    id: "import-path",
    placeholder: "~/Library/Application Support/Claude/claude_desktop_config.json",
    autocomplete: "off",
  });
  const text = h("textarea", {
    class: "textarea code",
    id: "import-text",
    rows: 6,
    placeholder: '{"mcpServers": {…}}',
  });
  const out = h("div", { class: "stack", "aria-live": "polite" });
  const go = button("Import", { variant: "primary", id: "import-go" });
  const dlg = openDialog({
    title: "Import servers",
    className: "wide",
    id: "import-dialog",
    body: h(
      "div",
      { class: "stack" },
      h("p", {
        class: "dialog-text",
        text: "Moka reads Claude Desktop, Cursor and VS Code MCP configs. Give a file path, or paste the JSON.",
      }),
      field("Config file path", path),
      field("…or paste the config", text),
      out,
    ),
    actions: [button("Close", { onclick: () => dlg.close() }), go],
  });
  path.focus();
  go.addEventListener("click", async () => {
    clear(out);
    const params = path.value.trim() ? { path: path.value.trim() } : text.value.trim() ? { text: text.value } : null;
    if (!params) {
      out.append(h("div", { class: "field-error", text: "Give a path or paste a config." }));
      return;
    }
    go.disabled = true;
    try {
      const res = await api.call("servers.import", params);
      const added = res?.added || [];
      const skipped = res?.skipped || [];
      out.append(
        h("p", {
          class: added.length ? "tone-success" : "muted",
          text: added.length ? `Added ${added.join(", ")}.` : "No new servers were added.",
        }),
      );
      for (const s of skipped) out.append(h("p", { class: "muted small", text: `Skipped ${s.name}: ${s.reason}` }));
      store.refreshServers();
    } catch (err) {
      out.append(h("div", { class: "field-error", role: "alert", text: err.message }));
    } finally {
      go.disabled = false;
    }
  });
}

function subtitle() {
  const s = store.servers || [];
  return s.length ? `${s.filter((x) => x.status === "ready").length} of ${s.length} ready` : "";
}

export default {
  ...SCREEN_INFO.servers,

  init(section, context) {
    ctx = context;
    list = h("div", { class: "server-list", id: "server-list" });
    section.append(h("div", { class: "screen-scroll" }, h("div", { class: "screen-inner" }, list)));
    store.on("servers", render);
    if (store.serversLoaded) render(store.servers); // loaded after the page's hello (screens.js)
  },

  show() {
    store.refreshServers().catch(toastError);
  },

  subtitle,

  actions() {
    return [
      button("Import config", { small: true, icon: "upload", id: "servers-import", onclick: importDialog }),
      button("Add server", { small: true, icon: "plus", variant: "primary", id: "servers-add", onclick: addDialog }),
    ];
  },
};
