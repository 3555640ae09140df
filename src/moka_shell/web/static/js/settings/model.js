// Settings → Model: the backend, where it lives (Base URL, with where the value comes from),
// "Test connection" (the endpoint's models, which turn the Model field into a picker) and the
// API key, whose badge says truthfully where the key comes from.

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { button, badge, toast, toastError } from "../ui.js";
import { store } from "../store.js";
import { modelCount, onlyModel } from "../chat/model-choice.js";

const OTHER = "__other__";
let keyProblem = null; // {backend, message}: the last failed save, shown again after the card re-renders
let typedKey = null; // {backend, value}: what is typed but not saved yet survives a re-render (settings events)

export function row(label, help, control, forId) {
  return h(
    "div",
    { class: "setting-row" },
    h(
      "div",
      { class: "setting-text" },
      h("label", { class: "field-label", for: forId, text: label }),
      help ? (typeof help === "string" ? h("p", { class: "field-help", text: help }) : help) : null,
    ),
    h("div", { class: "setting-control" }, control),
  );
}

/** Set one setting in the core; the page shows what the core kept (its answer, or a fresh read). */
export async function set(key, value) {
  try {
    store.set("settings", await api.call("settings.set", { key, value }));
  } catch (err) {
    toastError(err);
    store.refreshSettings();
  }
}

/** Where the base URL in use comes from, in words. */
function urlSource(b) {
  if (b.baseUrlSource === "config") return "Set here (saved in Moka's config file).";
  if (b.baseUrlSource === "env") return `From ${b.baseUrlEnvVar} in the environment. A value set here wins.`;
  if (b.baseUrlSource === "default")
    return `The ${b.name} default${b.baseUrlEnvVar ? `; ${b.baseUrlEnvVar} would override it` : ""}.`;
  const orSet = b.baseUrlEnvVar ? ` (or set ${b.baseUrlEnvVar})` : "";
  return `Required: the address of the server's OpenAI-style API, e.g. http://127.0.0.1:8000/v1${orSet}.`;
}

/** "Reset": forget the Base URL set here (the environment's or the default applies again). */
function resetButton(b) {
  return button("Reset", {
    small: true,
    variant: "ghost",
    id: "settings-base-url-reset",
    title: b.baseUrlEnvVar ? `Use ${b.baseUrlEnvVar} or the default again` : "Use the default again",
    onclick: async () => {
      try {
        store.set("settings", await api.call("settings.baseUrl", { backend: b.id, url: "" }));
      } catch (err) {
        toastError(err);
      }
    },
  });
}

/** "Test connection": lists the endpoint's models (a URL that works is saved), says how it went. */
function testButton(b, input, testStatus, save) {
  const test = button("Test connection", { small: true, id: "settings-test", icon: "link" });
  test.disabled = !b.canListModels;
  if (!b.canListModels) test.title = `${b.name} can't list its models`;
  test.addEventListener("click", async () => {
    test.disabled = true;
    testStatus.replaceChildren(h("span", { class: "muted small", text: "Connecting…" }));
    try {
      const res = await api.call("settings.testBackend", { backend: b.id, baseUrl: input.value.trim() || undefined });
      // An endpoint that serves one model, with none chosen yet: that one is the model in use.
      const only = onlyModel(res.models, store.settings?.agent?.model, b.defaultModel);
      testStatus.replaceChildren(
        badge(`Connected · ${modelCount(res.models.length)}${only ? ` · using ${only}` : ""}`, "success", {
          class: "badge badge-success badge-dot",
          id: "settings-test-ok",
        }),
      );
      if (input.value.trim() && input.value.trim() !== (b.baseUrl || "")) await save();
      if (only) await set("agent.model", only);
      await store.refreshSettings();
    } catch (err) {
      testStatus.replaceChildren(
        h("p", { class: "field-error", id: "settings-test-error", role: "alert", text: err.message }),
      );
    } finally {
      test.disabled = false;
    }
  });
  return test;
}

