// How the Tool runner's and the elicitation dialog's forms read a JSON Schema and check values
// (js/schema-rules.js; js/schema-form.js builds the fields and shows these messages).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  choiceCountErrors,
  choicesOf,
  choiceText,
  enumIndex,
  fieldKind,
  itemCountErrors,
  jsonErrors,
  numberErrors,
  parseJson,
  parseNumber,
  resolveRef,
  stringErrors,
} from "../../src/moka_shell/web/static/js/schema-rules.js";

describe("fieldKind", () => {
  const cases = [
    [{ type: "string" }, "string"],
    [{ type: "number" }, "number"],
    [{ type: "integer" }, "integer"],
    [{ type: "boolean" }, "boolean"],
    [{ type: "array", items: { type: "string" } }, "array"],
    [{ type: "object" }, "object"],
    [{ properties: { a: {} } }, "object"], // no type, but properties
    [{ type: ["string", "null"] }, "string"], // nullable
    [{ type: ["string", "number"] }, "json"], // two real types: no one field fits
    [{ type: ["null"] }, "json"],
    [{ enum: ["a", "b"] }, "enum"],
    [{ type: "string", enum: ["a"] }, "enum"],
    [{ enum: [] }, "json"], // an empty enum offers nothing to choose
    [{ const: 3 }, "const"],
    [{ const: null }, "const"],
    [{ oneOf: [{ type: "string" }, { type: "number" }] }, "json"],
    [{ type: "string", anyOf: [{ minLength: 1 }] }, "json"],
    [{ allOf: [{ type: "object" }] }, "json"],
    [{ enum: ["x"], oneOf: [{}] }, "enum"], // enum first
    [{ type: "string", oneOf: [{ const: "hero-1", title: "Superman" }] }, "enum"], // a titled single select
    [{ anyOf: [{ const: 1 }, { const: 2, title: "Two" }] }, "enum"],
    [{ oneOf: [{ const: "a" }, { type: "string" }] }, "json"], // not every branch a const
    [{ type: "array", items: { anyOf: [{ const: "fish-1", title: "Tuna" }] } }, "array"],
    [{}, "json"],
    [{ type: "date" }, "json"],
  ];
  for (const [schema, kind] of cases) {
    test(`${JSON.stringify(schema)} → ${kind}`, () => assert.equal(fieldKind(schema), kind));
  }
});

describe("resolveRef", () => {
  const root = {
    $defs: { name: { type: "string", title: "Name" }, "a/b": { type: "number" }, "t~x": { type: "boolean" } },
    definitions: { loop: { $ref: "#/definitions/loop" }, alias: { $ref: "#/$defs/name" } },
  };

  test("follows a local ref; the referring schema's own keywords win", () => {
    assert.deepEqual(resolveRef(root, { $ref: "#/$defs/name", description: "Who" }), {
      type: "string",
      title: "Name",
      description: "Who",
    });
    assert.deepEqual(resolveRef(root, { $ref: "#/$defs/name", title: "Mine" }).title, "Mine");
  });

  test("chains of refs, and ~1 / ~0 escapes in a pointer", () => {
    assert.equal(resolveRef(root, { $ref: "#/definitions/alias" }).title, "Name");
    assert.equal(resolveRef(root, { $ref: "#/$defs/a~1b" }).type, "number");
    assert.equal(resolveRef(root, { $ref: "#/$defs/t~0x" }).type, "boolean");
  });

  test("a missing target, a remote ref, a cycle and junk do not throw", () => {
    assert.deepEqual(resolveRef(root, { $ref: "#/$defs/nope", type: "string" }), { type: "string" });
    assert.deepEqual(resolveRef(root, { $ref: "https://example.com/s.json" }), { $ref: "https://example.com/s.json" });
    assert.equal(typeof resolveRef(root, { $ref: "#/definitions/loop" }), "object");
    assert.deepEqual(resolveRef(root, null), {});
    assert.deepEqual(resolveRef(root, "string"), {});
  });
});

