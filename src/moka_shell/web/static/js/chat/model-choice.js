// Which backend and model answer in a conversation, with no DOM: the conversation's own choice
// ({backend, model, systemPrompt}) over the Settings default. model-picker.js shows it, and
// settings/model.js the words about an endpoint's models.

/** {backend, model, own}: the conversation's own pair, else the Settings default (agent). */
export function effectiveModel(own, { backends = [], agent = {} } = {}) {
  const defaultOf = (id) => backends.find((b) => b.id === id)?.defaultModel || "";
  if (own.backend) return { backend: own.backend, model: own.model || defaultOf(own.backend), own: true };
  return { backend: agent.backend, model: agent.model || defaultOf(agent.backend), own: false };
}

/** The picker's label: "Backend name · model", or "No model". */
export function modelLabel(effective, backends = []) {
  if (!effective.backend) return "No model";
  const name = backends.find((b) => b.id === effective.backend)?.name || effective.backend;
  return `${name}${effective.model ? ` · ${effective.model}` : ""}`;
}

/** Which model the model list shows as chosen: "" (the default) unless the pair is the conversation's own. */
export const chosenModel = (effective, own, models) =>
  models.includes(effective.model) && own.backend ? effective.model : "";

/**
 * The text of the model list's first entry (the one that picks no model of its own): the model that
 * answers then. Following Settings, that is Settings' model ("Settings default (fake-model)");
 * with a backend of the conversation's own, that backend's default, or a request to choose.
 */
export function defaultModelText(effective, own, backend) {
  if (!own.backend && effective.model) return `Settings default (${effective.model})`;
  return backend?.defaultModel ? `Default (${backend.defaultModel})` : "Choose a model…";
}

/** "1 model", "3 models". */
export const modelCount = (n) => `${n} model${n === 1 ? "" : "s"}`;

/** The model to use after a test listed `models`: the only one, when none is chosen and there is no default. */
export function onlyModel(models, chosen, defaultModel) {
  return !chosen && !defaultModel && models?.length === 1 ? models[0] : null;
}
