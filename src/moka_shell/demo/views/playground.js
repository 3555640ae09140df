/*
 * The playground view: one control per host method, each outcome logged in #log.
 * body[data-state]: waiting -> ready (handshake done) | error; torn-down after ui/resource-teardown.
 * Each #log entry is <li data-action="..." data-outcome="ok|refused|error|warning|info">.
 */
(function () {
  "use strict";

  var LOGGER = "moka-demo.playground";
  var LINK = "https://modelcontextprotocol.io";
  var APP_TOOL = {
    name: "get_playground_state",
    title: "Playground state",
    description: "The playground view's current state: display mode, theme, log size, last roll.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
  };

  var body = document.body;
  var logEl = document.getElementById("log");
  var filler = document.getElementById("filler");
  var buttons = Array.prototype.slice.call(document.querySelectorAll("button.btn"));
  var counters = { listed: 0, called: 0 };
  var lastRoll = null;

  var bridge = window.McpAppClient.create({
    appInfo: { name: "moka-demo-playground", version: "0.1.0" },
    appCapabilities: { tools: { listChanged: true }, availableDisplayModes: ["inline", "fullscreen", "pip"] },
  });

  function $(id) {
    return document.getElementById(id);
  }

  function clock() {
    var now = new Date();
    return [now.getHours(), now.getMinutes(), now.getSeconds()]
      .map(function (part) {
        return String(part).padStart(2, "0");
      })
      .join(":");
  }

  /** Add a log entry: "<action> <outcome>: <detail>". Newest first. */
  function log(action, outcome, detail) {
    var item = document.createElement("li");
    item.setAttribute("data-action", action);
    item.setAttribute("data-outcome", outcome);
    var time = document.createElement("time");
    time.textContent = clock();
    var text = document.createElement("span");
    text.className = "text";
    text.textContent = action + " " + outcome + (detail ? ": " + detail : "");
    item.append(time, text);
    logEl.prepend(item);
    return item;
  }

  function failure(error) {
    if (error && typeof error.code === "number") return "JSON-RPC error " + error.code + " " + error.message;
    return (error && error.name ? error.name + ": " : "") + ((error && error.message) || String(error));
  }

  function textOf(result) {
    var blocks = result && Array.isArray(result.content) ? result.content : [];
    return blocks
      .filter(function (block) {
        return block && block.type === "text";
      })
      .map(function (block) {
        return block.text;
      })
      .join(" ");
  }

  function brief(text, limit) {
    var flat = String(text).replace(/\s+/g, " ").trim();
    return flat.length > (limit || 140) ? flat.slice(0, (limit || 140) - 1) + "…" : flat;
  }

  /** Run a host request for a button and log ok / error. */
  function run(action, promise, describe) {
    return promise.then(
      function (result) {
        if (result && result.isError)
          log(action, "error", "host answered isError: " + (textOf(result) || "no details"));
        else log(action, "ok", describe ? describe(result) : "done");
        return result;
      },
      function (error) {
        log(action, "error", failure(error));
      },
    );
  }

  function on(id, handler) {
    $(id).addEventListener("click", handler);
  }

  /* ---------- server: tools and resources ---------- */

  on("btn-reroll", function () {
    run("reroll", bridge.callTool("reroll_dice", { sides: 6, count: 2 }), function (result) {
      if (result.structuredContent) lastRoll = result.structuredContent;
      return textOf(result);
    });
  });

  on("btn-history", function () {
    run("history", bridge.callTool("dice_history", {}), function (result) {
      var entries = (result.structuredContent && result.structuredContent.entries) || [];
      return entries.length + " roll(s) remembered";
    });
  });

  on("btn-model-only", function () {
    bridge.callTool("summarize_rolls", {}).then(
      function (result) {
        var how = result && result.isError ? "with an isError result instead of a JSON-RPC error" : "and ran it";
        log("model-only", "error", "host accepted the model-only tool " + how + ": " + brief(textOf(result)));
      },
      function (error) {
        log("model-only", "refused", failure(error));
      },
    );
  });

  on("btn-read", function () {
    run("read", bridge.request("resources/read", { uri: "moka-demo://readme" }), function (result) {
      var item = (result.contents || [])[0] || {};
      var first = (item.text || "").split("\n")[0];
      return (item.mimeType || "?") + ", " + (item.text || "").length + ' chars, "' + first + '"';
    });
  });

  on("btn-list", function () {
    run("list", bridge.request("resources/list", {}), function (result) {
      var uris = (result.resources || []).map(function (item) {
        return item.uri;
      });
      return uris.length + " resource(s): " + uris.join(", ");
    });
  });

  /* ---------- chat and model ---------- */

  on("btn-message", function () {
    var text = $("message-text").value || "Hello from the playground.";
    run(
      "message",
      bridge.request("ui/message", { role: "user", content: [{ type: "text", text: text }] }),
      function () {
        return 'sent "' + brief(text, 60) + '"';
      },
    );
  });

  on("btn-context", function () {
    var summary = lastRoll
      ? "Last roll in the playground: " + lastRoll.rolls.join(", ") + " (total " + lastRoll.total + ")."
      : "The person has the moka-demo playground open.";
    run(
      "context",
      bridge.request("ui/update-model-context", {
        content: [{ type: "text", text: summary }],
        structuredContent: { view: "playground", lastRoll: lastRoll, logEntries: logEl.children.length },
      }),
      function () {
        return "model context updated";
      },
    );
  });

  on("btn-log", function () {
    bridge.log("info", "Hello from the moka-demo playground at " + clock(), LOGGER);
    log("log", "ok", "sent notifications/message (info)");
  });

  on("btn-link", function () {
    run("link", bridge.request("ui/open-link", { url: LINK }), function () {
      return "asked to open " + LINK;
    });
  });

  on("btn-download", function () {
    var lines = [
      "moka-demo dice",
      "",
      lastRoll
        ? "Last roll: " + lastRoll.rolls.join(", ") + " = " + lastRoll.total
        : 'No roll yet: press "Call reroll_dice" first.',
      "Saved " + new Date().toISOString(),
      "",
    ];
    var file = {
      type: "resource",
      resource: { uri: "file:///moka-dice.txt", mimeType: "text/plain", text: lines.join("\n") },
    };
    run("download", bridge.request("ui/download-file", { contents: [file] }), function () {
      return "offered moka-dice.txt";
    });
  });

  /* ---------- display ---------- */

  function showMode(mode) {
    $("current-mode").textContent = mode || "–";
    ["btn-inline", "btn-fullscreen", "btn-pip"].forEach(function (id) {
      $(id).setAttribute("aria-pressed", String($(id).getAttribute("data-mode") === mode));
    });
  }

  ["btn-inline", "btn-fullscreen", "btn-pip"].forEach(function (id) {
    on(id, function () {
      var wanted = $(id).getAttribute("data-mode");
      run("display-mode", bridge.request("ui/request-display-mode", { mode: wanted }), function (result) {
        showMode(result.mode);
        return "requested " + wanted + ", got " + result.mode;
      });
    });
  });

  on("btn-grow", function () {
    var block = document.createElement("div");
    block.className = "filler-block";
    filler.appendChild(block);
    log("size", "info", "grew to " + filler.children.length + " filler block(s)");
  });

  on("btn-shrink", function () {
    if (filler.lastElementChild) filler.lastElementChild.remove();
    log("size", "info", "shrank to " + filler.children.length + " filler block(s)");
  });

  on("btn-ping", function () {
    run("ping", bridge.request("ping", {}), function () {
      return "host answered";
    });
  });

  on("btn-teardown", function () {
    bridge.notify("ui/notifications/request-teardown", {});
    log("teardown", "info", "sent ui/notifications/request-teardown");
  });

  /* ---------- network and CSP ---------- */

  on("btn-fetch", function () {
    var url = $("fetch-url").value.trim();
    fetch(url, { cache: "no-store" }).then(
      function (response) {
        log("fetch", "ok", "HTTP " + response.status + " from " + url);
      },
      function (error) {
        log("fetch", "error", failure(error) + " (" + url + ")");
      },
    );
  });

  document.addEventListener("securitypolicyviolation", function (event) {
    var detail = event.effectiveDirective + " blocked " + (event.blockedURI || "?");
    log("csp", "warning", detail);
    bridge.log(
      "warning",
      {
        event: "securitypolicyviolation",
        blockedURI: event.blockedURI,
        effectiveDirective: event.effectiveDirective,
        violatedDirective: event.violatedDirective,
      },
      LOGGER,
    );
  });

  on("btn-clear-log", function () {
    logEl.replaceChildren();
  });

  /* ---------- host context ---------- */

  function dims(value) {
    if (!value || typeof value !== "object") return "–";
    return (
      Object.keys(value)
        .map(function (key) {
          return key + "=" + value[key];
        })
        .join(" ") || "{}"
    );
  }

  function showContext(context) {
    var styles = context.styles && context.styles.variables ? context.styles.variables : {};
    var info = bridge.hostInfo;
    $("ctx-host").textContent = info ? info.name + " " + info.version : "–";
    $("ctx-theme").textContent = context.theme || "–";
    $("ctx-display-mode").textContent = context.displayMode || "–";
    $("ctx-available-modes").textContent = (context.availableDisplayModes || []).join(", ") || "–";
    $("ctx-container").textContent = dims(context.containerDimensions);
    $("ctx-locale").textContent = context.locale || "–";
    $("ctx-time-zone").textContent = context.timeZone || "–";
    $("ctx-platform").textContent = context.platform || "–";
    $("ctx-style-vars").textContent = String(Object.keys(styles).length);
    $("ctx-capabilities").textContent = Object.keys(bridge.hostCapabilities).join(", ") || "–";
    if (context.displayMode) showMode(context.displayMode);
  }

  bridge.onContextChange(function (context, changed) {
    showContext(context);
    if (bridge.connected && changed !== context) {
      log("host-context", "info", "changed " + Object.keys(changed).join(", "));
    }
  });

  bridge.onTraffic(function (direction, message) {
    if (direction === "out" && message.method === "ui/notifications/size-changed") {
      $("reported-size").textContent = message.params.width + " × " + message.params.height;
    }
  });

  /* ---------- host -> view ---------- */

  bridge.on("ui/notifications/tool-input", function (params) {
    log("tool-input", "info", JSON.stringify(params.arguments || {}));
  });
  bridge.on("ui/notifications/tool-input-partial", function (params) {
    log("tool-input-partial", "info", JSON.stringify(params.arguments || {}));
  });
  bridge.on("ui/notifications/tool-result", function (params) {
    log("tool-result", params.isError ? "error" : "info", brief(textOf(params)) || "(no text)");
  });
  bridge.on("ui/notifications/tool-cancelled", function (params) {
    log("tool-cancelled", "warning", params.reason || "no reason given");
  });

  function playgroundState() {
    var context = bridge.hostContext;
    return {
      state: body.getAttribute("data-state"),
      theme: context.theme || null,
      displayMode: context.displayMode || null,
      fillerBlocks: filler.children.length,
      logEntries: logEl.children.length,
      lastRoll: lastRoll,
    };
  }

  bridge.handle("tools/list", function () {
    counters.listed += 1;
    $("app-tools-listed").textContent = String(counters.listed);
    log("app-tools", "info", "host listed the app tools");
    return { tools: [APP_TOOL] };
  });

  bridge.handle("tools/call", function (params) {
    if (params.name !== APP_TOOL.name) {
      log("app-tools", "error", "host called unknown tool " + params.name);
      throw window.McpAppClient.RpcError(-32602, "Unknown tool: " + params.name);
    }
    counters.called += 1;
    $("app-tools-called").textContent = String(counters.called);
    var state = playgroundState();
    log("app-tools", "ok", "host called " + APP_TOOL.name);
    return { content: [{ type: "text", text: JSON.stringify(state) }], structuredContent: state };
  });

  bridge.onTeardown(function (params) {
    body.setAttribute("data-state", "torn-down");
    $("connection").textContent = "torn down";
    log("teardown", "info", "host sent ui/resource-teardown" + (params.reason ? " (" + params.reason + ")" : ""));
  });

  /* ---------- start ---------- */

  buttons.forEach(function (button) {
    if (button.id !== "btn-clear-log") button.disabled = true;
  });

  bridge.connect().then(
    function (result) {
      buttons.forEach(function (button) {
        button.disabled = false;
      });
      body.setAttribute("data-state", "ready");
      $("connection").textContent = "connected · " + result.protocolVersion;
      log(
        "initialize",
        "ok",
        "host " + (result.hostInfo ? result.hostInfo.name : "?") + ", protocol " + result.protocolVersion,
      );
    },
    function (error) {
      body.setAttribute("data-state", "error");
      $("connection").textContent = "not connected";
      log("initialize", "error", failure(error));
    },
  );
})();
