// ViewHost: mounts each MCP App view as a proxy iframe on the sandbox origin and relays its
// JSON-RPC messages to the core (docs/bridge-api.md, "The view path"). Also owns the host
// controls around a view: display modes, close, failure cards and the many-views signals.

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { spinner, toastError } from "../ui.js";
import { store } from "../store.js";
import {
  buildCard,
  fillModeButtons,
  failureCard,
  parkedCard,
  windowCard,
  fillNote,
  problemStrip,
  closedNote,
  restartStrip,
} from "./card.js";
import "./dev-reload.js"; // `moka dev`: reload strips on the cards of the server being edited

const views = new Map(); // viewId -> record
const byWindow = new Map(); // proxy WindowProxy -> record (the only windows we listen to)
const placers = []; // (data) => Element | Promise<Element> | null
const placersToCome = new Set(); // screens still loading that may add placers (app.js loads them after hello)
let info = { mode: "browser" };
let popoutOnly = null; // in a popout window: the one viewId this page shows
let popoutInline = false; // `moka check`: that view is shown inline, as a chat or the Tool runner shows it

// Registered before any iframe exists, so a view's first message can never be missed.
window.addEventListener("message", onMessage);

function onMessage(event) {
  const rec = byWindow.get(event.source);
  if (!rec || event.origin !== rec.origin) return; // only our proxies, only from the sandbox origin
  fromProxy(rec, event.data);
}

/** A message from this view's proxy (by window, or by the private channel it was given). */
function fromProxy(rec, msg) {
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") return;
  if (typeof msg.method === "string" && msg.method.startsWith("ui/notifications/sandbox-")) {
    if (msg.method === "ui/notifications/sandbox-proxy-ready") onProxyReady(rec);
    return; // reserved for the proxy handshake; never forwarded
  }
  api
    .call("view.rpc", { viewId: rec.id, message: msg })
    .then((res) => {
      if (res?.reply) post(rec, res.reply);
    })
    .catch((err) => {
      // A request must get an answer or the view's SDK waits 60 s; notifications get none.
      if (msg.method && msg.id !== undefined && msg.id !== null) {
        post(rec, { jsonrpc: "2.0", id: msg.id, error: { code: -32603, message: err.message || "Host error" } });
      }
    });
}

function onProxyReady(rec) {
  rec.proxyReady = true;
  // Objects, never strings: the view's transport ignores anything without `jsonrpc`.
  // A private channel to this proxy goes with it, so nothing but this page can speak for it.
  // Only this proxy gets port2, so whatever arrives on port1 is from it.
  rec.port?.close();
  const channel = new MessageChannel();
  const port = channel.port1;
  rec.port = port;
  port.onmessage = (event) => {
    if (rec.port === port) fromProxy(rec, event.data);
  };
  rec.frame.contentWindow.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: {} },
    rec.origin,
    [channel.port2],
  );
  report(rec, "proxy-ready");
  for (const message of rec.outbox.splice(0)) post(rec, message);
}

function post(rec, message) {
  if (!rec.frame?.contentWindow) return;
  if (!rec.proxyReady) {
    rec.outbox.push(message);
    return;
  }
  if (rec.port) rec.port.postMessage(message);
  else rec.frame.contentWindow.postMessage(message, rec.origin);
}

// ---- messages the page missed (core/views/redelivery.py) ----------------------------------
// Every host → view message carries its view's next number. One that skips numbers, or a
// views.list after a reconnect whose number is ahead, means pushes were lost while the socket was
// down: the page asks view.missed for them, or mounts the frame again when they are no longer kept.

function deliver(rec, seq, message) {
  if (typeof seq !== "number" || rec.seq === null || !rec.frame) {
    // Unnumbered, the first one heard, or no frame here (a pop-out has it): nothing to put in order.
    if (typeof seq === "number") rec.seq = Math.max(rec.seq ?? 0, seq);
    post(rec, message);
    return;
  }
  if (seq <= rec.seq) return; // handed over already (a replay crossed a live push)
  if (seq === rec.seq + 1 && !rec.catching) {
    rec.seq = seq;
    post(rec, message);
    return;
  }
  rec.held.push([seq, message]);
  catchUp(rec);
}

