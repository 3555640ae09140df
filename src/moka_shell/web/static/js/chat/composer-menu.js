// "/" and "@" in the composer. "/" at the start lists the servers' prompts (fuzzy search); a
// prompt with arguments asks for them in a small form with the server's completions, then its
// messages go into the composer (text into the box, embedded resources as attachments). "@" lists
// resources and resource templates (not apps' ui:// views); picking one reads it and attaches its contents, which then
// reach the model with the message.

import { api } from "../api.js";
import { h, clear, debounce } from "../dom.js";
import { icon } from "../icons.js";
import { toastError } from "../ui.js";
import { store } from "../store.js";
import { askArguments } from "./argument-form.js";
import {
  appendLine,
  argumentsOf,
  expandTemplate,
  findTrigger,
  promptParts,
  rankItems,
  resourceAttachment,
  offeredAsContext,
} from "./menu-items.js";

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

/** The servers' prompts ("/") and resources ("@"), listed once and kept for 15 seconds. */
function catalog() {
  const cache = { "/": null, "@": null };
  return async (which) => {
    if (cache[which]) return cache[which];
    cache[which] =
      which === "/"
        ? (await gather("servers.prompts", (list) => list || [])).map((p) => ({ kind: "prompt", ...p }))
        : await gather("servers.resources", (r) =>
            [
              ...(r?.resources || []).map((x) => ({ kind: "resource", ...x })),
              ...(r?.templates || []).map((x) => ({ kind: "template", ...x })),
            ].filter(offeredAsContext),
          );
    setTimeout(() => {
      cache[which] = null;
    }, 15000); // servers change: list again a little later
    return cache[which];
  };
}

/** One item of the menu; pressing it (before the box loses focus) chooses it. */
function menuRow(it, i, selected, onChoose) {
  const detail = it.description || it.uri || it.uriTemplate;
  return h(
    "div",
    {
      class: "slash-item",
      role: "option",
      id: `slash-${i}`,
      "aria-selected": String(selected),
      "data-name": it.name,
      onmousedown: (e) => {
        e.preventDefault();
        onChoose(it);
      },
    },
    icon(it.kind === "prompt" ? "message" : it.kind === "template" ? "edit" : "paperclip", { size: 14 }),
    h("span", { class: "slash-name", text: it.kind === "prompt" ? `/${it.name}` : it.name }),
    h("span", { class: "slash-server", text: it.server }),
    detail ? h("span", { class: "slash-desc", text: detail }) : null,
  );
}

/** The menu's keys, ahead of the composer's own: arrows move, Enter or Tab chooses, Escape closes. */
function menuKeys(input, isOpen, { move, choose, close }) {
  input.addEventListener(
    "keydown",
    (e) => {
      if (!isOpen()) return;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        e.stopImmediatePropagation();
        move(e.key === "ArrowDown" ? 1 : -1);
      } else if ((e.key === "Enter" || e.key === "Tab") && choose()) {
        e.preventDefault();
        e.stopImmediatePropagation();
      } else if (e.key === "Escape") {
        e.preventDefault();
        close();
      }
    },
    true,
  );
}

/** The menu's contents: a heading, then the items (or a line saying none matches). */
function renderMenu(menu, mode, items, active, choose) {
  clear(menu);
  menu.hidden = false;
  menu.append(
    h("p", { class: "slash-head", text: mode === "/" ? "Prompts from your servers" : "Resources to attach" }),
  );
  if (!items.length) {
    menu.append(h("p", { class: "slash-empty", text: mode === "/" ? "No prompt matches." : "No resource matches." }));
    return;
  }
  items.forEach((it, i) => {
    menu.append(menuRow(it, i, i === active, choose));
  });
}

/** Remove the "/query" or "@query" that opened the menu. */
function eatTrigger(composer) {
  const input = composer.input;
  const caret = input.selectionStart ?? input.value.length;
  const t = findTrigger(input.value, caret);
  if (!t) return;
  input.value = input.value.slice(0, t.start) + input.value.slice(caret);
  composer.setText(input.value);
}

/** A prompt's messages into the composer: text after what is typed, the rest as attachments. */
async function insertPrompt(composer, it, values) {
  const res = await api.call("servers.prompt", { server: it.server, name: it.name, arguments: values });
  const { text, attachments } = promptParts(it.name, res?.messages);
  for (const att of attachments) composer.addAttachment(att);
  composer.setText(appendLine(composer.input.value, text));
}

/** A resource's contents, read from its server, as attachments. */
async function attachResource(composer, it, uri) {
  const res = await api.call("servers.readResource", { server: it.server, uri });
  for (const c of res?.contents || []) {
    const att = resourceAttachment({ ...c, uri: c.uri || uri });
    if (att) composer.addAttachment(att);
  }
}

/** Ask for the item's arguments (if any), then insert the prompt or attach the resource. */
async function useItem(composer, box, it) {
  const names = argumentsOf(it);
  const values = names.length ? await askArguments(box, it, names) : {};
  if (values === null) {
    composer.input.focus();
    return;
  }
  try {
    if (it.kind === "prompt") await insertPrompt(composer, it, values);
    else await attachResource(composer, it, it.kind === "template" ? expandTemplate(it.uriTemplate, values) : it.uri);
  } catch (err) {
    toastError(err);
  }
  composer.input.focus();
}

/** Mark item `active` as the selected one, and keep it in view. */
function highlight(menu, input, active) {
  for (const [i, row] of [...menu.querySelectorAll(".slash-item")].entries())
    row.setAttribute("aria-selected", String(i === active));
  menu.querySelector(`#slash-${active}`)?.scrollIntoView({ block: "nearest" });
  input.setAttribute("aria-activedescendant", `slash-${active}`);
}

/** The list of prompts and resources, hidden, in the composer's box. */
function slashMenu(composer) {
  const menu = h("div", {
    class: "slash-menu",
    id: "slash-menu",
    role: "listbox",
    "aria-label": "Prompts and resources",
    hidden: true,
  });
  composer.el.querySelector(".composer-box").append(menu);
  return menu;
}

export function attachMenus(composer) {
  const input = composer.input;
  const menu = slashMenu(composer);
  let items = [];
  let active = 0;
  let mode = null; // "/" or "@"
  const load = catalog();

  const trigger = () => findTrigger(input.value, input.selectionStart ?? input.value.length);

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
    items = rankItems(all, t.query);
    active = 0;
    renderMenu(menu, t.mode, items, active, choose);
    if (items.length) input.setAttribute("aria-activedescendant", `slash-${active}`);
  }, 60);

  function move(by) {
    if (!items.length) return;
    active = (active + by + items.length) % items.length;
    highlight(menu, input, active);
  }

  function choose(it) {
    eatTrigger(composer);
    close();
    useItem(composer, menu.parentElement, it);
  }

  input.addEventListener("input", update);
  menuKeys(input, () => !menu.hidden && mode, {
    move,
    close,
    // Chooses the active item; false when there is none (the key then does what it does).
    choose: () => {
      if (!items.length) return false;
      choose(items[active]);
      return true;
    },
  });
  input.addEventListener("blur", () => setTimeout(close, 150));
  return { close };
}
