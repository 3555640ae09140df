// The conversation sidebar: new, search, rename, delete and export (download via Blob).
// The list comes a page at a time (keyed on the last conversation shown, so none is skipped
// or repeated); scrolling to its end loads the next, and search reaches every conversation.

import { api } from "../api.js";
import { h, clear, debounce, downloadText, relativeTime } from "../dom.js";
import { icon } from "../icons.js";
import { iconButton, showMenu, promptDialog, confirmDialog, toastError, toast } from "../ui.js";

const PAGE = 100;

/** The sidebar's frame: New chat, the search box and the (empty) list. */
function sidebarFrame(onNew) {
  const search = h("input", {
    class: "input conv-search",
    id: "conv-search",
    type: "search",
    placeholder: "Search conversations",
    "aria-label": "Search conversations",
    autocomplete: "off",
  });
  const list = h("div", { class: "conv-list", id: "conv-list", role: "list", "aria-label": "Conversations" });
  const sentinel = h("div", { class: "conv-sentinel", id: "conv-sentinel", "aria-hidden": "true" });
  const el = h(
    "aside",
    { class: "conv-sidebar", "aria-label": "Conversations" },
    h(
      "div",
      { class: "conv-top" },
      h(
        "button",
        { type: "button", class: "btn btn-primary conv-new", id: "conv-new", onclick: () => onNew() },
        icon("plus", { size: 16 }),
        h("span", { text: "New chat" }),
      ),
      h("div", { class: "conv-search-wrap" }, icon("search", { size: 15 }), search),
    ),
    list,
  );
  return { el, search, list, sentinel };
}

/** One conversation in the list: open it, or its actions menu. */
function conversationRow(c, { active, onOpen, onMenu }) {
  const more = iconButton("more", `Actions for ${c.title || "conversation"}`, {
    className: "conv-more",
    onclick: (e) => {
      e.stopPropagation();
      onMenu(c, more);
    },
  });
  return h(
    "div",
    { class: "conv-item", role: "listitem", "data-conv-id": c.id, "aria-current": active ? "true" : null },
    h(
      "button",
      { type: "button", class: "conv-open", onclick: () => onOpen(c.id) },
      h("span", { class: "conv-title", text: c.title || "Untitled" }),
      h("span", { class: "conv-meta", text: `${relativeTime(c.updatedAt)} · ${c.messageCount ?? 0} messages` }),
    ),
    more,
  );
}

/** Search as the person types (debounced); Escape clears it. */
function watchSearch(search, onQuery) {
  search.addEventListener(
    "input",
    debounce(() => onQuery(search.value.trim()), 200),
  );
  search.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && search.value) {
      search.value = "";
      onQuery("");
    }
  });
}

/** The sentinel after the last item: when it scrolls into view, the next page comes. */
function watchEnd(list, sentinel, loadMore) {
  // Checked again when the callback runs: the list may have been re-rendered in between.
  const nearEnd = () =>
    sentinel.isConnected && sentinel.getBoundingClientRect().top - list.getBoundingClientRect().bottom < 200;
  new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting) && nearEnd()) loadMore();
    },
    { root: list, rootMargin: "200px" },
  ).observe(sentinel);
}

/** The list after one more page: conversations already shown are not repeated. */
function withPage(items, page) {
  const known = new Set(items.map((c) => c.id));
  return items.concat((page || []).filter((c) => !known.has(c.id)));
}

/** Show `items` in the list, keeping its scroll place; the sentinel stays after the last. */
function renderList(list, sentinel, items, { query, activeId, onOpen, onMenu }) {
  const top = list.scrollTop;
  clear(list);
  list.append(sentinel);
  if (!items.length) {
    const text = query ? "No conversation matches." : "Your conversations will appear here.";
    list.append(h("p", { class: "conv-empty", text }));
    return;
  }
  for (const c of items) list.append(conversationRow(c, { active: c.id === activeId, onOpen, onMenu }));
  list.append(sentinel);
  list.scrollTop = top;
}

/** The conversations loaded so far for the search in `state.query`, a page at a time; `show` draws
 * `state.items`, `failed` says why the first page did not come. */
