// @ts-check
// A box or lasso the reader drew on the map, shown by the browser: the link gets the shape
// (`selectionText`), which the server reads as any link's, and the papers table lists the papers it
// holds and the topic list counts them from the link's view (js/page.js: `rowsInOutline`, the rule of
// the server's `selected_rows`, `counted_in_view`).

import { keptView, showKept } from "./history.js";
import { LINK, VIEWS, keepView, linkKey, streamlitIdle } from "./links.js";
import { parsedOutline } from "./sampling.js";
import { SHARED } from "./shared.js";
import { linkAfter, writeLink } from "./store.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { KeptView } from "./links.js" */
/** @import { LassoPath, Outline, Trigger } from "./protocol.js" */

/** The `select=` value of a shape the reader drew (`outlineOf`: six digits, a lasso thinned), each
 * number as JavaScript writes it (the server reads it as any link's, `parse_selection`); "" where the
 * server would take it for none. @param {Outline} outline */
function selectionText(outline) {
  const lasso = /** @type {LassoPath} */ (outline.lasso);
  const numbers = outline.box || lasso.x.flatMap((x, k) => [x, lasso.y[k]]);
  if (!numbers.every(Number.isFinite)) return "";
  const text = `${outline.box ? "box" : "lasso"}:${numbers.join(",")}`;
  return parsedOutline(text) ? text : "";
}

/** A box or lasso the reader drew (`outline`), shown by the browser where the map, the topic panel
 * and the papers table all show the view the server drew last for the address bar's link, with WebGL,
 * no entry of the key picked and no script run under way. The link is written with the shape (a new
 * history entry); the server is told in the task before the parts draw it, with that link, which it
 * follows (app/session.py `follow_step`); the three parts' states for the view are made from their
 * last ones, kept for Back and Forward, and shown. Whether it was (else the server is the one to tell).
 * @param {AtlasMap} inst @param {Outline} outline */
export function selectInBrowser(inst, outline) {
  const { map, panel, table } = VIEWS.last, listed = LINK.panel, papers = LINK.table;
  const text = selectionText(outline), drawn = text ? parsedOutline(text) : null;
  if (!drawn || inst.fallback || inst.keyShown || !inst.table || !map || !panel || !table || !listed || !papers) return false;
  const here = linkKey(window.location.search);
  const links = [map.link, panel.link, table.link];
  if (map.points !== inst.pointsUrl || links.some((link) => link === undefined || linkKey(link) !== here)) return false;
  if (listed.keyShown || papers.keyShown || !streamlitIdle()) return false;
  const query = linkAfter({ kind: "select", selection: text }), link = linkKey(query);
  writeLink(query);
  inst.trigger("select", { shape: outline, query, map: inst.pointsUrl });
  /** @type {KeptView} */
  const states = {
    map: { ...map, selection: drawn, link },
    panel: { ...panel, link }, // its counts, and the table's papers, are the link's (js/page.js)
    table: { ...table, link },
  };
  for (const [kind, state] of Object.entries(states)) keepView(/** @type {"map"|"panel"|"table"} */ (kind), state);
  showKept(states);
  return true;
}

/** The selection dropped (`how`: "clear", the papers table's "Clear selection"; "select", the map's
 * own deselection), shown by the browser where it keeps the view without it (`keptView`: the view
 * before the box, most often) and no script run is under way: the link written without `select=` (a
 * new history entry), the server told with it (which follows it: app/session.py `follow_step`), the
 * kept view shown. Whether it was (else the server is the one to tell).
 * @param {"clear"|"select"} how @param {Trigger} trigger */
export function clearInBrowser(how, trigger) {
  const inst = LINK.map, map = VIEWS.last.map;
  if (!inst || !map || !new URLSearchParams(window.location.search).has(SHARED.select_key) || !streamlitIdle()) return false;
  const query = linkAfter({ kind: "select", selection: "" });
  // "Clear selection" moves the server's counter of it (`session.CLEAR_SELECTION`), as the map's state will.
  const drawn = keptView(query, how === "clear" ? map.clear + 1 : undefined);
  if (!drawn) return false;
  writeLink(query);
  if (how === "clear") trigger("clear", { query, map: inst.pointsUrl });
  else trigger("select", { shape: null, query, map: inst.pointsUrl });
  showKept(drawn);
  return true;
}
