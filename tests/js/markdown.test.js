// The Markdown reader (js/markdown/parse.js): the tree it builds is what the chat shows.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isSafeUrl, parseInline, parseMarkdown } from "../../src/moka_shell/web/static/js/markdown/parse.js";

/** Every element of the tree, depth first. */
function* walk(nodes) {
  for (const node of nodes) {
    if (typeof node === "string" || node.code !== undefined) continue;
    yield node;
    yield* walk(node.children);
  }
}
const all = (nodes, tag) => [...walk(nodes)].filter((n) => n.tag === tag);
/** The text a person reads in a node. */
const text = (node) =>
  typeof node === "string" ? node : (node.code ?? (node.attrs?.text || "") + node.children.map(text).join(""));
/** A compact picture of the tree: ["p", "a ", ["em", "b"]]. */
const shape = (node) =>
  typeof node === "string"
    ? node
    : node.code !== undefined
      ? ["code-block", node.lang, node.code]
      : [node.tag, ...(node.attrs?.text ? [node.attrs.text] : []), ...node.children.map(shape)];
const md = (source) => parseMarkdown(source).map(shape);

describe("blocks", () => {
  test("headings start at h2 (the page has the h1) and stop at h6", () => {
    assert.deepEqual(md("# One\n## Two ##\n###### Six\n####### seven"), [
      ["h2", "One"],
      ["h3", "Two"],
      ["h6", "Six"],
      ["p", "####### seven"],
    ]);
  });

  test("paragraphs join soft breaks with a space; two spaces or a backslash is a hard break", () => {
    assert.deepEqual(md("one\ntwo  \nthree\\\nfour\n\nnext"), [
      ["p", "one", " ", "two", ["br"], "three", ["br"], "four"],
      ["p", "next"],
    ]);
  });

  test("rules, quotes (nested) and empty input", () => {
    assert.deepEqual(md("***\n- - -\n> a\n> > b"), [
      ["hr"],
      ["hr"],
      ["blockquote", ["p", "a"], ["blockquote", ["p", "b"]]],
    ]);
    assert.deepEqual(md(""), []);
    assert.deepEqual(md(" \n\t\n"), []);
    assert.deepEqual(md(null), []);
  });

  test("Windows and old Mac line ends read as newlines", () => {
    assert.deepEqual(md("a\r\nb\rc"), [["p", "a", " ", "b", " ", "c"]]);
  });
});

describe("code fences", () => {
  test("keep their text verbatim, with the language", () => {
    assert.deepEqual(md("```js\nlet a = *b*;\n  <b>x</b>\n```\nafter"), [
      ["code-block", "js", "let a = *b*;\n  <b>x</b>"],
      ["p", "after"],
    ]);
  });

  test("an unclosed fence (a reply still streaming) runs to the end", () => {
    assert.deepEqual(md("text\n~~~\nline 1\n# not a heading"), [
      ["p", "text"],
      ["code-block", "", "line 1\n# not a heading"],
    ]);
  });

  test("a fence closes only on the same marker", () => {
    assert.deepEqual(md("````\n```\nstill code\n````"), [["code-block", "", "```\nstill code"]]);
  });
});