function baseUrlRow(b, testStatus) {
  const input = h("input", {
    class: "input",
    id: "settings-base-url",
    type: "url",
    value: b.baseUrl || "",
    placeholder: b.defaultBaseUrl || "http://127.0.0.1:8000/v1",
    autocomplete: "off",
    spellcheck: "false",
  });
  const save = async () => {
    const url = input.value.trim();
    if (url === (b.baseUrl || "") && (url || b.baseUrlSource !== "config")) return;
    try {
      store.set("settings", await api.call("settings.baseUrl", { backend: b.id, url }));
    } catch (err) {
      toastError(err);
    }
  };
  input.addEventListener("change", save);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    }
  });
  const reset = b.baseUrlSource === "config" ? resetButton(b) : null;
  const test = testButton(b, input, testStatus, save);
  const help = h(
    "div",
    {},
    h("p", { class: "field-help", id: "settings-base-url-source", "data-source": b.baseUrlSource, text: urlSource(b) }),
    testStatus,
  );
  return row(
    "Base URL",
    help,
    h("div", { class: "stack" }, input, h("div", { class: "row" }, test, reset)),
    "settings-base-url",
  );
}

function modelRow(b, agent) {
  const current = agent.model || "";
  const text = h("input", {
    class: "input",
    id: "settings-model",
    value: current,
    placeholder: b.defaultModel || "model name",
    autocomplete: "off",
    spellcheck: "false",
  });
  const saveText = () => {
    if (text.value.trim() !== current) set("agent.model", text.value.trim() || null);
  };
  text.addEventListener("change", saveText);
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter") saveText();
  });
  const help = b.defaultModel
    ? `Leave empty for ${b.defaultModel}.`
    : "The model id the endpoint expects; Test connection lists them.";
  const models = b.models || [];
  if (!models.length) return row("Model", help, text, "settings-model");
  // The endpoint told us its models: a picker, with a way to type one it did not list.
  const known = models.includes(current);
  const pick = h(
    "select",
    { class: "select", id: "settings-model-pick" },
    b.defaultModel && !models.includes(b.defaultModel)
      ? null
      : h("option", { value: "", text: b.defaultModel ? `Default (${b.defaultModel})` : "Choose a model…" }),
    models.map((m) => h("option", { value: m, text: m })),
    h("option", { value: OTHER, text: "Other (type a name)…" }),
  );
  pick.value = known ? current : current ? OTHER : "";
  text.hidden = pick.value !== OTHER;
  pick.addEventListener("change", () => {
    if (pick.value === OTHER) {
      text.hidden = false;
      text.focus();
      return;
    }
    text.hidden = true;
    set("agent.model", pick.value || null);
  });
  return row(
    "Model",
    `${modelCount(models.length)} at this endpoint.`,
    h("div", { class: "stack" }, pick, text),
    "settings-model-pick",
  );
}

/** The key's badge: where the key really comes from, and a Remove only for a key Moka stored. */
function keyStatus(b) {
  if (b.keySource === "env") {
    return [
      badge(`From ${b.keyEnvVar}`, "success", {
        class: "badge badge-success badge-dot",
        id: "settings-key-source",
        "data-source": "env",
      }),
      b.keyInKeyring
        ? h("span", { class: "muted small", text: "A key in the keyring is not used while it is set." })
        : null,
    ];
  }
  if (b.keySource === "keyring")
    return [
      badge("Stored in the keyring", "success", {
        class: "badge badge-success badge-dot",
        id: "settings-key-source",
        "data-source": "keyring",
      }),
    ];
  return [
    badge(b.needsKey ? "No key" : "No key (optional)", b.needsKey ? "warning" : "neutral", {
      id: "settings-key-source",
      "data-source": "none",
    }),
  ];
}

