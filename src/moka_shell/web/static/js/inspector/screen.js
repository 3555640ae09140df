// The Inspector: every inspector.event (MCP traffic, view traffic, agent and server events)
// in a virtualised list (only visible rows exist in the DOM), with filters, a detail pane with
// pretty JSON, export, and #inspector?view=ID deep links.
//
// The core keeps up to 100,000 events; this screen holds only what it has fetched: the newest
// page for the current filters, then older pages as the person scrolls up or asks for them.
// Filters and search run in the core (inspector.page); live events are appended here.

import { api } from "../api.js";
import { h, append, clear, debounce, downloadBlob, copyText } from "../dom.js";
import { saveSessionButton } from "../views/session.js";
import { icon } from "../icons.js";
import { button, iconButton, toast, toastError } from "../ui.js";
import { jsonView } from "../json.js";
import { ARROW, matches, methodOf, summaryOf, timeOf } from "./events.js";
import { Exchanges, curlFor, detailFacts, durationText, isRequest, statusOf } from "./pairs.js";
import { SCREEN_INFO } from "../screens.js";

const ROW = 30; // px; fixed so the list can compute positions without measuring
const OVERSCAN = 12;
const PAGE = 2000; // events per fetch
const CAP = 100000; // the most this screen holds (the core's ring keeps as many)
const NEAR_TOP = ROW * 10; // scrolled this close to the top: fetch the older page
const CHANNELS = ["mcp.rpc", "ui.rpc", "agent", "server", "view"];
const fmt = (n) => n.toLocaleString();

let shown = []; // the fetched events that match the filters, oldest first
let lastSeq = 0; // newest seq seen, from a page or live
let floor = null; // "Clear": events up to this seq stay hidden
let older = null; // cursor (a seq) to the next older page; null when there is none
let matched = 0; // events in the core that match the filters (as of the last page, plus live ones)
let total = 0; // events in the core
let capacity = CAP;
let generation = 0; // bumped by every new query, so a late reply for old filters is dropped
let loading = false; // the first page for the current filters is on its way
let loadingOlder = false;
let loaded = false;
let visible = false;
let queued = false;
let exporting = false;
let selected = null;
let follow = true;
let frame = 0;
const els = {};
const filters = { channel: "", server: "", view: "", method: "", text: "" };
// "pairs": one row per request with its response folded in; "events": every message as it came.
const MODE_KEY = "moka.inspector.mode";
// Remembered in the page's own storage where there is one: WebKitGTK's private mode has none
// (reading it throws), and a throw here would stop the whole page from loading.
const remembered = {
  get() {
    try {
      return localStorage.getItem(MODE_KEY);
    } catch {
      return null;
    }
  },
  set(value) {
    try {
      localStorage.setItem(MODE_KEY, value);
    } catch {
      /* this run only */
    }
  },
};
let mode = remembered.get() === "events" ? "events" : "pairs";
const ex = new Exchanges();
const list = () => (mode === "pairs" ? ex.rows : shown);
let serverInfo = new Map(); // name → servers.list entry, for "Copy as curl"
const servers = new Set();

const filtered = () => Object.values(filters).some(Boolean);

function queryParams() {
  const params = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  if (floor !== null) params.after = floor;
  return params;
}

// ---- fetching --------------------------------------------------------------------------------

function add(ev) {
  if (!ev || typeof ev !== "object") return;
  if (typeof ev.seq === "number") {
    if (ev.seq <= lastSeq) return;
    lastSeq = ev.seq;
  }
  if (ev.server && !servers.has(ev.server)) {
    servers.add(ev.server);
    refreshServerOptions();
  }
  total = Math.min(total + 1, capacity);
  if (matches(ev, filters)) {
    shown.push(ev);
    ex.add(ev);
    matched = Math.min(matched + 1, total);
    if (shown.length > CAP * 1.1) trim();
  }
  schedule();
}

function trim() {
  // Drop the oldest tenth in one go instead of one event at a time; they can be fetched again.
  shown = shown.slice(shown.length - CAP);
  older = shown[0].seq;
  ex.reset(shown);
}

// Ask the core for the newest page for the current filters, once, after the current task:
// a deep link sets several filters in a row.
function requestLoad() {
  if (queued) return;
  queued = true;
  queueMicrotask(() => {
    queued = false;
    if (visible) load();
  });
}