describe("strings", () => {
  test("empty is missing only when required", () => {
    assert.deepEqual(stringErrors({ minLength: 3 }, ""), []);
    assert.deepEqual(stringErrors({ minLength: 3 }, "", { required: true }), ["Required."]);
  });

  test("minLength, maxLength, pattern and formats, every message at once", () => {
    assert.deepEqual(stringErrors({ minLength: 2, maxLength: 4 }, "ab"), []);
    assert.deepEqual(stringErrors({ minLength: 2 }, "a"), ["At least 2 characters."]);
    assert.deepEqual(stringErrors({ maxLength: 4 }, "abcde"), ["At most 4 characters."]);
    assert.deepEqual(stringErrors({ pattern: "^[a-z]+$" }, "abc"), []);
    assert.deepEqual(stringErrors({ pattern: "^[a-z]+$", maxLength: 2 }, "ABC"), [
      "At most 2 characters.",
      "Must match ^[a-z]+$.",
    ]);
    assert.deepEqual(stringErrors({ format: "email" }, "a@b"), []);
    assert.deepEqual(stringErrors({ format: "email" }, "a b@c"), ["Not an email address."]);
    assert.deepEqual(stringErrors({ format: "uri" }, "https://x"), []);
    assert.deepEqual(stringErrors({ format: "url" }, "example.com"), ["Not a URL."]);
    assert.deepEqual(stringErrors({ format: "date" }, "whenever"), []); // formats we don't check
  });

  test("a pattern JavaScript cannot compile is not the person's fault", () => {
    assert.deepEqual(stringErrors({ pattern: "(?<!" }, "x"), []);
  });

  test("a pattern is read as Unicode", () => {
    assert.deepEqual(stringErrors({ pattern: "^.$" }, "😀"), []);
  });
});

describe("numbers", () => {
  test("parseNumber: empty is undefined, junk is NaN", () => {
    assert.equal(parseNumber(""), undefined);
    assert.equal(parseNumber("  "), undefined);
    assert.equal(parseNumber("4.5"), 4.5);
    assert.equal(parseNumber("-0"), -0);
    assert.ok(Number.isNaN(parseNumber("-")));
    assert.ok(Number.isNaN(parseNumber("1e")));
  });

  test("missing, required, and what the browser could not read", () => {
    assert.deepEqual(numberErrors({}, undefined), []);
    assert.deepEqual(numberErrors({}, undefined, { required: true }), ["Required."]);
    assert.deepEqual(numberErrors({}, undefined, { required: true, badInput: true }), ["Not a number."]);
    assert.deepEqual(numberErrors({ minimum: 5 }, Number.NaN), ["Not a number."]);
  });

  test("integers, minimum and maximum (inclusive)", () => {
    assert.deepEqual(numberErrors({ type: "integer" }, 2.5), ["Must be a whole number."]);
    assert.deepEqual(numberErrors({ type: ["integer", "null"] }, 2.5), ["Must be a whole number."]);
    assert.deepEqual(numberErrors({ type: "number" }, 2.5), []);
    assert.deepEqual(numberErrors({ minimum: 1, maximum: 3 }, 1), []);
    assert.deepEqual(numberErrors({ minimum: 1, maximum: 3 }, 3), []);
    assert.deepEqual(numberErrors({ minimum: 1 }, 0), ["Minimum 1."]);
    assert.deepEqual(numberErrors({ maximum: 3 }, 4), ["Maximum 3."]);
    assert.deepEqual(numberErrors({ minimum: 0 }, -0), []);
  });

  test("exclusive bounds and multipleOf (with float noise)", () => {
    assert.deepEqual(numberErrors({ exclusiveMinimum: 0 }, 0), ["Must be more than 0."]);
    assert.deepEqual(numberErrors({ exclusiveMaximum: 10 }, 10), ["Must be less than 10."]);
    assert.deepEqual(numberErrors({ exclusiveMinimum: 0, exclusiveMaximum: 10 }, 5), []);
    assert.deepEqual(numberErrors({ multipleOf: 0.1 }, 0.3), []);
    assert.deepEqual(numberErrors({ multipleOf: 5 }, 12), ["Must be a multiple of 5."]);
    assert.deepEqual(numberErrors({ type: "integer", minimum: 10, multipleOf: 4 }, 6.5), [
      "Must be a whole number.",
      "Minimum 10.",
      "Must be a multiple of 4.",
    ]);
  });
});

