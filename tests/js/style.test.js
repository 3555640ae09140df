// House rules for the front end that Biome has no rule for: no line over 120 characters in the
// page's modules and the sandbox proxy (the formatter wraps code at 120 but leaves long strings
// and comments alone, so they are split by hand).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
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
