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
import { answer, facts, hitsOf, onFacts, takeFacts } from "./page.js";
import { currentView } from "./store.js";
import { sentence } from "./view.js";
/** @import { HeaderState } from "./protocol.js" */

/** The header's sentence where it stood (a paragraph, the number bold), kept across reruns. */
export class HeaderPart {
  /** @param {HTMLElement} parent */
  constructor(parent) {
    this.root = parent.appendChild(element("p", "atlas-sentence"));
    /** @type {HeaderState|null} */ this.state = null;
    this.stop = onFacts(() => this.follow());
  }

  /** The server's state for a view: the page's facts made from it (js/page.js), the sentence of the
   * view the address bar says drawn (`follow`). @param {HeaderState} state */
  show(state) {
    this.state = state;
    takeFacts(state);
    this.follow();
  }

  /** The sentence of the view the address bar says now (js/links.js `linkChanged` calls this on every
   * write of it, and on Back and Forward): the browser's own, where the page's facts answer its search;
   * else the server's where it answers that view (or nothing was drawn yet). */
  follow() {
    const state = this.state, known = facts();
    if (!state) return;
    const view = currentView();
    if (known && answer(known, view, state.points)) this.draw(sentence(view, known.tables, hitsOf(known, view.selection)));
    else if (!this.root.firstChild || linkKey(state.link ?? window.location.search) === linkKey(window.location.search)) this.draw(state.sentence);
  }

  /** @param {[string, string]} said the number (bold; none: "") and the rest, as plain text */
  draw([number, rest]) {
    if (this.root.textContent === (number ? `${number} ${rest}` : rest) && Boolean(number) === Boolean(this.root.firstElementChild)) return;
    this.root.replaceChildren(...(number ? [element("strong", "", number), ` ${rest}`] : [rest]));
  }

  destroy() {
    this.stop();
    this.root.remove();
  }
}
