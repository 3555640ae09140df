// The small form the "/" and "@" menus open for a prompt's arguments or a resource template's
// variables, each field with the server's completions (completions.js) as you type.

import { completionList } from "../completions.js";
import { h } from "../dom.js";
import { button } from "../ui.js";

/** One argument's field and its list of the server's completions. */
function argumentField(it, a, values) {
  const field = h("input", {
    class: "input",
    name: a.name,
    autocomplete: "off",
    required: Boolean(a.required),
    placeholder: a.description || a.name,
    "aria-label": a.title || a.name,
  });
  const ref =
    it.kind === "prompt" ? { type: "ref/prompt", name: it.name } : { type: "ref/resource", uri: it.uriTemplate };
  const list = completionList(it.server, ref, field, values, `slash-arg-${a.name}`);
  return { field, list };
}

/** Submit on Enter (unless a completion list is open), cancel on Escape. */
function formKeys(form, submit, cancel) {
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  form.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      cancel();
    }
    if (e.key === "Enter" && !e.isComposing && !e.target.list?.options?.length) {
      e.preventDefault();
      submit();
    }
  });
}

/** Ask for `args` of item `it` in `box`; resolves to {name: value}, or null when cancelled. */
export function askArguments(box, it, args) {
  return new Promise((resolve) => {
    const form = h("form", { class: "slash-form", id: "slash-form" });
    const fields = {};
    const values = () => Object.fromEntries(Object.entries(fields).map(([k, el]) => [k, el.value.trim()]));
    for (const a of args) {
      const { field, list } = argumentField(it, a, values);
      fields[a.name] = field;
      form.append(h("label", { class: "field-label", text: a.title || a.name }), field, list);
    }
    const done = (value) => {
      wrap.remove();
      resolve(value);
    };
    const submit = () => {
      if (form.reportValidity()) done(values());
    };
    const wrap = h(
      "div",
      { class: "slash-args", role: "dialog", "aria-label": `Arguments of ${it.name}` },
      h("p", {
        class: "slash-head",
        text: it.kind === "prompt" ? `/${it.name} · ${it.server}` : `${it.name} · ${it.server}`,
      }),
      form,
      h(
        "div",
        { class: "row slash-form-actions" },
        button("Cancel", { small: true, variant: "ghost", onclick: () => done(null) }),
        button(it.kind === "prompt" ? "Insert" : "Attach", {
          small: true,
          variant: "primary",
          id: "slash-submit",
          onclick: submit,
        }),
      ),
    );
    formKeys(form, submit, () => done(null));
    box.append(wrap);
    Object.values(fields)[0]?.focus();
  });
}
