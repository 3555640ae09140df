// A server's config entry as the Add / Edit dialog reads and writes it, with no DOM: command
// lines split and joined like a shell's quoting, NAME=value and Name: value lines, and the
// entry made from the dialog's fields (or a message saying what to fix).

/** Split a command line like a shell would for quotes: `node "my dir/x.js" --flag`. */
export function splitArgs(text) {
  const out = [];
  let cur = "";
  let quote = null;
  let has = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (/\s/.test(c)) {
      if (cur || has) out.push(cur);
      cur = "";
      has = false;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      has = true;
    } else {
      cur += c;
      has = true;
    }
  }
  if (cur || has) out.push(cur);
  return out;
}

/** The reverse of splitArgs, for showing a command: quote what has spaces or quotes. */
export function joinArgs(parts) {
  return parts.map((p) => (p === "" || /[\s"'\\]/.test(p) ? `"${p.replace(/["\\]/g, "\\$&")}"` : p)).join(" ");
}

/** What a server runs or where it lives, in one line (for its card). */
export function serverTarget(config) {
  if (!config) return "";
  if (config.url) return config.url;
  return joinArgs([config.command || "", ...(config.args || [])]).trim();
}

/** "KEY=value" (or "Name: value") lines into an object. */
export function parsePairs(text, sep) {
  const out = {};
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t || t.startsWith("#")) continue;
    const i = t.indexOf(sep);
    if (i <= 0) throw new Error(`"${t}" should look like NAME${sep}value`);
    out[t.slice(0, i).trim()] = t.slice(i + 1).trim();
  }
  return out;
}

export const pairsText = (obj, sep) =>
  Object.entries(obj || {})
    .map(([k, v]) => `${k}${sep}${v}`)
    .join("\n");

/** The config entry the dialog's fields describe; throws an Error that says what to fix. */
export function configFrom({ name, stdio, command, env, cwd, url, headers, type }) {
  if (!name.trim()) throw new Error("Give the server a name.");
  let config;
  if (stdio) {
    const parts = splitArgs(command.trim());
    if (!parts.length) throw new Error("Enter the command that starts the server.");
    config = { command: parts[0], args: parts.slice(1) };
    const envs = parsePairs(env, "=");
    if (Object.keys(envs).length) config.env = envs;
    if (cwd.trim()) config.cwd = cwd.trim();
  } else {
    if (!/^https?:\/\//.test(url.trim())) throw new Error("The URL must start with http:// or https://.");
    config = { url: url.trim() }; // a URL is streamable HTTP unless `type` names another transport, as in the CLI
    const hs = parsePairs(headers, ":");
    if (Object.keys(hs).length) config.headers = hs;
  }
  if (type.trim()) config.type = type.trim();
  return config;
}
