// The header's sentence over the link corpus (tests/fixtures/link_corpus.json), under `node --test`:
// tests/test_view_rule.py passes each link's view, the header's state the server sends for it
// (`app.map_component.payload.header_state`) and its map's point table (each paper's colour rank,
// each column's codes, each paper's place) in SENTENCE_INPUTS, and reads the browser's sentences back (SENTENCE_OUTPUT):
// js/page.js reads them as the page does (`factsOf`, `hitsOf`), js/view.js writes them.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";

import "./page.mjs";

const { factsOf, hitsOf } = await import("./page.js");
const { sentence } = await import("./view.js");

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
