// @ts-check
// The zoom in the link.
// The reader's zoom and pan live in the address bar as view=x0,x1,y0,y1 (the key and its parts are
// Python's: `SHARED.zoom_key`, `SHARED.zoom_parts`), written here without a rerun (replacing the
// current history entry). Streamlit pushes a new entry, without it, whenever the
// app writes the rest of the view into the query string: the wrapped pushState/replaceState carry the
// current zoom over. Opening a link or stepping Back/Forward restores the entry's zoom.

import { linkChanged } from "./links.js";
import { ranges } from "./plot.js";
import { SHARED } from "./shared.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { LinkChange } from "./links.js" */
/** @import { Ranges } from "./protocol.js" */

/** The map whose zoom the link holds (the first drawn). @type {{inst: AtlasMap|null}} */
export const ZOOM = { inst: null };

/** Whether the view `a` shows `b`, to the link's own precision: each end within a ten-thousandth of
 * `b`'s span (`zoomText` writes four digits of the span).
 * @param {{x: number[], y: number[]}} a @param {{x: number[], y: number[]}} b */
function sameZoom(a, b) {
  const near = (/** @type {number[]} */ u, /** @type {number[]} */ v) => Math.abs(u[0] - v[0]) <= Math.abs(v[1] - v[0]) * 1e-4 && Math.abs(u[1] - v[1]) <= Math.abs(v[1] - v[0]) * 1e-4;
  return near(a.x, b.x) && near(a.y, b.y);
}

/** @param {AtlasMap} inst */
function zoomText(inst) {
  const now = ranges(inst.gd);
  if (!now) return null;
  if (sameZoom(now, inst.table.range)) return null; // the opening view: no need to say it
  const xr = now.x, yr = now.y;
  const digits = (/** @type {number} */ span) => Math.max(0, Math.min(10, 4 - Math.floor(Math.log10(Math.max(Math.abs(span), 1e-12)))));
  const dx = digits(xr[1] - xr[0]), dy = digits(yr[1] - yr[0]);
  const text = [xr[0].toFixed(dx), xr[1].toFixed(dx), yr[0].toFixed(dy), yr[1].toFixed(dy)].join(",");
  return parseZoomText(text) ? text : null; // never a link the server (and this parser) would refuse
}

/** The zoom in the query string `search` (null: none, or one the server refuses). @param {string} search */
export function parseZoom(search) {
  const text = new URLSearchParams(search).get(SHARED.zoom_key);
  return text ? parseZoomText(text) : null;
}

// The zoom's grammar is Python's (`app.state.parse_zoom`): four ASCII decimal numbers
// (`SHARED.zoom_number`; Number() alone would read "", " 1" and "0x10"), finite, each range at least
// `SHARED.zoom_min_span` wide.
/** @param {string} text @returns {Ranges|null} */
function parseZoomText(text) {
  const number = new RegExp(`^(?:${SHARED.zoom_number})$`);
  const parts = text.split(",");
  if (parts.length !== SHARED.zoom_parts.length || !parts.every((part) => number.test(part))) return null;
  const v = parts.map(Number);
  if (!v.every(Number.isFinite) || !(v[1] - v[0] >= SHARED.zoom_min_span) || !(v[3] - v[2] >= SHARED.zoom_min_span)) return null;
  return { x: [v[0], v[1]], y: [v[2], v[3]] };
}

/** The URL `url` (none: as it is) with the zoom shown now. @param {string|URL|null|undefined} url */
function withZoom(url) {
  const inst = ZOOM.inst;
  if (!inst || !inst.plotted || url === undefined || url === null) return url;
  const next = new URL(String(url), window.location.href);
  const text = inst.zoom;
  if (text) next.searchParams.set(SHARED.zoom_key, text);
  else next.searchParams.delete(SHARED.zoom_key);
  return next.pathname + next.search.replaceAll("%2C", ",") + next.hash;
}

// The history as the map and the panel use it: the query string of the entry shown (the panel tells a
// Back or Forward between two of its own entries from others: js/history.js, `watchHistory`, which alone
// follows it on Back and Forward), and
// pushState unwrapped (the store's own writes: js/store.js `writeLink`).
export const HISTORY = {
  /** @type {string|null} */ search: null,
  watching: false,
  /** @type {(state: any, title: string, url?: string|URL|null) => void} */ push: (s, t, u) => window.history.pushState(s, t, u),
  moves: 0, // Back and Forward steps taken on this page
  /** @type {Map<string, number>} links sent with a step (`sentLink`), each with `moves` when sent */ sent: new Map(),
  /** @type {number|null} `moves` when a step of the server's was sent (`sentStep`), until it wrote its link */ unlinked: null,
};

// A step the browser draws itself is written into the address bar by the browser and sent to the
// server with its link (`query`); the server's run for it writes that link again (Streamlit's page
// info: a pushState, or a replaceState while a Back or Forward of Streamlit's is under way). Where the
// reader went Back or Forward after the step was sent, that write comes from a run for an entry the
// reader has left and would put its link over the entry the reader is on, whose own run then draws the
// page: the address bar would say one view and the page show another. So such a write is dropped
// (`staleWrite`); each link sent is awaited once, until the server's write of it or a part's state
// for it (js/entry.js, `answered`). A step the server takes itself (a paper opened: its abstract and
// nearest papers are the server's) is sent without a link, and its run writes one the browser cannot
// know: the first write of another view than the address bar's after it is that link (`sentStep`),
// dropped likewise where the reader went Back or Forward since (else a history entry the reader never
// asked for, over the Forward entries); a map's state for the address bar's view says the step changed
// no view and wrote nothing (`answeredStep`).
/** A query string as a key: its parameters sorted, however encoded, without the zoom and the keys
 * `dropped`. @param {string} query @param {string[]} [dropped] */
