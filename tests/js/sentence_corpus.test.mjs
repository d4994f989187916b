// The header's sentence over the link corpus (tests/fixtures/link_corpus.json), under `node --test`:
// tests/test_view_rule.py passes each link's view, the header's state the server sends for it
// (`app.map_component.payload.header_state`) and its map's point table (each paper's colour rank,
// each column's codes, each paper's place) in SENTENCE_INPUTS, and reads the browser's sentences back (SENTENCE_OUTPUT):
// js/page.js reads them as the page does (`factsOf`, `hitsOf`), js/view.js writes them.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";

import { page } from "./page.mjs";

const { answer, factsOf, hitsOf } = await import("./page.js");
const { linkParams, linkText, sentence } = await import("./view.js");

const { tables, cases } = JSON.parse(readFileSync(process.env.SENTENCE_INPUTS ?? "", "utf8"));

test("the header's sentence of every link in the corpus", () => {
  const said = cases.map((c) => {
    const table = tables[c.map];
    const facts = factsOf(c.state, table);
    return sentence(c.view, facts.tables, hitsOf(facts, c.view.selection));
  });
  assert.equal(said.length, cases.length);
  writeFileSync(process.env.SENTENCE_OUTPUT ?? "", JSON.stringify(said));
});

test("the page's facts answer a view of their map and search alone (js/steps.js: the browser draws it)", () => {
  for (const c of cases) {
    page.search = `?${linkText(linkParams(c.view))}`; // the address bar the server's answer came for
    const facts = factsOf(c.state, tables[c.map]);
    assert.ok(answer(facts, c.view, "points"), "its own view");
    assert.ok(answer(facts, { ...c.view, search: ` ${c.view.search}  ` }, "points"), "the same words, spaced");
    assert.ok(answer(facts, { ...c.view, topics: [1], themes: [], filters: [], selection: "box:0,1,0,1" }, "points"), "another step of the same search");
    assert.ok(!answer(facts, { ...c.view, search: `${c.view.search} more` }, "points"), "another search");
    assert.ok(answer(facts, { ...c.view, search: " " }, "points"), "no search: no hits needed");
    assert.ok(!answer(facts, c.view, "another map"), "another map");
    assert.ok(!answer(null, c.view, "points"), "no facts yet");
  }
});
