// The first-run card in an empty chat: the configured servers' tools with shortcuts into the
// Tool runner, and the core's own help text when no model backend is set up.

import { h } from "./dom.js";
import { icon } from "./icons.js";
import { button, badge } from "./ui.js";
import { store } from "./store.js";

const MAX_TOOLS = 6;

export function renderWelcome({ navigate }) {
  const settings = store.settings || {};
  const servers = store.servers || [];
  const tools = (store.tools || []).filter((t) => !t.visibility || t.visibility.includes("model") || t.resourceUri);
  const card = h("div", { class: "welcome", id: "welcome", "data-testid": "welcome" },
    h("div", { class: "welcome-hero" },
      h("div", { class: "welcome-mark" }, icon("logo", { size: 30 })),
      h("h2", { text: "Welcome to Moka" }),
      h("p", { class: "muted", text: "Chat with a model that can use your MCP servers' tools — and see their apps right in the conversation." })));

  if (settings.noBackendHelp) {
    card.append(h("div", { class: "notice", id: "no-backend-help", role: "note" },
      icon("info", { size: 18 }),
      h("div", { class: "grow stack" },
        h("strong", { text: "No model backend yet" }),
        h("p", { class: "notice-text", text: settings.noBackendHelp }),
        h("div", { class: "row" }, button("Open Settings", { small: true, icon: "settings", onclick: () => navigate("settings") })))));
  }

  const section = h("div", { class: "welcome-tools" },
    h("div", { class: "row" }, h("h3", { class: "section-title grow", text: "Try your tools — no model needed" })));
  if (!servers.length) {
    section.append(h("p", { class: "muted", text: "No servers are configured yet." }),
      h("div", {}, button("Add a server", { icon: "plus", small: true, onclick: () => navigate("servers") })));
  }
  for (const server of servers) {
    const own = tools.filter((t) => t.server === server.name);
    const group = h("div", { class: "welcome-server" },
      h("div", { class: "welcome-server-head" }, icon("servers", { size: 15 }), h("strong", { text: server.name }),
        server.status !== "ready" ? badge(server.status, server.status === "failed" ? "danger" : "neutral") : null));
    if (!own.length) {
      group.append(h("p", { class: "muted small", text: server.status === "ready" ? "This server has no tools." : "Tools appear once it is ready." }));
    }
    for (const tool of own.slice(0, MAX_TOOLS)) {
      group.append(h("div", { class: "welcome-tool", "data-tool": tool.name },
        h("div", { class: "welcome-tool-icon" }, icon(tool.resourceUri ? "app" : "tool", { size: 16 })),
        h("div", { class: "grow" },
          h("div", { class: "row" }, h("code", { class: "welcome-tool-name", text: tool.name }), tool.resourceUri ? badge("Has app", "accent") : null),
          tool.description ? h("p", { class: "muted small clamp-2", text: tool.description }) : null),
        button("Try it in the Tool runner", {
          small: true, icon: "runner", "data-action": "try-tool",
          onclick: () => navigate("runner", { server: tool.server, tool: tool.name }),
        })));
    }
    if (own.length > MAX_TOOLS) {
      group.append(button(`All ${own.length} tools in the Tool runner`, { small: true, variant: "ghost", onclick: () => navigate("runner", { server: server.name }) }));
    }
    section.append(group);
  }
  card.append(section);
  return card;
}
