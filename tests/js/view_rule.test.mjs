// js/view.js against the view's test vectors (tests/fixtures/view_vectors.json), under `node --test`:
// tests/test_view_rule.py copies the module beside this file with its generated `shared.js` and
// passes the vectors' path in VIEW_VECTORS.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { inView, sentence, linkParams, linkText, step, viewOfLink } from "./view.js";

const { tables, cases, steps } = JSON.parse(readFileSync(process.env.VIEW_VECTORS ?? "", "utf8"));

/** The link `written` says what the server's `link` says, key by key in its order, whatever the
 * encoding (the browser's or Python's). @param {string} written @param {string} link */
const sameLink = (written, link) => assert.deepEqual([...new URLSearchParams(written)], [...new URLSearchParams(link)]);

for (const c of cases) {
  test(`the papers in view: ${c.name}`, () => {
    assert.deepEqual(inView(c.view, tables[c.tables], c.hits), { rows: c.rows, selected: c.selected });
  });
  test(`the header's sentence: ${c.name}`, () => {
    assert.deepEqual(sentence(c.view, tables[c.tables], c.hits), c.sentence);
  });
  test(`the link: ${c.name}`, () => {
    const pairs = linkParams(c.view);
    sameLink(linkText(pairs), c.link);
    // the settings in any order in (a filter's keys together), the link's order out
    const groups = new Map();
    for (const pair of pairs) {
      const group = pair[0].startsWith("f.") ? "f." : pair[0];
      groups.set(group, [...(groups.get(group) ?? []), pair]);
    }
    sameLink(linkText([...groups.values()].reverse().flat()), c.link);
  });
  test(`the view a link says: ${c.name}`, () => {
    const columns = (/** @type {[string, string[]][]} */ filters) => filters.filter(([, values]) => values.length);
    const read = viewOfLink(c.link);
    assert.deepEqual({ ...read, filters: columns(read.filters) }, { ...c.view, filters: columns(c.view.filters) });
  });
}

// Each reading step: the view it leads to and that view's link, as `app.state.step` gives them; the
// view it starts from left as it was.
for (const c of steps) {
  test(`a step: ${c.name}`, () => {
    const before = structuredClone(c.view);
    const after = step(c.view, c.action, tables[c.tables].themeOf);
    assert.deepEqual(after, c.after);
    sameLink(linkText(linkParams(after)), c.link);
    assert.deepEqual(c.view, before);
  });
}
