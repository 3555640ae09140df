// "/" and "@" in the composer. "/" at the start lists the servers' prompts (fuzzy search); a
// prompt with arguments asks for them in a small form with the server's completions, then its
// messages go into the composer (text into the box, embedded resources as attachments). "@" lists
// resources and resource templates; picking one reads it and attaches its contents, which then
// reach the model with the message.

import { api } from "../api.js";
import { h, clear, debounce } from "../dom.js";
import { icon } from "../icons.js";
import { button, toastError } from "../ui.js";
import { completionList } from "../completions.js";
import { store } from "../store.js";

/** Fuzzy match: every character of `q` in order; a lower score is a better match (0 = prefix). */
export function fuzzy(q, text) {
  q = q.toLowerCase();
  text = text.toLowerCase();
  if (!q) return 1;
  if (text.startsWith(q)) return 0;
  let at = -1;
  let gaps = 0;
  for (const ch of q) {
    const next = text.indexOf(ch, at + 1);
    if (next < 0) return -1;
    gaps += next - at - 1;
    at = next;
  }
  return 1 + gaps;
}

const ready = () => (store.servers || []).filter((s) => s.status === "ready").map((s) => s.name);

async function gather(method, pick) {
  const lists = await Promise.all(
    ready().map((server) =>
      api
        .call(method, { server })
        .then(pick)
        .catch(() => []),
    ),
  );
  return lists.flat();
}

function b64(text) {
  const bytes = new TextEncoder().encode(text);
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(out);
}

