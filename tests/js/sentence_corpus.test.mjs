// js/view.js `sentence` over the link corpus (tests/fixtures/link_corpus.json), under `node --test`:
// tests/test_view_rule.py passes each link's view, its map's tables and its hits as the server sends
// them (SENTENCE_INPUTS) and reads the browser's sentences back (SENTENCE_OUTPUT) to compare them,
// as the header writes them, with the header each link opened.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";

import { sentence } from "./view.js";

const { tables, cases } = JSON.parse(readFileSync(process.env.SENTENCE_INPUTS ?? "", "utf8"));

test("the header's sentence of every link in the corpus", () => {
  const said = cases.map((c) => sentence(c.view, tables[c.map], c.hits));
  assert.equal(said.length, cases.length);
  writeFileSync(process.env.SENTENCE_OUTPUT ?? "", JSON.stringify(said));
});