async function catchUp(rec) {
  if (rec.catching || rec.seq === null) return;
  rec.catching = true;
  let res = null;
  try {
    res = await api.call("view.missed", { viewId: rec.id, after: rec.seq });
  } catch {
    // The socket went again (or the view is gone): the next reconnect asks again.
  }
  rec.catching = false;
  if (!res || views.get(rec.id) !== rec) return;
  if (res.remount) {
    // Too much was missed to give again: a new frame handshakes and is fed everything afresh.
    rec.held = [];
    rec.seq = res.seq;
    if (rec.frame) mountFrame(rec);
    return;
  }
  const all = [...(res.messages || []), ...rec.held.splice(0)].sort((a, b) => a[0] - b[0]);
  for (const [seq, message] of all) {
    if (seq <= rec.seq) continue;
    if (seq !== rec.seq + 1) rec.held.push([seq, message]);
    else {
      rec.seq = seq;
      post(rec, message);
    }
  }
  if (rec.held.length) catchUp(rec);
}

/** After a reconnect: give a view what it missed, if its number in views.list is ahead of ours. */
function resyncView(data) {
  const rec = views.get(data?.viewId);
  if (!rec || typeof data.seq !== "number" || rec.seq === null || data.seq <= rec.seq) return;
  if (rec.frame) catchUp(rec);
  else rec.seq = data.seq; // no frame here: it has nothing to be given
}

function report(rec, kind, detail = {}) {
  api.call("view.event", { viewId: rec.id, kind, detail }).catch(() => {});
}

const modeInfo = (id) => store.displayModes().find((m) => m.id === id) || { id, label: id, wireMode: id };

// ---- building a view card -----------------------------------------------------------------

function createRecord(data) {
  const rec = {
    id: data.viewId,
    data,
    frame: null,
    origin: null,
    proxyReady: false,
    outbox: [],
    mode: "inline",
    wire: "inline",
    height: null,
    state: "loading",
    popup: null,
    lastContainer: "",
    seq: typeof data.seq === "number" ? data.seq : null, // the last numbered message handed to the frame
    held: [], // numbered messages that came after a gap, until view.missed fills it
    catching: false,
  };
  Object.assign(rec, buildCard(data, { inspect: () => openInspector(rec), close: () => closeView(rec) }));
  buildModeButtons(rec);
  new ResizeObserver(() => reportContainer(rec)).observe(rec.body);
  return rec;
}

function buildModeButtons(rec) {
  fillModeButtons(rec.modes, store.displayModes(), rec.mode, (mode) => requestMode(rec, mode));
}

async function place(rec) {
  if (popoutOnly) {
    document.getElementById("popout-root").append(rec.slot);
    return;
  }
  for (;;) {
    for (const placer of placers) {
      const target = await placer(rec.data);
      if (target) {
        target.append(rec.slot);
        return;
      }
    }
    // The screen that shows it (the Tool runner's) may still be loading: ask again once it is here.
    if (!placersToCome.size) break;
    await Promise.allSettled([...placersToCome]);
  }
  console.warn("no place for view", rec.id);
}

// ---- the proxy iframe ---------------------------------------------------------------------

// Chromium runs sandboxed frames in a process of their own (one per site) and ends it with the
// last of them; starting it again cost every fresh view ~30 ms (docs/performance.md §1). After
// the first view, one empty sandboxed frame from the sandbox origin stays in the page to keep
// that process up. It runs nothing: no allow-scripts, and its CSP is default-src 'none'.
// The desktop shell runs every frame in the page's renderer, so it needs none.
let warmFrame = null;
function keepSandboxProcess(origin) {
  if (warmFrame || info.mode !== "browser" || popoutOnly) return;
  warmFrame = document.createElement("iframe");
  warmFrame.className = "sandbox-keepalive";
  warmFrame.setAttribute("sandbox", "");
  warmFrame.setAttribute("aria-hidden", "true");
  warmFrame.setAttribute("title", "");
  warmFrame.tabIndex = -1;
  warmFrame.src = new URL("/warm", origin).href;
  document.body.append(warmFrame);
}