export function attachMenus(composer) {
  const input = composer.input;
  const menu = h("div", {
    class: "slash-menu",
    id: "slash-menu",
    role: "listbox",
    "aria-label": "Prompts and resources",
    hidden: true,
  });
  composer.el.querySelector(".composer-box").append(menu);
  let items = [];
  let active = 0;
  let mode = null; // "/" or "@"
  let cache = { "/": null, "@": null };

  function trigger() {
    const before = input.value.slice(0, input.selectionStart ?? input.value.length);
    const slash = /^\/([^\n]*)$/.exec(before);
    if (slash) return { mode: "/", query: slash[1], start: 0 };
    const at = /(^|\s)@([^\s@]*)$/.exec(before);
    if (at) return { mode: "@", query: at[2], start: before.length - at[2].length - 1 };
    return null;
  }

  async function load(which) {
    if (cache[which]) return cache[which];
    cache[which] =
      which === "/"
        ? (await gather("servers.prompts", (list) => list || [])).map((p) => ({ kind: "prompt", ...p }))
        : await gather("servers.resources", (r) => [
            ...(r?.resources || []).map((x) => ({ kind: "resource", ...x })),
            ...(r?.templates || []).map((x) => ({ kind: "template", ...x })),
          ]);
    setTimeout(() => {
      cache[which] = null;
    }, 15000); // servers change: list again a little later
    return cache[which];
  }

  function close() {
    menu.hidden = true;
    mode = null;
    items = [];
    input.removeAttribute("aria-activedescendant");
  }

  const update = debounce(async () => {
    const asked = trigger();
    if (!asked) {
      close();
      return;
    }
    mode = asked.mode;
    const all = await load(asked.mode);
    // Rank for what the composer says now: the person may have typed on while the list loaded.
    const t = trigger();
    if (t?.mode !== asked.mode) return;
    // The name first; a match only in the description (or URI) ranks after every name match.
    const rank = (it) => {
      const byName = fuzzy(t.query, it.name || "");
      if (byName >= 0) return byName;
      const other = fuzzy(t.query, `${it.title || ""} ${it.description || ""} ${it.uri || it.uriTemplate || ""}`);
      return other < 0 ? -1 : 1000 + other;
    };
    items = all
      .map((it) => ({ it, score: rank(it) }))
      .filter((x) => x.score >= 0)
      .sort((a, b) => a.score - b.score)
      .slice(0, 30)
      .map((x) => x.it);
    active = 0;
    render(t);
  }, 60);

  function render(t) {
    clear(menu);
    menu.hidden = false;
    menu.append(
      h("p", { class: "slash-head", text: t.mode === "/" ? "Prompts from your servers" : "Resources to attach" }),
    );
    if (!items.length) {
      menu.append(
        h("p", { class: "slash-empty", text: t.mode === "/" ? "No prompt matches." : "No resource matches." }),
      );
      return;
    }
    items.forEach((it, i) => {
      const row = h(
        "div",
        {
          class: "slash-item",
          role: "option",
          id: `slash-${i}`,
          "aria-selected": String(i === active),
          "data-name": it.name,
          onmousedown: (e) => {
            e.preventDefault();
            choose(it);
          },
        },
        icon(it.kind === "prompt" ? "message" : it.kind === "template" ? "edit" : "paperclip", { size: 14 }),
        h("span", { class: "slash-name", text: it.kind === "prompt" ? `/${it.name}` : it.name }),
        h("span", { class: "slash-server", text: it.server }),
        it.description || it.uri || it.uriTemplate
          ? h("span", { class: "slash-desc", text: it.description || it.uri || it.uriTemplate })
          : null,
      );
      menu.append(row);
    });
    input.setAttribute("aria-activedescendant", `slash-${active}`);
  }

  function move(by) {
    if (!items.length) return;
    active = (active + by + items.length) % items.length;
    for (const [i, row] of [...menu.querySelectorAll(".slash-item")].entries())
      row.setAttribute("aria-selected", String(i === active));
    menu.querySelector(`#slash-${active}`)?.scrollIntoView({ block: "nearest" });
    input.setAttribute("aria-activedescendant", `slash-${active}`);
  }

  /** Remove the "/query" or "@query" that opened the menu. */
  function eatTrigger() {
    const t = trigger();
    if (!t) return;
    const caret = input.selectionStart ?? input.value.length;
    input.value = input.value.slice(0, t.start) + input.value.slice(caret);
    composer.setText(input.value);
  }

  async function choose(it) {
    eatTrigger();
    close();
    const names =
      it.kind === "prompt"
        ? (it.arguments || []).map((a) => ({ ...a }))
        : it.kind === "template"
          ? (it.variables || []).map((n) => ({ name: n, required: true }))
          : [];
    const values = names.length ? await askArguments(it, names) : {};
    if (values === null) {
      input.focus();
      return;
    }
    try {
      if (it.kind === "prompt") await insertPrompt(it, values);
      else await attachResource(it, it.kind === "template" ? expand(it.uriTemplate, values) : it.uri);
    } catch (err) {
      toastError(err);
    }
    input.focus();
  }

  function expand(template, values) {
    return template.replace(/\{([^}]+)\}/g, (_m, name) =>
      encodeURIComponent(values[name.replace(/^[+#./;?&]/, "")] ?? ""),
    );
  }

  async function insertPrompt(it, values) {
    const res = await api.call("servers.prompt", { server: it.server, name: it.name, arguments: values });
    const texts = [];
    for (const m of res?.messages || []) {
      const c = m.content || {};
      const who = m.role === "assistant" ? "Assistant (from the prompt): " : "";
      if (c.type === "text") texts.push(who + c.text);
      else if (c.type === "resource" && c.resource) addResourceContents(c.resource);
      else if (c.type === "image" && c.data)
        composer.addAttachment({
          name: `${it.name}-image.${(c.mimeType || "image/png").split("/")[1]}`,
          mimeType: c.mimeType || "image/png",
          data: c.data,
        });
    }
    const joined = texts.join("\n\n");
    composer.setText(input.value ? `${input.value}${input.value.endsWith("\n") ? "" : "\n"}${joined}` : joined);
  }

  function addResourceContents(r) {
    const name = (r.uri || "resource").replace(/^[a-z]+:\/\//i, "").replace(/[/\\]/g, "_") || "resource";
    if (typeof r.text === "string")
      composer.addAttachment({ name, mimeType: r.mimeType || "text/plain", data: b64(r.text), uri: r.uri });
    else if (typeof r.blob === "string")
      composer.addAttachment({ name, mimeType: r.mimeType || "application/octet-stream", data: r.blob, uri: r.uri });
  }

  async function attachResource(it, uri) {
    const res = await api.call("servers.readResource", { server: it.server, uri });
    for (const c of res?.contents || []) addResourceContents({ ...c, uri: c.uri || uri });
  }

  /** A small form for a prompt's arguments or a template's variables, with the server's completions. */
  function askArguments(it, args) {
    return new Promise((resolve) => {
      const form = h("form", { class: "slash-form", id: "slash-form" });
      const fields = {};
      const values = () => Object.fromEntries(Object.entries(fields).map(([k, el]) => [k, el.value.trim()]));
      for (const a of args) {
        const field = h("input", {
          class: "input",
          name: a.name,
          autocomplete: "off",
          required: Boolean(a.required),
          placeholder: a.description || a.name,
          "aria-label": a.title || a.name,
        });
        const ref =
          it.kind === "prompt" ? { type: "ref/prompt", name: it.name } : { type: "ref/resource", uri: it.uriTemplate };
        const list = completionList(it.server, ref, field, values, `slash-arg-${a.name}`);
        fields[a.name] = field;
        form.append(h("label", { class: "field-label", text: a.title || a.name }), field, list);
      }
      const done = (value) => {
        wrap.remove();
        resolve(value);
      };
      const wrap = h(
        "div",
        { class: "slash-args", role: "dialog", "aria-label": `Arguments of ${it.name}` },
        h("p", {
          class: "slash-head",
          text: it.kind === "prompt" ? `/${it.name} · ${it.server}` : `${it.name} · ${it.server}`,
        }),
        form,
        h(
          "div",
          { class: "row slash-form-actions" },
          button("Cancel", { small: true, variant: "ghost", onclick: () => done(null) }),
          button(it.kind === "prompt" ? "Insert" : "Attach", {
            small: true,
            variant: "primary",
            id: "slash-submit",
            onclick: () => {
              if (form.reportValidity()) done(values());
            },
          }),
        ),
      );
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        if (form.reportValidity()) done(values());
      });
      form.addEventListener("keydown", (e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          done(null);
        }
        if (e.key === "Enter" && !e.isComposing && !e.target.list?.options?.length) {
          e.preventDefault();
          if (form.reportValidity()) done(values());
        }
      });
      composer.el.querySelector(".composer-box").append(wrap);
      Object.values(fields)[0]?.focus();
    });
  }

  input.addEventListener("input", update);
  input.addEventListener(
    "keydown",
    (e) => {
      if (menu.hidden || !mode) return;
      if (e.key === "ArrowDown") {
        e.preventDefault();
        e.stopImmediatePropagation();
        move(1);
      } else if (e.key === "ArrowUp") {
        e.preventDefault();
        e.stopImmediatePropagation();
        move(-1);
      } else if ((e.key === "Enter" || e.key === "Tab") && items.length) {
        e.preventDefault();
        e.stopImmediatePropagation();
        choose(items[active]);
      } else if (e.key === "Escape") {
        e.preventDefault();
        close();
      }
    },
    true,
  );
  input.addEventListener("blur", () => setTimeout(close, 150));
  return { close };
}
