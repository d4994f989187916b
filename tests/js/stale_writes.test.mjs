// js/zoom.js's guard of the address bar (`staleWrite`), and js/links.js's of the parts (`drawAnswer`: a
// state the server sent for a view the address bar does not say is not drawn over it), under `node
// --test`: tests/test_stale_writes.py copies the modules beside this file with their generated
// `shared.js` and a `plot.js` they do not use here, on a stand-in page (page.mjs).
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { move, page } from "./page.mjs";

const { HISTORY, answered, answeredStep, sentLink, sentStep, wrapHistory } = await import("./zoom.js");
const { LINK, drawAnswer } = await import("./links.js");
wrapHistory();

/** The server's write of the query string `query` (Streamlit's page info, a replaceState). */
const serverWrites = (query) => window.history.replaceState({}, "", `/?${query}`);

beforeEach(() => {
  HISTORY.sent.clear();
  HISTORY.unlinked = null;
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

test("a step of the server's (a paper opened), its link written after Back to another entry: not written", () => {
  page.search = "?theme=0";
  sentStep(); // a paper clicked: the server's run writes its link, which the browser does not know
  move("?topic=2"); // Back before that write came
  window.history.replaceState({}, "", "/?topic=2&view=0,1,0,1"); // the zoom's write of the entry: no view
  serverWrites("theme=0&paper=doc7"); // the run's write, late
  assert.equal(page.search, "?topic=2&view=0,1,0,1");
  serverWrites("theme=2"); // awaited once: the server's next write is made
  assert.equal(page.search, "?theme=2");
});

test("a step of the server's with no Back or Forward since: its write made", () => {
  page.search = "?theme=0";
  sentStep();
  serverWrites("theme=0&paper=doc7");
  move("?theme=0");
  serverWrites("theme=1"); // not taken for the step's: that was written
  assert.equal(page.search, "?theme=1");
});

test("a step of the server's that left the view as it was (the map's state for it) awaits no write", () => {
  page.search = "?theme=0&paper=doc7";
  sentStep(); // the opened paper clicked again
  answeredStep("theme=0&paper=doc7");
  move("?theme=0");
  serverWrites("theme=0&q=graphs"); // a search in the sidebar, the server's write of it
  assert.equal(page.search, "?theme=0&q=graphs");
});

test("the server's push of the link the address bar says, in Python's encoding: no new entry", () => {
  page.search = "?q=graph%2C+%7Emodel&topics=0,3&view=0,1,0,1"; // as the browser keeps it
  const entries = page.entries.length;
  window.history.pushState({}, "", "/?q=graph%2C+~model&topics=0%2C3"); // Streamlit's, Python's text
  assert.equal(page.entries.length, entries);
  assert.equal(page.search, "?q=graph%2C+%7Emodel&topics=0,3&view=0,1,0,1");
  window.history.pushState({}, "", "/?q=graph%2C+~model&topics=0%2C3%2C1"); // another view: a new entry
  assert.equal(page.entries.length, entries + 1);
  assert.equal(page.search, "?q=graph%2C+~model&topics=0%2C3%2C1");
});

/** Part `kind`'s state for the link `link` sent by the server: the states drawn, in `drawn`. */
const drawn = [];
const arrives = (kind, link) => drawAnswer(kind, { link }, () => drawn.push(`${kind} ${link}`));

test("a part that shows nothing yet draws the first state it gets, whatever its view", () => {
  drawn.length = 0;
  page.search = "?theme=0";
  assert.equal(arrives("panel", "theme=1"), true); // better than nothing: the server's answer follows
  assert.equal(arrives("panel", "theme=2"), false);
  assert.deepEqual(drawn, ["panel theme=1"]);
});

test("a part's state for a view the address bar no longer says is not drawn over it", () => {
  drawn.length = 0;
  page.search = "?theme=0";
  window.history.pushState({}, "", "/?theme=0&topic=3"); // the panel opened a topic: the map's view still
  assert.equal(arrives("map", "theme=0"), true);
  window.history.pushState({}, "", "/?theme=1"); // a key pick, sent to the server
  sentLink("theme=1");
  move("?theme=0&topic=3"); // Back
  assert.equal(arrives("map", "theme=1"), false); // the run for the key pick answers late
  assert.equal(arrives("table", "theme=0&topic=3&paper=doc7"), true); // the table shows no paper
  serverWrites("theme=1"); // ... and its write comes after Back: not made (`staleWrite`), nothing drawn
  assert.deepEqual(drawn, ["map theme=0", "table theme=0&topic=3&paper=doc7"]);
});

test("a part's state that comes before the server writes its link is drawn when it does", () => {
  drawn.length = 0;
  page.search = "?theme=0";
  assert.equal(arrives("map", "theme=0&q=graphs"), false); // a search: the map's state before the link
  assert.equal(arrives("map", "q=graphs"), false); // a newer state of the part: the one held
  serverWrites("map=demo&q=graphs&view=0,1,0,1");
  serverWrites("q=graphs");
  assert.deepEqual(drawn, ["map q=graphs"]); // once, the newest
  assert.equal(arrives("panel", "topic=2"), false);
  move("?topic=2"); // Back or Forward: its own answer follows; what was held is dropped
  serverWrites("topic=2");
  assert.deepEqual(drawn, ["map q=graphs"]);
});

test("the topic panel follows the link on every write and every Back or Forward", () => {
  const followed = [];
  LINK.panel = /** @type {any} */ ({ followLink: () => followed.push(window.location.search) });
  page.search = "";
  serverWrites("topic=4"); // e.g. a server's step: Open topic from a paper
  move("?theme=1");
  LINK.panel = null;
  assert.deepEqual(followed, ["?topic=4", "?theme=1"]);
});
