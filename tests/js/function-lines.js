// The functions of a script and the physical lines each spans, from its head (`function`, a method's
// name, an arrow's parameters) to its closing brace, braces, blank lines and comments included.
// Biome's noExcessiveLinesPerFunction counts less (the body only, without a line that starts with
// `{` or `}`), so style.test.js measures this way. A scanner, not a parser: it knows strings,
// template literals, comments and regular expressions, which is enough for Biome-formatted code.

const CONTROL = new Set(["if", "for", "while", "switch", "catch", "with", "return", "typeof", "await", "new"]);
// After one of these (or at the start) a `/` opens a regular expression; after anything else it divides.
const BEFORE_REGEX = new Set([..."(,=:[!&|?{};+-*%<>~^", "return", "typeof", "case", "of", "in", "=>", "void"]);

/** The script's tokens worth knowing here: [text, line] for words and punctuation, strings and the like skipped. */
function tokens(source) {
  const out = [];
  let line = 1;
  let i = 0;
  const templates = []; // brace depth at which each open template literal's `${` resumes
  let depth = 0;
  const skipString = (quote) => {
    for (i++; i < source.length && source[i] !== quote; i++) {
      if (source[i] === "\\") i++;
      else if (source[i] === "\n") line++;
    }
    i++;
  };
  const skipTemplate = () => {
    // From inside a template literal to its end (returns false) or to a `${` (returns true).
    for (; i < source.length; i++) {
      const c = source[i];
      if (c === "\\") i++;
      else if (c === "\n") line++;
      else if (c === "`") {
        i++;
        return false;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        return true;
      }
    }
    return false;
  };
  const skipRegex = () => {
    let inClass = false;
    for (i++; i < source.length; i++) {
      const c = source[i];
      if (c === "\\") i++;
      else if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if (c === "/" && !inClass) break;
    }
    for (i++; /[a-z]/i.test(source[i] || ""); i++);
  };
  const startTemplate = () => {
    i++;
    if (skipTemplate()) templates.push(depth++);
    out.push(["`", line]);
  };
  while (i < source.length) {
    const c = source[i];
    const prev = out.length ? out[out.length - 1][0] : "(";
    if (c === "\n") {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === "/" && source[i + 1] === "/") while (i < source.length && source[i] !== "\n") i++;
    else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      line += (source.slice(i, end).match(/\n/g) || []).length;
      i = end + 2;
    } else if (c === '"' || c === "'") {
      skipString(c);
      out.push(["str", line]);
    } else if (c === "`") startTemplate();
    else if (c === "/" && BEFORE_REGEX.has(prev)) {
      skipRegex();
      out.push(["re", line]);
    } else if (/[\w$]/.test(c)) {
      const word = /^[\w$]+/.exec(source.slice(i))[0];
      out.push([word, line]);
      i += word.length;
    } else if (c === "=" && source[i + 1] === ">") {
      out.push(["=>", line]);
      i += 2;
    } else if (c === "}" && templates.length && templates[templates.length - 1] === depth - 1) {
      templates.pop();
      depth--;
      if (skipTemplate()) templates.push(depth++);
    } else {
      if (c === "{") depth++;
      else if (c === "}") depth--;
      out.push([c, line]);
      i++;
    }
  }
  return out;
}

/** The functions of `source`: {name, start, end, lines} with 1-based lines. */
export function functionLines(source) {
  const toks = tokens(source);
  const found = [];
  const parens = []; // index of each open `(`
  const braces = []; // for each open `{`: the function it opens ({name, start}) or null
  let closedParen = -1; // index of the `(` of the last `)` closed
  for (let k = 0; k < toks.length; k++) {
    const [t, line] = toks[k];
    if (t === "(") parens.push(k);
    else if (t === ")") closedParen = parens.pop();
    else if (t === "{") braces.push(functionOpened(toks, k, closedParen));
    else if (t === "}") {
      const fn = braces.pop();
      if (fn) found.push({ ...fn, end: line, lines: line - fn.start + 1 });
    }
  }
  return found;
}

/** The function whose body the `{` at toks[k] opens, or null (a block, an object, a class). */
function functionOpened(toks, k, closedParen) {
  const before = toks[k - 1]?.[0];
  if (before === "=>") {
    const head = toks[k - 2]?.[0] === ")" ? closedParen : k - 2;
    const named = toks[head - 2]?.[0] === "=" || toks[head - 2]?.[0] === ":" ? toks[head - 3] : null;
    const asyncHead = toks[head - 1]?.[0] === "async" ? head - 1 : head;
    return { name: named ? named[0] : "(arrow)", start: toks[asyncHead][1] };
  }
  if (before !== ")") return null;
  const owner = toks[closedParen - 1];
  if (!owner || CONTROL.has(owner[0])) return null;
  if (owner[0] === "function") return { name: "(function)", start: owner[1] };
  if (!/^[\w$]+$/.test(owner[0])) return null;
  const isFunction = toks[closedParen - 2]?.[0] === "function" || toks[closedParen - 3]?.[0] === "function";
  const head = isFunction ? toks[closedParen - (toks[closedParen - 2][0] === "function" ? 2 : 3)] : owner;
  return { name: owner[0], start: head[1] };
}
