// js/store.js, the one writer of the link, under `node --test`: tests/test_store.py copies it beside
// this file with the modules it imports (js/view.js, js/links.js, js/zoom.js; `plot.js`, which it does
// not use here, a stand-in) and the generated `shared.js`, and passes the view's test vectors
// (VIEW_VECTORS) and the link corpus (LINK_CORPUS), on a stand-in page (page.mjs).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { move, page } from "./page.mjs";

const { LINK, differsOnlyIn, linkKey } = await import("./links.js");
const { currentView, linkOf, takeStep } = await import("./store.js");
const { linkParams, linkText } = await import("./view.js");
const { wrapHistory } = await import("./zoom.js");
wrapHistory();

const { tables, steps } = JSON.parse(readFileSync(process.env.VIEW_VECTORS ?? "", "utf8"));
const corpus = JSON.parse(readFileSync(process.env.LINK_CORPUS ?? "", "utf8"));

/** The address bar at `query`, a fresh history of one entry. */
const open = (query) => {
  page.search = query ? `?${query}` : "";
  page.entries = [page.search];
};
/** Back to the entry before. */
const back = () => {
  page.entries.pop();
  move(page.entries[page.entries.length - 1]);
};

for (const { map, link, address } of corpus) {
  test(`the store writes the link it reads back as it was: ${map} ?${link}`, () => {
    const written = linkText(Object.entries(address).flatMap(([key, values]) => values.map((value) => [key, value])));
    open(written);
    assert.equal(linkOf(currentView()), written);
  });
}

for (const c of steps) {
  test(`a step's link, written by the store alone, the map's name and zoom kept: ${c.name}`, () => {
    const theme = tables[c.tables].themeOf;
    LINK.panel = /** @type {any} */ ({ summary: { topics: Object.entries(theme).map(([id, t]) => ({ id: Number(id), theme: t })) }, followLink: () => {} });
    const before = linkText([["map", "seeds"], ...linkParams(c.view), ["view", "0,1,0,1"]]);
    open(before);
    const query = takeStep(c.action);
    assert.equal(query, linkText([["map", "seeds"], ...new URLSearchParams(c.link), ["view", "0,1,0,1"]]));
    assert.deepEqual(page.entries, [`?${before}`, `?${query}`].map((q) => (q === "?" ? "" : q))); // a new entry
    assert.deepEqual(currentView(), c.after);
    back(); // Back is the link read back into the store
    assert.deepEqual(currentView(), c.view);
    assert.equal(takeStep(c.action, "topic=9"), "topic=9"); // Back or Forward went to it: nothing written
    assert.equal(page.entries.length, 1);
  });
}

test("Back or Forward compares the views two entries' links say (js/links.js), not their text", () => {
  assert.equal(linkKey("map=seeds&topics=2,4&f.venue=ICML&view=0,1,0,1"), "topics=2%2C4&f.venue=ICML");
  assert.equal(linkKey("theme=1&topics=2%2C4"), linkKey("topics=2,4&theme=1&view=0,1,0,1"));
  assert.ok(differsOnlyIn("topics=1&topic=3&view=0,1,0,1", "map=seeds&topics=1", "topic"));
  assert.ok(differsOnlyIn("f.venue=ICML&f.year=2024", "f.year=2024", "f.venue"));
  assert.ok(!differsOnlyIn("f.venue=ICML&f.year=2024", "f.year=2023", "f.venue"));
  assert.ok(!differsOnlyIn("topics=1&topic=3", "topics=2", "topic"));
});