function mountFrame(rec) {
  unmountFrame(rec);
  clear(rec.body);
  let url;
  try {
    url = new URL(rec.data.proxyUrl, location.href);
  } catch {
    return fail(rec, "The view has no valid sandbox URL.");
  }
  // The proxy must live on another origin, or the view could reach into Moka's page.
  if (url.origin === location.origin)
    return fail(rec, "Refused to load the view: its sandbox is on Moka's own origin.");
  rec.origin = url.origin;
  keepSandboxProcess(url.origin);
  rec.proxyReady = false;
  rec.outbox = [];
  const frame = document.createElement("iframe");
  frame.className = "view-frame";
  frame.dataset.viewId = rec.id;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms"); // no popups (S4)
  if (rec.data.allow) frame.setAttribute("allow", rec.data.allow);
  frame.setAttribute("title", `${rec.data.title || rec.data.tool} (app from ${rec.data.server})`);
  frame.src = url.href;
  rec.frame = frame;
  rec.body.append(
    frame,
    h("div", { class: "view-loading" }, spinner("Loading view"), h("span", { text: "Loading view…" })),
  );
  byWindow.set(frame.contentWindow, rec);
  applySize(rec);
  setState(rec, "loading");
  report(rec, "mounted");
}

function unmountFrame(rec) {
  if (!rec.frame) return;
  if (rec.frame.contentWindow) byWindow.delete(rec.frame.contentWindow);
  rec.port?.close();
  rec.port = null;
  rec.frame.remove();
  rec.frame = null;
  rec.proxyReady = false;
}

/** Set the frame's height for its layout; `animate: false` jumps there (a change of layout). */
function applySize(rec, { animate = true } = {}) {
  const frame = rec.frame;
  if (!frame) return;
  // The height transition is for a view growing or shrinking in place. Between layouts it
  // would start from the old layout's height resolved in the new one (leaving fullscreen:
  // an iframe's default 150 px) and visibly collapse and spring back.
  if (!animate) frame.style.transition = "none";
  // Fixed layouts (fullscreen) ignore what the view reports; the size is remembered for inline.
  if (rec.wire === "fullscreen") frame.style.height = "100%";
  else if (rec.wire === "pip")
    frame.style.height = `${Math.min(Math.max(rec.height || 240, 120), Math.round(window.innerHeight * 0.6))}px`;
  else frame.style.height = `${rec.height || startHeight()}px`;
  if (!animate) {
    void frame.offsetHeight; // take the new height now, before the transition comes back
    requestAnimationFrame(() => {
      frame.style.transition = "";
    });
  }
  if (rec.wire === "pip") layoutPips();
}

// Until its view sizes itself, a frame is as tall as the core says (app.info): tall enough for a
// view that sizes itself from its own frame to show whole.
const startHeight = () => info.limits?.inlineStartHeight ?? 600;

function setState(rec, state) {
  rec.state = state;
  rec.status.dataset.state = state;
  rec.status.title = state[0].toUpperCase() + state.slice(1);
  rec.card.dataset.state = state;
}

function fail(rec, reason, detail) {
  rec.failure = { reason, detail };
  unmountFrame(rec);
  setState(rec, "failed");
  rec.card.classList.add("failed");
  clear(rec.body).append(
    failureCard(reason, detail, {
      inspect: () => openInspector(rec),
      close: () => closeView(rec),
      allowEval: async () => {
        try {
          await api.call("servers.allowEval", { name: detail.server, allow: true });
          return true;
        } catch (err) {
          toastError(err);
          return false;
        }
      },
    }),
  );
}

// ---- display modes -------------------------------------------------------------------------

