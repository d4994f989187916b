// @ts-check
// The header's sentence (issue 63), written in the browser by the view's one rule (js/view.js
// `sentence`) from the view the address bar says (js/store.js `currentView`), the map's point table
// (each paper's topic by its colour rank, each column's codes, each paper's place: the papers a box or
// lasso holds, js/sampling.js `rowsInOutline`) and what the server sends a map and a search
// (`HeaderState`: the names, each column's values, the papers added, the search's hits over the whole
// map). So a reading step the browser takes (a tick, a key's pick, an opened topic, a box, Back or
// Forward) is said at once, with no server run. The server's own sentence is drawn until the point
// table is loaded, and for a view whose search is not the one the hits came for (its answer, with
// their hits, is on its way).

import { element } from "./dom.js";
import { linkKey } from "./links.js";
import { decodeMask, mapTable } from "./load.js";
import { parsedOutline, rowsInOutline } from "./sampling.js";
import { currentView } from "./store.js";
import { sentence, viewOfLink } from "./view.js";
/** @import { HeaderState } from "./protocol.js" */
/** @import { ViewHits, ViewTables } from "./view.js" */

/** The point table as the sentence reads it: each paper's colour rank, each filterable column's codes, and each paper's place.
 * @typedef {{n: number, colour: ArrayLike<number>, codes: Object<string, ArrayLike<number>>, x: ArrayLike<number>, y: ArrayLike<number>}} HeaderTable */

/** What `sentence` reads of a map (js/view.js `ViewTables`), from the header's state and the map's
 * point table. @param {HeaderState} state @param {HeaderTable} table @returns {ViewTables} */
export function headerTables(state, table) {
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

/** What the view's search and selection hold (js/view.js `ViewHits`): the search's hits from the
 * header's state's masks, the papers the box or lasso `selection` holds (as the link writes it; "":
 * none) from their places, by the server's rule (`app.selection.rows_inside`).
 * @param {HeaderState} state @param {HeaderTable} table @param {string} selection @returns {ViewHits} */
export function headerHits(state, table, selection) {
  const n = table.n;
  const rows = (/** @type {string|null} */ text) => {
    const mask = decodeMask(text, n);
    return mask ? Array.from(mask.rows) : null;
  };
  const words = rows(state.words);
  const [every, some, close] = [state.every, state.some, state.close].map((text) => decodeMask(text, n));
  const evidence = words && words.map((i) => (every && every[i] ? 1 : 0) | (some && some[i] ? 2 : 0) | (close && close[i] ? 4 : 0));
  const outline = selection ? parsedOutline(selection) : null;
  return { words, evidence, search: state.search, selected: outline ? rowsInOutline(table, null, outline) : null };
}

/** A search as the server runs it: its words, spaces aside. @param {string} text */
const searchOf = (text) => text.split(/\s+/).filter(Boolean).join(" ");

/** The header's sentence where it stood (a paragraph, the number bold), kept across reruns. */
export class HeaderPart {
  /** @param {HTMLElement} parent */
  constructor(parent) {
    this.root = parent.appendChild(element("p", "atlas-sentence"));
    /** @type {HeaderState|null} */ this.state = null;
    /** @type {{url: string, table: HeaderTable, tables: ViewTables}|null} the map's, once its point table is loaded */
    this.map = null;
    this.gone = false;
  }

  /** The server's state for a view: the sentence of the view the address bar says drawn (`follow`),
   * the map's point table awaited the first time. @param {HeaderState} state */
  show(state) {
    this.state = state;
    const url = state.points;
    if (this.map && this.map.url === url) this.map.tables = headerTables(state, this.map.table);
    else {
      this.map = null;
      mapTable(url).then((table) => {
        if (this.gone || !this.state || this.state.points !== url) return;
        this.map = { url, table, tables: headerTables(this.state, table) };
        this.follow();
      });
    }
    this.follow();
  }

  /** The sentence of the view the address bar says now (js/links.js `linkChanged` calls this on every
   * write of it, and on Back and Forward): the browser's own, where the map's table is here and the
   * search's hits are the view's; else the server's where it answers that view (or nothing was drawn yet). */
  follow() {
    const state = this.state;
    if (!state) return;
    const view = currentView(), sent = viewOfLink(state.link ?? window.location.search);
    if (this.map && searchOf(view.search) === searchOf(sent.search)) {
      this.draw(sentence(view, this.map.tables, headerHits(state, this.map.table, view.selection)));
    } else if (!this.root.firstChild || linkKey(state.link ?? window.location.search) === linkKey(window.location.search)) {
      this.draw(state.sentence);
    }
  }

  /** @param {[string, string]} said the number (bold; none: "") and the rest, as plain text */
  draw([number, rest]) {
    if (this.root.textContent === (number ? `${number} ${rest}` : rest) && Boolean(number) === Boolean(this.root.firstElementChild)) return;
    this.root.replaceChildren(...(number ? [element("strong", "", number), ` ${rest}`] : [rest]));
  }

  destroy() {
    this.gone = true;
    this.root.remove();
  }
}
