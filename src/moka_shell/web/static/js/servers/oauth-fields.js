// The Add / Edit dialog's "OAuth client" fold (remote servers): a client id the server's owner gave,
// its secret (kept in the keyring or the owner-only token file, never in the config: the field
// stays empty, and says so when one is stored), and whether a person signs in or the client gets
// tokens by itself (client credentials). servers.setOAuth saves it; the CLI's `moka servers oauth`
// sets the rest (private_key_jwt, cross-app access).

import { api } from "../api.js";
import { h } from "../dom.js";
import { icon } from "../icons.js";

const GRANTS = [
  ["authorization_code", "A person signs in (in the browser)"],
  ["client_credentials", "The client alone: client credentials, no person"],
];

function grantSelect(current) {
  const select = h("select", { class: "input", id: "server-oauth-grant" });
  for (const [value, label] of GRANTS) select.append(h("option", { value, text: label }));
  // A grant only the CLI sets (cross-app access) is shown, so saving keeps it.
  if (!GRANTS.some(([value]) => value === current)) select.append(h("option", { value: current, text: current }));
  select.value = current;
  return select;
}

/** The fold and its inputs, filled from `existing` ({config, oauthSecrets}). */
export function oauthFields(existing, field) {
  const oauth = existing?.config?.oauth || {};
  const stored = (existing?.oauthSecrets || []).includes("clientSecret");
  const clientId = h("input", {
    class: "input code",
    id: "server-oauth-client-id",
    autocomplete: "off",
    placeholder: "(none: Moka registers itself)",
    value: oauth.clientId || "",
  });
  const secret = h("input", {
    class: "input code",
    id: "server-oauth-secret",
    type: "password",
    autocomplete: "new-password",
    placeholder: stored ? "Stored — leave empty to keep it" : "(none: a public client)",
  });
  const grant = grantSelect(oauth.grant || "authorization_code");
  const fold = h(
    "details",
    { class: "fold", id: "server-oauth", open: Boolean(oauth.clientId) },
    h("summary", {}, icon("chevron", { size: 14 }), "OAuth client"),
    h(
      "div",
      { class: "stack" },
      field("Client ID", clientId, "One the server's owner gave you, for servers that let no client register itself."),
      field("Client secret", secret, "Kept in the OS keyring (or a file only you can read), never in the config."),
      field("Tokens", grant, "Client credentials learn the authorization server from the server, and go only there."),
    ),
  );
  return { fold, clientId, secret, grant, oauth };
}

/** Save the fold's values when they changed; returns the core's answer, or null when nothing changed. */
export async function saveOAuth(name, { clientId, secret, grant, oauth }) {
  const id = clientId.value.trim();
  const changed = id !== (oauth.clientId || "") || grant.value !== (oauth.grant || "authorization_code");
  if (!changed && !secret.value) return null;
  const settings = { clientId: id || null, grant: grant.value };
  const secrets = secret.value ? { clientSecret: secret.value } : id ? {} : { clientSecret: null };
  return api.call("servers.setOAuth", { name, oauth: settings, secrets });
}