async function requestMode(rec, mode) {
  // The core answers with the wire mode it told the view; the view.display event that comes
  // with it carries the registered mode id, so that event alone changes the card.
  if (restarts(rec, mode) && !(await confirmRestart(rec))) return;
  try {
    await api.call("view.setDisplayMode", { viewId: rec.id, mode });
  } catch (err) {
    toastError(err);
  }
}

const isWindowMode = (id) => Boolean(modeInfo(id).opensWindow || id === "popout");
const RESTART_OK = "moka.viewRestartOk"; // the person said "Don't ask again"

/** Would `mode` start the app again (a live view going into a window), and has the person not waved that off? */
function restarts(rec, mode) {
  if (rec.state !== "ready" || !isWindowMode(mode) || isWindowMode(rec.mode)) return false;
  try {
    return localStorage.getItem(RESTART_OK) !== "1";
  } catch {
    return true;
  }
}

/** Say that the app starts again, in its card, and wait for the person's answer (true: go). */
function confirmRestart(rec) {
  rec.restartNote?.remove();
  return new Promise((resolve) => {
    const done = (go) => {
      rec.restartNote?.remove();
      rec.restartNote = null;
      resolve(go);
    };
    rec.restartNote = restartStrip({
      stay: () => done(false),
      go: (dontAsk) => {
        if (dontAsk)
          try {
            localStorage.setItem(RESTART_OK, "1");
          } catch {
            // a page without storage asks again next time
          }
        done(true);
      },
    });
    rec.head.after(rec.restartNote);
    rec.restartNote.querySelector('[data-action="go"]').focus();
  });
}

function applyMode(rec, mode, wireMode, opensWindow) {
  const m = modeInfo(mode);
  rec.mode = m.id;
  // In a popout window this page *is* the window: fill it, whatever the main window shows.
  const popoutHere = popoutOnly === rec.id && !popoutInline;
  const isWindow = (opensWindow ?? (m.opensWindow || m.id === "popout")) && !popoutHere;
  const previousWire = rec.wire;
  rec.wire = popoutHere ? "fullscreen" : isWindow ? "popout" : wireMode || m.wireMode || "inline";
  rec.card.dataset.mode = m.id;
  rec.card.dataset.wire = rec.wire;
  for (const b of rec.modes.querySelectorAll("[data-mode]"))
    b.setAttribute("aria-pressed", String(b.dataset.mode === m.id));
  // The "More display modes" button shows the plugin mode in use: draw it again for the new one.
  if (rec.modes.querySelector("[data-mode-menu]")) {
    const focused = rec.modes.contains(document.activeElement);
    fillModeButtons(rec.modes, store.displayModes(), rec.mode, (next) => requestMode(rec, next));
    if (focused) rec.modes.querySelector("[data-mode-menu]")?.focus();
  }
  if (isWindow) {
    unmountFrame(rec);
    showWindowPlaceholder(rec);
  } else if (!rec.frame && rec.state !== "failed" && rec.state !== "parked") {
    mountFrame(rec);
  }
  updateNote(rec);
  applySize(rec, { animate: rec.wire === previousWire });
  layoutPips();
  reportContainer(rec);
}

function showWindowPlaceholder(rec) {
  const card = windowCard({
    // Browser mode reopens the popup we were given; the desktop shell owns its native window.
    show: () => (rec.popupUrl ? openPopup(rec, rec.popupUrl, card.blockedNote) : requestMode(rec, "popout")),
    inline: () => requestMode(rec, "inline"),
  });
  clear(rec.body).append(card.el);
  rec.blockedNote = card.blockedNote;
}

function openPopup(rec, url, blockedNote) {
  rec.popupUrl = url;
  const win = window.open(url, `moka-view-${rec.id}`, "popup,width=760,height=600");
  if (!win) {
    if (blockedNote) blockedNote.hidden = false;
    return;
  }
  if (blockedNote) blockedNote.hidden = true;
  rec.popup = win;
  clearInterval(rec.popupTimer);
  // There is no close event for another window; poll, and tell the core when it is gone.
  rec.popupTimer = setInterval(() => {
    if (!win.closed) return;
    clearInterval(rec.popupTimer);
    rec.popup = null;
    report(rec, "popout-closed");
  }, 1000);
}

