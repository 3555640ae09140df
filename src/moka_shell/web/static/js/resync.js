// After the socket comes back, mount the views the core created while it was away: their
// view.created events went to no socket and are gone (finding S2). views.list is the truth.

import { api } from "./api.js";

export function initResync(viewHost) {
  api.on("api.reconnected", async () => {
    let live;
    try {
      live = await api.call("views.list", {});
    } catch {
      return;
    }
    for (const data of live?.views || []) {
      if (data?.viewId && !viewHost.has(data.viewId)) viewHost.mount(data).catch((err) => console.error("resync", err));
    }
  });
}
