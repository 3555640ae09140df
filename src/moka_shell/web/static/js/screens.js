// The five screens as the rail and the router know them: names and icons here, each screen's
// code in its own module. Chat's and the Tool runner's modules load with the page (the runner
// places the views that have no conversation, which may come at once); the others load once the
// page has said hello (or at once when a link opens one), so the page needs fewer files before
// it answers (docs/performance.md §13).

export const SCREEN_INFO = {
  chat: { id: "chat", title: "Chat", icon: "chat" },
  runner: { id: "runner", title: "Tool runner", label: "Runner", icon: "runner" },
  servers: { id: "servers", title: "Servers", icon: "servers" },
  inspector: { id: "inspector", title: "Inspector", icon: "inspector" },
  settings: { id: "settings", title: "Settings", icon: "settings" },
};

/** The rail's order (Ctrl/Cmd+1…5 follow it). */
export const SCREEN_ORDER = ["chat", "runner", "servers", "inspector", "settings"].map((id) => SCREEN_INFO[id]);

/** The screens that load after the page's hello, or when first wanted. */
export const SCREEN_LOADERS = {
  servers: () => import("./servers/screen.js"),
  inspector: () => import("./inspector/screen.js"),
  settings: () => import("./settings/screen.js"),
};
