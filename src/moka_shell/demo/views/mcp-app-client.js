/*
 * moka-demo views' MCP Apps client: a small JSON-RPC 2.0 client for MCP Apps views.
 *
 * It speaks the view side of the MCP Apps protocol (spec 2026-01-26) over
 * window.postMessage: objects only, to window.parent, target origin "*";
 * accepts only messages from window.parent that carry jsonrpc "2.0".
 * Exposed as window.McpAppClient.create(options).
 */
(function () {
  "use strict";

  var PROTOCOL_VERSION = "2026-01-26";
  var METHOD_NOT_FOUND = -32601;
  var INTERNAL_ERROR = -32603;
  var REQUEST_TIMEOUT = -32001;

  /** An Error carrying a JSON-RPC error code and optional data. */
  function RpcError(code, message, data) {
    var error = new Error(message);
    error.name = "RpcError";
    error.code = code;
    if (data !== undefined) error.data = data;
    return error;
  }

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  function hasId(message) {
    return Object.prototype.hasOwnProperty.call(message, "id") && message.id !== null && message.id !== undefined;
  }

  /* ---------- theming: host context -> document ---------- */

  var appliedVariables = [];

  /** Apply theme, CSS variables, fonts and display mode from a host context. */
  function applyHostContext(context) {
    var root = document.documentElement;
    if (context.theme === "light" || context.theme === "dark") {
      root.setAttribute("data-theme", context.theme);
      root.style.colorScheme = context.theme;
    }
    if (typeof context.displayMode === "string") {
      root.setAttribute("data-display-mode", context.displayMode);
    }
    var styles = isObject(context.styles) ? context.styles : null;
    if (!styles) return;
    if (isObject(styles.variables)) {
      var next = [];
      Object.keys(styles.variables).forEach(function (name) {
        var value = styles.variables[name];
        if (name.indexOf("--") === 0 && typeof value === "string") {
          root.style.setProperty(name, value);
          next.push(name);
        }
      });
      // A new styles object replaces the old one, so drop variables it no longer sends.
      appliedVariables.forEach(function (name) {
        if (next.indexOf(name) < 0) root.style.removeProperty(name);
      });
      appliedVariables = next;
    }
    var fonts = isObject(styles.css) ? styles.css.fonts : undefined;
    if (typeof fonts === "string") {
      var element = document.getElementById("__mcp-host-fonts");
      if (!element) {
        element = document.createElement("style");
        element.id = "__mcp-host-fonts";
        document.head.appendChild(element);
      }
      element.textContent = fonts;
    }
  }

  /* ---------- the client ---------- */

  /**
   * Create a bridge. options: {appInfo: {name, version}, appCapabilities?: {},
   * autoResize?: true, timeoutMs?: 60000}.
   */
  function create(options) {
    var appInfo = options.appInfo;
    var appCapabilities = options.appCapabilities || {};
    var timeoutMs = options.timeoutMs || 60000;
    var autoResize = options.autoResize !== false;

    var nextId = 0;
    var pending = new Map();
    var notificationHandlers = new Map();
    var requestHandlers = new Map();
    var contextListeners = [];
    var teardownListeners = [];
    var trafficListeners = [];
    var state = { hostContext: {}, hostCapabilities: {}, hostInfo: null, connected: false };

    function emitTraffic(direction, message) {
      trafficListeners.forEach(function (listener) {
        try {
          listener(direction, message);
        } catch (error) {
          console.error(error);
        }
      });
    }

    function post(message) {
      emitTraffic("out", message);
      window.parent.postMessage(message, "*");
    }

    /** Send a request; resolves with its result or rejects with an RpcError. */
    function request(method, params) {
      var id = nextId++;
      var message = { jsonrpc: "2.0", id: id, method: method };
      if (params !== undefined) message.params = params;
      return new Promise(function (resolve, reject) {
        var timer = setTimeout(function () {
          pending.delete(id);
          notify("notifications/cancelled", { requestId: id, reason: "timed out after " + timeoutMs + " ms" });
          reject(RpcError(REQUEST_TIMEOUT, method + " timed out"));
        }, timeoutMs);
        pending.set(id, { resolve: resolve, reject: reject, timer: timer });
        post(message);
      });
    }

    /** Send a notification (no id, no answer). */
    function notify(method, params) {
      var message = { jsonrpc: "2.0", method: method };
      if (params !== undefined) message.params = params;
      post(message);
    }

    function respond(id, result) {
      post({ jsonrpc: "2.0", id: id, result: result });
    }

    function respondError(id, code, message) {
      post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } });
    }

    function onResponse(message) {
      var entry = pending.get(message.id);
      if (!entry) return;
      pending.delete(message.id);
      clearTimeout(entry.timer);
      if (isObject(message.error)) {
        var error = message.error;
        entry.reject(RpcError(error.code, String(error.message || "error"), error.data));
      } else {
        entry.resolve(message.result === undefined ? {} : message.result);
      }
    }

    function onRequest(message) {
      var handler = requestHandlers.get(message.method);
      if (!handler) {
        respondError(message.id, METHOD_NOT_FOUND, "Method not found: " + message.method);
        return;
      }
      Promise.resolve()
        .then(function () {
          return handler(isObject(message.params) ? message.params : {});
        })
        .then(
          function (result) {
            respond(message.id, result === undefined ? {} : result);
          },
          function (error) {
            var code = error && typeof error.code === "number" ? error.code : INTERNAL_ERROR;
            respondError(message.id, code, String((error && error.message) || error));
          },
        );
    }

    function onNotification(message) {
      var params = isObject(message.params) ? message.params : {};
      if (message.method === "ui/notifications/host-context-changed") {
        state.hostContext = Object.assign({}, state.hostContext, params);
        applyHostContext(params);
        contextListeners.forEach(function (listener) {
          listener(state.hostContext, params);
        });
      }
      (notificationHandlers.get(message.method) || []).forEach(function (handler) {
        try {
          handler(params);
        } catch (error) {
          console.error(error);
        }
      });
    }

    function onMessage(event) {
      if (event.source !== window.parent) return;
      var message = event.data;
      if (!isObject(message) || message.jsonrpc !== "2.0") return;
      emitTraffic("in", message);
      if (typeof message.method === "string") {
        if (hasId(message)) onRequest(message);
        else onNotification(message);
      } else if (hasId(message)) {
        onResponse(message);
      }
    }

    /* ----- auto-resize: one size-changed per animation frame, only on change ----- */

    var lastSize = { width: -1, height: -1 };
    var frameQueued = false;

    function measure() {
      // <html> keeps height:auto, so its box is the content height even when the frame is taller.
      var rect = document.documentElement.getBoundingClientRect();
      return { width: Math.ceil(rect.width), height: Math.ceil(rect.height) };
    }

    function queueSize() {
      if (frameQueued) return;
      frameQueued = true;
      requestAnimationFrame(function () {
        frameQueued = false;
        var size = measure();
        if (size.width === lastSize.width && size.height === lastSize.height) return;
        lastSize = size;
        notify("ui/notifications/size-changed", { width: size.width, height: size.height });
      });
    }

    function startAutoResize() {
      if (typeof ResizeObserver === "undefined") return;
      var observer = new ResizeObserver(queueSize);
      observer.observe(document.documentElement);
      if (document.body) observer.observe(document.body);
      queueSize();
    }

    /* ----- built-in host requests ----- */

    requestHandlers.set("ping", function () {
      return {};
    });
    requestHandlers.set("ui/resource-teardown", function (params) {
      return Promise.all(
        teardownListeners.map(function (listener) {
          return listener(params);
        }),
      ).then(function () {
        return {};
      });
    });

    window.addEventListener("message", onMessage);

    /** Run the ui/initialize handshake; resolves with the host's initialize result. */
    function connect() {
      if (window.parent === window) {
        return Promise.reject(new Error("This view must be rendered inside an MCP Apps host."));
      }
      return request("ui/initialize", {
        protocolVersion: PROTOCOL_VERSION,
        appInfo: appInfo,
        appCapabilities: appCapabilities,
      }).then(function (result) {
        state.hostContext = isObject(result.hostContext) ? result.hostContext : {};
        state.hostCapabilities = isObject(result.hostCapabilities) ? result.hostCapabilities : {};
        state.hostInfo = isObject(result.hostInfo) ? result.hostInfo : null;
        applyHostContext(state.hostContext);
        notify("ui/notifications/initialized");
        state.connected = true;
        if (autoResize) startAutoResize();
        contextListeners.forEach(function (listener) {
          listener(state.hostContext, state.hostContext);
        });
        return result;
      });
    }

    return {
      connect: connect,
      request: request,
      notify: notify,
      /** Listen for a host notification, e.g. "ui/notifications/tool-result". */
      on: function (method, handler) {
        if (!notificationHandlers.has(method)) notificationHandlers.set(method, []);
        notificationHandlers.get(method).push(handler);
      },
      /** Answer a host request; the handler returns a result (or a Promise of one) or throws. */
      handle: function (method, handler) {
        requestHandlers.set(method, handler);
      },
      /** Called with (fullContext, changedPart) after the handshake and on every context change. */
      onContextChange: function (listener) {
        contextListeners.push(listener);
      },
      /** Called (and awaited) before answering ui/resource-teardown. */
      onTeardown: function (listener) {
        teardownListeners.push(listener);
      },
      /** Called with ("in"|"out", message) for every message crossing the bridge. */
      onTraffic: function (listener) {
        trafficListeners.push(listener);
      },
      /** Call a tool on this view's MCP server. */
      callTool: function (name, args) {
        return request("tools/call", { name: name, arguments: args || {} });
      },
      /** Send a notifications/message log line to the host. */
      log: function (level, data, logger) {
        notify("notifications/message", { level: level, logger: logger || appInfo.name, data: data });
      },
      /** Ask for a size-changed notification on the next frame (when the size changed). */
      resized: queueSize,
      get hostContext() {
        return state.hostContext;
      },
      get hostCapabilities() {
        return state.hostCapabilities;
      },
      get hostInfo() {
        return state.hostInfo;
      },
      get connected() {
        return state.connected;
      },
    };
  }

  window.McpAppClient = { create: create, applyHostContext: applyHostContext, RpcError: RpcError };
})();
