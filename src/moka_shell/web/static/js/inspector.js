// The Inspector: every inspector.event (MCP traffic, view traffic, agent and server events)
// in a virtualised list that stays fast at 100k events (only visible rows exist in the DOM),
// with filters, a detail pane with pretty JSON, export, and #inspector?view=ID deep links.

import { api } from "./api.js";
import { h, append, clear, debounce, downloadText, copyText } from "./dom.js";
import { icon } from "./icons.js";
import { button, iconButton, toast, toastError } from "./ui.js";
import { jsonView } from "./json.js";

const ROW = 30; // px; fixed so the list can compute positions without measuring
const OVERSCAN = 12;
const CAP = 100000;
const CHANNELS = ["mcp.rpc", "ui.rpc", "agent", "server", "view"];

let all = []; // every event we hold, oldest first
let shown = []; // the filtered subset
let lastSeq = -1;
let loaded = false;
let selected = null;
let follow = true;
let frame = 0;
let els = {};
const filters = { channel: "", server: "", view: "", method: "", text: "" };
const servers = new Set();

function matches(ev) {
  if (filters.channel && !String(ev.channel || "").startsWith(filters.channel)) return false;
  if (filters.server && ev.server !== filters.server) return false;
  if (filters.view && ev.view !== filters.view) return false;
  if (filters.method && !String(ev.method || "").includes(filters.method)) return false;
  if (filters.text && !textOf(ev).includes(filters.text.toLowerCase())) return false;
  return true;
}

// Cached per event: stringifying 100k messages on every keystroke would stall the page.
function textOf(ev) {
  if (ev.__text === undefined) {
    try { ev.__text = JSON.stringify(ev.message ?? null).toLowerCase(); } catch { ev.__text = ""; }
  }
  return ev.__text;
}

function summaryOf(ev) {
  if (ev.__summary === undefined) {
    const m = ev.message;
    let s;
    if (m && typeof m === "object") {
      const body = m.params ?? m.result ?? m.error ?? m;
      try { s = JSON.stringify(body); } catch { s = String(body); }
    } else s = String(m ?? "");
    ev.__summary = s.length > 240 ? `${s.slice(0, 240)}…` : s;
  }
  return ev.__summary;
}

function methodOf(ev) {
  if (ev.method) return ev.method;
  const m = ev.message;
  if (m && typeof m === "object") {
    if (m.error) return `error #${m.id ?? ""}`;
    if ("result" in m) return `result #${m.id ?? ""}`;
  }
  return "";
}

