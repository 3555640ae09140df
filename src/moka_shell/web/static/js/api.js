// The one channel to the Python core (docs/bridge-api.md): api.call(method, params) and
// api.on(event, handler), over pywebview's js_api in the desktop app or a WebSocket in
// browser mode. Screens never know which carrier is in use.
//
// Pushes come from the carrier's own source only, so no event is ever applied twice:
// window.__mokaPush with js_api, the socket otherwise (the desktop shell pushes to every
// window, also to one that ended up on the socket).

const listeners = new Map(); // event name -> Set of handlers
const statusListeners = new Set();
const pending = new Map(); // frame id -> {resolve, reject, frame}
const outbox = []; // frames waiting for the socket to open
let nextId = 1;
let started = false;
let buffered = window.__mokaEarly || []; // pushes that arrived before start()
let carrier = null; // for calls: "desktop" (pywebview js_api) | "browser" (WebSocket)
let socket = null;
let everOpened = false;
let failures = 0;
let status = "connecting";

// Replace early.js's buffering receiver right away; until start() we keep buffering so
// no push is lost while the screens are still subscribing.
window.__mokaPush = (evt) => {
  if (carrier === "browser") return; // the same event arrives over the socket
  receivePush(evt);
};

function receivePush(evt) {
  if (typeof evt === "string") {
    try { evt = JSON.parse(evt); } catch { return; }
  }
  if (!started) buffered.push(evt);
  else emit(evt);
}

export class ApiError extends Error {
  constructor(error) {
    super(error?.message || "The core returned an error");
    this.code = error?.code;
    this.data = error?.data;
  }
}

function emit(evt) {
  if (!evt || typeof evt.event !== "string") return;
  for (const key of [evt.event, "*"]) {
    for (const fn of listeners.get(key) || []) {
      try { fn(evt.data, evt.event); } catch (err) { console.error("handler for", evt.event, err); }
    }
  }
}

function setStatus(next) {
  if (status === next) return;
  status = next;
  for (const fn of statusListeners) fn(next);
}

function settle(reply) {
  const waiter = pending.get(reply.id);
  if (!waiter) return;
  pending.delete(reply.id);
  if (reply.error) waiter.reject(new ApiError(reply.error));
  else waiter.resolve(reply.result === undefined ? null : reply.result);
}

// ---- desktop carrier -------------------------------------------------------------------

async function desktopSend(frame) {
  let raw;
  try {
    raw = await window.pywebview.api.rpc(JSON.stringify(frame));
  } catch (err) {
    settle({ id: frame.id, error: { message: String(err?.message || err) } });
    return;
  }
  let reply = raw;
  if (typeof raw === "string") {
    try { reply = JSON.parse(raw); } catch { reply = { error: { message: "Unreadable reply from the core" } }; }
  }
  settle({ ...reply, id: frame.id });
}

function pywebviewReady() {
  return Boolean(window.pywebview && window.pywebview.api && window.pywebview.api.rpc);
}

// ---- browser carrier -------------------------------------------------------------------

// The token lives only in this module's memory (never in storage).
const token = new URLSearchParams(location.search).get("token") || "";

