// What the composer's "/" and "@" menus list and insert, with no DOM: the query the caret is in,
// the fuzzy ranking, the arguments an item asks for, a resource template filled in, and a
// prompt's messages turned into text and attachments. composer-menu.js shows them.

/** Fuzzy match: every character of `q` in order; a lower score is a better match (0 = prefix). */
export function fuzzy(q, text) {
  q = q.toLowerCase();
  text = text.toLowerCase();
  if (!q) return 1;
  if (text.startsWith(q)) return 0;
  let at = -1;
  let gaps = 0;
  for (const ch of q) {
    const next = text.indexOf(ch, at + 1);
    if (next < 0) return -1;
    gaps += next - at - 1;
    at = next;
  }
  return 1 + gaps;
}

/** The menu the text before the caret opens: {mode: "/" | "@", query, start}, or null. */
export function findTrigger(text, caret = text.length) {
  const before = text.slice(0, caret);
  const slash = /^\/([^\n]*)$/.exec(before);
  if (slash) return { mode: "/", query: slash[1], start: 0 };
  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) return { mode: "@", query: at[2], start: before.length - at[2].length - 1 };
  return null;
}

/** The items that match `query`, best first, at most `limit`. */
export function rankItems(items, query, limit = 30) {
  // The name first; a match only in the description (or URI) ranks after every name match.
  const rank = (it) => {
    const byName = fuzzy(query, it.name || "");
    if (byName >= 0) return byName;
    const other = fuzzy(query, `${it.title || ""} ${it.description || ""} ${it.uri || it.uriTemplate || ""}`);
    return other < 0 ? -1 : 1000 + other;
  };
  return items
    .map((it) => ({ it, score: rank(it) }))
    .filter((x) => x.score >= 0)
    .sort((a, b) => a.score - b.score)
    .slice(0, limit)
    .map((x) => x.it);
}

/**
 * Is this resource something to give the model as context? Not an app's view (a `ui://` resource, or
 * one served as an MCP App's HTML): that is a page for Moka to run, and as context it is only tens of
 * kilobytes of markup the model can do nothing with.
 */
export function offeredAsContext(r) {
  const uri = String(r?.uri || r?.uriTemplate || "");
  return !/^ui:\/\//i.test(uri) && !/profile=mcp-app/i.test(String(r?.mimeType || ""));
}

/** What an item asks for before it is used: a prompt's arguments or a template's variables. */
export function argumentsOf(it) {
  if (it.kind === "prompt") return (it.arguments || []).map((a) => ({ ...a }));
  if (it.kind === "template") return (it.variables || []).map((n) => ({ name: n, required: true }));
  return [];
}

/** A resource template with its variables filled in (each value URI-encoded). */
export function expandTemplate(template, values) {
  return template.replace(/\{([^}]+)\}/g, (_m, name) =>
    encodeURIComponent(values[name.replace(/^[+#./;?&]/, "")] ?? ""),
  );
}

/** Text as base64 of its UTF-8 bytes. */
export function b64(text) {
  const bytes = new TextEncoder().encode(text);
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(out);
}

/** A resource's contents as an attachment, or null when it has neither text nor blob. */
export function resourceAttachment(r) {
  const name = (r.uri || "resource").replace(/^[a-z]+:\/\//i, "").replace(/[/\\]/g, "_") || "resource";
  if (typeof r.text === "string") return { name, mimeType: r.mimeType || "text/plain", data: b64(r.text), uri: r.uri };
  if (typeof r.blob === "string")
    return { name, mimeType: r.mimeType || "application/octet-stream", data: r.blob, uri: r.uri };
  return null;
}

/** A prompt's messages as the composer takes them: {text, attachments}. */
export function promptParts(promptName, messages) {
  const texts = [];
  const attachments = [];
  for (const m of messages || []) {
    const c = m.content || {};
    const who = m.role === "assistant" ? "Assistant (from the prompt): " : "";
    if (c.type === "text") texts.push(who + c.text);
    else if (c.type === "resource" && c.resource) attachments.push(resourceAttachment(c.resource));
    else if (c.type === "image" && c.data)
      attachments.push({
        name: `${promptName}-image.${(c.mimeType || "image/png").split("/")[1]}`,
        mimeType: c.mimeType || "image/png",
        data: c.data,
      });
  }
  return { text: texts.join("\n\n"), attachments: attachments.filter(Boolean) };
}

/** The composer's text with `more` on a line of its own after it. */
export const appendLine = (current, more) =>
  current ? `${current}${current.endsWith("\n") ? "" : "\n"}${more}` : more;