function updateNote(rec) {
  const detached = rec.wire === "fullscreen" || rec.wire === "pip";
  rec.slot.classList.toggle("detached", detached && !popoutOnly);
  rec.note.hidden = !detached || Boolean(popoutOnly);
  if (detached) fillNote(rec.note, rec.wire, () => requestMode(rec, "inline"));
}

/** Stack floating pip panels upward from the bottom-right corner, clear of their own notes. */
function layoutPips() {
  let bottom = 20;
  for (const rec of views.values()) {
    if (rec.wire !== "pip" || popoutOnly) continue;
    rec.card.style.bottom = `${bottom}px`;
    // The note left in the view's place holds "Return inline": when the panel would cover it,
    // the panel goes up to sit just above it (the note scrolls with the chat, so this re-runs).
    const note = rec.note.getBoundingClientRect();
    const card = rec.card.getBoundingClientRect();
    const shown = !rec.slot.closest(".screen[hidden]"); // a note on a screen not shown covers nothing
    if (
      shown &&
      note.height &&
      note.top < card.bottom &&
      note.bottom > card.top &&
      note.left < card.right &&
      note.right > card.left
    ) {
      bottom = Math.min(
        Math.max(bottom, window.innerHeight - note.top + 12),
        Math.max(20, window.innerHeight - card.height - 8),
      );
      rec.card.style.bottom = `${bottom}px`;
    }
    bottom += rec.card.offsetHeight + 12;
  }
}

let pipFrame = 0;
document.addEventListener(
  "scroll",
  () => {
    if (pipFrame || popoutOnly || ![...views.values()].some((r) => r.wire === "pip")) return;
    pipFrame = requestAnimationFrame(() => {
      pipFrame = 0;
      layoutPips();
    });
  },
  { capture: true, passive: true },
);

function reportContainer(rec) {
  if (!rec.frame) return;
  const width = Math.round(rec.body.clientWidth);
  if (!width) return;
  // Inline views size themselves up to a maximum; in fixed modes (fullscreen, pip, a pop-out)
  // the host decides, so the frame's height is reported too.
  const detail = { width, maxHeight: info.limits?.inlineMaxHeight ?? 1200 }; // the core's limit (app.info)
  if (rec.wire !== "inline") {
    detail.height = Math.round(rec.body.clientHeight || window.innerHeight);
    detail.maxHeight = detail.height;
  }
  const key = JSON.stringify(detail);
  if (key === rec.lastContainer) return;
  rec.lastContainer = key;
  clearTimeout(rec.containerTimer);
  rec.containerTimer = setTimeout(() => report(rec, "container", detail), 120);
}

// ---- many views: tell the core which views are on screen -------------------------------

const visibility = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) {
      const rec = views.get(entry.target.dataset.viewId);
      if (!rec) continue;
      // A floating view is on screen whatever its slot in the chat does.
      const onscreen = entry.isIntersecting || rec.wire === "pip" || rec.wire === "fullscreen";
      if (rec.onscreen === onscreen) continue;
      rec.onscreen = onscreen;
      clearTimeout(rec.visTimer);
      // Settle first, so fast scrolling past a view does not park and wake it.
      rec.visTimer = setTimeout(() => report(rec, onscreen ? "onscreen" : "offscreen"), 300);
    }
  },
  { rootMargin: "200px 0px" },
);

/** A live view hit a CSP block or threw: a strip above the frame says so, with a way to look. */
function showProblem(rec, d) {
  rec.problemCount = (rec.problemCount || 0) + 1;
  rec.problems?.remove();
  rec.problems = problemStrip(d, rec.problemCount, {
    inspect: () => openInspector(rec),
    dismiss: () => {
      rec.problems.remove();
      rec.problemCount = 0;
    },
  });
  rec.head.after(rec.problems);
}

