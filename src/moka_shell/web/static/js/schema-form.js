// A form generated from a tool's JSON Schema `inputSchema`: strings, enums, numbers,
// integers, booleans, arrays and nested objects, with required marks, defaults, help text
// and validation messages next to each field; `enum`s and `oneOf`/`anyOf` lists of titled
// `const`s are selects and checkboxes. Anything the form cannot express (other oneOfs,
// untyped values…) gets a small JSON editor, and keys the form does not know are kept,
// so switching to raw JSON and back never loses data.

import { h, clear } from "./dom.js";
import { icon } from "./icons.js";
import { iconButton, button } from "./ui.js";
import {
  choiceCountErrors,
  choicesOf,
  enumIndex,
  fieldKind,
  isIntegerSchema,
  itemCountErrors,
  jsonErrors,
  numberErrors,
  parseJson,
  parseNumber,
  resolveRef,
  stringErrors,
} from "./schema-rules.js";

let uid = 0;

/** Build a form for `schema`. Returns {el, getValue({validate}), setValue(obj)}. */
export function createSchemaForm(schema, { onChange } = {}) {
  const root = schema && typeof schema === "object" ? schema : { type: "object" };
  const ctx = { root, onChange: onChange || (() => {}) };
  const field = objectField(resolve(ctx, root), [], ctx, { isRoot: true });
  const el = h("div", { class: "schema-form" }, field.el);
  return {
    el,
    /** {ok, value, errors}; with validate:true, messages appear next to fields. */
    getValue({ validate = true } = {}) {
      const errors = validate ? field.validate() : [];
      const got = field.get();
      return { ok: errors.length === 0, value: got.present ? got.value : {}, errors };
    },
    setValue(value) {
      field.set(value && typeof value === "object" && !Array.isArray(value) ? value : {});
    },
    focusFirstError() {
      el.querySelector("[aria-invalid=true]")?.focus();
    },
  };
}

const resolve = (ctx, schema) => resolveRef(ctx.root, schema);

function build(schema, path, ctx, opts) {
  const s = resolve(ctx, schema);
  switch (fieldKind(s)) {
    case "object":
      return objectField(s, path, ctx, opts);
    case "array":
      return arrayField(s, path, ctx, opts);
    case "boolean":
      return booleanField(s, path, ctx, opts);
    case "enum":
      return enumField(s, path, ctx, opts);
    case "const":
      return constField(s, path, ctx, opts);
    case "number":
    case "integer":
      return numberField(s, path, ctx, opts);
    case "string":
      return stringField(s, path, ctx, opts);
    default:
      return jsonField(s, path, ctx, opts);
  }
}

// ---- the frame around every leaf field ---------------------------------------------------

function frame(schema, path, opts, control, { inlineLabel = false } = {}) {
  const id = `sf-${++uid}`;
  const name = path.join(".") || "value";
  const errorEl = h("div", { class: "field-error", id: `${id}-err`, hidden: true, "aria-live": "polite" });
  const help = schema.description
    ? h("div", { class: "field-help", id: `${id}-help`, text: schema.description })
    : null;
  control.id = id;
  control.setAttribute("name", name);
  control.setAttribute("aria-describedby", [help ? `${id}-help` : "", `${id}-err`].join(" ").trim());
  if (opts.required) control.setAttribute("aria-required", "true");
  const labelText = opts.label ?? schema.title ?? path[path.length - 1] ?? "value";
  const label = h(
    "label",
    { class: "field-label", for: id },
    labelText,
    opts.required ? h("span", { class: "required-mark", "aria-hidden": "true", text: "*" }) : null,
  );
  const el = inlineLabel
    ? h("div", { class: "field", "data-field": name }, h("div", { class: "check-row" }, control, label), help, errorEl)
    : h("div", { class: "field", "data-field": name }, label, control, help, errorEl);
  const showErrors = (errors) => {
    control.setAttribute("aria-invalid", String(errors.length > 0));
    errorEl.hidden = !errors.length;
    clear(errorEl);
    if (errors.length) errorEl.append(icon("alert", { size: 13 }), h("span", { text: errors.join(" ") }));
    return errors.map((message) => ({ path: name, message }));
  };
  return { el, showErrors };
}

