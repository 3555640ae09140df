// Module hooks for node20.mjs: the suite's `fs` is the real one plus a globSync that refuses.
const FS_WITH_GLOB =
  "data:text/javascript," +
  encodeURIComponent(
    [
      'import fs from "node:fs";',
      'export * from "node:fs";',
      "export default fs;",
      'export function globSync() { throw new Error("fs.globSync needs Node 22 (only tier-check uses it)"); }',
    ].join("\n"),
  );

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes("/@modelcontextprotocol/conformance/");
  if (fromSuite && (specifier === "fs" || specifier === "node:fs")) {
    return { url: FS_WITH_GLOB, shortCircuit: true };
  }
  return next(specifier, context);
}
