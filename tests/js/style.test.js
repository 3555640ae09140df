// House rules for the front end that Biome has no rule for: no line over 120 characters in the
// page's modules and the sandbox proxy (the formatter wraps code at 120 but leaves long strings
// and comments alone, so they are split by hand); no markup from strings anywhere (text from
// models, servers and views must never become HTML); and modules that import each other one way.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STATIC = join(ROOT, "src/moka_shell/web/static");
const MAX_LINE = 120;

/** Every .js file under dir, depth first. */
function scripts(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return scripts(path);
    return entry.name.endsWith(".js") ? [path] : [];
  });
}

test("the front end's scripts are found", () => {
  const found = scripts(STATIC).map((path) => relative(STATIC, path));
  assert.ok(found.includes("js/app.js") && found.includes("sandbox/proxy.js"), found.join(", "));
});

test(`no line in web/static is over ${MAX_LINE} characters`, () => {
  const long = [];
  for (const path of scripts(STATIC)) {
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((line, i) => {
        // Characters, not UTF-16 units: "—" and "…" count once.
        const width = [...line].length;
        if (width > MAX_LINE) long.push(`${relative(ROOT, path)}:${i + 1} is ${width} characters`);
      });
  }
  assert.deepEqual(long, []);
});

test("no script parses a string as markup", () => {
  const markup = /\b(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment)\b|document\.write\s*\(/;
  const found = [];
  for (const path of scripts(STATIC)) {
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (markup.test(line)) found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
});

test("the page's modules import each other without a cycle", () => {
  const js = join(STATIC, "js");
  const graph = new Map();
  for (const path of scripts(js)) {
    const deps = [...readFileSync(path, "utf8").matchAll(/^\s*(?:import|export)\b[^"']*?from\s+"(\.[^"]+)"/gm)];
    graph.set(
      path,
      deps.map((m) => join(dirname(path), m[1])),
    );
  }
  const cycles = [];
  const state = new Map(); // path -> "open" while on the stack, "done" after
  const visit = (path, stack) => {
    if (state.get(path) === "done") return;
    if (state.get(path) === "open") {
      cycles.push([...stack.slice(stack.indexOf(path)), path].map((p) => relative(js, p)).join(" -> "));
      return;
    }
    state.set(path, "open");
    for (const dep of graph.get(path) || []) visit(dep, [...stack, path]);
    state.set(path, "done");
  };
  for (const path of graph.keys()) visit(path, []);
  assert.ok(graph.size > 40, `${graph.size} modules found`);
  assert.deepEqual(cycles, []);
});
