// Which stretch of a long conversation the thread holds, and when to fetch or let go of more
// (issue 27, item 4). A conversation of 10,000 messages rendered whole kept the page busy for
// minutes; the thread now holds a window of it, keyed on the messages' sequence numbers (seq):
// the newest page on opening, older or newer pages as the person scrolls near an end, and the far
// end let go of past MAX_SHOWN. Pure rules, no DOM: chat/thread-window.js applies them.

export const FIRST_PAGE = 60; // messages fetched when a conversation opens: a few screens
export const PAGE = 50; // messages in each later fetch: one page is rendered in one task
export const MAX_SHOWN = 300; // messages the thread keeps; past this the end away from the reader goes
export const EDGE_SCREENS = 1.5; // fetch when an end of what is held is this many screens away

/** The window after opening: the newest messages, and whether older ones exist. */
export function windowFrom(messages, hasOlder) {
  const seqs = seqsOf(messages);
  return {
    lo: seqs.length ? seqs[0] : null,
    hi: seqs.length ? seqs[seqs.length - 1] : null,
    hasOlder: Boolean(hasOlder),
    hasNewer: false,
    lastSeq: seqs.length ? seqs[seqs.length - 1] : 0,
  };
}

function seqsOf(messages) {
  return (messages || [])
    .map((m) => m?.seq)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
}

/**
 * "older", "newer" or null: which page to fetch now, given the scroller's metrics.
 * Nothing while a fetch runs; when both ends are near (a short thread), the older one first.
 */
export function shouldFetch(win, { scrollTop, clientHeight, scrollHeight }, busy = false) {
  if (!win || busy || !clientHeight) return null;
  const edge = clientHeight * EDGE_SCREENS;
  if (win.hasOlder && win.lo !== null && scrollTop < edge) return "older";
  if (win.hasNewer && win.hi !== null && scrollHeight - scrollTop - clientHeight < edge) return "newer";
  return null;
}

/** The parameters of conversations.messages for the next page in this direction. */
export function pageParams(win, direction, limit = PAGE) {
  return direction === "older" ? { before: win.lo, limit } : { after: win.hi, limit };
}

/** The window once a page came: its ends moved out, and whether more lie beyond in that direction. */
export function afterFetch(win, direction, messages, more) {
  const seqs = seqsOf(messages);
  const next = { ...win };
  if (direction === "older") {
    if (seqs.length) next.lo = Math.min(seqs[0], win.lo ?? Infinity);
    next.hasOlder = Boolean(more) && seqs.length > 0;
  } else {
    if (seqs.length) next.hi = Math.max(seqs[seqs.length - 1], win.hi ?? -Infinity);
    next.hasNewer = Boolean(more) && seqs.length > 0;
    next.lastSeq = Math.max(next.lastSeq, next.hi ?? 0);
  }
  return next;
}

/**
 * What to let go of past `max` shown messages, from the end away from the one just fetched.
 * `shown`: [{seq, pinned}] in seq order. A pinned message (it holds a live view, or a call still
 * running) is hidden instead of dropped, so its frame and card live on. Returns {drop, hide} (seqs).
 */
export function trimPlan(shown, fetched, max = MAX_SHOWN) {
  const drop = [];
  const hide = [];
  const excess = shown.length - max;
  if (excess <= 0) return { drop, hide };
  const going = fetched === "older" ? shown.slice(shown.length - excess) : shown.slice(0, excess);
  for (const item of going) (item.pinned ? hide : drop).push(item.seq);
  return { drop, hide };
}

/** The window once `gone` (seqs) were let go of at the end away from `fetched`. */
export function afterTrim(win, fetched, shownSeqs) {
  const seqs = [...shownSeqs].filter(Number.isFinite).sort((a, b) => a - b);
  if (!seqs.length) return win;
  const next = { ...win };
  if (fetched === "older" && seqs[seqs.length - 1] < win.hi) {
    next.hi = seqs[seqs.length - 1];
    next.hasNewer = true;
  }
  if (fetched === "newer" && seqs[0] > win.lo) {
    next.lo = seqs[0];
    next.hasOlder = true;
  }
  return next;
}

/** Does a message arriving now belong in view? Only while the window reaches the newest message. */
export function takesLive(win) {
  return !win?.hasNewer;
}

/** The window after a live message with this seq arrived (it is the newest there is). */
export function noteLive(win, seq) {
  if (!win || !Number.isFinite(seq)) return win;
  const next = { ...win, lastSeq: Math.max(win.lastSeq, seq) };
  if (!win.hasNewer) {
    next.hi = Math.max(win.hi ?? seq, seq);
    next.lo = win.lo ?? seq;
  }
  return next;
}

/** The window after every message past `seq` was removed (an edit or a regenerate). */
export function afterTruncate(win, seq) {
  if (!win || !Number.isFinite(seq)) return win;
  return { ...win, hi: Math.min(win.hi ?? seq, seq), hasNewer: false, lastSeq: seq };
}

/** How many messages follow the one with this seq in the whole conversation (not just those shown). */
export function laterThan(win, seq) {
  return win && Number.isFinite(seq) ? Math.max(0, win.lastSeq - seq) : null;
}
