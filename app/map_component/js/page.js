// @ts-check
// The papers the page shows, worked out in the browser (issue 63): the store's view (js/store.js
// `currentView`, the address bar's link) over the page's facts, the map's point table and what the
// server sends once per map and search (the header's state, `HeaderState`: the topics' names and
// themes, each column's values, the papers added, and the search's one ranked list over the whole map
// with each hit's evidence and match columns). The map, the topic panel, the papers table and the
// header's sentence read their papers here (`papersNow`) whenever they draw: every Back or Forward
// (js/links.js `linkChanged`), every step the browser draws, every state the server sends, and each
// time the facts change (`onFacts`).

import { bytesOf, decodeMask, decodeVarints, mapTable, maskOf } from "./load.js";
import { parsedOutline, rowsInOutline } from "./sampling.js";
import { currentView } from "./store.js";
import { inView, viewOfLink } from "./view.js";
/** @import { HeaderState, Mask } from "./protocol.js" */
/** @import { PointTable } from "./load.js" */
/** @import { View, ViewHits, ViewTables } from "./view.js" */

/** A search as the server runs it: its words, spaces aside. @param {string} text */
export const searchOf = (text) => text.split(/\s+/).filter(Boolean).join(" ");

/**
 * A column of how each hit of the search matched (the papers table's Match, Closer than, Similarity),
 * one value a hit, in the search's order.
 * @typedef {{name: string, values?: string[], codes?: Uint8Array, numbers?: Float32Array}} HitColumn
 */

/**
 * The page's facts for one map and one search.
 * @typedef {Object} Facts
 * @property {HeaderState} state what the server sent
 * @property {string} url the map's point table
 * @property {PointTable} table
 * @property {ViewTables} tables what `inView` and `sentence` read of the map
 * @property {string} search the search the hits answer (its words; "": none)
 * @property {number[]|null} ranked the search's hits over the whole map, best first (null: no search)
 * @property {number[]} evidence each hit's evidence (1 writes every word, 2 several, 4 close in meaning)
 * @property {Int32Array|null} position each paper's place among the hits (-1: none)
 * @property {HitColumn[]} columns how each hit matched
 */

/** The papers a view shows: in view, best first (js/view.js `inView`), as a mask (null: every paper),
 * and those inside its box or lasso (all of them, in view or not; null: none drawn).
 * @typedef {{view: View, rows: number[], mask: Mask|null, inside: number[]|null, selected: number[]|null, key: string}} Shown */

/** @type {Facts[]} the facts of the map's last searches, newest first (the last `KEPT_SEARCHES`; "" the
 * view without one): Back or Forward to a view of one of them is drawn from them (js/steps.js) */
let KEPT = [];
const KEPT_SEARCHES = 4;
let version = 0;
/** @type {Set<() => void>} */
const LISTENERS = new Set();

/** `listener` called each time the facts change (a map loaded, a search answered); returns its removal.
 * @param {() => void} listener */
export function onFacts(listener) {
  LISTENERS.add(listener);
  return () => LISTENERS.delete(listener);
}

/** The facts that answer the view `view`'s search (none given: the address bar's view), else the newest
 * (null: none yet). @param {View} [view] @returns {Facts|null} */
export function facts(view = currentView()) {
  const search = searchOf(view.search);
  return KEPT.find((known) => known.search === search) ?? KEPT[0] ?? null;
}

/** What `sentence` and `inView` read of a map (js/view.js `ViewTables`), from the header's state and
 * the map's point table (each paper's topic by its colour rank, each filterable column's codes).
 * @param {HeaderState} state @param {PointTable} table @returns {ViewTables} */
export function viewTables(state, table) {
  const topics = new Int32Array(table.n);
  for (let i = 0; i < table.n; i++) topics[i] = state.ranks[table.colour[i]];
  /** @type {Object<string, number>} */
  const themeOf = {};
  /** @type {Object<string, string>} */
  const names = {};
  state.ranks.forEach((topic, rank) => {
    if (state.theme_of[rank] !== -1) themeOf[topic] = state.theme_of[rank];
    if (rank < state.ranks.length - 1) names[topic] = state.names[rank]; // the unassigned: no name of a topic
  });
  const facets = Object.fromEntries(state.facets.filter((f) => f.column in table.codes).map((f) => [f.column, { values: f.values, codes: table.codes[f.column] }]));
  const themes = Object.fromEntries(state.themes.map((theme, k) => [theme, state.theme_names[k]]));
  return { topics, themeOf, facets, added: decodeMask(state.added, table.n), names: { topics: names, themes } };
}

