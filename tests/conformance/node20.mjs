// Lets the pinned MCP conformance suite start on Node 20 (`node --import ./node20.mjs …`).
// The suite asks for Node 22 because its `tier-check` command calls fs.globSync, which Node 20
// lacks; it imports the name at load, so without it no command starts at all. The client
// scenarios never call it. The hooks give the suite's own modules an fs with a globSync that
// says so if it is ever called; every other module gets the real fs.
import { register } from "node:module";

register("./node20_hooks.mjs", import.meta.url);