async function load() {
  const gen = ++generation;
  loaded = true;
  loading = true;
  loadingOlder = false;
  schedule();
  try {
    const page = await api.call("inspector.page", { ...queryParams(), limit: PAGE });
    if (gen !== generation) return;
    // Live events that came after the core took its snapshot are kept, once, in order.
    const tail = shown.filter((ev) => ev.seq > page.newest && matches(ev, filters));
    shown = page.events.concat(tail);
    ex.reset(shown);
    older = page.before ?? null;
    capacity = page.capacity || CAP;
    total = Math.min(page.total + tail.length, capacity);
    matched = Math.min(page.matched + tail.length, total);
    lastSeq = Math.max(lastSeq, page.newest || 0);
    let fresh = false;
    for (const s of page.servers || [])
      if (!servers.has(s)) {
        servers.add(s);
        fresh = true;
      }
    if (fresh) refreshServerOptions();
    follow = true;
  } catch (err) {
    if (gen === generation) toastError(err);
  } finally {
    if (gen === generation) {
      loading = false;
      schedule(true);
    }
  }
}

async function loadOlder() {
  if (older === null || loading || loadingOlder) return;
  const gen = generation;
  loadingOlder = true;
  schedule();
  try {
    const page = await api.call("inspector.page", { ...queryParams(), before: older, limit: PAGE });
    if (gen !== generation) return;
    const first = shown.length ? shown[0].seq : Infinity;
    const fresh = page.events.filter((ev) => ev.seq < first);
    const rowsBefore = list().length;
    shown = fresh.concat(shown);
    ex.reset(shown);
    const grew = list().length - rowsBefore;
    older = page.before ?? null;
    total = Math.max(page.total, total);
    matched = Math.max(page.matched, shown.length);
    // Keep the rows in view where they were: the list grew above them.
    if (!follow && grew > 0) {
      els.spacer.style.height = `${list().length * ROW}px`;
      els.viewport.scrollTop += grew * ROW;
    }
  } catch (err) {
    if (gen === generation) toastError(err);
  } finally {
    if (gen === generation) {
      loadingOlder = false;
      schedule();
    }
  }
}

function schedule(jump = false) {
  if (jump) follow = true;
  if (frame) return;
  frame = requestAnimationFrame(render);
}

// ---- rendering --------------------------------------------------------------------------------

