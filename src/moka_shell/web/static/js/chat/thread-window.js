// A long conversation's thread holds a window of it (issue 27, item 4): the newest page when it
// opens, older or newer pages fetched as the person scrolls near an end, and the end away from
// them let go of past MAX_SHOWN, the message they are reading staying where it was on screen.
// A message holding a live view, or a call still running, is hidden rather than dropped, so its
// frame lives on. The rules are chat/history-window.js; this applies them to the DOM.

import { api } from "../api.js";
import { toastError } from "../ui.js";
import { afterFetch, afterTrim, FIRST_PAGE, pageParams, shouldFetch, trimPlan, windowFrom } from "./history-window.js";

let deps = null; // {scroller, render(conv, message, before), rendered(conv, placed)}

/** Called once by chat/screen.js: the scroller, how to render one stored message, what to do after a batch. */
export function initThreadWindow(d) {
  deps = d;
}

/** The first page of a conversation (its newest messages), as conversations.get gives it. */
export function fetchNewest(id) {
  return api.call("conversations.get", { id, limit: FIRST_PAGE });
}

/** Show a page from conversations.get as the whole window. */
export function begin(conv, data) {
  conv.win = windowFrom(data?.messages, data?.hasOlder);
  place(conv, data?.messages || []);
}

/** After a scroll: fetch the next page if an end of the window is near. */
export function check(conv) {
  if (!conv?.win || !conv.id || conv.el.hidden) return;
  const { scrollTop, clientHeight, scrollHeight } = deps.scroller;
  const direction = shouldFetch(conv.win, { scrollTop, clientHeight, scrollHeight }, Boolean(conv.fetching));
  if (direction) fetchPage(conv, direction);
}

async function fetchPage(conv, direction) {
  conv.fetching = true;
  try {
    const res = await api.call("conversations.messages", { id: conv.id, ...pageParams(conv.win, direction) });
    keepPosition(conv, () => {
      conv.win = afterFetch(conv.win, direction, res?.messages, res?.more); // first: the page's actions follow it
      place(conv, res?.messages || []);
      trim(conv, direction);
    });
  } catch (err) {
    toastError(err);
    return; // no retry loop on a failing core: the next scroll asks again
  } finally {
    conv.fetching = false;
  }
  requestAnimationFrame(() => check(conv)); // a short page may leave the end still near
}

/** Back to the newest messages (the Latest button, or sending from a window further up). */
export async function toNewest(conv) {
  const data = await fetchNewest(conv.id);
  for (const msg of [...conv.msgs.values()]) letGoOrHide(conv, msg);
  // Notes that belonged to no message (a context marker, a failed send) go with the window.
  for (const node of [...conv.el.children]) if (!node.matches("article.msg")) node.remove();
  begin(conv, data);
  return data;
}

/** Render stored messages in seq order among those already there, newest first, each before the next. */
function place(conv, messages) {
  const sorted = messages.filter((m) => m && m.role !== "tool").sort((a, b) => a.seq - b.seq);
  if (!sorted.length) return;
  let before = nextAfter(conv, sorted[sorted.length - 1].seq);
  const placed = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const known = conv.msgs.get(sorted[i].id);
    if (known?.out) reveal(known);
    deps.render(conv, sorted[i], known ? null : before);
    const msg = conv.msgs.get(sorted[i].id);
    if (msg) placed.push(msg);
    before = msg?.el || before;
  }
  deps.rendered(conv, placed);
}

/** The element of the first message after `seq` in the thread (messages not yet stored count as last). */
function nextAfter(conv, seq) {
  let best = null;
  for (const msg of conv.msgs.values()) {
    const s = Number.isFinite(msg.seq) ? msg.seq : Infinity;
    if (s > seq && msg.el.isConnected && (!best || s < best.s)) best = { s, el: msg.el };
  }
  return best?.el || null;
}

function trim(conv, fetched) {
  const shown = [...conv.msgs.values()]
    .filter((m) => !m.out && Number.isFinite(m.seq))
    .sort((a, b) => a.seq - b.seq)
    .map((m) => ({ seq: m.seq, pinned: pinned(m), msg: m }));
  const { drop, hide } = trimPlan(shown, fetched);
  if (!drop.length && !hide.length) return;
  const bySeq = new Map(shown.map((s) => [s.seq, s.msg]));
  for (const seq of drop) letGo(conv, bySeq.get(seq));
  for (const seq of hide) hideOut(bySeq.get(seq));
  // Live messages that came while the window was elsewhere are fetched again when it gets there.
  for (const msg of [...conv.msgs.values()]) if (msg.out && !pinned(msg)) letGo(conv, msg);
  const left = [...conv.msgs.values()].filter((m) => !m.out).map((m) => m.seq);
  conv.win = afterTrim(conv.win, fetched, left);
}

/** A message that must not leave the DOM: it holds a view's frame, or a call that is still going. */
function pinned(msg) {
  return Boolean(
    msg.streaming ||
      msg.el.querySelector(
        '.view-slot, .tool-card[data-status="running"], .tool-card[data-status="approval"], ' +
          '.tool-card[data-status="streaming"]',
      ),
  );
}

function letGoOrHide(conv, msg) {
  if (pinned(msg)) hideOut(msg);
  else letGo(conv, msg);
}

/** Take a message (and the notes after it) out of the thread; it is fetched again if the window comes back. */
function letGo(conv, msg) {
  for (const note of notesAfter(msg)) note.remove();
  for (const card of msg.el.querySelectorAll(".tool-card")) conv.cards.delete(card.dataset.callId);
  cancelAnimationFrame(msg.frame);
  clearTimeout(msg.pauseTimer);
  msg.el.remove();
  conv.msgs.delete(msg.id);
}

function hideOut(msg) {
  for (const note of notesAfter(msg)) note.remove(); // drawn again from the store when it comes back
  msg.out = true;
  msg.el.classList.add("out-of-window");
}

function reveal(msg) {
  msg.out = false;
  msg.el.classList.remove("out-of-window");
}

function notesAfter(msg) {
  const out = [];
  for (let n = msg.el.nextElementSibling; n && !n.matches("article.msg"); n = n.nextElementSibling) out.push(n);
  return out;
}

/** Change the thread without moving what the person reads: the first message in sight keeps its place. */
function keepPosition(conv, change) {
  noteAnchor(conv);
  change();
  holdAnchor();
}

// The message the person is reading and where it was on screen. Held through every change of the
// thread's height while they are not at the newest (pages in or out, a view growing, messages off
// screen laid out for the first time), the way a browser's own scroll anchoring would.
let anchor = null;

/**
 * Note the first message that starts in sight (after the person scrolls, and before the thread
 * changes); one cut by the top edge only if none does. Not the one cut by the edge, when there is
 * another: laid out for the first time, its own height changes, and what follows it would move.
 */
export function noteAnchor(conv) {
  anchor = null;
  if (!conv || conv.el.hidden) return;
  const box = deps.scroller.getBoundingClientRect();
  for (const node of conv.el.children) {
    if (!node.matches("article.msg:not(.out-of-window)")) continue;
    const r = node.getBoundingClientRect();
    if (r.bottom <= box.top) continue;
    if (r.top >= box.top || !anchor) anchor = { el: node, top: r.top };
    if (r.top >= box.top || r.bottom >= box.bottom) return;
  }
}

/** Scroll so the noted message is where it was. */
export function holdAnchor() {
  if (!anchor?.el.isConnected) return;
  const moved = anchor.el.getBoundingClientRect().top - anchor.top;
  if (Math.abs(moved) >= 1) deps.scroller.scrollTop += moved;
}
