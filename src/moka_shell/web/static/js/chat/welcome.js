// The first-run card in an empty chat: three short steps with buttons when no model backend is
// set up yet, then the configured servers' tools with shortcuts into the Tool runner.

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";
import { button, badge, toastError } from "../ui.js";
import { store } from "../store.js";
import { renderInline } from "../markdown/render.js";

const MAX_TOOLS = 6;

export function renderWelcome({ navigate }) {
  const settings = store.settings || {};
  const servers = store.servers || [];
  const tools = (store.tools || []).filter((t) => !t.visibility || t.visibility.includes("model") || t.resourceUri);
  const card = h(
    "div",
    { class: "welcome", id: "welcome", "data-testid": "welcome" },
    h(
      "div",
      { class: "welcome-hero" },
      h("div", { class: "welcome-mark" }, icon("logo", { size: 30 })),
      h("h2", { text: "Welcome to Moka" }),
      h("p", {
        class: "muted",
        text: "Chat with a model that can use your MCP servers' tools — and see their apps right in the conversation.",
      }),
    ),
  );

  if (settings.noBackendHelp) card.append(firstSteps({ navigate, settings, servers }));

  const section = h(
    "div",
    { class: "welcome-tools" },
    h("div", { class: "row" }, h("h3", { class: "section-title grow", text: "Try your tools — no model needed" })),
  );
  if (!servers.length) {
    section.append(
      h("p", { class: "muted", text: "No servers are configured yet." }),
      h("div", {}, button("Add a server", { icon: "plus", small: true, onclick: () => navigate("servers") })),
    );
  }
  for (const server of servers) {
    section.append(
      serverTools(
        server,
        tools.filter((t) => t.server === server.name),
        navigate,
      ),
    );
  }
  card.append(section);
  return card;
}

/** A server's first few tools, each with a shortcut into the Tool runner. */
function serverTools(server, own, navigate) {
  const group = h(
    "div",
    { class: "welcome-server" },
    h(
      "div",
      { class: "welcome-server-head" },
      icon("servers", { size: 15 }),
      h("strong", { text: server.name }),
      server.status !== "ready" ? badge(server.status, server.status === "failed" ? "danger" : "neutral") : null,
    ),
  );
  if (!own.length) {
    group.append(
      h("p", {
        class: "muted small",
        text: server.status === "ready" ? "This server has no tools." : "Tools appear once it is ready.",
      }),
    );
  }
  for (const tool of own.slice(0, MAX_TOOLS)) group.append(toolRow(tool, navigate));
  if (own.length > MAX_TOOLS) {
    group.append(
      button(`All ${own.length} tools in the Tool runner`, {
        small: true,
        variant: "ghost",
        onclick: () => navigate("runner", { server: server.name }),
      }),
    );
  }
  return group;
}

function toolRow(tool, navigate) {
  return h(
    "div",
    { class: "welcome-tool", "data-tool": tool.name },
    h("div", { class: "welcome-tool-icon" }, icon(tool.resourceUri ? "app" : "tool", { size: 16 })),
    h(
      "div",
      { class: "grow" },
      h(
        "div",
        { class: "row" },
        h("code", { class: "welcome-tool-name", text: tool.name }),
        tool.resourceUri ? badge("Has app", "accent") : null,
      ),
      tool.description ? h("p", { class: "muted small clamp-2" }, renderInline(tool.description)) : null,
    ),
    button("Try it in the Tool runner", {
      small: true,
      icon: "runner",
      "data-action": "try-tool",
      onclick: () => navigate("runner", { server: tool.server, tool: tool.name }),
    }),
  );
}

async function chooseBackend(id, navigate, focus) {
  try {
    await api.call("settings.set", { key: "agent.backend", value: id });
    await store.refreshSettings();
  } catch (err) {
    toastError(err);
    return;
  }
  navigate("settings");
  if (focus) requestAnimationFrame(() => document.getElementById(focus)?.focus());
}

function step(number, title, text, ...actions) {
  return h(
    "li",
    { class: "first-step" },
    h("span", { class: "first-step-n", "aria-hidden": "true", text: String(number) }),
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: title }),
      h("p", { class: "muted small", text }),
      actions.length ? h("div", { class: "row" }, ...actions) : null,
    ),
  );
}

/** Step one: a model, with Ollama's button when it is there and OpenAI's key. */
function chooseModelStep(backends, navigate) {
  const ollama = backends.find((b) => b.id === "ollama");
  const openai = backends.find((b) => b.id === "openai");
  const local = backends.filter((b) => b.available).map((b) => b.name);
  return step(
    1,
    "Choose a model",
    local.length
      ? `Found running on this machine: ${local.join(", ")}.`
      : "A local model (Ollama, LM Studio) needs no key; a hosted one needs its API key.",
    ollama
      ? button("Use Ollama", {
          small: true,
          variant: ollama.available ? "primary" : "secondary",
          id: "first-use-ollama",
          onclick: () => chooseBackend("ollama", navigate),
        })
      : null,
    openai
      ? button("Add an OpenAI key", {
          small: true,
          id: "first-add-openai",
          icon: "key",
          onclick: () => chooseBackend("openai", navigate, "settings-key"),
        })
      : null,
  );
}

// Replaces the core's long help text: what to do, in order, each with the button that does it.
function firstSteps({ navigate, settings, servers }) {
  const demo = servers.find((s) => s.name === "moka-demo");
  return h(
    "div",
    { class: "notice first-steps", id: "no-backend-help", role: "note" },
    h(
      "div",
      { class: "grow stack" },
      h("strong", { text: "Three steps to your first chat" }),
      h(
        "ol",
        { class: "first-steps-list" },
        chooseModelStep(settings.backends || [], navigate),
        step(
          2,
          "Try an app, no model needed",
          "The Tool runner calls a server's tool and shows its app right away.",
          button("Try the demo", {
            small: true,
            icon: "runner",
            id: "first-try-demo",
            onclick: () => (demo ? navigate("runner", { server: demo.name, tool: "roll_dice" }) : navigate("runner")),
          }),
        ),
        step(
          3,
          "Add your own servers",
          "Local commands or remote URLs, or import Claude Desktop's config.",
          button("Add a server", {
            small: true,
            icon: "plus",
            id: "first-add-server",
            onclick: () => navigate("servers"),
          }),
        ),
      ),
    ),
  );
}
