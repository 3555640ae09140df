// After the socket comes back, mount the views the core created while it was away: their
// view.created events went to no socket and are gone (finding S2). views.list is the truth.
// The views the page has get the messages they missed meanwhile (finding N2: their tool result
// and host context changes were lost, and they waited forever).

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
      if (!data?.viewId) continue;
      if (viewHost.has(data.viewId)) viewHost.resync(data);
      else viewHost.mount(data).catch((err) => console.error("resync", err));
    }
  });
}
