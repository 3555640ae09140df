// The server card's Prompts, Resources, Log and Folders sections (servers.prompts, servers.prompt,
// servers.resources, servers.readResource, servers.complete, servers.setLogLevel, servers.setRoots;
// docs/bridge-api.md),
// and the server's own icon. Lists load when their fold is first opened. The card is rebuilt on every
// servers.changed, so what was loaded and which folds were open are kept here, per server and generation.

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { badge, button, openDialog, spinner, toastError } from "../ui.js";
import { completionList } from "../completions.js";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const LEVEL_TONE = { debug: "neutral", info: "info", notice: "accent", warning: "warning" };
const kept = new Map(); // server name -> {version, open: Set, prompts?, resources?}

function stateOf(s) {
  const version = `${s.generation}:${s.listVersion || 0}`; // a reconnect or a list_changed makes the lists stale
  let st = kept.get(s.name);
  if (!st || st.version !== version) {
    st = { version, open: st ? st.open : new Set() };
    kept.set(s.name, st);
  }
  return st;
}

/** The server's own icon (serverInfo.icons: the core keeps data:image/ sources only) or null. */
export function serverIcon(s) {
  const dark = document.documentElement.dataset.theme === "dark";
  const icons = (s.serverInfo?.icons || []).filter((i) => /^data:image\//.test(i.src || ""));
  const pick = icons.find((i) => i.theme === (dark ? "dark" : "light")) || icons.find((i) => !i.theme) || icons[0];
  if (!pick) return null;
  const img = h("img", {
    class: "server-own-icon",
    src: pick.src,
    alt: "",
    width: 18,
    height: 18,
    referrerpolicy: "no-referrer",
  });
  img.addEventListener("error", () => img.replaceWith(icon("servers", { size: 18 })));
  return img;
}

/** What the Tool runner shows beside a tool's name: its own icon and, when it needs MCP tasks, a badge. */
export function toolMarks(tool) {
  const src = (tool.icons || []).map((i) => i.src).find((x) => /^data:image\//.test(x || ""));
  return [
    src ? h("img", { class: "tool-own-icon", src, alt: "", width: 16, height: 16 }) : null,
    tool.taskSupport === "required"
      ? badge("Needs tasks", "warning", {
          title: "This tool runs only as an MCP task, which Moka does not drive yet; it is not offered to the model",
        })
      : null,
  ];
}

/** The Prompts, Resources and Log folds for server info `s` (only what the server offers). */
export function serverExtras(s) {
  if (s.status !== "ready") return null;
  const caps = s.capabilities || {};
  const st = stateOf(s);
  const parts = [];
  if (caps.prompts) parts.push(lazyFold(s, st, "prompts", "Prompts", () => loadPrompts(s, st)));
  if (caps.resources) parts.push(lazyFold(s, st, "resources", "Resources", () => loadResources(s, st)));
  if (caps.logging || (s.logs || []).length) parts.push(logFold(s, st));
  parts.push(rootsFold(s, st));
  return parts.length ? h("div", { class: "server-extras" }, parts) : null;
}

function lazyFold(_s, st, key, title, load) {
  const body = h("div", { class: "extras-body" });
  const count = h("span", { class: "extras-count muted" });
  const fold = h(
    "details",
    { class: "fold server-extra", "data-extra": key },
    h("summary", {}, icon("chevron", { size: 14 }), title, count),
    body,
  );
  const fill = async () => {
    if (!st[key]) {
      clear(body).append(spinner(`Loading ${title.toLowerCase()}`));
      try {
        st[key] = await load();
      } catch (err) {
        clear(body).append(h("p", { class: "extras-error", text: err.message || String(err) }));
        return;
      }
    }
    clear(body).append(st[key].render());
    count.textContent = st[key].count;
  };
  fold.addEventListener("toggle", () => {
    if (fold.open) {
      st.open.add(key);
      fill();
    } else st.open.delete(key);
  });
  if (st.open.has(key)) {
    fold.open = true;
    fill();
  }
  if (st[key]) count.textContent = st[key].count;
  return fold;
}

// ---- prompts -------------------------------------------------------------------------------

async function loadPrompts(s) {
  const prompts = await api.call("servers.prompts", { server: s.name });
  return {
    count: String(prompts.length),
    render: () =>
      prompts.length
        ? h(
            "ul",
            { class: "extras-list" },
            prompts.map((p) =>
              h(
                "li",
                { class: "extras-item", "data-prompt": p.name },
                h(
                  "div",
                  { class: "grow" },
                  h(
                    "div",
                    { class: "extras-name" },
                    h("strong", { text: p.title || p.name }),
                    p.title ? h("code", { class: "muted", text: p.name }) : null,
                  ),
                  p.description ? h("p", { class: "extras-desc", text: p.description }) : null,
                  (p.arguments || []).length
                    ? h(
                        "div",
                        { class: "extras-args" },
                        p.arguments.map((a) =>
                          badge(a.name + (a.required ? "" : "?"), a.required ? "accent" : "neutral", {
                            title: a.description || "",
                          }),
                        ),
                      )
                    : null,
                ),
                button("Preview", { small: true, "data-action": "preview-prompt", onclick: () => promptDialog(s, p) }),
              ),
            ),
          )
        : h("p", { class: "muted small", text: "This server lists no prompts." }),
  };
}

function completer(s, ref, input, otherValues) {
  return completionList(s.name, ref, input, otherValues);
}

function promptDialog(s, p) {
  const inputs = (p.arguments || []).map((a) =>
    h("input", {
      class: "input",
      name: a.name,
      required: Boolean(a.required),
      autocomplete: "off",
      "aria-label": a.name,
    }),
  );
  const values = () => Object.fromEntries(inputs.filter((i) => i.value !== "").map((i) => [i.name, i.value]));
  const ref = { type: "ref/prompt", name: p.name };
  const out = h("div", { class: "extras-preview", "aria-live": "polite" });
  const fields = (p.arguments || []).map((a, i) =>
    h(
      "label",
      { class: "field" },
      h("span", { class: "field-label", text: a.title || a.name + (a.required ? " *" : "") }),
      inputs[i],
      completer(s, ref, inputs[i], values),
      a.description ? h("small", { class: "field-help", text: a.description }) : null,
    ),
  );
  const go = button("Get messages", { variant: "primary", "data-action": "get-prompt" });
  go.addEventListener("click", async () => {
    go.disabled = true;
    try {
      const res = await api.call("servers.prompt", { server: s.name, name: p.name, arguments: values() });
      clear(out).append(
        ...(res.messages || []).map((m) =>
          h(
            "div",
            { class: "extras-msg", "data-role": m.role },
            h("span", { class: "extras-role muted", text: m.role }),
            h("pre", { class: "block", text: contentText(m.content) }),
          ),
        ),
      );
    } catch (err) {
      clear(out).append(h("p", { class: "extras-error", text: err.message || String(err) }));
    } finally {
      go.disabled = false;
    }
  });
  openDialog({
    title: p.title || p.name,
    id: "prompt-dialog",
    className: "wide",
    body: h(
      "div",
      { class: "stack" },
      p.description ? h("p", { class: "dialog-text", text: p.description }) : null,
      ...fields,
      out,
    ),
    actions: [go],
  });
}

function contentText(c) {
  if (!c) return "";
  if (c.type === "text") return c.text;
  if (c.type === "resource") return c.resource?.text ?? `[resource ${c.resource?.uri || ""}]`;
  return `[${c.type} content]`;
}

// ---- resources -----------------------------------------------------------------------------

async function loadResources(s) {
  const { resources, templates } = await api.call("servers.resources", { server: s.name });
  return {
    count: String(resources.length + templates.length),
    render: () =>
      h(
        "div",
        {},
        resources.length || templates.length
          ? null
          : h("p", { class: "muted small", text: "This server lists no resources." }),
        resources.length
          ? h(
              "ul",
              { class: "extras-list" },
              resources.map((r) => resourceItem(s, r)),
            )
          : null,
        templates.length
          ? h(
              "div",
              { class: "extras-sub" },
              h("h4", { class: "extras-heading", text: "Templates" }),
              h(
                "ul",
                { class: "extras-list" },
                templates.map((t) => templateItem(s, t)),
              ),
            )
          : null,
      ),
  };
}

/** One resource the server lists, with its Read button. */
function resourceItem(s, r) {
  return h(
    "li",
    { class: "extras-item", "data-uri": r.uri },
    h(
      "div",
      { class: "grow" },
      h(
        "div",
        { class: "extras-name" },
        h("strong", { text: r.title || r.name }),
        r.mimeType ? badge(r.mimeType) : null,
      ),
      h("code", { class: "extras-uri", text: r.uri, title: r.uri }),
      r.description ? h("p", { class: "extras-desc", text: r.description }) : null,
    ),
    button("Read", {
      small: true,
      "data-action": "read-resource",
      onclick: () => readDialog(s, r.uri, r.title || r.name),
    }),
  );
}

/** One resource template, with its Fill in button. */
function templateItem(s, t) {
  return h(
    "li",
    { class: "extras-item", "data-template": t.uriTemplate },
    h(
      "div",
      { class: "grow" },
      h("div", { class: "extras-name" }, h("strong", { text: t.title || t.name })),
      h("code", { class: "extras-uri", text: t.uriTemplate }),
      t.description ? h("p", { class: "extras-desc", text: t.description }) : null,
    ),
    button("Fill in", {
      small: true,
      "data-action": "fill-template",
      onclick: () => templateDialog(s, t),
    }),
  );
}

function templateDialog(s, t) {
  const inputs = (t.variables || []).map((v) =>
    h("input", { class: "input", name: v, autocomplete: "off", "aria-label": v }),
  );
  const values = () => Object.fromEntries(inputs.filter((i) => i.value !== "").map((i) => [i.name, i.value]));
  const ref = { type: "ref/resource", uri: t.uriTemplate };
  const uri = () =>
    t.uriTemplate.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_m, _op, names) =>
      names
        .split(",")
        .map((n) => encodeURIComponent(values()[n.replace(/[*]|:\d+$/g, "")] || ""))
        .join(","),
    );
  const fields = (t.variables || []).map((v, i) =>
    h(
      "label",
      { class: "field" },
      h("span", { class: "field-label", text: v }),
      inputs[i],
      completer(s, ref, inputs[i], values),
    ),
  );
  const go = button("Read", { variant: "primary", "data-action": "read-template" });
  const dlg = openDialog({
    title: t.title || t.name,
    id: "template-dialog",
    body: h("div", { class: "stack" }, h("code", { class: "extras-uri", text: t.uriTemplate }), ...fields),
    actions: [go],
  });
  go.addEventListener("click", () => {
    dlg.close();
    readDialog(s, uri(), t.title || t.name);
  });
}

