import assert from "node:assert/strict";
import { test } from "node:test";

import { linkPages, pageOf, slug } from "../../src/moka_shell/web/static/js/docs/links.js";

const ORIGIN = "http://127.0.0.1:8123";

test("links to sibling pages point at the docs page, with their heading", () => {
  const text = "See [plugins](plugins.md), [hooks](./plugin-hooks.md#the-hooks) and [web](https://example.com/a.md).";
  assert.equal(
    linkPages(text, ORIGIN),
    `See [plugins](${ORIGIN}/docs/#plugins), [hooks](${ORIGIN}/docs/#plugin-hooks:the-hooks) and [web](https://example.com/a.md).`,
  );
});

test("comments meant for the docs' tests are not shown", () => {
  assert.equal(linkPages("Before\n<!-- hello-backend -->\nAfter", ORIGIN), "Before\nAfter");
});

test("a docs address names its page and heading; any other address none", () => {
  assert.deepEqual(pageOf(`${ORIGIN}/docs/#plugin-hooks:the-hooks`, ORIGIN), {
    name: "plugin-hooks",
    part: "the-hooks",
  });
  assert.deepEqual(pageOf(`${ORIGIN}/docs/`, ORIGIN), { name: "", part: "" });
  assert.equal(pageOf("https://example.com/docs/#plugins", ORIGIN), null);
  assert.equal(pageOf(`${ORIGIN}/static/x.html#plugins`, ORIGIN), null);
  assert.equal(pageOf("http://[not a url", ORIGIN), null);
});

test("headings get the anchors their links use", () => {
  assert.equal(slug("Which installs take plugins?"), "which-installs-take-plugins");
  assert.equal(slug("`moka check` profiles"), "moka-check-profiles");
});
