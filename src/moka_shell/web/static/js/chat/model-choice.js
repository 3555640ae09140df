// Which backend and model answer in a conversation, with no DOM: the conversation's own choice
// ({backend, model, systemPrompt}) over the Settings default. model-picker.js shows it.

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
