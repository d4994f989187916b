// The header's sentence over the link corpus (tests/fixtures/link_corpus.json), under `node --test`:
// tests/test_view_rule.py passes each link's view, the header's state the server sends for it
// (`app.map_component.payload.header_state`) and its map's point table (each paper's colour rank,
// each column's codes, each paper's place) in SENTENCE_INPUTS, and reads the browser's sentences back (SENTENCE_OUTPUT):
// js/header.js reads them as the page does (`headerTables`, `headerHits`), js/view.js writes them.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";

import "./page.mjs";

const { headerHits, headerTables } = await import("./header.js");
const { sentence } = await import("./view.js");

const { tables, cases } = JSON.parse(readFileSync(process.env.SENTENCE_INPUTS ?? "", "utf8"));

test("the header's sentence of every link in the corpus", () => {
  const said = cases.map((c) => {
    const table = tables[c.map];
    return sentence(c.view, headerTables(c.state, table), headerHits(c.state, table, c.view.selection));
  });
  assert.equal(said.length, cases.length);
  writeFileSync(process.env.SENTENCE_OUTPUT ?? "", JSON.stringify(said));
});
