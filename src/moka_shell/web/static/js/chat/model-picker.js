// The composer's model picker: which backend and model answer in this conversation (remembered
// with it), and its own system prompt. A new chat keeps the choice here until its first message
// creates the conversation; an existing one is changed at once (conversations.configure).

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { button, toastError } from "../ui.js";
import { store } from "../store.js";

export function createModelPicker({ getConv }) {
  let draft = {}; // the unsent chat's choice: {backend, model, systemPrompt}
  const label = h("span", { class: "model-pick-label", text: "Model" });
  const btn = h(
    "button",
    {
      type: "button",
      class: "model-pick",
      id: "composer-model",
      "aria-haspopup": "dialog",
      "aria-expanded": "false",
      title: "The model of this conversation",
    },
    icon("sparkle", { size: 14 }),
    label,
    icon("chevronDown", { size: 13 }),
  );
  const pop = h("div", {
    class: "model-pop",
    id: "composer-model-pop",
    role: "dialog",
    "aria-label": "Model of this conversation",
    hidden: true,
  });
  const el = h("div", { class: "model-pick-wrap" }, btn, pop);

  const own = () => {
    const conv = getConv();
    return conv?.id ? conv.settings || {} : draft;
  };
  const backends = () => store.settings?.backends || [];
  const agent = () => store.settings?.agent || {};

  /** What answers now: the conversation's own pair, else the Settings default. */
  function effective() {
    const o = own();
    if (o.backend)
      return {
        backend: o.backend,
        model: o.model || backends().find((b) => b.id === o.backend)?.defaultModel || "",
        own: true,
      };
    const b = agent().backend;
    return { backend: b, model: agent().model || backends().find((x) => x.id === b)?.defaultModel || "", own: false };
  }

  function sync() {
    const e = effective();
    const name = backends().find((b) => b.id === e.backend)?.name || e.backend;
    label.textContent = e.backend ? `${name}${e.model ? ` · ${e.model}` : ""}` : "No model";
    btn.classList.toggle("is-own", e.own);
    btn.classList.toggle("has-prompt", Boolean(own().systemPrompt));
    btn.title = e.own
      ? "This conversation's own model (click to change)"
      : "The model from Settings (click to choose one for this conversation)";
  }

  async function save(values) {
    const conv = getConv();
    if (!conv?.id) {
      draft = { ...draft, ...values };
      sync();
      return;
    }
    try {
      const res = await api.call("conversations.configure", { id: conv.id, ...values });
      conv.settings = res.settings || {};
    } catch (err) {
      toastError(err);
    }
    sync();
  }

  function render() {
    const o = own();
    const e = effective();
    const list = backends();
    const backendSel = h(
      "select",
      { class: "select", id: "composer-backend", "aria-label": "Backend" },
      h("option", {
        value: "",
        text: `Settings default (${list.find((b) => b.id === agent().backend)?.name || "none"})`,
      }),
      list.map((b) => h("option", { value: b.id, text: b.name })),
    );
    backendSel.value = o.backend || "";
    const current = list.find((b) => b.id === (backendSel.value || agent().backend));
    const models = current?.models || [];
    const modelIn = h("input", {
      class: "input",
      id: "composer-model-name",
      list: "composer-model-list",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: current?.defaultModel || "model name",
      value: o.backend ? o.model || "" : "",
    });
    const datalist = h(
      "datalist",
      { id: "composer-model-list" },
      models.map((m) => h("option", { value: m })),
    );
    const modelSel = models.length
      ? h(
          "select",
          { class: "select", id: "composer-model-pick", "aria-label": "Model" },
          h("option", {
            value: "",
            text: current?.defaultModel ? `Default (${current.defaultModel})` : "Choose a model…",
          }),
          models.map((m) => h("option", { value: m, text: m })),
        )
      : null;
    if (modelSel) {
      modelSel.value = models.includes(e.model) && o.backend ? e.model : "";
      modelIn.hidden = true;
    }
    const prompt = h("textarea", {
      class: "input model-pop-prompt",
      id: "composer-system",
      rows: 3,
      "aria-label": "System prompt",
      placeholder: agent().systemPrompt
        ? `Settings: ${agent().systemPrompt.slice(0, 80)}`
        : "Optional: how the model should behave in this conversation",
    });
    prompt.value = o.systemPrompt || "";
    const list_ = current?.canListModels
      ? button("List models", {
          small: true,
          variant: "ghost",
          id: "composer-list-models",
          onclick: async () => {
            try {
              await api.call("settings.testBackend", { backend: current.id });
              await store.refreshSettings();
              render();
            } catch (err) {
              toastError(err);
            }
          },
        })
      : null;
    backendSel.addEventListener("change", () => save({ backend: backendSel.value || null, model: null }).then(render));
    // Choosing a model makes the pair the conversation's own: the backend list then shows it too.
    modelSel?.addEventListener("change", () =>
      save({ backend: backendSel.value || agent().backend, model: modelSel.value || null }).then(render),
    );
    modelIn.addEventListener("change", () =>
      save({ backend: backendSel.value || agent().backend, model: modelIn.value.trim() || null }),
    );
    prompt.addEventListener("change", () => save({ systemPrompt: prompt.value.trim() || null }));
    clear(pop).append(
      h("p", { class: "model-pop-title", text: getConv()?.id ? "This conversation" : "The new conversation" }),
      h("label", { class: "field-label", for: "composer-backend", text: "Backend" }),
      backendSel,
      h(
        "div",
        { class: "row model-pop-row" },
        h("label", {
          class: "field-label grow",
          for: modelSel ? "composer-model-pick" : "composer-model-name",
          text: "Model",
        }),
        list_,
      ),
      modelSel,
      modelIn,
      datalist,
      h("label", { class: "field-label", for: "composer-system", text: "System prompt" }),
      prompt,
      h("p", {
        class: "field-help",
        text: "Remembered with this conversation; Settings → Model sets the default for new ones.",
      }),
    );
  }

  function open(show = pop.hidden) {
    if (show) render();
    pop.hidden = !show;
    btn.setAttribute("aria-expanded", String(show));
    if (show) pop.querySelector("select, input")?.focus();
  }
  btn.addEventListener("click", () => open());
  document.addEventListener("mousedown", (e) => {
    if (!pop.hidden && !el.contains(e.target)) open(false);
  });
  pop.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      open(false);
      btn.focus();
    }
  });
  store.on("settings", sync);

  return {
    el,
    sync,
    close: () => open(false),
    /** For a new chat's first send: the choice made before the conversation existed (then forgotten). */
    takeDraft() {
      const d = draft;
      draft = {};
      return d;
    },
  };
}
