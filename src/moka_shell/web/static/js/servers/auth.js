// OAuth on a server's card: "Sign in required", a Sign in button and Sign out (docs/bridge-api.md,
// servers.login / servers.logout). Browser mode opens the authorization page in a popup; the
// desktop app has the core open the system browser. The popup comes back to Moka's loopback
// receiver, which closes it; the card turns ready on the servers.changed that follows.

import { api } from "../api.js";
import { h } from "../dom.js";
import { button, openDialog, toast, toastError } from "../ui.js";
import { store } from "../store.js";

const waiting = new Set(); // servers whose sign-in page is open

/** The status badge's words ("signin" is "sign in required"). */
export function statusLabel(status) {
  return status === "signin" ? "sign in required" : status;
}

/** The card's Sign in / Sign out button, or null for a server Moka does not sign in to. */
export function authButton(s) {
  // "step-up": signed in, but an operation needed more access (403 insufficient_scope); a new
  // sign-in asks for it.
  if (s.status === "signin" || s.auth === "step-up") {
    const label = waiting.has(s.name)
      ? "Waiting for sign-in…"
      : s.status === "signin"
        ? "Sign in"
        : "Sign in for more access";
    const btn = button(label, { small: true, icon: "key", variant: "primary", "data-action": "sign-in" });
    btn.addEventListener("click", () => signIn(s.name, btn));
    return btn;
  }
  if (s.auth === "signed-in") {
    const btn = button("Sign out", { small: true, icon: "key", "data-action": "sign-out" });
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      try {
        await api.call("servers.logout", { name: s.name });
        toast(`Signed out of ${s.name}.`, { tone: "success" });
      } catch (err) {
        toastError(err);
      } finally {
        btn.disabled = false;
        store.refreshServers();
      }
    });
    return btn;
  }
  return null;
}

async function signIn(name, btn, clientId) {
  const inBrowser = store.info?.mode !== "desktop";
  // Opened now, inside the click, so no popup blocker stops it; it gets the URL when the core has one.
  const popup = inBrowser ? window.open("", `moka-sign-in-${name}`, "popup,width=560,height=720") : null;
  if (popup) popup.document.title = `Signing in to ${name}…`;
  btn.disabled = true;
  try {
    const { url, needsClientId } = await api.call("servers.login", clientId ? { name, clientId } : { name });
    if (needsClientId) {
      popup?.close();
      const id = await askClientId(name);
      if (id) await signIn(name, btn, id);
      return;
    }
    waiting.add(name);
    btn.querySelector("span").textContent = "Waiting for sign-in…";
    if (inBrowser && popup && !popup.closed) popup.location.href = url;
    else if (inBrowser) linkDialog(name, url);
  } catch (err) {
    popup?.close();
    toastError(err);
  } finally {
    btn.disabled = false;
  }
}

// A server that lets no client register itself: the person enters the client id its owner gave.
function askClientId(name) {
  return new Promise((resolve) => {
    let answer = null;
    const input = h("input", {
      class: "input code",
      id: "sign-in-client-id",
      autocomplete: "off",
      spellcheck: "false",
    });
    const submit = () => {
      answer = input.value.trim() || null;
      dlg.close();
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        submit();
      }
    });
    const dlg = openDialog({
      title: `Client ID for ${name}`,
      id: "sign-in-client-dialog",
      body: h(
        "div",
        { class: "stack" },
        h("p", {
          class: "dialog-text",
          text:
            `${name} does not let Moka register itself. Ask its owner for a client ID (a public client ` +
            "with the redirect URI http://127.0.0.1/callback) and enter it here.",
        }),
        h("label", { class: "field" }, h("span", { class: "field-label", text: "Client ID" }), input),
      ),
      actions: [
        button("Cancel", { onclick: () => dlg.close() }),
        button("Sign in", { variant: "primary", id: "sign-in-client-go", onclick: submit }),
      ],
      onClose: () => resolve(answer),
    });
    input.focus();
  });
}

// When the popup was blocked: a link the person can open themselves.
function linkDialog(name, url) {
  const dlg = openDialog({
    title: `Sign in to ${name}`,
    id: "sign-in-dialog",
    body: h(
      "div",
      { class: "stack" },
      h("p", {
        class: "dialog-text",
        text: "Your browser blocked the sign-in window. Open the sign-in page, then come back here.",
      }),
      h("a", {
        class: "btn btn-primary",
        href: url,
        target: "_blank",
        rel: "noopener",
        text: "Open the sign-in page",
        onclick: () => dlg.close(),
      }),
    ),
    actions: [button("Close", { onclick: () => dlg.close() })],
  });
}

api.on("servers.signin", (d) => {
  waiting.delete(d.name);
  if (d.needsClientId) return; // the Client ID dialog is already asking
  if (d.ok) toast(`Signed in to ${d.name}.`, { tone: "success" });
  else toastError(new Error(d.error || `Signing in to ${d.name} failed.`));
  store.refreshServers();
});