function readDialog(s, uri, title) {
  const body = h("div", { class: "stack" }, h("code", { class: "extras-uri", text: uri }), spinner("Reading"));
  openDialog({ title, id: "resource-dialog", className: "wide", body });
  api
    .call("servers.readResource", { server: s.name, uri })
    .then((res) => {
      body.lastChild.remove();
      for (const c of res.contents || []) {
        const text =
          c.text ??
          (c.blob !== undefined ? `[${c.mimeType || "binary"} · ${Math.round((c.blob.length * 3) / 4)} bytes]` : "");
        body.append(
          h(
            "div",
            { class: "extras-content" },
            c.mimeType ? badge(c.mimeType) : null,
            h("pre", { class: "block", text }),
          ),
        );
      }
      if (res.truncated)
        body.append(
          h("p", {
            class: "muted small",
            text: `Cut to ${res.truncated.limitBytes} of ${res.truncated.originalBytes} bytes.`,
          }),
        );
    })
    .catch((err) => {
      body.lastChild.remove();
      body.append(h("p", { class: "extras-error", text: err.message || String(err) }));
    });
}

// ---- log -----------------------------------------------------------------------------------

function logFold(s, st) {
  const logs = s.logs || [];
  const select = h(
    "select",
    { class: "select select-sm", "data-action": "log-level", "aria-label": `${s.name}'s log level` },
    LEVELS.map((l) => h("option", { value: l, text: l, selected: l === s.logLevel })),
  );
  select.addEventListener("change", async () => {
    select.disabled = true;
    try {
      await api.call("servers.setLogLevel", { server: s.name, level: select.value });
    } catch (err) {
      toastError(err);
    } finally {
      select.disabled = false;
    }
  });
  const fold = h(
    "details",
    { class: "fold server-extra server-log", "data-extra": "log" },
    h(
      "summary",
      {},
      icon("chevron", { size: 14 }),
      "Log",
      h("span", { class: "extras-count muted", text: String(logs.length) }),
    ),
    h(
      "div",
      { class: "extras-body" },
      h("label", { class: "extras-level small" }, h("span", { class: "muted", text: "Show from" }), select),
      logs.length
        ? h(
            "ol",
            { class: "log-lines" },
            logs.map((l) =>
              h(
                "li",
                { class: "log-line", "data-level": l.level },
                h("time", { class: "muted", datetime: l.time, text: new Date(l.time).toLocaleTimeString() }),
                badge(l.level, LEVEL_TONE[l.level] || "danger"),
                l.logger ? h("span", { class: "muted", text: l.logger }) : null,
                h("span", { class: "log-text", text: l.text }),
              ),
            ),
          )
        : h("p", { class: "muted small", text: "No log messages yet." }),
    ),
  );
  fold.addEventListener("toggle", () => {
    if (fold.open) st.open.add("log");
    else st.open.delete("log");
  });
  if (st.open.has("log")) fold.open = true;
  return fold;
}

