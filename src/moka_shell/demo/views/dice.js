/*
 * The dice view: renders a roll_dice / reroll_dice result.
 * body[data-state]: waiting -> input -> result | cancelled | error.
 * body[data-result-count] counts rendered results (it grows on every reroll).
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var PIPS = { 1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };
  var SHAPES = [
    { upTo: 8, textY: 28, points: "28,3 53,28 28,53 3,28", facets: [] },
    { upTo: 10, textY: 24, points: "28,2 53,22 28,54 3,22", facets: ["3,22 28,36 53,22", "28,36 28,54"] },
    { upTo: 12, textY: 29, points: "28,2 54,21 44,52 12,52 2,21", facets: ["28,12 44,24 38,43 18,43 12,24 28,12"] },
    { upTo: 20, textY: 31, points: "28,2 51,15 51,41 28,54 5,41 5,15", facets: ["28,8 49,43 7,43 28,8"] },
  ];

  var body = document.body;
  var main = document.querySelector("main");
  var label = document.getElementById("dice-label");
  var tray = document.getElementById("dice-tray");
  var totalEl = document.getElementById("dice-total");
  var valuesEl = document.getElementById("dice-values");
  var statusEl = document.getElementById("status");
  var rerollBtn = document.getElementById("reroll");
  var historyBtn = document.getElementById("history");
  var historyPanel = document.getElementById("history-panel");
  var historyList = document.getElementById("history-list");

  var current = { sides: 6, count: 1 };
  var results = 0;
  var bridge = window.McpAppClient.create({
    appInfo: { name: "moka-demo-dice", version: "0.1.0" },
    appCapabilities: {},
  });

  function setState(state) {
    body.setAttribute("data-state", state);
  }

  function setStatus(text, tone) {
    statusEl.textContent = text || "";
    if (tone) statusEl.setAttribute("data-tone", tone);
    else statusEl.removeAttribute("data-tone");
  }

  function clampInt(value, low, high, fallback) {
    var number = Number(value);
    if (!Number.isFinite(number)) return fallback;
    return Math.min(high, Math.max(low, Math.round(number)));
  }

  function notation(count, sides) {
    return count + "d" + sides;
  }

  /* ---------- drawing dice ---------- */

  function pipDie(value) {
    var die = document.createElement("div");
    die.className = "die pips";
    PIPS[value].forEach(function (cell) {
      var pip = document.createElement("span");
      pip.className = "pip c" + cell;
      die.appendChild(pip);
    });
    return die;
  }

  function svgElement(name, attributes) {
    var element = document.createElementNS(SVG_NS, name);
    Object.keys(attributes).forEach(function (key) {
      element.setAttribute(key, attributes[key]);
    });
    return element;
  }

  function polyDie(value, sides) {
    var die = document.createElement("div");
    die.className = "die poly";
    var svg = svgElement("svg", { viewBox: "0 0 56 56", "aria-hidden": "true" });
    var shape = SHAPES.filter(function (item) {
      return sides <= item.upTo;
    })[0];
    if (shape) {
      svg.appendChild(svgElement("polygon", { class: "face", points: shape.points }));
      shape.facets.forEach(function (points) {
        svg.appendChild(svgElement("polyline", { class: "facet", points: points }));
      });
    } else {
      svg.appendChild(svgElement("rect", { class: "face", x: 3, y: 3, width: 50, height: 50, rx: 12 }));
    }
    var text = svgElement("text", {
      class: "value" + (String(value).length > 2 ? " small" : ""),
      x: 28,
      y: shape ? shape.textY : 28,
      "text-anchor": "middle",
      "dominant-baseline": "central",
    });
    text.textContent = String(value);
    svg.appendChild(text);
    die.appendChild(svg);
    return die;
  }

  function drawDie(value, sides) {
    var die = sides <= 6 && PIPS[value] ? pipDie(value) : polyDie(value, sides);
    die.setAttribute("role", "img");
    die.setAttribute("aria-label", "d" + sides + " showing " + value);
    die.setAttribute("data-value", String(value));
    if (value === sides) die.setAttribute("data-face", "max");
    else if (value === 1) die.setAttribute("data-face", "min");
    return die;
  }

  /** A die still in the air: its shape, a question mark, no value. */
  function placeholderDie(sides) {
    var die = polyDie("?", sides <= 6 ? 100 : sides);
    die.classList.add("placeholder", "tumbling");
    die.setAttribute("aria-hidden", "true");
    return die;
  }

  function fillTray(dice) {
    tray.replaceChildren.apply(tray, dice);
  }

  function showDice(values, sides) {
    fillTray(
      values.map(function (value) {
        var die = drawDie(value, sides);
        die.classList.add("landed");
        return die;
      }),
    );
  }

  function showNote(text) {
    var note = document.createElement("p");
    note.className = "tray-empty";
    note.textContent = text;
    fillTray([note]);
  }

  /* ---------- states ---------- */

  function showRolling(args, partial) {
    var sides = clampInt(args.sides, 2, 100, 6);
    var count = clampInt(args.count, 1, 20, 1);
    current = { sides: sides, count: count };
    setState("input");
    main.setAttribute("aria-busy", "true");
    label.textContent = "Rolling " + notation(count, sides) + "…";
    setStatus(partial ? "Rolling… (receiving the arguments)" : "Rolling…", "info");
    var dice = [];
    for (var index = 0; index < count; index += 1) dice.push(placeholderDie(sides));
    fillTray(dice);
  }

  function textOf(result) {
    var blocks = Array.isArray(result.content) ? result.content : [];
    return blocks
      .filter(function (block) {
        return block && block.type === "text";
      })
      .map(function (block) {
        return block.text;
      })
      .join("\n");
  }

  function showError(message, keepDice) {
    setState("error");
    main.setAttribute("aria-busy", "false");
    setStatus(message, "danger");
    rerollBtn.disabled = false;
    if (!keepDice) {
      label.textContent = "Roll failed";
      showNote("No dice: the roll did not happen.");
    }
    Array.prototype.forEach.call(tray.querySelectorAll(".tumbling"), function (die) {
      die.classList.remove("tumbling");
    });
  }

  function showResult(result) {
    main.setAttribute("aria-busy", "false");
    rerollBtn.disabled = false;
    if (result.isError) {
      showError(textOf(result) || "The roll failed.");
      return;
    }
    var data = result.structuredContent;
    if (!data || !Array.isArray(data.rolls)) {
      showError("The result carried no dice. " + textOf(result));
      return;
    }
    current = { sides: data.sides, count: data.count };
    label.textContent =
      notation(data.count, data.sides) + " · " + (data.count === 1 ? "one die" : data.count + " dice");
    totalEl.textContent = String(data.total);
    valuesEl.textContent = data.rolls.join(", ");
    showDice(data.rolls, data.sides);
    setStatus("", null);
    results += 1;
    body.setAttribute("data-result-count", String(results));
    setState("result");
  }

  function showCancelled(reason) {
    setState("cancelled");
    main.setAttribute("aria-busy", "false");
    label.textContent = notation(current.count, current.sides) + " · not rolled";
    showNote("No dice this time.");
    setStatus("Roll cancelled" + (reason ? ": " + reason : "."), "warning");
    rerollBtn.disabled = false;
  }

  /* ---------- actions ---------- */

  function describeFailure(error) {
    return (
      (error && error.code !== undefined ? "[" + error.code + "] " : "") + ((error && error.message) || String(error))
    );
  }

  function reroll() {
    rerollBtn.disabled = true;
    main.setAttribute("aria-busy", "true");
    Array.prototype.forEach.call(tray.querySelectorAll(".die"), function (die) {
      die.classList.remove("landed");
      die.classList.add("tumbling");
    });
    setStatus("Rolling…", "info");
    bridge.callTool("reroll_dice", { sides: current.sides, count: current.count }).then(
      function (result) {
        showResult(result);
        refreshHistoryIfOpen();
      },
      function (error) {
        showError("Could not roll again: " + describeFailure(error), true);
      },
    );
  }

  function historyRow(entry) {
    var row = document.createElement("li");
    var kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = notation(entry.count, entry.sides);
    var rolls = document.createElement("span");
    rolls.className = "rolls";
    rolls.textContent = entry.rolls.join(", ");
    var source = document.createElement("span");
    source.className = "badge";
    source.setAttribute("data-source", entry.source);
    source.textContent = entry.source === "app" ? "view" : "model";
    var sum = document.createElement("span");
    sum.className = "sum";
    sum.textContent = "= " + entry.total;
    row.append(kind, rolls, source, sum);
    return row;
  }

  function renderHistory(result) {
    historyList.replaceChildren();
    var entries =
      result.structuredContent && Array.isArray(result.structuredContent.entries)
        ? result.structuredContent.entries.slice().reverse()
        : [];
    if (!entries.length) {
      var empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = result.isError ? textOf(result) : "No rolls yet.";
      historyList.appendChild(empty);
    }
    entries.forEach(function (entry) {
      historyList.appendChild(historyRow(entry));
    });
    historyPanel.hidden = false;
  }

  function loadHistory() {
    historyBtn.disabled = true;
    return bridge.callTool("dice_history", {}).then(
      function (result) {
        renderHistory(result);
        historyBtn.disabled = false;
      },
      function (error) {
        historyBtn.disabled = false;
        setStatus("Could not load the history: " + describeFailure(error), "danger");
      },
    );
  }

  function refreshHistoryIfOpen() {
    if (!historyPanel.hidden) loadHistory();
  }

  rerollBtn.addEventListener("click", reroll);
  historyBtn.addEventListener("click", loadHistory);

  /* ---------- protocol ---------- */

  bridge.on("ui/notifications/tool-input-partial", function (params) {
    showRolling(params.arguments || {}, true);
  });
  bridge.on("ui/notifications/tool-input", function (params) {
    showRolling(params.arguments || {}, false);
  });
  bridge.on("ui/notifications/tool-result", showResult);
  bridge.on("ui/notifications/tool-cancelled", function (params) {
    showCancelled(params.reason);
  });

  bridge.connect().then(
    function () {
      rerollBtn.disabled = false;
    },
    function (error) {
      showError("Could not connect to the host: " + describeFailure(error));
    },
  );
})();
