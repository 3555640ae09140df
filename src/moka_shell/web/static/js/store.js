// Shared state several screens read: app info, settings, servers and their tools.
// One place fetches it and tells subscribers, so screens never disagree.

import { api } from "./api.js";
import { debounce } from "./dom.js";

const subscribers = new Map(); // key -> Set(fn)

export const store = {
  info: null, // app.info result
  settings: null, // Settings
  servers: [], // [ServerInfo]
  serversLoaded: false, // the list above came from the core (an empty one means no servers)
  tools: [], // [ToolInfo]
  toolsLoaded: false,

  on(key, fn) {
    if (!subscribers.has(key)) subscribers.set(key, new Set());
    subscribers.get(key).add(fn);
    return () => subscribers.get(key).delete(fn);
  },

  set(key, value) {
    this[key] = value;
    for (const fn of subscribers.get(key) || []) {
      try {
        fn(value);
      } catch (err) {
        console.error(err);
      }
    }
  },

  async refreshSettings() {
    this.set("settings", await api.call("settings.get"));
    return this.settings;
  },

  async refreshServers() {
    const servers = (await api.call("servers.list")) || [];
    this.serversLoaded = true;
    this.set("servers", servers);
    refreshToolsSoon();
  },

  async refreshTools() {
    try {
      this.toolsLoaded = true;
      this.set("tools", (await api.call("tools.list", {})) || []);
    } catch (err) {
      console.warn("tools.list failed", err);
    }
  },

  /** The registered display modes, never empty (inline always exists). */
  displayModes() {
    const modes = this.settings?.displayModes;
    return modes?.length ? modes : [{ id: "inline", label: "Inline", wireMode: "inline", builtin: true }];
  },
};

// Tool lists change when servers connect; batch the bursts of servers.changed events.
const refreshToolsSoon = debounce(() => store.refreshTools(), 250);

api.on("servers.changed", (servers) => {
  store.serversLoaded = true;
  store.set("servers", servers || []);
  refreshToolsSoon();
});
// The desktop answers its page before the servers' entries are loaded: problems found then come later.
api.on("app.problems", (problems) => {
  if (store.info && Array.isArray(problems)) store.set("info", { ...store.info, problems });
});
