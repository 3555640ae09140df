// A server's completions (`completion/complete`) for one input, offered in a <datalist> as the
// person types. Only the answer to what the input holds now is shown: a slow answer to older
// input ("A") must never replace the one for the newer ("Am").
import { api } from "./api.js";
import { h, clear, debounce } from "./dom.js";

/**
 * A datalist bound to `input`, filled with `server`'s completions for `ref` and the argument named
 * like the input; `otherValues()` gives the other arguments as context.
 */
export function completionList(server, ref, input, otherValues, id = `dl-${Math.random().toString(36).slice(2, 9)}`) {
  const list = h("datalist", { id });
  input.setAttribute("list", list.id);
  let asked = null;
  const ask = async () => {
    const value = input.value;
    if (value === asked) return;
    asked = value;
    try {
      const res = await api.call("servers.complete", {
        server,
        ref,
        argument: { name: input.name, value },
        context: { arguments: otherValues() },
      });
      if (input.value !== value || asked !== value) return; // the person typed on: this answer is stale
      clear(list).append(...(res?.values || []).slice(0, 50).map((v) => h("option", { value: v })));
    } catch {
      /* a server without completions simply offers none */
    }
  };
  const soon = debounce(ask, 120);
  input.addEventListener("input", soon);
  input.addEventListener("focus", soon);
  return list;
}