/** Store the typed key in the keyring; the field is emptied either way, a problem stays shown. */
async function storeKey(b, input, save, problem) {
  if (!input.value.trim()) {
    input.focus();
    return;
  }
  save.disabled = true;
  problem.hidden = true;
  keyProblem = null;
  try {
    await api.call("keys.set", { backend: b.id, key: input.value.trim() });
    toast("Key stored in your system keyring", { tone: "success" });
  } catch (err) {
    keyProblem = { backend: b.id, message: err.message };
    problem.textContent = err.message;
    problem.hidden = false;
  } finally {
    input.value = ""; // never left in the page, stored or not
    typedKey = null;
    save.disabled = false;
    await store.refreshSettings().catch(() => {});
  }
}

function keyRow(b) {
  const input = h("input", {
    class: "input",
    id: "settings-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    placeholder:
      b.keySource === "keyring"
        ? "•••••••• (stored)"
        : b.keySource === "env"
          ? `Using ${b.keyEnvVar}`
          : "Paste your API key",
  });
  if (typedKey?.backend === b.id) input.value = typedKey.value;
  input.addEventListener("input", () => {
    typedKey = input.value ? { backend: b.id, value: input.value } : null;
  });
  const problem = h("p", {
    class: "field-error",
    id: "settings-key-error",
    role: "alert",
    hidden: keyProblem?.backend !== b.id,
    text: keyProblem?.backend === b.id ? keyProblem.message : "",
  });
  const save = button("Save key", { small: true, variant: "primary", id: "settings-key-save" });
  const remove = b.keyInKeyring
    ? button(b.keySource === "env" ? "Remove stored key" : "Remove", {
        small: true,
        variant: "ghost",
        id: "settings-key-delete",
      })
    : null;
  save.addEventListener("click", () => storeKey(b, input, save, problem));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") save.click();
  });
  remove?.addEventListener("click", async () => {
    try {
      await api.call("keys.delete", { backend: b.id });
      await store.refreshSettings();
    } catch (err) {
      toastError(err);
    }
  });
  const envFirst = b.keyEnvVar ? ` ${b.keyEnvVar} in the environment is used first.` : "";
  const help = `Kept in your operating system's keyring, never in Moka's files.${envFirst}`;
  return row(
    "API key",
    help,
    h(
      "div",
      { class: "stack" },
      h("div", { class: "row" }, input, save),
      h("div", { class: "row", id: "settings-key-status" }, keyStatus(b), remove),
      problem,
    ),
    "settings-key",
  );
}

/** The Model card's rows. `testStatus` survives re-renders, so a test's answer stays in view. */
export function modelRows(s, testStatus) {
  const backends = s.backends || [];
  const agent = s.agent || {};
  const current = backends.find((b) => b.id === agent.backend);
  const backendSel = h(
    "select",
    {
      class: "select",
      id: "settings-backend",
      onchange: (e) => {
        testStatus.replaceChildren();
        set("agent.backend", e.target.value || null);
      },
    },
    h("option", { value: "", text: "None (Tool runner only)" }),
    // `available` means a local model server answered just now (Ollama, LM Studio…).
    backends.map((b) =>
      h("option", { value: b.id, text: b.available ? `${b.name} — running on this computer` : b.name }),
    ),
  );
  backendSel.value = agent.backend || "";
  const parts = [row("Backend", "Which service answers in the chat.", backendSel, "settings-backend")];
  if (current) {
    parts.push(baseUrlRow(current, testStatus), modelRow(current, agent));
    if (current.acceptsKey) parts.push(keyRow(current));
  } else if (s.noBackendHelp) {
    // The core's help text is for the CLI (backticks, "open Settings"); here the person is in Settings.
    const local = backends.filter((b) => b.available).map((b) => b.name);
    parts.push(
      h(
        "div",
        { class: "notice", id: "settings-no-backend" },
        icon("info", { size: 16 }),
        h("p", {
          class: "notice-text",
          text:
            "Pick a backend above to chat. A local one (Ollama, LM Studio) needs no key; " +
            "a hosted one asks for its key here." +
            (local.length ? ` Running on this computer now: ${local.join(", ")}.` : ""),
        }),
      ),
    );
  }
  return parts;
}
