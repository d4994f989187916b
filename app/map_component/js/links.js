// @ts-check
// The page's parts: the map, the topic panel and the papers table, which find each other here
// (`LINK`), links compared by the views they say (js/view.js; js/store.js writes them),
// and the states the server sent for each view (`VIEWS`), kept for Back and Forward (js/history.js).

import { SHARED } from "./shared.js";
import { linkParams, linkText, viewOfLink } from "./view.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { HeaderPart } from "./header.js" */
/** @import { TopicPanel } from "./panel.js" */
/** @import { PanelState, TableState, ViewState } from "./protocol.js" */
/** @import { PapersTable } from "./table.js" */

/** The page's map, topic panel, papers table and header's sentence, which find each other, the opened
 * topic as the browser shows it (the panel opens it; the table lists its papers).
 * @type {{map: AtlasMap|null, panel: TopicPanel|null, table: PapersTable|null, header: HeaderPart|null, topic: number|null|undefined}} */
export const LINK = { map: null, panel: null, table: null, header: null, topic: undefined };

/** The map's summary as the topic panel loaded it (null: not yet, or no panel). */
export const mapSummary = () => (LINK.panel && LINK.panel.summary) || null;

/** The link of the view the query string `query` says, in the link's order (js/view.js: read back
 * into a view, written again), without the link's keys `dropped` (a setting's, or a column's filter's).
 * The map's name and the zoom are no part of a view. @param {string} query @param {string[]} [dropped] */
const viewLink = (query, dropped = []) => linkText(linkParams(viewOfLink(query)).filter(([key]) => !dropped.includes(key)));

/** Whether the views two query strings say differ in at most the link's `key`.
 * @param {string} a @param {string} b @param {string} key */
export const differsOnlyIn = (a, b, key) => viewLink(a, [key]) === viewLink(b, [key]);

// A part's state answers the view of the link it was sent for (`link`): it is drawn only while the
// address bar says that view (js/store.js), never over a newer one. A state for a view the address bar
// does not say (yet) is held (`HELD`): drawn when the address bar is written to its link (the server
// writes a step's link after the map's state for it), dropped by a newer state of the part or by Back
// or Forward (whose own answer follows). A part's state does not answer for what the browser shows of
// the view itself: the topic the panel opens (the map, the panel and the table), and an opened paper,
// which the papers table does not show.
const { topic, paper } = SHARED.link_keys;
const OWN_KEYS = { map: [topic], panel: [topic], table: [topic, paper] };
/** @type {Map<"map"|"panel"|"table", {data: {link?: string}, draw: () => void}>} */
const HELD = new Map();
/** @type {Set<"map"|"panel"|"table">} the parts that drew a state (one that shows nothing draws the first it gets) */
const DREW = new Set();

/** Whether part `kind`'s state sent for the link `link` answers the view the query string `search` says.
 * @param {"map"|"panel"|"table"} kind @param {string} link @param {string} search */
export const answers = (kind, link, search) => viewLink(link, OWN_KEYS[kind]) === viewLink(search, OWN_KEYS[kind]);

/** Part `kind`'s state `data` from the server: drawn (`draw`) and kept for its view (`keepView`) where
 * it answers the address bar's view (or says no link, or the part shows nothing yet), else held until
 * the address bar is written to its link. Whether it was drawn.
 * @param {"map"|"panel"|"table"} kind @param {{link?: string}} data @param {() => void} draw */
export function drawAnswer(kind, data, draw) {
  HELD.delete(kind);
  if (data.link !== undefined && DREW.has(kind) && !answers(kind, data.link, window.location.search)) {
    HELD.set(kind, { data, draw });
    return false;
  }
  drawn(kind, data, draw);
  return true;
}

/** Part `kind`'s state drawn and kept. @param {"map"|"panel"|"table"} kind @param {{link?: string}} data @param {() => void} draw */
function drawn(kind, data, draw) {
  DREW.add(kind);
  keepView(kind, data);
  draw();
}

/** How the address bar's link changed: Back or Forward ("moved"), the store's write for a step the
 * browser takes ("stepped", js/store.js `writeLink`), or any other write ("written": Streamlit's for a
 * run of the server's, the zoom's). @typedef {"moved"|"stepped"|"written"} LinkChange */

/** The address bar's link changed (`how`): the states held for its view drawn (on Back or Forward,
 * every state held dropped), the topic panel shows the topic it says, and every part its view's
 * papers (js/page.js). @param {LinkChange} how */
export function linkChanged(how) {
  for (const [kind, held] of [...HELD]) {
    if (how === "moved") HELD.delete(kind);
    else if (answers(kind, /** @type {string} */ (held.data.link), window.location.search)) {
      HELD.delete(kind);
      drawn(kind, held.data, held.draw);
    }
  }
  if (LINK.panel) LINK.panel.followLink(); // the topic the link says, its view's counts
  if (LINK.header) LINK.header.follow(); // the sentence of the view it says
  // The map's and the table's papers, but for a step's own write (the step draws them: js/steps.js
  // `partsFollow`, the panel's opened topic): a run of the server's cut short by Back may write its
  // step's link over the entry the reader went to, and the run for that entry then writes it back
  // without drawing the parts it takes as drawn (a storm's map left on the cut run's view).
  if (how !== "stepped") for (const part of [LINK.map, LINK.table]) if (part) part.follow();
}

/** Whether no script run is under way (Streamlit says so on its app's element; not said: taken as running). */
export function streamlitIdle() {
  const app = /** @type {HTMLElement|null} */ (document.querySelector('[data-testid="stApp"]'));
  return Boolean(app && app.dataset.testScriptState === "notRunning");
}

// The states the server sent for each view it drew, by the view's link (`link`: its query string as
// the server writes it, without the map's name and the zoom): the map's, the topic panel's and the
// papers table's, kept where all three were drawn for the same link (the table's but for an opened
// paper, which it does not show; the last 20 views). Back or Forward to one of them is drawn again
// from them by the browser (`redrawView`).
/** @typedef {{map: ViewState, panel: PanelState, table: TableState}} KeptView */
export const VIEWS = {
  /** @type {{map?: ViewState, panel?: PanelState, table?: TableState}} what each part shows now */ last: {},
  /** @type {Map<string, KeptView>} */ byLink: new Map(),
};

/** A link as a key: the link of the view it says (`viewLink`). @param {string} query */
export const linkKey = (query) => viewLink(query);

/** A part's state as the server sent it (without its inline files: they are loaded once), kept for
 * its view. @param {"map"|"panel"|"table"} kind @param {any} data */
export function keepView(kind, data) {
  const { points_data, plotly_data, module_data, summary_data, table_data, ...kept } = data;
  VIEWS.last[kind] = kept;
  const { map, panel, table } = VIEWS.last;
  if (!map || !panel || !table || map.link === undefined || map.link !== panel.link) return;
  if (table.link === undefined || !differsOnlyIn(map.link, table.link, "paper")) return; // the table shows no paper
  const key = linkKey(map.link);
  VIEWS.byLink.delete(key); // the newest last
  VIEWS.byLink.set(key, { map, panel, table });
  if (VIEWS.byLink.size > 20) VIEWS.byLink.delete(/** @type {string} */ (VIEWS.byLink.keys().next().value));
}