// ---- leaves ----------------------------------------------------------------------------

function stringField(schema, path, ctx, opts) {
  const long =
    (schema.maxLength || 0) > 200 ||
    /multi|textarea|markdown/i.test(schema.format || "") ||
    /\n/.test(schema.default || "");
  const type = { email: "email", uri: "url", url: "url", password: "password" }[schema.format] || "text";
  const input = long ? h("textarea", { class: "textarea", rows: 4 }) : h("input", { class: "input", type });
  if (schema.format && !["email", "uri", "url", "password"].includes(schema.format)) input.placeholder = schema.format;
  if (schema.examples?.length) input.placeholder = String(schema.examples[0]);
  input.addEventListener("input", () => ctx.onChange());
  const f = frame(schema, path, opts, input);
  const set = (v) => {
    input.value = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
  };
  set(schema.default);
  return {
    el: f.el,
    // Empty means "not given", required or not: validation reports a missing required value.
    get: () => (input.value === "" ? { present: false } : { present: true, value: input.value }),
    set,
    validate: (silent) => f.showErrors(silent ? [] : stringErrors(schema, input.value, opts)),
  };
}

function numberField(schema, path, ctx, opts) {
  const integer = isIntegerSchema(schema);
  const input = h("input", {
    class: "input",
    type: "number",
    step: integer ? "1" : "any",
    inputMode: integer ? "numeric" : "decimal",
  });
  if (schema.minimum !== undefined) input.min = schema.minimum;
  if (schema.maximum !== undefined) input.max = schema.maximum;
  input.addEventListener("input", () => ctx.onChange());
  const f = frame(schema, path, opts, input);
  const set = (v) => {
    input.value = typeof v === "number" ? String(v) : v === undefined || v === null ? "" : String(v);
  };
  set(schema.default);
  const parse = () => parseNumber(input.value);
  return {
    el: f.el,
    get() {
      const n = parse();
      // An unfinished number (e.g. "-") is left out rather than sent as text.
      return n === undefined || Number.isNaN(n) ? { present: false } : { present: true, value: n };
    },
    set,
    validate: (silent) =>
      f.showErrors(silent ? [] : numberErrors(schema, parse(), { ...opts, badInput: input.validity.badInput })),
  };
}

function booleanField(schema, path, ctx, opts) {
  const input = h("input", { type: "checkbox" });
  input.addEventListener("change", () => {
    touched = true;
    ctx.onChange();
  });
  let touched = false;
  const f = frame(schema, path, opts, input, { inlineLabel: true });
  const set = (v) => {
    input.checked = v === true;
    touched = v !== undefined;
  };
  set(schema.default);
  touched = schema.default !== undefined;
  return {
    el: f.el,
    // An optional box nobody touched is left out, so the server's own default applies.
    get: () =>
      touched || opts.required || input.checked ? { present: true, value: input.checked } : { present: false },
    set,
    validate: () => f.showErrors([]),
  };
}

function enumField(schema, path, ctx, opts) {
  const choices = choicesOf(schema);
  const values = choices.map((c) => c.value);
  const select = h("select", { class: "select" });
  const hasDefault = schema.default !== undefined;
  if (!opts.required || !hasDefault)
    select.append(h("option", { value: "", text: opts.required ? "Choose…" : "— not set —" }));
  select.append(...choices.map((c, i) => h("option", { value: String(i), text: c.label })));
  select.addEventListener("change", () => ctx.onChange());
  const f = frame(schema, path, opts, select);
  const set = (v) => {
    const i = enumIndex(values, v);
    select.value = i >= 0 ? String(i) : "";
  };
  set(schema.default);
  return {
    el: f.el,
    get: () => (select.value === "" ? { present: false } : { present: true, value: values[Number(select.value)] }),
    set,
    validate: (silent) => f.showErrors(!silent && select.value === "" && opts.required ? ["Choose a value."] : []),
  };
}

