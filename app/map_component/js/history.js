// @ts-check
// Back and Forward in the browser, and a view drawn again from the states kept for its link.

import { LINK, VIEWS, differsOnlyIn, linkKey, streamlitIdle } from "./links.js";
import { SHARED } from "./shared.js";
import { browserDraws } from "./steps.js";
import { linkAfter, writeLink } from "./store.js";
import { viewOfLink } from "./view.js";
import { HISTORY, wrapHistory } from "./zoom.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { KeptView } from "./links.js" */
/** @import { TopicPanel } from "./panel.js" */
/** @import { Trigger, ViewState } from "./protocol.js" */
/** @import { PapersTable } from "./table.js" */

// Back and Forward in the browser. Streamlit's own handler (its App's `onHistoryChange`, added to the
// window before any component's listener, and so run first: listeners on the window run in the order
// they were added, capturing or not, in Chromium 156) reruns the whole page with the entry's link.
// It is taken over here, and still runs for every entry but one the browser draws itself
// (`historyStep`: from the page's facts, or a view it kept), and whenever a script run is under
// way; found nowhere (another Streamlit), it runs first as before. Where it runs, the panel still
// shows an entry's topic at once while the rerun follows the link.
export function watchHistory() {
  if (HISTORY.watching) return;
  HISTORY.watching = true;
  wrapHistory();
  const streamlit = streamlitHistoryHandler();
  if (streamlit) window.removeEventListener("popstate", streamlit);
  window.addEventListener("popstate", (event) => {
    const before = HISTORY.search, now = window.location.search;
    HISTORY.search = now;
    let drawn = false;
    try {
      drawn = before !== null && before !== now && historyStep(before, now, streamlit !== null);
    } finally {
      if (streamlit && !drawn) streamlit(event); // the page follows the link, whatever went wrong here
    }
  });
}

/** Streamlit's handler of Back and Forward: its App component's `onHistoryChange`, found among the
 * page's first React components (null: not there). @returns {((event: Event) => void)|null} */
function streamlitHistoryHandler() {
  const root = document.getElementById("root");
  const key = root && Object.keys(root).find((name) => name.startsWith("__reactContainer$"));
  const stack = key ? [/** @type {any} */ (root)[key]] : [];
  for (let seen = 0; stack.length && seen < 500; seen++) {
    const fiber = stack.pop();
    const handler = fiber.stateNode && fiber.stateNode.onHistoryChange;
    if (typeof handler === "function") return handler;
    if (fiber.sibling) stack.push(fiber.sibling);
    if (fiber.child) stack.push(fiber.child);
  }
  return null;
}

/** Back or Forward from the link `before` to `now`, drawn by the browser where it can: another topic
 * opened in the panel (or the list); a view the page's facts answer without an opened paper, left
 * from one without and with no abstract placed (js/steps.js `browserDraws`: every part follows the
 * link, js/links.js `linkChanged`); or a view the server drew before, drawn again from the states the
 * browser kept for its link (`redrawView`: the only way to an opened paper's view). The server is told, with the entry's link,
 * as by a step the browser draws. Only where `tell` and no run is under way (else Streamlit's rerun
 * follows the link, and the panel alone shows an entry's topic at once: a run for the panel's last
 * step, cut short by that rerun, would leave the server's states saying nothing of it, and the panel
 * keeping that topic open). Whether the browser drew it and told the server.
 * @param {string} before @param {string} now @param {boolean} tell */
function historyStep(before, now, tell) {
  const query = now.replace(/^\?/, "");
  const told = tell && streamlitIdle(); // a run under way: Streamlit's rerun follows the link
  if (viewOfLink(now).paper !== null) return told && redrawView(now); // an opened paper's view: as the server drew it
  const panel = LINK.panel;
  if (panel && panel.summary && differsOnlyIn(before, now, SHARED.topic_key)) {
    const raw = new URLSearchParams(now).get(SHARED.topic_key);
    const topic = raw === null ? null : Number(raw);
    if (topic !== null && !(Number.isInteger(topic) && panel.byId.has(topic) && String(topic) === /** @type {string} */ (raw).trim())) return false;
    panel.open(topic, { query, tell: told }); // the zoom: zoom.js's own listener
    return told;
  }
  const inst = LINK.map;
  if (!told || !inst) return false;
  // The server drops a placed abstract on Back or Forward (a link holds no pin): its rerun draws that.
  if (viewOfLink(before).paper === null && !(inst.received && inst.received.pin) && browserDraws(now)) {
    inst.trigger("history", { query, map: inst.pointsUrl });
    return true;
  }
  return redrawView(now); // a view the server drew before, kept by the browser
}

