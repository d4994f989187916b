// js/zoom.js's guard of the address bar (`staleWrite`), under `node --test`: tests/test_stale_writes.py
// copies the module beside this file with its generated `shared.js` and a `plot.js` it does not use
// here, on a stand-in page (page.mjs).
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { move, page } from "./page.mjs";

const { HISTORY, answered, sentLink, wrapHistory } = await import("./zoom.js");
wrapHistory();

/** The server's write of the query string `query` (Streamlit's page info, a replaceState). */
const serverWrites = (query) => window.history.replaceState({}, "", `/?${query}`);

beforeEach(() => {
  HISTORY.sent.clear();
  page.search = "?paper=doc7";
});

test("a link sent with a step, written by the server after Back to another entry: not written", () => {
  window.history.pushState({}, "", "/?paper=doc7&theme=0"); // a key pick the browser drew
  sentLink("paper=doc7&theme=0");
  move("?paper=doc7"); // Back before the server's run for the pick wrote its link
  serverWrites("paper=doc7&theme=0");
  assert.equal(page.search, "?paper=doc7");
  serverWrites("theme=2"); // any other write of the server's is made
  assert.equal(page.search, "?theme=2");
});

test("the same write with no Back or Forward since the step was sent: made", () => {
  sentLink("paper=doc7&theme=0");
  serverWrites("paper=doc7&theme=0");
  assert.equal(page.search, "?paper=doc7&theme=0");
});

test("a link is awaited once: after the server's write of it, or a part's state for it", () => {
  sentLink("theme=0");
  move("?theme=0");
  serverWrites("theme=0"); // the address it is on: made, and no longer awaited
  move("?paper=doc7");
  serverWrites("theme=0"); // a later step of the server's to the same view
  assert.equal(page.search, "?theme=0");
  sentLink("theme=1");
  answered("theme=1"); // the map's state for it came (its write was not needed)
  move("?paper=doc7");
  serverWrites("theme=1");
  assert.equal(page.search, "?theme=1");
});

test("links are the same whatever the order of their keys, the zoom and the map's name", () => {
  sentLink("theme=0&paper=doc7&view=1,2,3,4");
  move("?topic=3");
  serverWrites("map=demo&paper=doc7&theme=0");
  assert.equal(page.search, "?topic=3");
});