/** base64 bytes as an array of `Kind`. @param {string} text @param {typeof Uint8Array|typeof Float32Array} Kind */
export function decodeArray(text, Kind) {
  const bytes = bytesOf(text);
  return new Kind(bytes.buffer, 0, bytes.byteLength / Kind.BYTES_PER_ELEMENT);
}

/** The facts of the header's state `state` over the map's point table `table`.
 * @param {HeaderState} state @param {PointTable} table @returns {Facts} */
export function factsOf(state, table) {
  const ranked = state.hits === null ? null : Array.from(decodeVarints(state.hits));
  const evidence = state.evidence === null ? [] : Array.from(decodeArray(state.evidence, Uint8Array));
  let position = null;
  if (ranked) {
    position = new Int32Array(table.n).fill(-1);
    for (let k = 0; k < ranked.length; k++) position[ranked[k]] = k;
  }
  const columns = state.columns.map((column) => ({
    name: column.name, values: column.values,
    codes: column.codes !== undefined ? /** @type {Uint8Array} */ (decodeArray(column.codes, Uint8Array)) : undefined,
    numbers: column.numbers !== undefined ? /** @type {Float32Array} */ (decodeArray(column.numbers, Float32Array)) : undefined,
  }));
  const search = searchOf(viewOfLink(state.link ?? window.location.search).search);
  return { state, url: state.points, table, tables: viewTables(state, table), search, ranked, evidence, position, columns };
}

/** The header's state from the server: the page's facts made from it (the map's point table awaited
 * the first time), and every part told. @param {HeaderState} state */
export function takeFacts(state) {
  const mine = ++version;
  const done = (/** @type {PointTable} */ table) => {
    if (mine !== version) return; // a newer state came meanwhile
    const made = factsOf(state, table);
    KEPT = [made, ...KEPT.filter((known) => known.url === made.url && known.search !== made.search)].slice(0, KEPT_SEARCHES);
    SHOWN = null;
    for (const listener of LISTENERS) listener();
  };
  const known = KEPT.find((kept) => kept.url === state.points);
  if (known) done(known.table);
  else mapTable(state.points).then(done);
}

/** What the view's search and selection hold (js/view.js `ViewHits`): the search's hits, the papers
 * the box or lasso `selection` holds (as the link writes it; "": none) by their places, by the server's
 * rule (`app.selection.rows_inside`). @param {Facts} facts @param {string} selection @returns {ViewHits} */
export function hitsOf(facts, selection) {
  const outline = selection ? parsedOutline(selection) : null;
  const selected = outline ? rowsInOutline(facts.table, null, outline) : null;
  return { words: facts.ranked, evidence: facts.evidence, search: facts.state.search, selected };
}

/** Whether the facts answer the view `view` of the map `url`: they are the map's, and the view has no
 * search or its search's hits are here. (Else the server's answer, with them, is on its way.)
 * @param {Facts|null} facts @param {View} view @param {string} [url] */
export function answer(facts, view, url) {
  const search = searchOf(view.search);
  return Boolean(facts && (url === undefined || facts.url === url) && (!search || facts.search === search));
}

/** @type {Shown|null} the last worked out (a million papers: a few ms each) */
let SHOWN = null;

/** The papers the view the address bar says shows on the map `url` (none given: the facts' map):
 * null until the facts answer it. @param {string} [url] @returns {Shown|null} */
export function papersNow(url) {
  const view = currentView(), known = facts(view);
  if (!known || !answer(known, view, url)) return null;
  const key = `${version}|${JSON.stringify(view)}`;
  if (SHOWN && SHOWN.key === key) return SHOWN;
  const hits = hitsOf(known, view.selection);
  const { rows, selected } = inView(view, known.tables, hits);
  const n = known.table.n;
  const mask = rows.length === n ? null : maskOf(Uint32Array.from(rows).sort(), n);
  SHOWN = { view, rows, mask, inside: hits.selected, selected, key };
  return SHOWN;
}
