// The rules behind schema-form.js, with no DOM: how a JSON Schema is read (local $refs, which
// kind of field a schema gets) and what each kind of value must satisfy, as the messages shown
// next to the field. The tests in tests/js call these directly.

const KINDS = ["string", "number", "integer", "boolean", "array", "object"];

/** `schema` with a local "$ref" (#/…) followed through `root`; its own keywords win. */
export function resolveRef(root, schema, depth = 0) {
  if (!schema || typeof schema !== "object") return {};
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/") && depth < 20) {
    let target = root;
    for (const part of schema.$ref.slice(2).split("/")) target = target?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    const { $ref, ...rest } = schema;
    return resolveRef(root, { ...(target || {}), ...rest }, depth + 1);
  }
  return schema;
}

/** The field a schema gets: one of KINDS, "enum" (a choice, see choicesOf), "const", or "json" (a raw JSON editor). */
export function fieldKind(schema) {
  if (choicesOf(schema)) return "enum";
  if ("const" in schema) return "const";
  let t = schema.type;
  if (Array.isArray(t)) t = t.filter((x) => x !== "null").length === 1 ? t.find((x) => x !== "null") : null;
  if (!t && schema.properties) t = "object";
  if (schema.oneOf || schema.anyOf || schema.allOf) return "json";
  return KINDS.includes(t) ? t : "json";
}

export const isIntegerSchema = (schema) =>
  schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"));

/** The messages for a string field's text ("" is "not given"). */
export function stringErrors(schema, value, { required = false } = {}) {
  if (value === "") return required ? ["Required."] : [];
  const errors = [];
  if (schema.minLength !== undefined && value.length < schema.minLength)
    errors.push(`At least ${schema.minLength} characters.`);
  if (schema.maxLength !== undefined && value.length > schema.maxLength)
    errors.push(`At most ${schema.maxLength} characters.`);
  if (schema.pattern) {
    try {
      if (!new RegExp(schema.pattern, "u").test(value)) errors.push(`Must match ${schema.pattern}.`);
    } catch {
      /* a pattern JS can't read is not the person's fault */
    }
  }
  if (schema.format === "email" && !/^[^\s@]+@[^\s@]+$/.test(value)) errors.push("Not an email address.");
  if ((schema.format === "uri" || schema.format === "url") && !/^[a-z][\w+.-]*:/i.test(value))
    errors.push("Not a URL.");
  return errors;
}

/** The number a number field's text stands for: undefined when empty, NaN when not a number. */
export const parseNumber = (text) => (text.trim() === "" ? undefined : Number(text));

/** The messages for a number field's value (see parseNumber); badInput: the browser saw junk. */
export function numberErrors(schema, n, { required = false, badInput = false } = {}) {
  if (n === undefined) return badInput ? ["Not a number."] : required ? ["Required."] : [];
  if (Number.isNaN(n)) return ["Not a number."];
  const errors = [];
  if (isIntegerSchema(schema) && !Number.isInteger(n)) errors.push("Must be a whole number.");
  if (schema.minimum !== undefined && n < schema.minimum) errors.push(`Minimum ${schema.minimum}.`);
  if (schema.maximum !== undefined && n > schema.maximum) errors.push(`Maximum ${schema.maximum}.`);
  if (schema.exclusiveMinimum !== undefined && n <= schema.exclusiveMinimum)
    errors.push(`Must be more than ${schema.exclusiveMinimum}.`);
  if (schema.exclusiveMaximum !== undefined && n >= schema.exclusiveMaximum)
    errors.push(`Must be less than ${schema.exclusiveMaximum}.`);
  if (schema.multipleOf && Math.abs(n / schema.multipleOf - Math.round(n / schema.multipleOf)) > 1e-9)
    errors.push(`Must be a multiple of ${schema.multipleOf}.`);
  return errors;
}

/** The messages for how many items a list has. */
export function itemCountErrors(schema, count, { required = false } = {}) {
  const errors = [];
  if (required && !count && (schema.minItems ?? 1) > 0) errors.push("Add at least one item.");
  if (schema.minItems !== undefined && count && count < schema.minItems)
    errors.push(`At least ${schema.minItems} items.`);
  if (schema.maxItems !== undefined && count > schema.maxItems) errors.push(`At most ${schema.maxItems} items.`);
  return errors;
}

/** The messages for how many boxes of a multiple choice are ticked. */
export function choiceCountErrors(schema, count, { required = false } = {}) {
  const errors = [];
  if (required && !count && (schema.minItems ?? 1) > 0) errors.push("Choose at least one.");
  if (schema.minItems !== undefined && count < schema.minItems && count)
    errors.push(`Choose at least ${schema.minItems}.`);
  if (schema.maxItems !== undefined && count > schema.maxItems) errors.push(`Choose at most ${schema.maxItems}.`);
  return errors;
}

/** The messages for a raw JSON field's text. */
export function jsonErrors(text, { required = false } = {}) {
  if (!text.trim()) return required ? ["Required."] : [];
  const parsed = parseJson(text);
  return parsed.ok ? [] : [`Not valid JSON: ${parsed.message}`];
}

export function parseJson(text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: err.message };
  }
}

/** The index of `value` among an enum's values (compared as JSON), or -1. */
export const enumIndex = (values, value) => values.findIndex((x) => JSON.stringify(x) === JSON.stringify(value));

/** How an enum value or a const reads in the form. */
export const choiceText = (v) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * A schema's choices as [{value, label}], or null when it is no choice: its `enum` (labelled by the
 * legacy `enumNames` when they match it), or a `oneOf` / `anyOf` whose every branch is a `const`,
 * labelled by its `title` (the titled single and multiple selects of MCP elicitation, 2025-11-25).
 */
export function choicesOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.length) return null;
    const names = Array.isArray(schema.enumNames) && schema.enumNames.length === schema.enum.length;
    return schema.enum.map((value, i) => ({ value, label: labelOr(names && schema.enumNames[i], value) }));
  }
  const branches = Array.isArray(schema.oneOf) ? schema.oneOf : schema.anyOf;
  if (!Array.isArray(branches) || !branches.length) return null;
  if (!branches.every((b) => b && typeof b === "object" && !Array.isArray(b) && "const" in b)) return null;
  return branches.map((b) => ({ value: b.const, label: labelOr(b.title, b.const) }));
}

const labelOr = (label, value) => (typeof label === "string" && label.trim() ? label : choiceText(value));
