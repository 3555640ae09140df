// The composer's rules (js/chat/): the "/" and "@" menus' matching and what they insert, what may
// be attached to one message, and which model answers in a conversation.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  base64Size,
  fileName,
  MAX_FILE,
  MAX_FILES,
  MAX_TOTAL,
  refusal,
  sizeLabel,
} from "../../src/moka_shell/web/static/js/chat/attachments.js";
import {
  appendLine,
  argumentsOf,
  b64,
  expandTemplate,
  findTrigger,
  fuzzy,
  offeredAsContext,
  promptParts,
  rankItems,
  resourceAttachment,
} from "../../src/moka_shell/web/static/js/chat/menu-items.js";
import {
  chosenModel,
  defaultModelText,
  effectiveModel,
  modelCount,
  modelLabel,
  onlyModel,
} from "../../src/moka_shell/web/static/js/chat/model-choice.js";

describe("the / and @ menus", () => {
  test("fuzzy: 0 for a prefix, 1 + gaps for letters in order, -1 otherwise; case-blind", () => {
    assert.equal(fuzzy("pla", "plan_trip"), 0);
    assert.equal(fuzzy("PT", "plan_trip"), 1 + 4);
    assert.equal(fuzzy("ptp", "plan_trip"), 1 + 4 + 2);
    assert.equal(fuzzy("x", "plan_trip"), -1);
    assert.equal(fuzzy("tp", "plan_trip"), 1 + 5 + 2); // t at 5, then p at 8
    assert.equal(fuzzy("pt", "tip"), -1); // p, then a t after it: none
    assert.equal(fuzzy("", "anything"), 1);
  });

  test("findTrigger: / only at the very start, @ after a space or at the start, up to the caret", () => {
    assert.deepEqual(findTrigger("/pla"), { mode: "/", query: "pla", start: 0 });
    assert.deepEqual(findTrigger("/plan a trip"), { mode: "/", query: "plan a trip", start: 0 });
    assert.equal(findTrigger("see /pla"), null);
    assert.equal(findTrigger("/a\nb"), null); // a new line ends the prompt search
    assert.deepEqual(findTrigger("read @to"), { mode: "@", query: "to", start: 5 });
    assert.deepEqual(findTrigger("@"), { mode: "@", query: "", start: 0 });
    assert.equal(findTrigger("mail a@b"), null); // an address, not a mention
    assert.equal(findTrigger("@to and"), null); // the caret has moved past it
    assert.deepEqual(findTrigger("@to and", 3), { mode: "@", query: "to", start: 0 });
    assert.equal(findTrigger(""), null);
  });

  test("rankItems: name matches first, then matches in the description or URI; at most 30", () => {
    const items = [
      { name: "summarize", description: "plan a summary" },
      { name: "plan_trip", description: "Plan a trip" },
      { name: "city_guide", uri: "file:///plans/city" },
      { name: "other" },
    ];
    assert.deepEqual(
      rankItems(items, "plan").map((it) => it.name),
      ["plan_trip", "summarize", "city_guide"],
    );
    assert.deepEqual(
      rankItems(items, "").map((it) => it.name),
      ["summarize", "plan_trip", "city_guide", "other"],
    ); // stable when nothing is typed
    const many = Array.from({ length: 50 }, (_, i) => ({ name: `tool${i}` }));
    assert.equal(rankItems(many, "tool").length, 30);
    assert.deepEqual(rankItems(items, "zzz"), []);
  });

  test("argumentsOf: a prompt's arguments (copies), a template's variables (required), else none", () => {
    const prompt = { kind: "prompt", arguments: [{ name: "city", required: true }] };
    const args = argumentsOf(prompt);
    assert.deepEqual(args, [{ name: "city", required: true }]);
    args[0].name = "changed";
    assert.equal(prompt.arguments[0].name, "city");
    assert.deepEqual(argumentsOf({ kind: "template", variables: ["id", "v"] }), [
      { name: "id", required: true },
      { name: "v", required: true },
    ]);
    assert.deepEqual(argumentsOf({ kind: "resource", uri: "x://y" }), []);
    assert.deepEqual(argumentsOf({ kind: "prompt" }), []);
  });

  test("expandTemplate: values URI-encoded, operators dropped, missing values empty", () => {
    assert.equal(expandTemplate("notes://{day}/{+path}", { day: "to day", path: "a/b" }), "notes://to%20day/a%2Fb");
    assert.equal(expandTemplate("x://{missing}/end", {}), "x:///end");
    assert.equal(expandTemplate("x://plain", { a: 1 }), "x://plain");
  });

  test("b64 encodes UTF-8, and long texts in chunks", () => {
    assert.equal(b64("Ana ☕"), Buffer.from("Ana ☕", "utf8").toString("base64"));
    const long = "é".repeat(70000);
    assert.equal(b64(long), Buffer.from(long, "utf8").toString("base64"));
    assert.equal(b64(""), "");
  });

  test("resourceAttachment: text is encoded, a blob kept, a name made from the URI", () => {
    assert.deepEqual(resourceAttachment({ uri: "notes://today/list.txt", text: "hi" }), {
      name: "today_list.txt",
      mimeType: "text/plain",
      data: b64("hi"),
      uri: "notes://today/list.txt",
    });
    assert.deepEqual(resourceAttachment({ blob: "AAE=", mimeType: "image/png" }), {
      name: "resource",
      mimeType: "image/png",
      data: "AAE=",
      uri: undefined,
    });
    assert.equal(resourceAttachment({ uri: "x://empty" }), null);
  });

  test("promptParts: text messages joined (the assistant's marked), resources and images attached", () => {
    const { text, attachments } = promptParts("plan_trip", [
      { role: "user", content: { type: "text", text: "Plan a trip." } },
      { role: "assistant", content: { type: "text", text: "Where to?" } },
      { role: "user", content: { type: "resource", resource: { uri: "a://b", text: "x" } } },
      { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/jpeg" } },
      { role: "user", content: { type: "image" } }, // no data: nothing to attach
      { role: "user", content: { type: "resource", resource: { uri: "a://c" } } }, // nor here
      { role: "user" },
    ]);
    assert.equal(text, "Plan a trip.\n\nAssistant (from the prompt): Where to?");
    assert.deepEqual(
      attachments.map((a) => [a.name, a.mimeType]),
      [
        ["b", "text/plain"],
        ["plan_trip-image.jpeg", "image/jpeg"],
      ],
    );
    assert.deepEqual(promptParts("p", undefined), { text: "", attachments: [] });
  });

  test("appendLine puts the prompt's text on a line of its own", () => {
    assert.equal(appendLine("", "b"), "b");
    assert.equal(appendLine("a", "b"), "a\nb");
    assert.equal(appendLine("a\n", "b"), "a\nb");
  });
});

describe("attachments", () => {
  const file = (size, name = "f.bin", type = "") => ({ size, name, type });

  test("sizes as people read them", () => {
    assert.equal(sizeLabel(0), "0 B");
    assert.equal(sizeLabel(1023), "1023 B");
    assert.equal(sizeLabel(1024), "1.0 KB");
    assert.equal(sizeLabel(1536), "1.5 KB");
    assert.equal(sizeLabel(MAX_FILE), "8.0 MB");
  });

  test("one file at most MAX_FILE; the message at most MAX_TOTAL; at most MAX_FILES files", () => {
    assert.equal(refusal([], file(MAX_FILE)), null);
    assert.deepEqual(refusal([], file(MAX_FILE + 1, "big.png")), {
      message: "big.png is 8.0 MB; a file may be at most 8.0 MB.",
      stop: false,
    });
    const six = { size: 6 * 1024 * 1024 };
    assert.equal(refusal([six], file(4 * 1024 * 1024)), null);
    assert.deepEqual(refusal([six], file(4 * 1024 * 1024 + 1)), {
      message: `The files of one message may be at most ${sizeLabel(MAX_TOTAL)} together.`,
      stop: false,
    });
    const full = Array.from({ length: MAX_FILES }, () => ({ size: 1 }));
    assert.deepEqual(refusal(full, file(1)), { message: "At most 10 files go with one message.", stop: true });
    assert.equal(refusal(full.slice(1), file(1)), null);
  });

  test("a pasted file without a name is named from its count and type", () => {
    assert.equal(fileName({ name: "photo.jpg", type: "image/jpeg" }, 3), "photo.jpg");
    assert.equal(fileName({ name: "", type: "image/png" }, 0), "pasted-1.png");
    assert.equal(fileName({ name: "", type: "image/svg+xml" }, 1), "pasted-2.svgxml");
    assert.equal(fileName({ name: "", type: "" }, 4), "pasted-5.bin");
  });

  test("base64Size counts the bytes, padding included", () => {
    for (const text of ["", "a", "ab", "abc", "abcd", "☕☕"]) {
      const data = Buffer.from(text).toString("base64");
      assert.equal(base64Size(data), Buffer.byteLength(text), text);
    }
  });
});

describe("which model answers", () => {
  const settings = {
    backends: [
      { id: "ollama", name: "Ollama", defaultModel: "llama3" },
      { id: "openai", name: "OpenAI", defaultModel: "gpt-x" },
      { id: "bare", name: "Bare" },
    ],
    agent: { backend: "ollama", model: "" },
  };

  test("the conversation's own pair wins; its model defaults to the backend's", () => {
    assert.deepEqual(effectiveModel({ backend: "openai", model: "gpt-y" }, settings), {
      backend: "openai",
      model: "gpt-y",
      own: true,
    });
    assert.deepEqual(effectiveModel({ backend: "openai" }, settings), { backend: "openai", model: "gpt-x", own: true });
    assert.deepEqual(effectiveModel({ backend: "bare" }, settings), { backend: "bare", model: "", own: true });
    assert.deepEqual(effectiveModel({ backend: "gone" }, settings), { backend: "gone", model: "", own: true });
  });

  test("otherwise Settings: its model, else its backend's default", () => {
    assert.deepEqual(effectiveModel({}, settings), { backend: "ollama", model: "llama3", own: false });
    assert.deepEqual(
      effectiveModel({ systemPrompt: "Be brief" }, { ...settings, agent: { backend: "openai", model: "m" } }),
      {
        backend: "openai",
        model: "m",
        own: false,
      },
    );
    assert.deepEqual(effectiveModel({}), { backend: undefined, model: "", own: false });
  });

  test("the label names the backend and the model", () => {
    assert.equal(modelLabel({ backend: "ollama", model: "llama3" }, settings.backends), "Ollama · llama3");
    assert.equal(modelLabel({ backend: "bare", model: "" }, settings.backends), "Bare");
    assert.equal(modelLabel({ backend: "unknown", model: "m" }, settings.backends), "unknown · m");
    assert.equal(modelLabel({ backend: undefined, model: "" }), "No model");
  });

  test("the model list shows a choice only when the pair is the conversation's own and listed", () => {
    assert.equal(chosenModel({ model: "a" }, { backend: "x" }, ["a", "b"]), "a");
    assert.equal(chosenModel({ model: "a" }, {}, ["a", "b"]), "");
    assert.equal(chosenModel({ model: "c" }, { backend: "x" }, ["a", "b"]), "");
  });
});

describe("what @ offers as context", () => {
  test("a server's resources and templates, but not an app's ui:// view or MCP App HTML", () => {
    assert.equal(offeredAsContext({ uri: "notes://today", mimeType: "text/plain" }), true);
    assert.equal(offeredAsContext({ uriTemplate: "notes://day/{day}" }), true);
    assert.equal(offeredAsContext({ uri: "ui://moka-demo/dice", mimeType: "text/html;profile=mcp-app" }), false);
    assert.equal(offeredAsContext({ uri: "UI://x/y" }), false);
    assert.equal(offeredAsContext({ uriTemplate: "ui://app/{id}" }), false);
    assert.equal(offeredAsContext({ uri: "https://x/app.html", mimeType: "text/html;profile=mcp-app" }), false);
    assert.equal(offeredAsContext({ uri: "https://x/page.html", mimeType: "text/html" }), true);
  });
});

describe("the model in use, in words", () => {
  test("the model list's first entry names the model that answers when none of its own is picked", () => {
    const following = { backend: "custom", model: "fake-model", own: false };
    assert.equal(defaultModelText(following, {}, { defaultModel: "" }), "Settings default (fake-model)");
    const ownBackend = { backend: "ollama", model: "llama3.2", own: true };
    assert.equal(
      defaultModelText(ownBackend, { backend: "ollama" }, { defaultModel: "llama3.2" }),
      "Default (llama3.2)",
    );
    assert.equal(defaultModelText({ backend: "custom", model: "", own: false }, {}, {}), "Choose a model…");
  });
  test("counts of models read right", () => {
    assert.equal(modelCount(1), "1 model");
    assert.equal(modelCount(0), "0 models");
    assert.equal(modelCount(3), "3 models");
  });
  test("an endpoint with one model and none chosen: that one; otherwise none is chosen for the person", () => {
    assert.equal(onlyModel(["fake-model"], "", ""), "fake-model");
    assert.equal(onlyModel(["a", "b"], "", ""), null);
    assert.equal(onlyModel(["fake-model"], "mine", ""), null);
    assert.equal(onlyModel(["fake-model"], "", "llama3.2"), null);
    assert.equal(onlyModel(undefined, "", ""), null);
  });
});
