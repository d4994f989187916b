// js/view.js against the view's test vectors (tests/fixtures/view_vectors.json), under `node --test`:
// tests/test_view_rule.py copies the module beside this file with its generated `shared.js` and
// passes the vectors' path in VIEW_VECTORS.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { inView, linkParams, linkText } from "./view.js";

const { tables, cases } = JSON.parse(readFileSync(process.env.VIEW_VECTORS ?? "", "utf8"));

for (const c of cases) {
  test(`the papers in view: ${c.name}`, () => {
    assert.deepEqual(inView(c.view, tables[c.tables], c.hits), { rows: c.rows, selected: c.selected });
  });
  test(`the link: ${c.name}`, () => {
    const pairs = linkParams(c.view);
    assert.equal(linkText(pairs), c.link);
    // the settings in any order in (a filter's keys together), the link's order out
    const groups = new Map();
    for (const pair of pairs) {
      const group = pair[0].startsWith("f.") ? "f." : pair[0];
      groups.set(group, [...(groups.get(group) ?? []), pair]);
    }
    assert.equal(linkText([...groups.values()].reverse().flat()), c.link);
  });
}