function render() {
  frame = 0;
  const vp = els.viewport;
  const items = list();
  els.spacer.style.height = `${items.length * ROW}px`;
  if (follow) vp.scrollTop = vp.scrollHeight;
  const first = Math.max(0, Math.floor(vp.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((vp.scrollTop + vp.clientHeight) / ROW) + OVERSCAN);
  const rows = [];
  for (let i = first; i < last; i++) rows.push(row(items[i], i));
  clear(els.rows).append(...rows);
  els.rows.style.transform = `translateY(${first * ROW}px)`;
  vp.classList.toggle("busy", loading);
  vp.setAttribute("aria-busy", String(loading || loadingOlder));
  els.count.textContent = countText();
  els.count.title =
    total >= capacity
      ? `Moka keeps the newest ${fmt(capacity)} events here; the log on disk has them all (moka inspect).`
      : "";
  els.older.hidden = older === null;
  els.older.disabled = loadingOlder || loading;
  els.older.querySelector("span").textContent = loadingOlder ? "Loading…" : "Load older";
  els.empty.hidden = shown.length > 0;
  els.empty.textContent = loading
    ? "Loading events…"
    : total && (filtered() || floor !== null)
      ? filtered()
        ? "No event matches these filters."
        : "Cleared. New events appear here."
      : "Nothing yet. Messages appear here as servers, views and the model talk.";
}

function countText() {
  if (loading && !shown.length) return "Loading…";
  const what = `${filtered() ? "matching " : ""}${matched === 1 ? "event" : "events"}`;
  let text =
    shown.length < matched ? `Showing ${fmt(shown.length)} of ${fmt(matched)} ${what}` : `${fmt(matched)} ${what}`;
  if ((filtered() || floor !== null) && matched !== total) text += ` · ${fmt(total)} in all`;
  return loading ? `${text} · searching…` : text;
}

const isSelected = (ev) => selected !== null && (ev === selected || (ev.seq !== undefined && ev.seq === selected.seq));

function timing(ev) {
  if (mode !== "pairs" || !isRequest(ev)) {
    return h("span", { class: "c-ms mono", text: durationText(ev.ms) });
  }
  const reply = ex.replyOf(ev);
  const status = statusOf(ev, reply);
  return h(
    "span",
    {
      class: `c-ms mono st-${status}`,
      title: status === "pending" ? "No response yet" : status === "error" ? "Answered with an error" : "",
    },
    h("i", { class: "st-dot", "aria-hidden": "true" }),
    reply ? durationText(reply.ms) : "…",
  );
}

function row(ev, i) {
  const isSel = isSelected(ev);
  const r = h(
    "div",
    {
      class: `insp-row${isSel ? " selected" : ""}`,
      role: "option",
      "aria-selected": String(isSel),
      id: isSel ? "insp-selected" : null,
      "data-index": i,
      "data-channel": ev.channel || "",
      "data-seq": ev.seq ?? "",
    },
    h("span", { class: "c-time mono", text: timeOf(ev) }),
    h(
      "span",
      { class: "c-chan" },
      h("span", { class: `chan chan-${String(ev.channel || "").replace(/\W/g, "")}`, text: ev.channel || "" }),
    ),
    h("span", { class: "c-dir", title: ev.direction, text: ARROW[ev.direction] || "·" }),
    h("span", { class: "c-server", text: ev.server || "" }),
    h("span", { class: "c-view mono", text: ev.view ? String(ev.view).slice(0, 8) : "", title: ev.view || "" }),
    h("span", { class: "c-method mono", text: methodOf(ev) }),
    timing(ev),
    h("span", { class: "c-sum mono", text: summaryOf(ev) }),
  );
  return r;
}

function select(ev, { scroll = false } = {}) {
  selected = ev;
  schedule();
  if (scroll && ev) {
    const i = list().findIndex(isSelected);
    const vp = els.viewport;
    if (i * ROW < vp.scrollTop) vp.scrollTop = i * ROW;
    else if ((i + 1) * ROW > vp.scrollTop + vp.clientHeight) vp.scrollTop = (i + 1) * ROW - vp.clientHeight;
  }
  renderDetail();
}

const copyButton = (label, text) =>
  button(label, {
    small: true,
    variant: "ghost",
    icon: "copy",
    onclick: async () => toast((await copyText(text)) ? "Copied" : "Copy failed"),
  });

/** What can be done with the selected event: filter to its view, save its session, copy it. */
function detailActions(ev, request) {
  const curl = curlFor(ev, serverInfo.get(ev.server));
  return h(
    "div",
    { class: "insp-detail-actions" },
    ev.view
      ? button("Only this view", {
          small: true,
          variant: "ghost",
          icon: "filter",
          onclick: () => setFilter("view", ev.view),
        })
      : null,
    ev.view ? saveSessionButton(ev.view) : null,
    request
      ? button("Show request", { small: true, variant: "ghost", onclick: () => select(request, { scroll: true }) })
      : null,
    isRequest(ev) ? copyButton("Copy as JSON", JSON.stringify(ev.message, null, 2)) : null,
    curl ? copyButton("Copy as curl", curl) : null,
  );
}

function renderDetail() {
  const d = clear(els.detail);
  const ev = selected;
  if (!ev) {
    d.append(
      h(
        "div",
        { class: "insp-detail-empty" },
        icon("inspector", { size: 22 }),
        h("p", { text: "Select an event to see its message." }),
      ),
    );
    return;
  }
  const reply = ex.replyOf(ev);
  const request = ev.reply_to != null ? ex.requests.get(ev.reply_to) : undefined;
  append(d, [
    h(
      "header",
      { class: "insp-detail-head" },
      h("strong", { class: "mono grow", text: methodOf(ev) || ev.channel || "event" }),
      iconButton("copy", "Copy message JSON", {
        onclick: async () => toast((await copyText(JSON.stringify(ev.message, null, 2))) ? "Copied" : "Copy failed"),
      }),
      iconButton("close", "Close details", { onclick: () => select(null) }),
    ),
    h(
      "dl",
      { class: "insp-meta" },
      detailFacts(ev, reply).map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", { class: "mono", text: v }))),
    ),
    detailActions(ev, request),
    reply ? h("h3", { class: "insp-part", text: "Request" }) : null,
    jsonView(ev.message, { className: "insp-json" }),
    reply ? h("h3", { class: "insp-part", text: `Response · ${durationText(reply.ms)}` }) : null,
    reply ? jsonView(reply.message, { className: "insp-json insp-response" }) : null,
  ]);
}

function setMode(next) {
  if (next === mode) return;
  const keep = selected;
  mode = next;
  remembered.set(mode);
  for (const input of els.mode.querySelectorAll("input")) input.checked = input.value === mode;
  // A selected response folds into its request's row in the exchange view.
  if (mode === "pairs" && keep?.reply_to != null && ex.requests.has(keep.reply_to))
    selected = ex.requests.get(keep.reply_to);
  schedule(!selected);
  if (selected) select(selected, { scroll: true });
}

async function refreshServers() {
  try {
    serverInfo = new Map((await api.call("servers.list")).map((s) => [s.name, s]));
  } catch {
    /* curl stays unavailable */
  }
}

function refreshServerOptions() {
  const sel = els.server;
  if (!sel) return;
  const value = sel.value;
  clear(sel).append(
    h("option", { value: "", text: "All servers" }),
    [...servers].sort().map((s) => h("option", { value: s, text: s })),
  );
  if (filters.server && !servers.has(filters.server))
    sel.append(h("option", { value: filters.server, text: filters.server }));
  sel.value = filters.server || value;
}

function setFilter(key, value) {
  filters[key] = value || "";
  const input = els[key];
  if (input && input.value !== filters[key]) {
    if (key === "server") refreshServerOptions();
    input.value = filters[key];
  }
  requestLoad();
}

function onKey(e) {
  const items = list();
  if (!items.length) return;
  let i = selected ? items.findIndex(isSelected) : -1;
  if (e.key === "ArrowDown") i = Math.min(items.length - 1, i + 1);
  else if (e.key === "ArrowUp") i = Math.max(0, i - 1);
  else if (e.key === "Home") i = 0;
  else if (e.key === "End") i = items.length - 1;
  else if (e.key === "Escape") {
    select(null);
    return;
  } else return;
  e.preventDefault();
  follow = i === items.length - 1;
  select(items[i], { scroll: true });
}

// The export is the log (with the filters), not this list: "Clear" does not apply. It comes in
// chunks, so a 100,000-event export never holds the core for long.
async function exportEvents(e) {
  if (exporting) return;
  exporting = true;
  const btn = e?.currentTarget;
  if (btn) btn.disabled = true;
  const params = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  try {
    const parts = [];
    let filename = null;
    let count = 0;
    let after = null;
    do {
      const chunk = await api.call("inspector.export", after === null ? params : { ...params, after });
      filename ??= chunk.filename;
      parts.push(chunk.content);
      count += chunk.count || 0;
      after = chunk.next ?? null;
    } while (after !== null);
    downloadBlob(filename, new Blob(parts, { type: "application/x-ndjson" }));
    toast(`Exported ${fmt(count)} events to ${filename}`, { tone: "success" });
  } catch (err) {
    toastError(err);
  } finally {
    exporting = false;
    if (btn) btn.disabled = false;
  }
}

function clearList() {
  floor = lastSeq;
  shown = [];
  ex.reset(shown);
  matched = 0;
  older = null;
  generation += 1; // a page on its way belongs to the list before the clear
  loading = loadingOlder = false;
  select(null);
  schedule(true);
}

// ---- screen --------------------------------------------------------------------------------

/** The toolbar's filters: channel, server, method, view and the text search. */
function buildFilters() {
  const typed = (key) => debounce((e) => setFilter(key, e.target.value.trim()), 180);
  els.channel = h(
    "select",
    {
      class: "select",
      id: "inspector-filter-channel",
      "aria-label": "Channel",
      onchange: (e) => setFilter("channel", e.target.value),
    },
    h("option", { value: "", text: "All channels" }),
    CHANNELS.map((c) => h("option", { value: c, text: c })),
  );
  els.server = h("select", {
    class: "select",
    id: "inspector-filter-server",
    "aria-label": "Server",
    onchange: (e) => setFilter("server", e.target.value),
  });
  els.view = h("input", {
    class: "input",
    id: "inspector-filter-view",
    placeholder: "View id",
    "aria-label": "View id",
    oninput: typed("view"),
    autocomplete: "off",
  });
  els.method = h("input", {
    class: "input",
    id: "inspector-filter-method",
    placeholder: "Method",
    "aria-label": "Method",
    oninput: typed("method"),
    autocomplete: "off",
  });
  els.text = h("input", {
    class: "input",
    id: "inspector-filter-text",
    type: "search",
    placeholder: "Search messages",
    "aria-label": "Search messages",
    oninput: typed("text"),
    autocomplete: "off",
  });
}

/** The virtualised list: a spacer as tall as every row, the rows in view, and its count. */
function buildList() {
  els.count = h("span", { class: "insp-count", id: "inspector-count", "aria-live": "polite" });
  els.spacer = h("div", { class: "insp-spacer" });
  els.rows = h("div", { class: "insp-rows" });
  els.empty = h("div", { class: "insp-empty", hidden: true });
  els.viewport = h(
    "div",
    {
      class: "insp-viewport",
      id: "inspector-list",
      role: "listbox",
      tabindex: "0",
      "aria-label": "Events",
      onkeydown: onKey,
    },
    els.spacer,
    els.rows,
    els.empty,
  );
  els.viewport.addEventListener("scroll", () => {
    const vp = els.viewport;
    follow = vp.scrollHeight - vp.scrollTop - vp.clientHeight < ROW * 2;
    if (vp.scrollTop < NEAR_TOP && !follow) loadOlder();
    schedule();
  });
  els.rows.addEventListener("click", (e) => {
    const r = e.target.closest(".insp-row");
    if (r) {
      select(list()[Number(r.dataset.index)]);
      els.viewport.focus({ preventScroll: true });
    }
  });
}

/** "Load older", and the switch between exchanges and single events. */
function buildPaging() {
  els.older = button("Load older", {
    small: true,
    variant: "ghost",
    id: "inspector-older",
    hidden: true,
    title: `Fetch the ${fmt(PAGE)} events before the oldest shown (scrolling to the top does too)`,
    onclick: loadOlder,
  });
  els.mode = h(
    "div",
    { class: "segmented insp-mode", role: "radiogroup", "aria-label": "Show" },
    [
      ["pairs", "Exchanges", "One row per request, with its response and how long it took"],
      ["events", "Events", "Every message as it came"],
    ].map(([value, label, title]) =>
      h(
        "label",
        { title },
        h("input", {
          type: "radio",
          name: "inspector-mode",
          value,
          id: `inspector-mode-${value}`,
          checked: mode === value,
          onchange: () => setMode(value),
        }),
        label,
      ),
    ),
  );
}

/** The screen: toolbar, the table with its header and status line, and the detail pane. */
function buildLayout(section) {
  els.detail = h("aside", { class: "insp-detail", id: "inspector-detail", "aria-label": "Event details" });
  refreshServerOptions();
  section.append(
    h(
      "div",
      { class: "inspector" },
      h(
        "div",
        { class: "insp-toolbar", role: "search" },
        h("div", { class: "insp-search" }, icon("search", { size: 15 }), els.text),
        els.channel,
        els.server,
        els.method,
        els.view,
        els.mode,
      ),
      h(
        "div",
        { class: "insp-body" },
        h(
          "div",
          { class: "insp-table" },
          h(
            "div",
            { class: "insp-row insp-header", "aria-hidden": "true" },
            ["Time", "Channel", "", "Server", "View", "Method", "Took", "Message"].map((t, i) =>
              h("span", {
                class: ["c-time", "c-chan", "c-dir", "c-server", "c-view", "c-method", "c-ms", "c-sum"][i],
                text: t,
              }),
            ),
          ),
          els.viewport,
          h(
            "div",
            { class: "insp-status" },
            els.count,
            els.older,
            h("span", { class: "grow" }),
            h("span", { class: "muted small" }, h("kbd", { text: "↑" }), " ", h("kbd", { text: "↓" }), " to move"),
          ),
        ),
        els.detail,
      ),
    ),
  );
}

export default {
  ...SCREEN_INFO.inspector,

  init(section) {
    buildFilters();
    buildList();
    buildPaging();
    buildLayout(section);
    renderDetail();
    api.on("inspector.event", add);
    // The page fell behind and Moka dropped some live pushes (it kept them all): read the page again.
    api.on("inspector.dropped", () => {
      if (visible) requestLoad();
    });
    api.on("api.reconnected", () => {
      if (visible) {
        api.call("inspector.live", { on: true }).catch(() => {});
        requestLoad();
      }
    });
    new ResizeObserver(() => schedule()).observe(els.viewport);
  },

  show(params = {}) {
    visible = true;
    // Live events flow only while this screen is open (each one costs every view call a push);
    // what happened meanwhile comes with the page. Asked first, so nothing falls in between.
    api.call("inspector.live", { on: true }).catch(() => {});
    refreshServers();
    for (const key of ["view", "server", "channel", "method", "text"]) if (key in params) setFilter(key, params[key]);
    if (!loaded) requestLoad();
    schedule();
  },

  hide() {
    visible = false;
    loaded = false;
    api.call("inspector.live", { on: false }).catch(() => {});
  },

  actions() {
    return [
      button("Clear", {
        small: true,
        variant: "ghost",
        icon: "trash",
        id: "inspector-clear",
        title: "Clear this list (the log on disk is kept)",
        onclick: clearList,
      }),
      button("Export", { small: true, icon: "download", id: "inspector-export", onclick: exportEvents }),
    ];
  },

  focusSearch() {
    els.text.focus();
    els.text.select();
  },
};