function constField(schema, path, _ctx, opts) {
  const out = h("output", { class: "input code readonly", text: JSON.stringify(schema.const) });
  const f = frame(schema, path, opts, out);
  return { el: f.el, get: () => ({ present: true, value: schema.const }), set() {}, validate: () => f.showErrors([]) };
}

/** Raw JSON for one value the form cannot express. */
function jsonField(schema, path, ctx, opts) {
  const area = h("textarea", { class: "textarea code", rows: 3, spellcheck: "false", placeholder: "JSON value" });
  area.addEventListener("input", () => ctx.onChange());
  const f = frame(
    { ...schema, description: [schema.description, "Enter JSON."].filter(Boolean).join(" ") },
    path,
    opts,
    area,
  );
  const set = (v) => {
    area.value = v === undefined ? "" : JSON.stringify(v, null, 2);
  };
  set(schema.default);
  const parse = () => parseJson(area.value);
  return {
    el: f.el,
    get() {
      if (!area.value.trim()) return { present: false };
      const p = parse();
      return p.ok ? { present: true, value: p.value } : { present: false };
    },
    set,
    validate: (silent) => f.showErrors(silent ? [] : jsonErrors(area.value, opts)),
  };
}

// ---- containers ------------------------------------------------------------------------

/** The frame around an object, a list or a multiple choice: legend, help, then `content`. */
function fieldset(className, schema, path, opts, ...content) {
  return h(
    "fieldset",
    { class: className, "data-field": path.join(".") },
    h(
      "legend",
      {},
      opts.label ?? path[path.length - 1],
      opts.required ? h("span", { class: "required-mark", text: "*" }) : null,
    ),
    schema.description ? h("div", { class: "field-help", text: schema.description }) : null,
    ...content,
  );
}

