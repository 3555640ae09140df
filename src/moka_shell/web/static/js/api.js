// The one channel to the Python core (docs/bridge-api.md): api.call(method, params) and
// api.on(event, handler), over a token-guarded WebSocket to 127.0.0.1 in every window: the
// browser tab, the desktop app's windows and pop-outs. Screens never see the carrier.
// (Why a socket and not pywebview's js_api in the desktop app: docs/architecture.md.)

const listeners = new Map(); // event name -> Set of handlers
const statusListeners = new Set();
const pending = new Map(); // frame id -> {resolve, reject, frame}
const outbox = []; // frames waiting for the socket to open
let nextId = 1;
let started = false;
let buffered = []; // pushes that arrived before start()
let socket = null;
let everOpened = false;
let failures = 0;
let status = "connecting";

// The core's limits for one frame (web/frame_limits.py). A frame over them is refused here,
// before it is encoded or sent: a view's oversized or deeply nested message then fails alone
// instead of costing the socket that every screen and view shares (finding S2).
const FRAME_LIMIT = 16 * 1024 * 1024;
const MAX_DEPTH = 128;

// Until start() pushes are kept, so none is lost while the screens are still subscribing.
function receivePush(evt) {
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
      try {
        fn(evt.data, evt.event);
      } catch (err) {
        console.error("handler for", evt.event, err);
      }
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

// ---- the socket -------------------------------------------------------------------------

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
    try {
      frames = JSON.parse(msg.data);
    } catch {
      return;
    }
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

/** Why `value` cannot be a frame (too big or too deep), or null; walks no further than the limits. */
export function frameProblem(value, limit = FRAME_LIMIT, maxDepth = MAX_DEPTH) {
  let size = 0;
  const stack = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop();
    if (typeof v === "string") size += v.length + 2;
    else if (v === null || typeof v !== "object") size += 8;
    else {
      if (depth > maxDepth) return `it is nested deeper than ${maxDepth} levels`;
      if (ArrayBuffer.isView(v)) {
        size += v.length * 6;
        continue;
      } // encoded as {"0": n, ...}
      const keys = Array.isArray(v) ? null : Object.keys(v);
      size += 2 + (keys ? keys.length * 4 : v.length);
      if (keys)
        for (const k of keys) {
          size += k.length;
          stack.push([v[k], depth + 1]);
        }
      else for (let i = 0; i < v.length; i++) stack.push([v[i], depth + 1]);
    }
    if (size > limit) return `it is over ${Math.round(limit / 1048576)} MiB`;
  }
  return null;
}

function send(frame, text) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(text);
  else outbox.push(frame);
}

// ---- public surface --------------------------------------------------------------------

export const api = {
  /** Call a core method; resolves with `result`, rejects with ApiError. */
  call(method, params = {}) {
    const frame = { id: nextId++, method, params };
    return new Promise((resolve, reject) => {
      const problem = frameProblem(frame);
      let text = null;
      if (!problem) {
        try {
          text = JSON.stringify(frame);
        } catch (err) {
          return reject(new ApiError({ message: `Moka cannot send this: ${err.message}` }));
        }
      }
      if (problem || text.length > FRAME_LIMIT) {
        return reject(
          new ApiError({ code: -32600, message: `Moka refused to send this message: ${problem || "it is too big"}` }),
        );
      }
      pending.set(frame.id, { resolve, reject, frame });
      send(frame, text);
    });
  },

  /** Subscribe to a pushed event ("*" for all); returns an unsubscribe function. */
  on(event, handler) {
    if (!listeners.has(event)) listeners.set(event, new Set());
    listeners.get(event).add(handler);
    return () => listeners.get(event)?.delete(handler);
  },

  /** Deliver a local event to subscribers, as if the core had pushed it. */
  emit(event, data) {
    emit({ event, data });
  },

  onStatus(handler) {
    statusListeners.add(handler);
    handler(status);
    return () => statusListeners.delete(handler);
  },

  get status() {
    return status;
  },

  /** Open the socket; calls made before it is open wait in the outbox. */
  async connect() {
    openSocket();
  },

  /** Start delivering pushes (the buffered ones first) once every screen has subscribed. */
  start() {
    started = true;
    const early = buffered;
    buffered = [];
    for (const evt of early) emit(evt);
  },
};
