// The sandbox proxy (MCP Apps spec, "Sandbox proxy"; docs/bridge-api.md, "The view path").
// Served from the sandbox origin, a different port than Moka's UI. It creates the view's
// iframe without allow-same-origin (an opaque origin: no access to this origin, Moka's token,
// cookies or storage) and relays JSON-RPC objects between that iframe and Moka's page.
"use strict";

(function () {
  var PROXY_READY = "ui/notifications/sandbox-proxy-ready";
  var RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
  var RESERVED = "ui/notifications/sandbox-";
  // Never allow-same-origin. No allow-popups either: a popup is a network channel past the
  // CSP and a way around the ui/open-link consent (finding S4); links go through ui/open-link.
  var INNER_SANDBOX = "allow-scripts allow-forms";
  var DISPLAY = "ui/request-display-mode";
  var CONTEXT_CHANGED = "ui/notifications/host-context-changed";
  var LOOPBACK = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

  function refuse(reason) {
    function show() {
      var p = document.createElement("p");
      p.className = "refused";
      p.textContent = "Moka sandbox: " + reason;
      document.body.appendChild(p);
    }
    if (document.body) show();
    else document.addEventListener("DOMContentLoaded", show);
    throw new Error(reason);
  }

  // Only meaningful inside Moka's page; at top level there is nothing to relay to.
  if (window.parent === window) refuse("this page only runs inside Moka.");

  // Moka puts the view's parameters in the fragment, so the page's URL (and its HTTP cache entry)
  // is the same for every view; the query string is still read when there is no fragment.
  var params = new URLSearchParams(location.hash.length > 1 ? location.hash.slice(1) : location.search);
  var hostOrigin = params.get("host") || "";
  if (!LOOPBACK.test(hostOrigin)) refuse("the host origin is missing or not a loopback address.");
  if (hostOrigin === location.origin) refuse("the host and the sandbox must be different origins.");
  // When the browser tells us who embedded us, it must be the host we were told about.
  if (document.referrer) {
    try {
      if (new URL(document.referrer).origin !== hostOrigin) refuse("embedded by an unexpected page.");
    } catch (_e) {
      refuse("embedded by an unexpected page.");
    }
  }

  var viewUrl;
  try {
    viewUrl = new URL(params.get("view") || "", location.href);
  } catch (_e) {
    viewUrl = null;
  }
  // The view document must come from this sandbox origin, where the core serves it with its CSP.
  if (!viewUrl || viewUrl.origin !== location.origin || !params.get("view"))
    refuse("the view URL is not on the sandbox origin.");
  var allow = params.get("allow") || "";

  var inner = null;
  var hostPort = null; // the private channel Moka's page sends with sandbox-resource-ready

  function toHost(data) {
    if (hostPort) hostPort.postMessage(data);
    else window.parent.postMessage(data, hostOrigin);
  }

  function fromHost(data) {
    if (!isRpc(data) || isReserved(data)) return;
    followTheme(data);
    // The inner origin is opaque ("null"), so "*" is the only target that reaches it.
    if (inner && inner.contentWindow) inner.contentWindow.postMessage(data, "*");
  }

  // The view's prelude sets its document's color-scheme to Moka's theme (so the light-dark()
  // colours resolve to it); this frame's element must say the same, or the engine paints an opaque
  // backdrop behind the view instead of letting Moka's card show through.
  function followTheme(data) {
    var ctx = (data.result && data.result.hostContext) || (data.method === CONTEXT_CHANGED && data.params);
    if (inner && ctx && (ctx.theme === "dark" || ctx.theme === "light")) inner.style.colorScheme = ctx.theme;
  }

  function isRpc(data) {
    return data !== null && typeof data === "object" && !Array.isArray(data) && data.jsonrpc === "2.0";
  }

  function isReserved(data) {
    return typeof data.method === "string" && data.method.indexOf(RESERVED) === 0;
  }

  function createInner() {
    if (inner) return; // one view per proxy, created once
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", INNER_SANDBOX);
    if (allow) inner.setAttribute("allow", allow);
    inner.setAttribute("title", "App view");
    inner.src = viewUrl.href;
    document.body.appendChild(inner);
  }

  // Who sent a message is checked before its data is read. That is the right order for
  // security, and engines reward it: Chromium slows down reading the data of a cross-origin
  // message whose origin was never looked at (about 1 ms per message in QtWebEngine 6.11).
  window.addEventListener("message", function (event) {
    var data;
    if (event.source === window.parent) {
      if (event.origin !== hostOrigin) return;
      data = event.data;
      if (!isRpc(data)) return;
      if (isReserved(data)) {
        if (data.method === RESOURCE_READY) {
          // Came from Moka's page (checked above), so its port is Moka's too.
          if (event.ports && event.ports[0]) {
            if (hostPort) hostPort.close();
            hostPort = event.ports[0];
            hostPort.onmessage = function (e) {
              fromHost(e.data);
            };
          }
        }
        return; // sandbox-* messages are for this proxy only
      }
      fromHost(data);
      return;
    }
    // The view's origin is opaque, so its messages say "null".
    if (inner && event.source === inner.contentWindow && event.origin === "null") {
      data = event.data;
      if (!isRpc(data) || isReserved(data)) return; // a view may not impersonate the proxy
      if (data.method === DISPLAY && data.params && typeof data.params === "object") {
        // Did the person just click or type in this view? A click in the view activates its
        // ancestors too, so this frame can tell; the view's own value is overwritten (S6).
        data.params["moka/gesture"] = !!(navigator.userActivation && navigator.userActivation.isActive);
      }
      toHost(data);
    }
  });

  // Ready at once, and the view's document requested at once: the URL came with this page, so
  // waiting for sandbox-resource-ready (which only hands over the page's channel) would cost a
  // round trip before the request. A view message sent before that channel arrives goes to the
  // page by window.postMessage to the host origin, which the page accepts from this frame too.
  window.parent.postMessage({ jsonrpc: "2.0", method: PROXY_READY, params: {} }, hostOrigin);
  createInner();
})();