function timeOf(ev) {
  const t = typeof ev.time === "number" ? (ev.time < 1e12 ? ev.time * 1000 : ev.time) : Date.parse(ev.time);
  if (!Number.isFinite(t)) return String(ev.time ?? "");
  const d = new Date(t);
  return `${d.toLocaleTimeString([], { hour12: false })}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

const ARROW = { in: "←", out: "→" };

function add(ev) {
  if (!ev || typeof ev !== "object" || (typeof ev.seq === "number" && ev.seq <= lastSeq)) return;
  if (typeof ev.seq === "number") lastSeq = ev.seq;
  all.push(ev);
  if (ev.server && !servers.has(ev.server)) { servers.add(ev.server); refreshServerOptions(); }
  if (matches(ev)) shown.push(ev);
  if (all.length > CAP * 1.1) trim();
  schedule();
}

function trim() {
  // Drop the oldest tenth in one go instead of one event at a time.
  all = all.slice(all.length - CAP);
  const kept = new Set(all);
  shown = shown.filter((ev) => kept.has(ev));
}

function refilter() {
  shown = all.filter(matches);
  schedule(true);
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
  els.spacer.style.height = `${shown.length * ROW}px`;
  if (follow) vp.scrollTop = vp.scrollHeight;
  const first = Math.max(0, Math.floor(vp.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(shown.length, Math.ceil((vp.scrollTop + vp.clientHeight) / ROW) + OVERSCAN);
  const rows = [];
  for (let i = first; i < last; i++) rows.push(row(shown[i], i));
  clear(els.rows).append(...rows);
  els.rows.style.transform = `translateY(${first * ROW}px)`;
  els.count.textContent = shown.length === all.length
    ? `${all.length.toLocaleString()} events`
    : `${shown.length.toLocaleString()} of ${all.length.toLocaleString()} events`;
  els.empty.hidden = shown.length > 0;
  els.empty.textContent = all.length ? "No event matches these filters." : "Nothing yet. Messages appear here as servers, views and the model talk.";
}

function row(ev, i) {
  const isSel = ev === selected;
  const r = h("div", {
    class: `insp-row${isSel ? " selected" : ""}`, role: "option", "aria-selected": String(isSel), id: isSel ? "insp-selected" : null,
    "data-index": i, "data-channel": ev.channel || "", "data-seq": ev.seq ?? "",
  },
  h("span", { class: "c-time mono", text: timeOf(ev) }),
  h("span", { class: "c-chan" }, h("span", { class: `chan chan-${String(ev.channel || "").replace(/\W/g, "")}`, text: ev.channel || "" })),
  h("span", { class: "c-dir", title: ev.direction, text: ARROW[ev.direction] || "·" }),
  h("span", { class: "c-server", text: ev.server || "" }),
  h("span", { class: "c-view mono", text: ev.view ? String(ev.view).slice(0, 8) : "", title: ev.view || "" }),
  h("span", { class: "c-method mono", text: methodOf(ev) }),
  h("span", { class: "c-sum mono", text: summaryOf(ev) }));
  return r;
}

function select(ev, { scroll = false } = {}) {
  selected = ev;
  schedule();
  if (scroll && ev) {
    const i = shown.indexOf(ev);
    const vp = els.viewport;
    if (i * ROW < vp.scrollTop) vp.scrollTop = i * ROW;
    else if ((i + 1) * ROW > vp.scrollTop + vp.clientHeight) vp.scrollTop = (i + 1) * ROW - vp.clientHeight;
  }
  renderDetail();
}

function renderDetail() {
  const d = clear(els.detail);
  const ev = selected;
  if (!ev) {
    d.append(h("div", { class: "insp-detail-empty" }, icon("inspector", { size: 22 }), h("p", { text: "Select an event to see its message." })));
    return;
  }
  const meta = [["Channel", ev.channel], ["Direction", ev.direction], ["Server", ev.server], ["View", ev.view], ["Method", methodOf(ev)], ["Time", timeOf(ev)], ["Seq", ev.seq]];
  append(d, [
    h("header", { class: "insp-detail-head" },
      h("strong", { class: "mono grow", text: methodOf(ev) || ev.channel || "event" }),
      iconButton("copy", "Copy message JSON", { onclick: async () => toast((await copyText(JSON.stringify(ev.message, null, 2))) ? "Copied" : "Copy failed") }),
      iconButton("close", "Close details", { onclick: () => select(null) })),
    h("dl", { class: "insp-meta" }, meta.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) =>
      h("div", {}, h("dt", { text: k }), h("dd", { class: "mono", text: String(v) })))),
    ev.view ? h("div", {}, button("Only this view", { small: true, variant: "ghost", icon: "filter", onclick: () => setFilter("view", ev.view) })) : null,
    jsonView(ev.message, { className: "insp-json" })]);
}

function refreshServerOptions() {
  const sel = els.server;
  if (!sel) return;
  const value = sel.value;
  clear(sel).append(h("option", { value: "", text: "All servers" }), [...servers].sort().map((s) => h("option", { value: s, text: s })));
  if (filters.server && !servers.has(filters.server)) sel.append(h("option", { value: filters.server, text: filters.server }));
  sel.value = filters.server || value;
}

function setFilter(key, value) {
  filters[key] = value || "";
  const input = els[key];
  if (input && input.value !== filters[key]) {
    if (key === "server") refreshServerOptions();
    input.value = filters[key];
  }
  refilter();
}

let visible = false;

async function load() {
  loaded = true;
  try {
    const events = (await api.call("inspector.query", { limit: CAP })) || [];
    // Live events may have arrived while the query ran: keep both, in sequence order, once.
    const live = all;
    all = [];
    lastSeq = -1;
    for (const ev of events) add(ev);
    for (const ev of live) add(ev);
    refilter();
  } catch (err) {
    toastError(err);
  }
}

function onKey(e) {
  if (!shown.length) return;
  let i = selected ? shown.indexOf(selected) : -1;
  if (e.key === "ArrowDown") i = Math.min(shown.length - 1, i + 1);
  else if (e.key === "ArrowUp") i = Math.max(0, i - 1);
  else if (e.key === "Home") i = 0;
  else if (e.key === "End") i = shown.length - 1;
  else if (e.key === "Escape") { select(null); return; }
  else return;
  e.preventDefault();
  follow = i === shown.length - 1;
  select(shown[i], { scroll: true });
}

async function exportEvents() {
  const params = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  try {
    const { filename, content } = await api.call("inspector.export", params);
    downloadText(filename, content, "application/x-ndjson");
    toast(`Exported ${filename}`, { tone: "success" });
  } catch (err) { toastError(err); }
}

// ---- screen --------------------------------------------------------------------------------

export default {
  id: "inspector",
  title: "Inspector",
  icon: "inspector",

  init(section) {
    const typed = (key) => debounce((e) => setFilter(key, e.target.value.trim()), 180);
    els.channel = h("select", { class: "select", id: "inspector-filter-channel", "aria-label": "Channel", onchange: (e) => setFilter("channel", e.target.value) },
      h("option", { value: "", text: "All channels" }), CHANNELS.map((c) => h("option", { value: c, text: c })));
    els.server = h("select", { class: "select", id: "inspector-filter-server", "aria-label": "Server", onchange: (e) => setFilter("server", e.target.value) });
    els.view = h("input", { class: "input", id: "inspector-filter-view", placeholder: "View id", "aria-label": "View id", oninput: typed("view"), autocomplete: "off" });
    els.method = h("input", { class: "input", id: "inspector-filter-method", placeholder: "Method", "aria-label": "Method", oninput: typed("method"), autocomplete: "off" });
    els.text = h("input", { class: "input", id: "inspector-filter-text", type: "search", placeholder: "Search messages", "aria-label": "Search messages", oninput: typed("text"), autocomplete: "off" });
    els.count = h("span", { class: "insp-count", id: "inspector-count", "aria-live": "polite" });
    els.spacer = h("div", { class: "insp-spacer" });
    els.rows = h("div", { class: "insp-rows" });
    els.empty = h("div", { class: "insp-empty", hidden: true });
    els.viewport = h("div", { class: "insp-viewport", id: "inspector-list", role: "listbox", tabindex: "0", "aria-label": "Events", onkeydown: onKey },
      els.spacer, els.rows, els.empty);
    els.viewport.addEventListener("scroll", () => {
      const vp = els.viewport;
      follow = vp.scrollHeight - vp.scrollTop - vp.clientHeight < ROW * 2;
      schedule();
    });
    els.rows.addEventListener("click", (e) => {
      const r = e.target.closest(".insp-row");
      if (r) { select(shown[Number(r.dataset.index)]); els.viewport.focus({ preventScroll: true }); }
    });
    els.detail = h("aside", { class: "insp-detail", id: "inspector-detail", "aria-label": "Event details" });
    refreshServerOptions();
    section.append(h("div", { class: "inspector" },
      h("div", { class: "insp-toolbar", role: "search" },
        h("div", { class: "insp-search" }, icon("search", { size: 15 }), els.text), els.channel, els.server, els.method, els.view),
      h("div", { class: "insp-body" },
        h("div", { class: "insp-table" },
          h("div", { class: "insp-row insp-header", "aria-hidden": "true" },
            ["Time", "Channel", "", "Server", "View", "Method", "Message"].map((t, i) => h("span", { class: ["c-time", "c-chan", "c-dir", "c-server", "c-view", "c-method", "c-sum"][i], text: t }))),
          els.viewport,
          h("div", { class: "insp-status" }, els.count, h("span", { class: "grow" }),
            h("span", { class: "muted small" }, h("kbd", { text: "↑" }), " ", h("kbd", { text: "↓" }), " to move"))),
        els.detail)));
    renderDetail();
    api.on("inspector.event", add);
    api.on("api.reconnected", () => { if (visible) { api.call("inspector.live", { on: true }).catch(() => {}); load(); } });
    new ResizeObserver(() => schedule()).observe(els.viewport);
  },

  show(params = {}) {
    for (const key of ["view", "server", "channel", "method", "text"]) if (key in params) setFilter(key, params[key]);
    visible = true;
    // Live events flow only while this screen is open (each one costs every view call a push);
    // what happened meanwhile comes with the query.
    api.call("inspector.live", { on: true }).catch(() => {});
    if (!loaded) load();
    schedule();
  },

  hide() {
    visible = false;
    loaded = false;
    api.call("inspector.live", { on: false }).catch(() => {});
  },

  actions() {
    return [
      button("Clear", { small: true, variant: "ghost", icon: "trash", id: "inspector-clear", title: "Clear this list (the log on disk is kept)",
        onclick: () => { all = []; shown = []; select(null); schedule(); } }),
      button("Export", { small: true, icon: "download", id: "inspector-export", onclick: exportEvents }),
    ];
  },

  focusSearch() { els.text.focus(); els.text.select(); },
};
