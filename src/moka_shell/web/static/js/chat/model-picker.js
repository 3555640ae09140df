// The composer's model picker: which backend and model answer in this conversation (remembered
// with it), and its own system prompt. A new chat keeps the choice here until its first message
// creates the conversation; an existing one is changed at once (conversations.configure).

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { button, toastError } from "../ui.js";
import { store } from "../store.js";
import { chosenModel, defaultModelText, effectiveModel, modelLabel } from "./model-choice.js";

/** The backend choice: the Settings default first, then every backend. */
function backendSelect(list, agent, o) {
  const select = h(
    "select",
    { class: "select", id: "composer-backend", "aria-label": "Backend" },
    h("option", {
      value: "",
      text: `Settings default (${list.find((b) => b.id === agent.backend)?.name || "none"})`,
    }),
    list.map((b) => h("option", { value: b.id, text: b.name })),
  );
  select.value = o.backend || "";
  return select;
}

/** The model: a list when the backend's models are known, else a text field (with suggestions). */
function modelFields(current, e, o) {
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
  if (!models.length) return { modelIn, datalist, modelSel: null };
  const modelSel = h(
    "select",
    { class: "select", id: "composer-model-pick", "aria-label": "Model" },
    h("option", { value: "", text: defaultModelText(e, o, current) }),
    models.map((m) => h("option", { value: m, text: m })),
  );
  modelSel.value = chosenModel(e, o, models);
  modelIn.hidden = true;
  return { modelIn, datalist, modelSel };
}

function promptField(agent, o) {
  const prompt = h("textarea", {
    class: "input model-pop-prompt",
    id: "composer-system",
    rows: 3,
    "aria-label": "System prompt",
    placeholder: agent.systemPrompt
      ? `Settings: ${agent.systemPrompt.slice(0, 80)}`
      : "Optional: how the model should behave in this conversation",
  });
  prompt.value = o.systemPrompt || "";
  return prompt;
}

/** "List models" for a backend that can list them: asks it, then `onListed`. */
function listModelsButton(current, onListed) {
  if (!current?.canListModels) return null;
  return button("List models", {
    small: true,
    variant: "ghost",
    id: "composer-list-models",
    onclick: async () => {
      try {
        await api.call("settings.testBackend", { backend: current.id });
        await store.refreshSettings();
        onListed();
      } catch (err) {
        toastError(err);
      }
    },
  });
}

/** The popover's contents, in order. */
function popContents(title, { backendSel, modelSel, modelIn, datalist, prompt, listButton }) {
  return [
    h("p", { class: "model-pop-title", text: title }),
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
      listButton,
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
  ];
}

/** The picker's button (with its label) and its popover. */
function pickerFrame() {
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
  return { label, btn, pop };
}

/** The button says what answers, and whether it is this conversation's own choice. */
function showChoice(btn, label, e, own, backends) {
  label.textContent = modelLabel(e, backends);
  btn.classList.toggle("is-own", e.own);
  btn.classList.toggle("has-prompt", Boolean(own.systemPrompt));
  btn.title = e.own
    ? "This conversation's own model (click to change)"
    : "The model from Settings (click to choose one for this conversation)";
}

/** Each change in the popover is saved at once; a new backend or model list shows again. */
function saveChanges({ backendSel, modelSel, modelIn, prompt }, { save, render, defaultBackend }) {
  backendSel.addEventListener("change", () => save({ backend: backendSel.value || null, model: null }).then(render));
  // Choosing a model makes the pair the conversation's own: the backend list then shows it too.
  modelSel?.addEventListener("change", () =>
    save({ backend: backendSel.value || defaultBackend(), model: modelSel.value || null }).then(render),
  );
  modelIn.addEventListener("change", () =>
    save({ backend: backendSel.value || defaultBackend(), model: modelIn.value.trim() || null }),
  );
  prompt.addEventListener("change", () => save({ systemPrompt: prompt.value.trim() || null }));
}

/** A press outside the picker closes it; so does Escape in it (focus goes back to the button). */
function closeOutside(el, btn, pop, close) {
  document.addEventListener("mousedown", (e) => {
    if (!pop.hidden && !el.contains(e.target)) close();
  });
  pop.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      close();
      btn.focus();
    }
  });
}

/** Where the choice is kept: the open conversation's settings (saved at once), or, before the new chat's
 * first send, a draft; `changed` runs after each save. */
function pickerChoice(getConv, changed) {
  let draft = {}; // the unsent chat's choice: {backend, model, systemPrompt}
  const own = () => {
    const conv = getConv();
    return conv?.id ? conv.settings || {} : draft;
  };

  async function save(values) {
    const conv = getConv();
    if (!conv?.id) {
      draft = { ...draft, ...values };
      changed();
      return;
    }
    try {
      const res = await api.call("conversations.configure", { id: conv.id, ...values });
      conv.settings = res.settings || {};
    } catch (err) {
      toastError(err);
    }
    changed();
  }

  /** For a new chat's first send: the choice made before the conversation existed (then forgotten). */
  function takeDraft() {
    const d = draft;
    draft = {};
    return d;
  }

  return { own, save, takeDraft };
}

export function createModelPicker({ getConv }) {
  const { label, btn, pop } = pickerFrame();
  const el = h("div", { class: "model-pick-wrap" }, btn, pop);
  const { own, save, takeDraft } = pickerChoice(getConv, () => sync());
  const backends = () => store.settings?.backends || [];
  const agent = () => store.settings?.agent || {};

  /** What answers now: the conversation's own pair, else the Settings default. */
  const effective = () => effectiveModel(own(), { backends: backends(), agent: agent() });

  function sync() {
    showChoice(btn, label, effective(), own(), backends());
  }

  function render() {
    const o = own();
    const list = backends();
    const backendSel = backendSelect(list, agent(), o);
    const current = list.find((b) => b.id === (backendSel.value || agent().backend));
    const { modelIn, datalist, modelSel } = modelFields(current, effective(), o);
    const prompt = promptField(agent(), o);
    saveChanges({ backendSel, modelSel, modelIn, prompt }, { save, render, defaultBackend: () => agent().backend });
    const fields = { backendSel, modelSel, modelIn, datalist, prompt, listButton: listModelsButton(current, render) };
    clear(pop).append(...popContents(getConv()?.id ? "This conversation" : "The new conversation", fields));
  }

  function open(show = pop.hidden) {
    if (show) render();
    pop.hidden = !show;
    btn.setAttribute("aria-expanded", String(show));
    if (show) pop.querySelector("select, input")?.focus();
  }
  btn.addEventListener("click", () => open());
  closeOutside(el, btn, pop, () => open(false));
  store.on("settings", sync);

  return {
    el,
    sync,
    close: () => open(false),
    takeDraft,
  };
}
