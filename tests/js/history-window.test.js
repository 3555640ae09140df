// The paging rules of a long conversation's thread (js/chat/history-window.js): which page to
// fetch when, what the window holds after a page or a trim, and what happens to live messages.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  afterFetch,
  afterTrim,
  afterTruncate,
  EDGE_SCREENS,
  FIRST_PAGE,
  laterThan,
  MAX_SHOWN,
  noteLive,
  PAGE,
  pageParams,
  shouldFetch,
  takesLive,
  trimPlan,
  windowFrom,
} from "../../src/moka_shell/web/static/js/chat/history-window.js";

const msgs = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: `m${from + i}`, seq: from + i }));
const metrics = (scrollTop, scrollHeight = 10_000, clientHeight = 800) => ({ scrollTop, scrollHeight, clientHeight });

describe("opening a conversation", () => {
  test("the window is the newest page: its ends, whether older ones exist, nothing newer", () => {
    const win = windowFrom(msgs(9941, 10_000), true);
    assert.deepEqual(win, { lo: 9941, hi: 10_000, hasOlder: true, hasNewer: false, lastSeq: 10_000 });
  });
  test("out of order or without seq, the ends are still the smallest and largest", () => {
    const win = windowFrom([{ seq: 7 }, { seq: 3 }, { id: "x" }, { seq: 5 }], false);
    assert.equal(win.lo, 3);
    assert.equal(win.hi, 7);
    assert.equal(win.hasOlder, false);
  });
  test("an empty conversation has no ends and fetches nothing", () => {
    const win = windowFrom([], false);
    assert.equal(win.lo, null);
    assert.equal(shouldFetch(win, metrics(0)), null);
  });
  test("pages are small enough to render in one task, the window a few of them", () => {
    assert.ok(FIRST_PAGE <= 100 && PAGE <= 100);
    assert.ok(MAX_SHOWN >= 3 * PAGE && MAX_SHOWN <= 500);
  });
});

describe("when to fetch", () => {
  const both = { lo: 500, hi: 800, hasOlder: true, hasNewer: true, lastSeq: 10_000 };
  const edge = 800 * EDGE_SCREENS;
  test("older when the top of what is held is within the edge", () => {
    assert.equal(shouldFetch(both, metrics(edge - 1)), "older");
    assert.equal(shouldFetch(both, metrics(edge + 1)), null);
  });
  test("newer when the bottom is within the edge", () => {
    const bottom = 10_000 - 800;
    assert.equal(shouldFetch(both, metrics(bottom - edge + 1)), "newer");
    assert.equal(shouldFetch(both, metrics(bottom - edge - 1)), null);
  });
  test("never past an end that has nothing beyond it", () => {
    const newest = { ...both, hasNewer: false };
    assert.equal(shouldFetch(newest, metrics(9200)), null);
    const oldest = { ...both, hasOlder: false };
    assert.equal(shouldFetch(oldest, metrics(0, 10_000)), null);
  });
  test("a short thread with both ends near asks for the older page first", () => {
    assert.equal(shouldFetch(both, metrics(0, 900)), "older");
  });
  test("nothing while a fetch is running, or for a thread that is not laid out", () => {
    assert.equal(shouldFetch(both, metrics(0), true), null);
    assert.equal(shouldFetch(both, metrics(0, 0, 0)), null);
  });
  test("the next page is keyed on the window's end", () => {
    assert.deepEqual(pageParams(both, "older"), { before: 500, limit: PAGE });
    assert.deepEqual(pageParams(both, "newer", 10), { after: 800, limit: 10 });
  });
});

describe("after a page", () => {
  const win = { lo: 501, hi: 800, hasOlder: true, hasNewer: true, lastSeq: 10_000 };
  test("an older page moves the top out; a short one (no more) ends it", () => {
    assert.deepEqual(afterFetch(win, "older", msgs(451, 500), true), { ...win, lo: 451 });
    assert.equal(afterFetch(win, "older", msgs(1, 20), false).hasOlder, false);
  });
  test("a newer page moves the bottom out and may reach the newest", () => {
    const next = afterFetch(win, "newer", msgs(801, 850), false);
    assert.equal(next.hi, 850);
    assert.equal(next.hasNewer, false);
    assert.equal(next.lastSeq, 10_000);
  });
  test("an empty page says there is nothing more that way", () => {
    assert.equal(afterFetch(win, "older", [], true).hasOlder, false);
    assert.equal(afterFetch(win, "newer", [], true).hasNewer, false);
  });
});

describe("letting go past the limit", () => {
  const shown = (from, to, pins = []) =>
    Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, pinned: pins.includes(from + i) }));
  test("nothing goes while the thread holds no more than the limit", () => {
    assert.deepEqual(trimPlan(shown(1, MAX_SHOWN), "older"), { drop: [], hide: [] });
  });
  test("after an older page the newest ones go; after a newer page the oldest", () => {
    assert.deepEqual(trimPlan(shown(1, 13), "older", 10).drop, [11, 12, 13]);
    assert.deepEqual(trimPlan(shown(1, 13), "newer", 10).drop, [1, 2, 3]);
  });
  test("a message holding a live view or a running call is hidden, never dropped", () => {
    assert.deepEqual(trimPlan(shown(1, 13, [12]), "older", 10), { drop: [11, 13], hide: [12] });
  });
  test("the window then ends where the shown messages end, with more beyond", () => {
    const win = { lo: 1, hi: 13, hasOlder: false, hasNewer: false, lastSeq: 13 };
    assert.deepEqual(afterTrim(win, "older", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), { ...win, hi: 10, hasNewer: true });
    assert.deepEqual(afterTrim(win, "newer", [4, 5, 6, 7, 8, 9, 10, 11, 12, 13]), { ...win, lo: 4, hasOlder: true });
    assert.deepEqual(afterTrim(win, "older", [1, 13]), win); // nothing went at that end
  });
});

describe("live messages and edits", () => {
  test("a live message belongs in view only while the window reaches the newest", () => {
    assert.equal(takesLive({ hasNewer: false }), true);
    assert.equal(takesLive({ hasNewer: true }), false);
    assert.equal(takesLive(undefined), true); // a new chat has no window
  });
  test("at the newest it extends the window; further up it only moves the conversation's end", () => {
    const atEnd = { lo: 1, hi: 10, hasOlder: false, hasNewer: false, lastSeq: 10 };
    assert.deepEqual(noteLive(atEnd, 11), { ...atEnd, hi: 11, lastSeq: 11 });
    const back = { lo: 1, hi: 10, hasOlder: false, hasNewer: true, lastSeq: 500 };
    assert.deepEqual(noteLive(back, 501), { ...back, lastSeq: 501 });
    assert.equal(noteLive(atEnd, undefined), atEnd);
  });
  test("an edit removes everything after its message: that is the end now", () => {
    const back = { lo: 100, hi: 400, hasOlder: true, hasNewer: true, lastSeq: 10_000 };
    assert.deepEqual(afterTruncate(back, 250), { ...back, hi: 250, hasNewer: false, lastSeq: 250 });
  });
  test("how many later messages an edit replaces counts the whole conversation", () => {
    const back = { lo: 100, hi: 400, hasOlder: true, hasNewer: true, lastSeq: 10_000 };
    assert.equal(laterThan(back, 250), 9750);
    assert.equal(laterThan(back, undefined), null);
    assert.equal(laterThan(null, 3), null);
  });
});