function objectField(schema, path, ctx, opts = {}) {
  const props = schema.properties || {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const children = Object.entries(props).map(([key, sub]) => [
    key,
    build(sub, [...path, key], ctx, { required: required.has(key), label: resolve(ctx, sub).title || key }),
  ]);
  let extras = {}; // keys set through raw JSON that the schema does not describe
  const body = h(
    "div",
    { class: "schema-fields" },
    children.map(([, c]) => c.el),
  );
  let el;
  if (opts.isRoot) {
    el = children.length ? body : h("p", { class: "muted", text: "This tool takes no arguments." });
  } else {
    el = fieldset("schema-fieldset", schema, path, opts, body);
  }
  return {
    el,
    get() {
      const value = {};
      let any = false;
      for (const [key, c] of children) {
        const got = c.get();
        if (got.present) {
          value[key] = got.value;
          any = true;
        }
      }
      Object.assign(value, extras); // keys the schema does not describe ride along unchanged
      return any || opts.required || opts.isRoot || Object.keys(extras).length
        ? { present: true, value }
        : { present: false };
    },
    set(v) {
      const obj = v && typeof v === "object" && !Array.isArray(v) ? v : {};
      extras = {};
      for (const [key, val] of Object.entries(obj)) if (!(key in props)) extras[key] = val;
      for (const [key, c] of children) c.set(obj[key]);
    },
    validate(silent) {
      // An optional object left entirely empty is simply absent: its own required fields don't apply.
      const absent = !opts.isRoot && !opts.required && !children.some(([, c]) => c.get().present);
      return children.flatMap(([, c]) => c.validate(silent || absent));
    },
  };
}

function arrayField(schema, path, ctx, opts) {
  const itemSchema = resolve(ctx, Array.isArray(schema.items) ? schema.items[0] || {} : schema.items || {});
  // A list of choices reads better as checkboxes than as a growing list of selects.
  const choices = choicesOf(itemSchema);
  if (choices && schema.uniqueItems !== false) return multiChoiceField(schema, choices, path, ctx, opts);
  const list = h("div", { class: "array-items" });
  const { items, add, set } = arrayItems(list, itemSchema, path, ctx);
  const errorEl = h("div", { class: "field-error", hidden: true });
  const name = path.join(".");
  set(schema.default);
  const addButton = button("Add item", {
    small: true,
    icon: "plus",
    variant: "ghost",
    "data-action": "add-item",
    onclick: () => {
      add();
      ctx.onChange();
    },
  });
  const el = fieldset("schema-fieldset array", schema, path, opts, list, h("div", {}, addButton), errorEl);
  return {
    el,
    get() {
      const value = items.map((e) => e.field.get()).map((g) => (g.present ? g.value : null));
      return value.length ? { present: true, value } : { present: false };
    },
    set,
    validate(silent) {
      const errors = items.flatMap((e) => e.field.validate(silent));
      if (silent) {
        errorEl.hidden = true;
        return [];
      }
      const own = itemCountErrors(schema, items.length, opts);
      errorEl.hidden = !own.length;
      errorEl.textContent = own.join(" ");
      return errors.concat(own.map((message) => ({ path: name, message })));
    },
  };
}

/** The rows of a list field in `list`: each item's field, added, removed by its button, or all replaced (`set`). */
function arrayItems(list, itemSchema, path, ctx) {
  const items = [];
  const add = (value) => {
    const index = items.length;
    const field = build(itemSchema, [...path, String(index)], ctx, { required: true, label: `Item ${index + 1}` });
    if (value !== undefined) field.set(value);
    const entry = {
      field,
      row: arrayRow(field, index, () => {
        remove(entry);
        ctx.onChange();
      }),
    };
    items.push(entry);
    list.append(entry.row);
  };
  const remove = (entry) => {
    items.splice(items.indexOf(entry), 1);
    entry.row.remove();
  };
  const set = (v) => {
    for (const e of [...items]) remove(e);
    clear(list);
    for (const x of Array.isArray(v) ? v : []) add(x);
  };
  return { items, add, set };
}

/** One item of a list: its field and a button that removes it. */
function arrayRow(field, index, onRemove) {
  return h(
    "div",
    { class: "array-item" },
    h("div", { class: "grow" }, field.el),
    iconButton("trash", `Remove item ${index + 1}`, { className: "array-remove", onclick: onRemove }),
  );
}

function multiChoiceField(schema, choices, path, ctx, opts) {
  const name = path.join(".");
  const boxes = choices.map(({ value: v, label }) => {
    const input = h("input", { type: "checkbox", onchange: () => ctx.onChange() });
    return {
      v,
      input,
      el: h("label", { class: "check-row" }, input, h("span", { text: label })),
    };
  });
  const errorEl = h("div", { class: "field-error", hidden: true });
  const set = (v) => {
    const chosen = (Array.isArray(v) ? v : []).map((x) => JSON.stringify(x));
    for (const b of boxes) b.input.checked = chosen.includes(JSON.stringify(b.v));
  };
  set(schema.default);
  const el = fieldset(
    "schema-fieldset",
    schema,
    path,
    opts,
    h(
      "div",
      { class: "choice-grid" },
      boxes.map((b) => b.el),
    ),
    errorEl,
  );
  const chosen = () => boxes.filter((b) => b.input.checked).map((b) => b.v);
  return {
    el,
    get: () => (chosen().length ? { present: true, value: chosen() } : { present: false }),
    set,
    validate(silent) {
      if (silent) {
        errorEl.hidden = true;
        return [];
      }
      const own = choiceCountErrors(schema, chosen().length, opts);
      errorEl.hidden = !own.length;
      errorEl.textContent = own.join(" ");
      return own.map((message) => ({ path: name, message }));
    },
  };
}
