// How the Inspector reads one event: its searchable text (spelled as the core spells it), a
// one-line summary, its method, its time, and the filter test the core applies, for live events.

// The same test the core applies, for live events.
export function matches(ev, filters) {
  if (filters.channel && !String(ev.channel || "").startsWith(filters.channel)) return false;
  if (filters.server && ev.server !== filters.server) return false;
  if (filters.view && ev.view !== filters.view) return false;
  if (filters.method && !String(ev.method || ev.request_method || "").includes(filters.method)) return false;
  if (filters.text && !textOf(ev).includes(needle(filters.text))) return false;
  return true;
}

// The core searches the message as Python's json.dumps writes it (", " and ": " separators,
// non-ASCII as \uXXXX); live events are searched in the same spelling so both agree.
const escapeWide = (s) => s.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
const needle = (text) => escapeWide(text.toLowerCase());

function pyJson(value) {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (value && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value) ?? "null";
}

// Cached per event: a live event is tested against every search typed while it is held.
export function textOf(ev) {
  if (ev.__text === undefined) {
    try {
      ev.__text = escapeWide(pyJson(ev.message ?? null).toLowerCase());
    } catch {
      ev.__text = "";
    }
  }
  return ev.__text;
}

export function summaryOf(ev) {
  if (ev.__summary === undefined) {
    const m = ev.message;
    let s;
    if (m && typeof m === "object") {
      const body = m.params ?? m.result ?? m.error ?? m;
      try {
        s = JSON.stringify(body);
      } catch {
        s = String(body);
      }
    } else s = String(m ?? "");
    ev.__summary = s.length > 240 ? `${s.slice(0, 240)}…` : s;
  }
  return ev.__summary;
}

export function methodOf(ev) {
  const m = ev.message;
  // A response carries its request's method (the core pairs them): say which it answers.
  if (ev.reply_to != null && ev.request_method) return `${m?.error ? "error" : "result"} · ${ev.request_method}`;
  if (ev.method) return ev.method;
  if (m && typeof m === "object") {
    if (m.error) return `error #${m.id ?? ""}`;
    if ("result" in m) return `result #${m.id ?? ""}`;
  }
  return "";
}

export function timeOf(ev) {
  const t = typeof ev.time === "number" ? (ev.time < 1e12 ? ev.time * 1000 : ev.time) : Date.parse(ev.time);
  if (!Number.isFinite(t)) return String(ev.time ?? "");
  const d = new Date(t);
  return `${d.toLocaleTimeString([], { hour12: false })}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export const ARROW = { in: "←", out: "→" };
