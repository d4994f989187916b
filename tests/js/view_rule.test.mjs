// js/view.js against the view's test vectors (tests/fixtures/view_vectors.json), under `node --test`:
// tests/test_view_rule.py copies the module beside this file with its generated `shared.js` and
// passes the vectors' path in VIEW_VECTORS.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { inView, keyInBrowser, sentence, linkParams, linkText, step, ticksInBrowser, valuesInBrowser, viewOfLink } from "./view.js";

const { tables, cases, steps } = JSON.parse(readFileSync(process.env.VIEW_VECTORS ?? "", "utf8"));

for (const c of cases) {
  test(`the papers in view: ${c.name}`, () => {
    assert.deepEqual(inView(c.view, tables[c.tables], c.hits), { rows: c.rows, selected: c.selected });
  });
  test(`the header's sentence: ${c.name}`, () => {
    assert.deepEqual(sentence(c.view, tables[c.tables], c.hits), c.sentence);
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
    assert.equal(linkText(linkParams(after)), c.link);
    assert.deepEqual(c.view, before);
  });
}

// Which steps the browser draws from the view it holds (js/view.js); what app/state.py's
// `key_in_browser` and `values_in_browser` said before the rule moved into the browser (issue 63),
// the topic the topic panel has open aside (the panel's: it keeps it open or closes it with the step).
const VIEW = viewOfLink("");
const KEY_CASES = [
  ["the whole map, themed", {}, true, true],
  ["a search", { search: "graph" }, true, true],
  ["a theme chosen", { themes: [1] }, true, false],
  ["topics chosen", { topics: [1] }, true, false],
  ["a paper open", { paper: "doc1" }, true, false],
  ["the panel's topic open", { topic: 0 }, true, true],
  ["coloured by a column", { colour: "year" }, false, true],
  ["a map without themes", {}, false, false],
  ["the colour column's filter", { colour: "year", filters: [["year", ["2024"]]] }, true, false],
  ["another column's filter", { colour: "year", filters: [["venue", ["ICML"]]] }, true, true],
];
for (const [name, view, themed, expected] of KEY_CASES) {
  test(`an entry of the key is the browser's: ${name}`, () => {
    assert.equal(keyInBrowser({ ...VIEW, ...view }, Boolean(themed)), expected);
  });
}
// and `ticks_in_browser`'s (topics ticked over the view's Topics filter)
const TICKS_CASES = [
  ["topics chosen", { topics: [1, 2] }, true],
  ["no topics chosen", {}, false],
  ["topics and a search", { topics: [1], search: "graph" }, false],
  ["topics and a blank search", { topics: [1], search: "  " }, true],
  ["topics and a theme", { topics: [1], themes: [0] }, false],
  ["topics, the panel's topic open", { topics: [1], topic: 1 }, true],
  ["topics and a paper", { topics: [1], paper: "doc1" }, false],
  ["topics and a box", { topics: [1], selection: "box:0,1,0,1" }, false],
];
for (const [name, view, expected] of TICKS_CASES) {
  test(`ticks over a Topics filter are the browser's: ${name}`, () => {
    assert.equal(ticksInBrowser({ ...VIEW, ...view }), expected);
  });
}
const VALUES_CASES = [
  ["topics chosen", { topics: [1] }, true],
  ["a search", { search: "graph" }, true],
  ["the panel's topic open", { topic: 2 }, true],
  ["a paper open", { paper: "doc1" }, false],
  ["a box", { selection: "box:0,1,0,1" }, false],
];
for (const [name, view, expected] of VALUES_CASES) {
  test(`values pressed in the list are the browser's: ${name}`, () => {
    assert.equal(valuesInBrowser({ ...VIEW, ...view }), expected);
  });
}