describe("lists", () => {
  test("nested by indentation, inside the item they follow", () => {
    assert.deepEqual(md("- a\n  - b\n    - c\n  - d\n- e"), [
      ["ul", ["li", "a", ["ul", ["li", "b", ["ul", ["li", "c"]]], ["li", "d"]]], ["li", "e"]],
    ]);
  });

  test("ordered lists keep their start; a marker of the other kind ends the list", () => {
    const [ol, ul] = parseMarkdown("3. three\n4. four\n- other");
    assert.equal(ol.tag, "ol");
    assert.equal(ol.attrs.start, 3);
    assert.deepEqual(ul && shape(ul), ["ul", ["li", "other"]]);
    assert.equal(parseMarkdown("1. one").at(0).attrs.start, undefined);
  });

  test("continuation lines join their item; a blank line ends the list unless it goes on", () => {
    assert.deepEqual(md("- a\nlazy\n  indented\n\n- b\n\nafter"), [
      ["ul", ["li", "a", " ", "lazy", " ", "indented"], ["li", "b"]],
      ["p", "after"],
    ]);
  });

  test("a block after an item ends the list", () => {
    assert.deepEqual(md("- a\n# h\n- b\n```\nc"), [
      ["ul", ["li", "a"]],
      ["h2", "h"],
      ["ul", ["li", "b"]],
      ["code-block", "", "c"],
    ]);
  });

  test("task items are disabled checkboxes", () => {
    const [list] = parseMarkdown("- [x] done\n- [ ] todo\n- [y] plain");
    const [done, todo, plain] = list.children;
    assert.equal(done.attrs.class, "md-task");
    assert.deepEqual(done.children[0].attrs, { type: "checkbox", checked: true, disabled: true, "aria-label": "task" });
    assert.equal(todo.children[0].attrs.checked, false);
    assert.deepEqual(shape(plain), ["li", "[y] plain"]);
  });
});

describe("tables", () => {
  test("head, alignment, escaped pipes and missing cells", () => {
    const [wrap] = parseMarkdown("| a | b | c |\n|:--|:--:|--:|\n| 1 | x \\| y |\n| no pipes at the end");
    assert.equal(wrap.attrs.class, "md-table");
    const [table] = wrap.children;
    assert.deepEqual(
      all([table], "th").map((th) => th.attrs.style),
      [null, "text-align:center", "text-align:right"],
    );
    assert.deepEqual(all([table], "tr").map(text), ["abc", "1x | y", "no pipes at the end"]);
    assert.equal(all([table], "td").length, 6); // every row has the head's cells
  });

  test("a pipe without a separator line is just text", () => {
    assert.deepEqual(md("a | b\nc | d"), [["p", "a | b", " ", "c | d"]]);
  });
});

describe("inline", () => {
  test("emphasis, strong, both, strikethrough and code", () => {
    assert.deepEqual(md("*a* **b** ***c*** ~~d~~ `e *f*` `` g ` h ``"), [
      [
        "p",
        ["em", "a"],
        " ",
        ["strong", "b"],
        " ",
        ["strong", ["em", "c"]],
        " ",
        ["del", "d"],
        " ",
        ["code", "e *f*"],
        " ",
        ["code", "g ` h"],
      ],
    ]);
  });

  test("markers that are not emphasis stay literal", () => {
    assert.deepEqual(md("2 * 3 * 4, snake_case_name, *unclosed, `open, ~~"), [
      ["p", "2 * 3 * 4, snake_case_name, *unclosed, `open, ~~"],
    ]);
    // The nearest closing marker wins, even inside a run of them.
    assert.deepEqual(md("*a **"), [["p", ["em", "a *"]]]);
  });

  test("backslash escapes", () => {
    assert.deepEqual(md("\\*not\\* \\[x\\](y) \\q"), [["p", "*not* [x](y) \\q"]]);
  });

  test("markup in the text is text: there is no HTML", () => {
    const nodes = parseMarkdown('<img src=x onerror="alert(1)"> <script>alert(1)</script>');
    assert.deepEqual(nodes.map(shape), [["p", '<img src=x onerror="alert(1)"> <script>alert(1)</script>']]);
  });
});