function openSocket() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}/api/ws?token=${encodeURIComponent(token)}`;
  setStatus(everOpened ? "reconnecting" : "connecting");
  socket = new WebSocket(url);
  socket.addEventListener("open", () => {
    const reconnected = everOpened;
    everOpened = true;
    failures = 0;
    setStatus("online");
    while (outbox.length) socket.send(JSON.stringify(outbox.shift()));
    if (reconnected) emit({ event: "api.reconnected", data: {} });
  });
  socket.addEventListener("message", (msg) => {
    let frames;
    try { frames = JSON.parse(msg.data); } catch { return; }
    // The core batches frames that pile up into one JSON array (fewer WebSocket messages).
    for (const frame of Array.isArray(frames) ? frames : [frames]) {
      if (frame && "id" in frame && !("event" in frame)) settle(frame);
      else receivePush(frame);
    }
  });
  socket.addEventListener("close", (ev) => {
    socket = null;
    // Calls in flight will never be answered by this socket: fail them now, in place.
    for (const [id, waiter] of pending) {
      if (!outbox.includes(waiter.frame)) {
        pending.delete(id);
        waiter.reject(new ApiError({ message: "Lost the connection to Moka. Reconnecting…" }));
      }
    }
    failures += 1;
    // A refused token (policy violation) will not get better by retrying quickly.
    const refused = ev.code === 1008 || ev.code === 4401 || ev.code === 4403;
    setStatus(refused || failures > 5 ? "offline" : "reconnecting");
    const delay = Math.min(500 * 2 ** Math.min(failures, 4), 8000);
    setTimeout(openSocket, refused ? 10000 : delay);
  });
}

function browserSend(frame) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  else outbox.push(frame);
}

/**
 * Resolves true once window.pywebview.api.rpc exists, false when it will not: pywebview
 * builds its api functions with `new Function`, which a CSP without 'unsafe-eval' refuses,
 * and then only the socket is left. Never waits more than a few seconds.
 */
function waitForPywebview() {
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      window.removeEventListener("pywebviewready", onReady);
      resolve(ok);
    };
    const onReady = () => done(pywebviewReady());
    window.addEventListener("pywebviewready", onReady);
    let seenAt = 0;
    const poll = setInterval(() => {
      if (pywebviewReady()) done(true);
      else if (window.pywebview && !seenAt) seenAt = Date.now();
      else if (seenAt && Date.now() - seenAt > 400) done(false); // injected, but no api
    }, 50);
    setTimeout(() => done(pywebviewReady()), 4000);
  });
}

/** "desktop" or "browser", from one plain HTTP call to app.info (null if it cannot be asked). */
async function shellMode() {
  if (!token) return "desktop"; // only the desktop shell opens the page without a token
  try {
    const res = await fetch("/api/rpc", {
      method: "POST", headers: { "x-moka-token": token, "content-type": "application/json" },
      body: JSON.stringify({ id: 0, method: "app.info", params: {} }),
    });
    return res.ok ? (await res.json())?.result?.mode ?? null : null;
  } catch {
    return null;
  }
}

// ---- public surface --------------------------------------------------------------------

export const api = {
  /** Call a core method; resolves with `result`, rejects with ApiError. */
  call(method, params = {}) {
    const frame = { id: nextId++, method, params };
    return new Promise((resolve, reject) => {
      pending.set(frame.id, { resolve, reject, frame });
      if (carrier === "desktop") desktopSend(frame);
      else browserSend(frame);
    });
  },

  /** Subscribe to a pushed event ("*" for all); returns an unsubscribe function. */
  on(event, handler) {
    if (!listeners.has(event)) listeners.set(event, new Set());
    listeners.get(event).add(handler);
    return () => listeners.get(event)?.delete(handler);
  },

  /** Deliver a local event to subscribers, as if the core had pushed it. */
  emit(event, data) { emit({ event, data }); },

  onStatus(handler) { statusListeners.add(handler); handler(status); return () => statusListeners.delete(handler); },

  get carrier() { return carrier; },
  get status() { return status; },

  /** Pick the carrier and connect; resolves once calls can be made. */
  async connect() {
    // pywebview fills window.pywebview.api only after the page has loaded (and then fires
    // "pywebviewready"), so its absence now proves nothing. Ask the core which shell this is.
    const desktop = Boolean(window.pywebview) || (await shellMode()) === "desktop";
    if (desktop) {
      const ready = pywebviewReady() || await waitForPywebview();
      if (ready) {
        carrier = "desktop";
        setStatus("online");
        return;
      }
    }
    carrier = "browser";
    // Anything this page must see arrives over the socket; drop what came another way.
    buffered = [];
    window.__mokaEarly = [];
    openSocket();
  },

  /** Start delivering pushes (the buffered ones first) once every screen has subscribed. */
  start() {
    started = true;
    const early = buffered.concat(window.__mokaEarly === buffered ? [] : window.__mokaEarly || []);
    buffered = [];
    window.__mokaEarly = [];
    for (const evt of early) emit(typeof evt === "string" ? JSON.parse(evt) : evt);
  },
};