const queryKey = (query, dropped = []) => {
  const params = new URLSearchParams(query);
  for (const key of [SHARED.zoom_key, ...dropped]) params.delete(key);
  params.sort();
  return params.toString();
};

/** A link sent with a step, as a key: its view's parameters (the map's name aside). @param {string} query */
const sentKey = (query) => queryKey(query, ["map"]);

/** The link a step the browser drew is sent to the server with. @param {string} query */
export function sentLink(query) {
  HISTORY.sent.delete(sentKey(query));
  HISTORY.sent.set(sentKey(query), HISTORY.moves);
  if (HISTORY.sent.size > 20) HISTORY.sent.delete(/** @type {string} */ (HISTORY.sent.keys().next().value));
}

/** The server's answer for the link `link` arrived (a part's state for it). @param {string} link */
export const answered = (link) => HISTORY.sent.delete(sentKey(link));

/** A step of the server's was sent (a trigger without a link). */
export function sentStep() {
  HISTORY.unlinked = HISTORY.moves;
}

/** The map's state for the link `link` arrived: for the address bar's view, the server's step sent
 * last changed no view (its run writes no link). @param {string} link */
export function answeredStep(link) {
  if (sentKey(link) === sentKey(window.location.search)) HISTORY.unlinked = null;
}

/** Whether a write of the address bar to `url` is the server's write of a link sent before the reader
 * went Back or Forward to another entry, or of the link of a step of the server's sent before it
 * (dropped: see above). @param {string|URL|null|undefined} url */
function staleWrite(url) {
  if (url === null || url === undefined) return false;
  const key = sentKey(new URL(String(url), window.location.href).search), moves = HISTORY.sent.get(key);
  const here = key === sentKey(window.location.search);
  if (moves !== undefined) {
    HISTORY.sent.delete(key);
    return moves < HISTORY.moves && !here;
  }
  const since = HISTORY.unlinked;
  if (since === null || here) return false; // the zoom's writes, and the server's of the view shown
  HISTORY.unlinked = null;
  return since < HISTORY.moves;
}

// Streamlit pushes a new history entry for a run's link whenever its text differs from the address
// bar's (`handlePageInfoChanged`), and the server writes links in Python's encoding (`quote_plus`: a
// comma `%2C`, `~` as itself) while the page keeps them in the browser's (`withZoom`: a comma itself,
// `~` as `%7E`). A push of the link the address bar says already (`saysAlready`) is not made: Back to
// an entry the server wrote, whose link the server then wrote again, added a copy of the entry over
// the Forward ones.
/** Whether the address bar says the link `url` already, however encoded or ordered (the zoom aside).
 * @param {string|URL|null|undefined} url */
function saysAlready(url) {
  if (url === null || url === undefined) return false;
  const next = new URL(String(url), window.location.href);
  return next.pathname === window.location.pathname && queryKey(next.search) === queryKey(window.location.search);
}

export function wrapHistory() {
  if (window.history.atlasWrapped) return;
  window.history.atlasWrapped = true;
  HISTORY.search = window.location.search;
  for (const name of /** @type {("pushState"|"replaceState")[]} */ (["pushState", "replaceState"])) {
    const original = window.history[name].bind(window.history);
    /** @type {(state: any, title: string, url: string|URL|null|undefined, how: LinkChange) => void} */
    const unwrapped = (state, title, url, how) => {
      original(state, title, url);
      HISTORY.search = window.location.search;
      linkChanged(how); // a part's answer held for this link drawn (js/links.js)
    };
    if (name === "pushState") HISTORY.push = (state, title, url) => unwrapped(state, title, url, "stepped"); // the store's
    window.history[name] = (/** @type {any} */ state, /** @type {string} */ title, /** @type {string|URL|null|undefined} */ url) => {
      if (staleWrite(url) || (name === "pushState" && saysAlready(url))) return;
      unwrapped(state, title, withZoom(url), "written");
    };
  }
  window.addEventListener("popstate", () => {
    HISTORY.moves += 1;
    linkChanged("moved");
    const inst = ZOOM.inst;
    if (inst && inst.plotted) restoreZoom(inst, parseZoom(window.location.search));
  });
}

/** @param {AtlasMap} inst */
export function rememberZoom(inst) {
  inst.zoom = zoomText(inst);
  const here = window.location.pathname + window.location.search + window.location.hash;
  const wanted = withZoom(here);
  if (wanted !== here) window.history.replaceState(window.history.state, "", wanted);
}

// The zoom `zoom` (none: the opening view) on the shown chart. Where the chart shows it already
// (`sameZoom`), nothing is laid out again: Back or Forward between views that differ only in what they
// show (a filter, an opened topic) would otherwise draw the faint image and the sample for an unmoved
// view again (70 ms at 81,646 papers).
/** @param {AtlasMap} inst @param {{x: number[], y: number[]}|null} zoom */
export function restoreZoom(inst, zoom) {
  const range = zoom || inst.table.range, now = ranges(inst.gd);
  if (now && sameZoom(now, range)) return Promise.resolve();
  return window.Plotly.relayout(inst.gd, { "xaxis.range": range.x.slice(), "yaxis.range": range.y.slice() });
}
