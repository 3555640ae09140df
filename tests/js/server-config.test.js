// How the Add / Edit server dialog reads and writes a config entry (js/servers/config.js).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  configFrom,
  joinArgs,
  pairsText,
  parsePairs,
  serverTarget,
  splitArgs,
} from "../../src/moka_shell/web/static/js/servers/config.js";

describe("command lines", () => {
  test("splitArgs: spaces split, quotes group, backslashes escape", () => {
    assert.deepEqual(splitArgs("npx -y @modelcontextprotocol/server-everything"), [
      "npx",
      "-y",
      "@modelcontextprotocol/server-everything",
    ]);
    assert.deepEqual(splitArgs(`node "my dir/x.js"  --name='a b' ""`), ["node", "my dir/x.js", "--name=a b", ""]);
    assert.deepEqual(splitArgs(String.raw`a\ b "c\"d" 'e\f'`), ["a b", 'c"d', "e\\f"]);
    assert.deepEqual(splitArgs("  "), []);
    assert.deepEqual(splitArgs(`"unclosed quote`), ["unclosed quote"]);
  });

  test("joinArgs is splitArgs' inverse", () => {
    const cases = [["node", "x.js"], ["my tool", '--flag="q"', "", "back\\slash", "it's"], []];
    for (const parts of cases) assert.deepEqual(splitArgs(joinArgs(parts)), parts);
    assert.equal(joinArgs(["node", "a b"]), 'node "a b"');
  });

  test("serverTarget: the URL, or the command line", () => {
    assert.equal(serverTarget({ url: "http://127.0.0.1:3001/mcp", command: "ignored" }), "http://127.0.0.1:3001/mcp");
    assert.equal(serverTarget({ command: "node", args: ["a b.js"] }), 'node "a b.js"');
    assert.equal(serverTarget(null), "");
  });
});

describe("NAME=value and Name: value lines", () => {
  test("parsePairs skips blank lines and comments, keeps '=' after the first", () => {
    assert.deepEqual(parsePairs("A=1\n\n# note\n  B = x=y  \n", "="), { A: "1", B: "x=y" });
    assert.deepEqual(parsePairs("Authorization: Bearer t:k", ":"), { Authorization: "Bearer t:k" });
    assert.deepEqual(parsePairs("", "="), {});
  });

  test("parsePairs says which line is wrong and how it should look", () => {
    assert.throws(() => parsePairs("GOOD=1\nno value", "="), { message: '"no value" should look like NAME=value' });
    assert.throws(() => parsePairs("=x", "="), /should look like NAME=value/);
  });

  test("pairsText writes what parsePairs reads", () => {
    const env = { A: "1", PATH: "/usr/bin:/bin" };
    assert.deepEqual(parsePairs(pairsText(env, "="), "="), env);
    assert.deepEqual(parsePairs(pairsText({ "X-Key": "v" }, ": "), ":"), { "X-Key": "v" });
    assert.equal(pairsText(undefined, "="), "");
  });
});

describe("configFrom", () => {
  const fields = {
    name: "demo",
    stdio: true,
    command: "",
    env: "",
    cwd: "",
    url: "",
    headers: "",
    type: "",
  };

  test("a local command, with its environment and working directory", () => {
    assert.deepEqual(configFrom({ ...fields, command: ' node "srv.js" --x ', env: "K=v", cwd: " /tmp " }), {
      command: "node",
      args: ["srv.js", "--x"],
      env: { K: "v" },
      cwd: "/tmp",
    });
    assert.deepEqual(configFrom({ ...fields, command: "srv" }), { command: "srv", args: [] });
  });

  test("a remote server, with headers; a plugin's transport type", () => {
    assert.deepEqual(
      configFrom({ ...fields, stdio: false, url: " https://x.example/mcp ", headers: "Authorization: Bearer t" }),
      { url: "https://x.example/mcp", headers: { Authorization: "Bearer t" } }, // no `type`: as `moka servers add --url`
    );
    assert.deepEqual(configFrom({ ...fields, command: "srv", type: " websocket " }), {
      command: "srv",
      args: [],
      type: "websocket",
    });
  });

  test("what is missing or wrong is said", () => {
    assert.throws(() => configFrom({ ...fields, name: "  ", command: "x" }), { message: "Give the server a name." });
    assert.throws(() => configFrom(fields), { message: "Enter the command that starts the server." });
    assert.throws(() => configFrom({ ...fields, stdio: false, url: "ftp://x" }), {
      message: "The URL must start with http:// or https://.",
    });
    assert.throws(() => configFrom({ ...fields, command: "x", env: "oops" }), /should look like NAME=value/);
  });
});
