// "Save this view's session": the Inspector's button that downloads a view's recording
// (core/views/recording.py), to attach to a bug report or replay with `moka replay FILE`.

import { api } from "../api.js";
import { downloadBlob } from "../dom.js";
import { button, toast, toastError } from "../ui.js";

/** The button for the view `viewId`. */
export function saveSessionButton(viewId) {
  const btn = button("Save this view's session", {
    small: true,
    variant: "ghost",
    icon: "download",
    "data-action": "save-session",
    title:
      "One JSON file: the app's HTML, its input and result, its storage and every message, secrets redacted. " +
      "Replay it with `moka replay FILE`.",
  });
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    try {
      const { filename, recording } = await api.call("views.record", { viewId });
      downloadBlob(filename, new Blob([JSON.stringify(recording, null, 1)], { type: "application/json" }));
      toast(`Saved ${filename}`);
    } catch (err) {
      toastError(err);
    } finally {
      btn.disabled = false;
    }
  });
  return btn;
}
