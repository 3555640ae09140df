// Desktop notifications while Moka's window is not in front: a turn finished, a tool call or a
// server waits for the person. The desktop app shows them natively (window.notify); a browser tab
// uses the Notification API, and only if the person already allowed it (never asked unprompted).

import { api } from "./api.js";
import { store } from "./store.js";

const away = () => document.hidden || !document.hasFocus();

function show(title, body) {
  if (!away()) return;
  if (store.info?.mode === "desktop") {
    api.call("window.notify", { title, body }).catch(() => {});
  } else if ("Notification" in window && Notification.permission === "granted") {
    const note = new Notification(title, { body, tag: "moka" });
    note.onclick = () => {
      window.focus();
      note.close();
    };
  }
}

/** Listen for the moments worth a notification (main window only). */
export function initNotifications() {
  api.on("chat.done", () => show("Moka", "The reply is ready."));
  api.on("chat.approval", (d) => {
    const call = d?.call || {};
    show("Moka needs your approval", `${call.tool || "A tool"} on ${call.server || "a server"} waits for you.`);
  });
  api.on("elicitation.request", (d) => show("Moka: a server asks you something", d?.message || d?.server || ""));
  api.on("consent.request", (d) =>
    show(
      "Moka needs your answer",
      `${d?.server || "A view"} asks to ${String(d?.action || "act").replace(/[-_]/g, " ")}.`,
    ),
  );
}