// The desktop shell exposes gc() (shells/desktop/run.py): there every view shares the page's renderer,
// and V8 rarely runs a full collection by itself, so parked and closed views kept their memory.
// Browsers have no gc(); they give each sandboxed view its own process, which exits with it.
let gcTimer = null;
function collectSoon() {
  if (typeof window.gc !== "function") return;
  clearTimeout(gcTimer);
  gcTimer = setTimeout(() => window.gc(), 1500); // once, after a burst of parking has settled
}

// ---- closing --------------------------------------------------------------------------------

async function closeView(rec) {
  // view.close alone: it tears the view down (ui/resource-teardown first); also sending the
  // "closed-by-user" event would start a second teardown of the same view.
  try {
    await api.call("view.close", { viewId: rec.id });
  } catch (err) {
    toastError(err);
  }
  removeView(rec.id);
}

function removeView(viewId) {
  const rec = views.get(viewId);
  if (!rec) return;
  unmountFrame(rec);
  clearInterval(rec.popupTimer);
  visibility.unobserve(rec.slot);
  views.delete(viewId);
  collectSoon();
  const note = rec.data.recordId
    ? closedNote(rec.data.recordId, rec.data.title || rec.data.tool, () => reopen(rec.data.recordId))
    : null;
  if (note && !popoutOnly) rec.slot.replaceWith(note);
  else rec.slot.remove();
  layoutPips();
  // A pop-out window has nothing left to show. `moka check`'s page is the checker's own: it goes
  // on to the next view itself, and a close racing that navigation could keep the page from leaving.
  if (popoutOnly === viewId && !popoutInline) window.close();
}

export async function reopen(recordId) {
  try {
    await api.call("views.reopen", { recordId });
  } catch (err) {
    toastError(err);
  }
}

function openInspector(rec) {
  if (popoutOnly) return;
  location.hash = `#inspector?view=${encodeURIComponent(rec.id)}`;
}

// ---- events from the core -------------------------------------------------------------------

function withView(handler) {
  return (data) => {
    const rec = views.get(data?.viewId);
    if (rec) handler(rec, data);
  };
}

/** Mount (or re-mount) a view from its view.created / views.get data. */
async function mountView(data) {
  if (!data?.viewId || (popoutOnly && data.viewId !== popoutOnly)) return;
  let rec = views.get(data.viewId);
  if (rec) {
    rec.data = { ...rec.data, ...data };
  } else {
    rec = createRecord(data);
    views.set(rec.id, rec);
    if (data.recordId)
      for (const n of document.querySelectorAll(`.view-closed-note[data-record-id="${CSS.escape(data.recordId)}"]`))
        n.remove();
    await place(rec);
    // Watched once it is in the page: a card still waiting for its place (the Tool runner's code
    // loading) is not "off screen", and parking it then cost it a second frame.
    visibility.observe(rec.slot);
    // The core fails a view whose resource could not be read in the same tick it announces
    // it, so view.failed can land while place() awaits: keep that failure, never reset it.
    if (rec.failure) return;
  }
  rec.failure = null;
  unmountFrame(rec);
  rec.card.classList.remove("failed");
  rec.problems?.remove();
  if (data.height) rec.height = data.height; // a re-announced (un-parked) view keeps its size
  // A new frame: it is fed from its handshake on, so what was numbered before is not its to get.
  if (typeof data.seq === "number") rec.seq = Math.max(rec.seq ?? 0, data.seq);
  rec.held = [];
  rec.state = "loading";
  rec.mode = null;
  applyMode(rec, data.displayMode || "inline", data.wireMode, data.opensWindow);
  if (data.failure || data.state === "failed") fail(rec, data.failure || "The view failed.");
}