function conversationPages({ show, failed }) {
  const state = { items: [], query: "" };
  let hasMore = false; // the last page was full: there may be more
  let loading = null;
  const params = (extra) => ({ ...(state.query ? { query: state.query } : {}), ...extra });

  async function refresh() {
    // As many as are shown now (up to one request's worth), so a refresh keeps the scroll place.
    const limit = Math.min(500, Math.max(PAGE, state.items.length));
    try {
      state.items = (await api.call("conversations.list", params({ limit }))) || [];
      hasMore = state.items.length === limit;
    } catch (err) {
      state.items = [];
      hasMore = false;
      failed(err);
      return;
    }
    show();
  }

  function loadMore() {
    const { items } = state;
    if (!hasMore || loading || !items.length) return loading;
    const last = items[items.length - 1];
    const asked = state.query;
    loading = api
      .call("conversations.list", params({ limit: PAGE, before: { updatedAt: last.updatedAt, id: last.id } }))
      .then((page) => {
        if (asked !== state.query) return; // a new search started meanwhile
        state.items = withPage(state.items, page);
        hasMore = (page || []).length === PAGE;
        show();
      })
      .catch(() => {
        hasMore = false;
      })
      .finally(() => {
        loading = null;
      });
    return loading;
  }

  return { state, refresh, loadMore };
}

export function createSidebar({ onOpen, onNew, onDeleted, onRenamed }) {
  let activeId = null;
  const { el, search, list, sentinel } = sidebarFrame(onNew);
  const pages = conversationPages({
    show: () => render(),
    failed: (err) => clear(list).append(h("p", { class: "conv-empty", text: err.message })),
  });
  const { state, refresh } = pages;

  watchSearch(search, (value) => {
    state.query = value;
    refresh();
  });
  watchEnd(list, sentinel, pages.loadMore);

  const hooks = { refresh, onDeleted, onRenamed };
  const onMenu = (c, anchor) => conversationMenu(c, anchor, hooks);
  const render = () => renderList(list, sentinel, state.items, { query: state.query, activeId, onOpen, onMenu });

  return {
    el,
    refresh,
    refreshSoon: debounce(refresh, 400),
    setActive(id) {
      activeId = id;
      render();
    },
    knows: (id) => state.items.some((c) => c.id === id),
    titleOf: (id) => state.items.find((c) => c.id === id)?.title,
    focusSearch() {
      search.focus();
      search.select();
    },
  };
}

/** A conversation's actions: rename, export, delete; hooks tell the sidebar. */
function conversationMenu(c, anchor, hooks) {
  showMenu(anchor, [
    { label: "Rename", icon: "edit", onclick: () => rename(c, hooks) },
    { label: "Export as Markdown", icon: "download", onclick: () => exportConv(c, "markdown") },
    { label: "Export as JSON", icon: "download", onclick: () => exportConv(c, "json") },
    { label: "Delete", icon: "trash", danger: true, onclick: () => remove(c, hooks) },
  ]);
}

async function rename(c, { refresh, onRenamed }) {
  const title = await promptDialog({ title: "Rename conversation", label: "Title", value: c.title || "" });
  if (title === null || !title.trim()) return;
  try {
    await api.call("conversations.rename", { id: c.id, title: title.trim() });
    onRenamed?.(c.id, title.trim());
    refresh();
  } catch (err) {
    toastError(err);
  }
}

async function exportConv(c, format) {
  try {
    const { filename, content } = await api.call("conversations.export", { id: c.id, format });
    downloadText(filename, content, format === "json" ? "application/json" : "text/markdown");
    toast(`Exported ${filename}`, { tone: "success" });
  } catch (err) {
    toastError(err);
  }
}

async function remove(c, { refresh, onDeleted }) {
  const ok = await confirmDialog({
    title: "Delete conversation?",
    message: `"${c.title || "Untitled"}" and its messages will be deleted. This can't be undone.`,
    confirmLabel: "Delete",
    danger: true,
  });
  if (!ok) return;
  try {
    await api.call("conversations.delete", { id: c.id });
    onDeleted?.(c.id);
    refresh();
  } catch (err) {
    toastError(err);
  }
}
