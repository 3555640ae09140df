// House rules for the front end that Biome has no rule for: no line over 120 characters in the
// page's modules and the sandbox proxy (the formatter wraps code at 120 but leaves long strings
// and comments alone, so they are split by hand); no function in the page's modules over 60
// physical lines, head to closing brace (Biome's noExcessiveLinesPerFunction counts the body
// without the lines that start with `{` or `}`, so a function it passes ran to 73); no markup
// from strings anywhere (text from models, servers and views must never become HTML); and modules
// that import each other one way.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { functionLines } from "./function-lines.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STATIC = join(ROOT, "src/moka_shell/web/static");
const MAX_LINE = 120;
const MAX_FUNCTION = 60;

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

test("the function measure counts every physical line, from the head to the closing brace", () => {
  const source = [
    "export function outer(a) {", // 1
    "  const re = /[}{]/g; // a brace in a regular expression", // 2
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the measured source holds a template literal
    '  const t = `${a ? `{${a}}` : "}"}`;', // 3: braces in a template literal and a string
    "  if (a) {", // 4
    "    return a.map((x) => {", // 5
    "      return x;", // 6
    "    });", // 7
    "  }", // 8
    "  /* } */", // 9
    "  return { re, t, m() {", // 10
    "    return 1;", // 11
    "  } };", // 12
    "}", // 13
    "const arrow = async (b) => {", // 14
    "  return b / 2;", // 15
    "};", // 16
  ].join("\n");
  const found = functionLines(source).map(({ name, start, end }) => `${name} ${start}-${end}`);
  assert.deepEqual(found.sort(), ["(arrow) 5-7", "arrow 14-16", "m 10-12", "outer 1-13"]);
});

test(`no function in web/static/js is over ${MAX_FUNCTION} lines`, () => {
  const long = [];
  let count = 0;
  for (const path of scripts(join(STATIC, "js"))) {
    for (const fn of functionLines(readFileSync(path, "utf8"))) {
      count++;
      if (fn.lines > MAX_FUNCTION) long.push(`${relative(ROOT, path)}:${fn.start} ${fn.name} is ${fn.lines} lines`);
    }
  }
  assert.ok(count > 500, `${count} functions found`);
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