describe("links", () => {
  const anchors = (source) => all(parseMarkdown(source), "a").map((a) => [a.attrs.href, text(a)]);

  test("labelled, autolinked and bare http(s) and mailto links", () => {
    assert.deepEqual(
      anchors(
        '[site](https://example.com "Title") <mailto:a@b.example> see https://x.example/a_b. (https://y.example/c) [**b**](http://y.example)',
      ),
      [
        ["https://example.com", "site"],
        ["mailto:a@b.example", "mailto:a@b.example"],
        ["https://x.example/a_b", "https://x.example/a_b"], // not the full stop after it
        ["https://y.example/c", "https://y.example/c"], // nor the bracket around it
        ["http://y.example", "b"],
      ],
    );
    const [a] = all(parseMarkdown("[x](https://x.example)"), "a");
    assert.equal(a.attrs.target, "_blank");
    assert.equal(a.attrs.rel, "noopener noreferrer nofollow");
  });

  test("balanced brackets and parentheses; an unclosed target leaves a bare URL", () => {
    assert.deepEqual(anchors("[a [b] c](https://w.example/Foo_(bar)) [open](https://x"), [
      ["https://w.example/Foo_(bar)", "a [b] c"],
      ["https://x", "https://x"],
    ]);
  });

  for (const target of [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    " javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "/relative/path",
    "//evil.example/x",
    "file:///etc/passwd",
    "http://",
  ]) {
    test(`a link to ${JSON.stringify(target)} stays inert: its words, no target`, () => {
      const nodes = parseMarkdown(`before [click me](${target}) after`);
      assert.deepEqual(all(nodes, "a"), []);
      const [span] = all(nodes, "span");
      assert.equal(span.attrs.class, "md-unsafe-link");
      assert.equal(text(span), "click me");
      assert.ok(![...walk(nodes)].some((n) => "href" in n.attrs || "src" in n.attrs));
    });
  }

  test("an autolink or bare URL needs http(s) or mailto to be one", () => {
    assert.deepEqual(anchors("<javascript:alert(1)> javascript:alert(1) <ftp://x.example>"), []);
  });

  test("isSafeUrl", () => {
    assert.equal(isSafeUrl("https://example.com/a?b#c"), true);
    assert.equal(isSafeUrl("  mailto:x@y.example "), true);
    assert.equal(isSafeUrl("javascript:alert(1)"), false);
    assert.equal(isSafeUrl("https://exa mple.com"), false); // not a URL the browser can parse
  });
});

test("any cut of a reply parses: every prefix of a long message (as it streams in)", () => {
  const reply = [
    "# Plan",
    "Some **bold _and_ nested** text with `code` and [a link](https://example.com/a_(b)).",
    "",
    "1. first",
    "   - inner [x](javascript:alert(1))",
    "2. second",
    "",
    "| a | b |",
    "|---|:-:|",
    "| 1 | 2 |",
    "",
    "> quoted ~~old~~",
    "```py",
    "print('hi')",
    "```",
  ].join("\n");
  for (let cut = 0; cut <= reply.length; cut++) {
    const nodes = parseMarkdown(reply.slice(0, cut));
    assert.ok(Array.isArray(nodes));
    for (const a of all(nodes, "a")) assert.ok(isSafeUrl(a.attrs.href), `cut at ${cut}: ${a.attrs.href}`);
    assert.ok(!JSON.stringify(nodes).includes('"href":"javascript'), `cut at ${cut}`);
  }
});

describe("inline only (tool descriptions)", () => {
  test("code spans, emphasis and links, with no paragraph around them", () => {
    const nodes = parseInline("Roll `count` dice, *fast*; see https://example.com");
    assert.equal(nodes[0], "Roll ");
    assert.deepEqual(nodes[1], { tag: "code", attrs: { class: "md-inline", text: "count" }, children: [] });
    assert.equal(all(nodes, "em").length, 1);
    assert.equal(all(nodes, "a")[0].attrs.href, "https://example.com");
    assert.equal(all(nodes, "p").length, 0);
  });
  test("block markup stays text, line breaks stay; nothing given is nothing", () => {
    assert.deepEqual(parseInline("# not a heading\n- nor a list"), ["# not a heading\n- nor a list"]);
    assert.deepEqual(parseInline(undefined), []);
  });
});
