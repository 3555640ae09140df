// One spare sandbox proxy, loaded ahead of time, so a new view does not wait for the proxy's
// own page to load (about 60 ms of a fresh view's render, docs/performance.md §1). The spare is
// moved into the view's card with moveBefore(), which keeps a frame's document alive where a
// plain move would reload it. Engines without moveBefore(), and views that ask for permissions
// (an iframe's `allow` list is fixed when its document loads), get a fresh proxy instead.

const PROXY_SANDBOX = "allow-scripts allow-same-origin allow-forms allow-popups";
const REFILL_DELAY_MS = 50; // after a view took the spare: its own load goes first

let origin = null;
let spare = null; // { frame, ready }
let holder = null;
let refillTimer = null;

export const canReuse = typeof Element.prototype.moveBefore === "function";

/** The one place a proxy iframe's sandbox attribute is set. */
export function proxyFrame(src) {
  const frame = document.createElement("iframe");
  frame.className = "view-frame";
  frame.setAttribute("sandbox", PROXY_SANDBOX);
  frame.src = src;
  return frame;
}

/** Start keeping a spare proxy on the sandbox origin (the main window only). */
export function primePool(sandboxOrigin) {
  if (!canReuse || !sandboxOrigin || origin === sandboxOrigin) return;
  origin = sandboxOrigin;
  scheduleRefill(0);
}

function scheduleRefill(delay) {
  clearTimeout(refillTimer);
  refillTimer = setTimeout(refill, delay);
}

function refill() {
  if (spare || !origin) return;
  if (!holder) {
    // Laid out but off screen: a display:none frame would not load in every engine.
    holder = document.createElement("div");
    holder.id = "proxy-pool";
    holder.setAttribute("aria-hidden", "true");
    holder.style.cssText = "position:fixed;left:-10000px;top:0;width:640px;height:160px;visibility:hidden;pointer-events:none";
    document.body.append(holder);
  }
  const url = new URL("/proxy.html", origin);
  url.searchParams.set("host", location.origin);
  const frame = proxyFrame(url.href);
  frame.tabIndex = -1;
  holder.append(frame);
  spare = { frame, ready: false };
}

/** A message from the spare (it says only sandbox-proxy-ready); true if it was the spare's. */
export function fromSpare(event) {
  if (!spare || event.source !== spare.frame.contentWindow || event.origin !== origin) return false;
  if (event.data?.method === "ui/notifications/sandbox-proxy-ready") {
    spare.ready = true;
    spare.frame.dataset.ready = "true"; // for tests and the curious: this spare can be handed out
  }
  return true;
}

/** Hand the loaded spare to a view on `viewOrigin`, or null when a fresh proxy must be made. */
export function takeSpare(viewOrigin, needsPermissions) {
  if (!spare || !spare.ready || needsPermissions || viewOrigin !== origin) return null;
  const { frame } = spare;
  spare = null;
  delete frame.dataset.ready;
  scheduleRefill(REFILL_DELAY_MS);
  return frame;
}