// ---- folders (roots) -----------------------------------------------------------------------

/** Set the server's roots to `next`, with `control` disabled meanwhile; true when it worked. */
async function saveRoots(server, next, control) {
  control.disabled = true;
  try {
    await api.call("servers.setRoots", { server, roots: next });
    return true;
  } catch (err) {
    toastError(err);
    return false;
  } finally {
    control.disabled = false;
  }
}

/** One folder of the list, with its Remove button. */
function rootItem(r, onRemove) {
  const remove = button("Remove", { small: true, variant: "ghost", "data-action": "remove-root" });
  remove.addEventListener("click", () => onRemove(remove));
  return h(
    "li",
    { class: "extras-item", "data-root": r },
    h("code", { class: "grow extras-uri", text: r, title: r }),
    remove,
  );
}

/** The row that adds a folder to the server's roots (Enter or the button). */
function rootAdder(s, roots, save) {
  const input = h("input", {
    class: "input input-sm",
    id: `roots-add-${s.name}`,
    placeholder: "/home/me/project",
    autocomplete: "off",
    spellcheck: "false",
    "aria-label": "Folder to add",
  });
  const add = button("Add folder", { small: true, icon: "plus", "data-action": "add-root" });
  const submit = async () => {
    if (input.value.trim() && (await save([...roots, input.value.trim()], add))) input.value = "";
  };
  add.addEventListener("click", submit);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      submit();
    }
  });
  return h("div", { class: "extras-add" }, input, add);
}

function rootsFold(s, st) {
  const roots = s.roots || [];
  const save = (next, control) => saveRoots(s.name, next, control);
  const fold = h(
    "details",
    { class: "fold server-extra", "data-extra": "roots" },
    h(
      "summary",
      {},
      icon("chevron", { size: 14 }),
      "Folders",
      h("span", { class: "extras-count muted", text: String(roots.length) }),
    ),
    h(
      "div",
      { class: "extras-body" },
      h("p", {
        class: "muted small extras-note",
        text: roots.length
          ? "The folders this server may work in (MCP roots)."
          : "No folders chosen: the server uses its own. Folders added here replace them (MCP roots).",
      }),
      roots.length
        ? h(
            "ul",
            { class: "extras-list" },
            roots.map((r) =>
              rootItem(r, (remove) =>
                save(
                  roots.filter((x) => x !== r),
                  remove,
                ),
              ),
            ),
          )
        : null,
      rootAdder(s, roots, save),
    ),
  );
  fold.addEventListener("toggle", () => {
    if (fold.open) st.open.add("roots");
    else st.open.delete("roots");
  });
  if (st.open.has("roots")) fold.open = true;
  return fold;
}
