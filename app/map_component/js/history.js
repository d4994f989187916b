// @ts-check
// Back and Forward in the browser, and a view drawn again from the states kept for its link.

import { keyParam, pickKey, showTopics, showValues } from "./legend.js";
import { LINK, VIEWS, differsOnlyIn, linkKey, partsShow, showing, streamlitIdle } from "./links.js";
import { SHARED } from "./shared.js";
import { linkAfter, writeLink } from "./store.js";
import { HISTORY, wrapHistory } from "./zoom.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { KeptView } from "./links.js" */
/** @import { TopicPanel } from "./panel.js" */
/** @import { KeyPick, Trigger, ViewState } from "./protocol.js" */
/** @import { PapersTable } from "./table.js" */

// Back and Forward in the browser. Streamlit's own handler (its App's `onHistoryChange`, added to the
// window before any component's listener, and so run first: listeners on the window run in the order
// they were added, capturing or not, in Chromium 156) reruns the whole page with the entry's link.
// It is taken over here, and still runs for every entry but one the browser draws itself
// (`historyStep`: as the click that wrote it, or a view it kept), and whenever a script run is under
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

/** Back or Forward from the link `before` to `now`, drawn by the browser where the entry is one it
 * draws as a click: another topic opened in the panel (or the list), or the key's entry shown alone
 * (or all again, js/legend.js `pickKey`), the server told as by the click, with the entry's link; or
 * a view the server drew before, drawn again from the states the browser kept for its link
 * (`redrawView`: the only way to an opened paper's view). Only where `tell` and no run is under way
 * (else Streamlit's rerun follows the link, and the panel alone shows an entry's topic at once: a run
 * for the panel's last step, cut short by that rerun, would leave the server's states saying nothing
 * of it, and the panel keeping that topic open). Whether the browser drew it and told the server.
 * @param {string} before @param {string} now @param {boolean} tell */
function historyStep(before, now, tell) {
  const params = new URLSearchParams(now), query = now.replace(/^\?/, "");
  const told = tell && streamlitIdle(); // a run under way: Streamlit's rerun follows the link
  if (params.has("paper")) return told && redrawView(now); // an opened paper's view: as the server drew it
  const panel = LINK.panel;
  if (panel && panel.summary && differsOnlyIn(before, now, SHARED.topic_key)) {
    const raw = params.get(SHARED.topic_key);
    const topic = raw === null ? null : Number(raw);
    if (topic !== null && !(Number.isInteger(topic) && panel.byId.has(topic) && String(topic) === /** @type {string} */ (raw).trim())) return false;
    panel.open(topic, { query, tell: told }); // the zoom: zoom.js's own listener
    return told;
  }
  const inst = LINK.map, view = inst && inst.received;
  if (!told || !inst || !view) return false;
  if (!showing(before)) return redrawView(now); // the parts do not show the entry left: not drawn from them
  const key = keyParam(view);
  if (differsOnlyIn(before, now, key)) {
    const values = params.getAll(key);
    const entry = values.length === 1 ? view.legend.find((e) => e.pick && e.link === values[0]) : undefined;
    const chosen = entry ? /** @type {KeyPick} */ (entry.pick) : { [view.colour ? "value" : "theme"]: null };
    if ((!values.length || entry) && pickKey(inst, chosen, false, query)) return true;
  }
  if (differsOnlyIn(before, now, SHARED.topics_key)) {
    // Topics shown alone by the browser (ticked, or "Only this topic"), or the view the parts hold
    // under them: drawn again so, the server told as by the tick.
    const raw = params.get(SHARED.topics_key), topics = raw === null ? [] : raw.split(",").map(Number);
    if (topics.join() === (raw ?? "") && showTopics(topics, query)) return true;
  }
  for (const facet of panel && panel.view ? panel.view.facets : []) {
    // Values of a column pressed in the list, or the view under them: drawn again so, as by the press.
    const key = SHARED.filter_key + facet.column;
    if (!differsOnlyIn(before, now, key)) continue;
    const values = params.getAll(key).map((text) => facet.values.indexOf(text));
    if (!values.includes(-1) && showValues(facet, values, query)) return true;
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
 * @param {number} [cleared] the map's "Clear selection" counter where the step moves it (else the last one)
 * @returns {KeptView|null} */
export function keptView(search, cleared) {
  const kept = VIEWS.byLink.get(linkKey(search));
  const { map, panel: now, table: listed } = VIEWS.last;
  if (!kept || !LINK.map || !LINK.panel || !LINK.table || !map || !now || !listed || map.pin || kept.map.pin) return null;
  if (kept.map.points !== map.points || kept.panel.summary !== now.summary || kept.table.table !== listed.table) return null;
  // The counters the server sent last: an old one would be read as "Clear selection" or "Reset view".
  return {
    map: { ...kept.map, clear: cleared ?? map.clear, reset: map.reset, key_picks: map.key_picks, height: map.height },
    panel: { ...kept.panel, key_picks: now.key_picks, height: now.height },
    table: { ...kept.table, key_picks: listed.key_picks },
  };
}

/** A kept view (`keptView`) shown by the map, the topic panel and the papers table, in the task after
 * this one (the server, told in this one, works out its answer meanwhile). @param {KeptView} drawn */
export function showKept(drawn) {
  VIEWS.last = { ...drawn };
  partsShow(drawn.map.link);
  const inst = /** @type {AtlasMap} */ (LINK.map), panel = /** @type {TopicPanel} */ (LINK.panel), table = /** @type {PapersTable} */ (LINK.table);
  setTimeout(() => {
    showMapState(inst, drawn.map);
    for (const [part, data] of /** @type {[TopicPanel|PapersTable, any][]} */ ([[panel, drawn.panel], [table, drawn.table]])) showPartState(part, data);
  }, 0);
}

/** The map shows a state the server sent (js/entry.js), or one kept for a view (`redrawView`): the
 * server's view, not an entry picked in the key. @param {AtlasMap} inst @param {ViewState} data */
export function showMapState(inst, data) {
  inst.keyShown = null; // the server's view state shows an entry picked in the key now, if still chosen
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