describe("lists and multiple choices", () => {
  test("a required list needs an item unless minItems is 0", () => {
    assert.deepEqual(itemCountErrors({}, 0, { required: true }), ["Add at least one item."]);
    assert.deepEqual(itemCountErrors({ minItems: 0 }, 0, { required: true }), []);
    assert.deepEqual(itemCountErrors({}, 0), []);
  });

  test("minItems applies once there are items; maxItems always", () => {
    assert.deepEqual(itemCountErrors({ minItems: 2 }, 0), []);
    assert.deepEqual(itemCountErrors({ minItems: 2 }, 1), ["At least 2 items."]);
    assert.deepEqual(itemCountErrors({ minItems: 2, maxItems: 3 }, 3), []);
    assert.deepEqual(itemCountErrors({ maxItems: 3 }, 4), ["At most 3 items."]);
  });

  test("choices say choose", () => {
    assert.deepEqual(choiceCountErrors({}, 0, { required: true }), ["Choose at least one."]);
    assert.deepEqual(choiceCountErrors({ minItems: 2 }, 1), ["Choose at least 2."]);
    assert.deepEqual(choiceCountErrors({ minItems: 2 }, 0), []);
    assert.deepEqual(choiceCountErrors({ maxItems: 1 }, 2), ["Choose at most 1."]);
  });
});

describe("enums and raw JSON", () => {
  test("enum values are found by their JSON, whatever their type", () => {
    const values = ["a", 1, true, null, { x: [1] }, [2]];
    for (const [i, v] of values.entries()) assert.equal(enumIndex(values, structuredClone(v)), i);
    assert.equal(enumIndex(values, "1"), -1); // the string is not the number
    assert.equal(enumIndex(values, undefined), -1);
    assert.deepEqual(values.map(choiceText), ["a", "1", "true", "null", '{"x":[1]}', "[2]"]);
  });

  test("raw JSON: empty, required, valid and not", () => {
    assert.deepEqual(jsonErrors("  "), []);
    assert.deepEqual(jsonErrors("", { required: true }), ["Required."]);
    assert.deepEqual(jsonErrors('{"a": [1, null]}'), []);
    const [message] = jsonErrors("{a: 1}");
    assert.match(message, /^Not valid JSON: /);
    assert.deepEqual(parseJson("[1,2]"), { ok: true, value: [1, 2] });
    assert.equal(parseJson("[1,").ok, false);
  });
});

describe("choices (elicitation's single and multiple selects)", () => {
  test("a plain enum: its values are the labels", () => {
    assert.deepEqual(choicesOf({ type: "string", enum: ["Monica", "Rachel"] }), [
      { value: "Monica", label: "Monica" },
      { value: "Rachel", label: "Rachel" },
    ]);
  });
  test("the legacy enumNames label the values, when there is one for each", () => {
    const pets = { type: "string", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] };
    assert.deepEqual(
      choicesOf(pets).map((c) => c.label),
      ["Cats", "Dogs"],
    );
    assert.deepEqual(
      choicesOf({ ...pets, enumNames: ["Cats"] }).map((c) => c.label),
      ["pet-1", "pet-2"],
    );
  });
  test("a oneOf of titled consts: the const is the value, the title what the person reads", () => {
    const heroes = {
      type: "string",
      oneOf: [
        { const: "hero-1", title: "Superman" },
        { const: "hero-2", title: "Green Lantern" },
      ],
    };
    assert.deepEqual(choicesOf(heroes), [
      { value: "hero-1", label: "Superman" },
      { value: "hero-2", label: "Green Lantern" },
    ]);
  });
  test("an anyOf of consts (a multiple select's items) works the same; a missing title shows the value", () => {
    assert.deepEqual(
      choicesOf({ anyOf: [{ const: "fish-1", title: "Tuna" }, { const: 7 }, { const: "x", title: " " }] }),
      [
        { value: "fish-1", label: "Tuna" },
        { value: 7, label: "7" },
        { value: "x", label: "x" },
      ],
    );
  });
  test("anything else is no choice", () => {
    for (const schema of [{}, { enum: [] }, { oneOf: [] }, { oneOf: [{ type: "string" }] }, { anyOf: [null] }, null])
      assert.equal(choicesOf(schema), null, JSON.stringify(schema));
  });
});