/** The opened paper closed (its "Back to …", or Escape): the view it was opened from drawn again from
 * the states the browser kept for its link (`redrawView`), as a new history entry; else, where none is
 * kept or a run is under way, the server's step ("click" with no row).
 * @param {Trigger} trigger the caller's @param {string} map its point table's URL */
export function closePaper(trigger, map) {
  if (!(streamlitIdle() && redrawView(linkAfter({ kind: "paper", paper: null }), true))) trigger("click", { row: null, map });
}

/** Back or Forward to the link `search` (or, `written`, a step to it the browser draws: a new history
 * entry): the map, the topic panel and the papers table drawn again from the states kept for it, where
 * the map, its summary and its table are those drawn now and no abstract is placed, now or in the kept
 * view (the server drops it on Back); the server told first ("history": it follows the link and draws
 * the sidebar, the header and the downloads), as for a step the panel draws. Whether they were.
 * @param {string} search @param {boolean} [written] */
function redrawView(search, written = false) {
  const inst = LINK.map, drawn = keptView(search), query = search.replace(/^\?/, "");
  if (!inst || !drawn) return false;
  if (written) writeLink(query);
  inst.trigger("history", { query, map: inst.pointsUrl });
  showKept(drawn);
  return true;
}

/** The states kept for the link `search`, as the map, the topic panel and the papers table would show
 * them now: where the map, its summary and its table are those drawn now and no abstract is placed,
 * now or in the kept view (the server drops it on Back); else null. @param {string} search
 * @returns {KeptView|null} */
function keptView(search) {
  const kept = VIEWS.byLink.get(linkKey(search));
  const { map, panel: now, table: listed } = VIEWS.last;
  if (!kept || !LINK.map || !LINK.panel || !LINK.table || !map || !now || !listed || map.pin || kept.map.pin) return null;
  if (kept.map.points !== map.points || kept.panel.summary !== now.summary || kept.table.table !== listed.table) return null;
  // The counters the server sent last: an old one would be read as "Reset view".
  return {
    map: { ...kept.map, reset: map.reset, browser_steps: map.browser_steps, height: map.height },
    panel: { ...kept.panel, browser_steps: now.browser_steps, height: now.height },
    table: { ...kept.table, browser_steps: listed.browser_steps },
  };
}

/** A kept view (`keptView`) shown by the map, the topic panel and the papers table, in the task after
 * this one (the server, told in this one, works out its answer meanwhile). @param {KeptView} drawn */
function showKept(drawn) {
  VIEWS.last = { ...drawn };
  const inst = /** @type {AtlasMap} */ (LINK.map), panel = /** @type {TopicPanel} */ (LINK.panel), table = /** @type {PapersTable} */ (LINK.table);
  setTimeout(() => {
    showMapState(inst, drawn.map);
    for (const [part, data] of /** @type {[TopicPanel|PapersTable, any][]} */ ([[panel, drawn.panel], [table, drawn.table]])) showPartState(part, data);
  }, 0);
}

/** The map shows a state the server sent (js/entry.js), or one kept for a view (`redrawView`).
 * @param {AtlasMap} inst @param {ViewState} data */
export function showMapState(inst, data) {
  inst.pending = data;
  inst.update();
}

/** The topic panel or the papers table shows a state, one update after another, an error said in its
 * place. @param {TopicPanel|PapersTable} part @param {any} data */
export function showPartState(part, data) {
  part.ready = part.ready.then(() => part.update(data)).catch((error) => {
    part.loading.hidden = false;
    part.loading.textContent = `The ${"summary" in data ? "topics" : "papers"} could not be shown: ${error.message}`;
    console.error(error);
  });
}