api.on("view.created", mountView);
api.on(
  "view.post",
  withView((rec, d) => {
    if (d.message && typeof d.message === "object") deliver(rec, d.seq, d.message);
  }),
);
// One message for several views of a server (a storage change): the socket carries it once, and
// each view this page holds gets its own copy here (security finding G1, row 34).
api.on("view.broadcast", (d) => {
  if (!Array.isArray(d?.viewIds) || !d.message || typeof d.message !== "object") return;
  d.viewIds.forEach((id, i) => {
    const rec = views.get(id);
    if (rec) deliver(rec, Array.isArray(d.seqs) ? d.seqs[i] : undefined, d.message);
  });
});
api.on(
  "view.size",
  withView((rec, d) => {
    // A frame with no layout box (its screen is hidden) measures 0 px: that is not the room
    // the view needs, and taking it would leave a view sized from its frame stuck at the
    // minimum. Shown again, the frame resizes and the view reports its real size.
    if (rec.frame && !rec.frame.getClientRects().length) return;
    if (typeof d.height === "number" && d.height > 0) {
      rec.height = Math.round(d.height);
      applySize(rec);
    }
  }),
);
api.on(
  "view.display",
  withView((rec, d) => {
    // A pop-out window whose view went back to the main window has nothing left to show.
    if (popoutOnly === rec.id && !popoutInline && !(d.opensWindow ?? d.mode === "popout")) {
      window.close();
      return;
    }
    applyMode(rec, d.mode, d.wireMode, d.opensWindow);
  }),
);
api.on(
  "view.failed",
  withView((rec, d) => fail(rec, d.reason, d.detail)),
);
api.on("view.closed", (d) => removeView(d?.viewId));
api.on(
  "view.status",
  withView((rec, d) => {
    if (d.state === "closed") return removeView(rec.id);
    if (d.state === "parked") {
      // Parked to save resources while off screen: drop the frame, keep its place.
      unmountFrame(rec);
      setState(rec, "parked");
      clear(rec.body).append(parkedCard(rec.height));
      collectSoon();
      return;
    }
    if (d.state === "loading" && !rec.frame && rec.wire !== "popout") mountFrame(rec);
    setState(rec, d.state);
    // A view's start (its bundle parsed and run) leaves garbage V8 keeps until it must: in the
    // desktop shell 10 fresh views left ~28 MiB of the page's renderer (docs/performance.md §17).
    if (d.state === "ready") collectSoon();
  }),
);
api.on(
  "popout.open",
  withView((rec, d) => {
    if (!popoutOnly) openPopup(rec, d.url, rec.blockedNote);
  }),
);
api.on(
  "view.problem",
  withView((rec, d) => showProblem(rec, d)),
);
// A view asked to open a link and the person agreed (browser mode; desktop opens it natively).
api.on("link.open", (d) => {
  if (d?.url && /^(https?:|mailto:)/i.test(d.url)) window.open(d.url, "_blank", "noopener,noreferrer");
});

// Esc leaves full screen (when focus is in Moka's page; a focused view keeps its own keys).
document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape" || document.querySelector("dialog[open]") || popoutOnly) return;
  const rec = [...views.values()].find((r) => r.wire === "fullscreen");
  if (rec) {
    e.preventDefault();
    requestMode(rec, "inline");
  }
});
window.addEventListener("resize", () => {
  for (const rec of views.values()) {
    applySize(rec);
    reportContainer(rec);
  }
});
store.on("settings", () => {
  for (const rec of views.values()) buildModeButtons(rec);
});

export const viewHost = {
  configure(appInfo) {
    info = appInfo || info;
  },
  /** A screen offers a parent element for views it wants (first non-null answer wins). */
  addPlacer(fn) {
    placers.push(fn);
  },
  /** Views with no place yet wait for `loading` (screens that may add placers) before giving up. */
  placersComing(loading) {
    placersToCome.add(loading);
    loading.finally(() => placersToCome.delete(loading));
  },
  /** Popout window mode: this page shows only `viewId`, filling the window (`inline`: as a chat shows it). */
  setPopout(viewId, { inline = false } = {}) {
    popoutOnly = viewId;
    popoutInline = inline;
  },
  /** Mount a view from views.get data (a pop-out window has no view.created to wait for). */
  mount: mountView,
  has: (viewId) => views.has(viewId),
  /** After a reconnect: give each view this page shows what it missed (views.list data). */
  resync: resyncView,
  get mode() {
    return info.mode;
  },
};
