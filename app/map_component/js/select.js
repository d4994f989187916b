// @ts-check
// A box or lasso the reader drew on the map, shown by the browser: the link gets the shape
// (`selectionText`), which the server reads as any link's, and the papers table lists the papers it
// holds and the topic list counts them from the link's view (js/page.js: `rowsInOutline`, the rule of
// the server's `selected_rows`, `counted_in_view`).

import { LINK } from "./links.js";
import { parsedOutline } from "./sampling.js";
import { readingStep } from "./steps.js";
import { currentView } from "./store.js";
/** @import { AtlasMap } from "./atlas_map.js" */
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

/** A box or lasso the reader drew on the map (`outline`; null: Plotly's own deselection): a reading
 * step (js/steps.js), the link written with the shape (or without it), with WebGL or without (the
 * map's image of the papers, js/fallback.js). A shape the link cannot write, or a deselection the link
 * does not hold: the server's step, told the shape.
 * @param {AtlasMap} inst @param {Outline|null} outline */
export function selectShape(inst, outline) {
  const text = outline ? selectionText(outline) : "", detail = { shape: outline, map: inst.pointsUrl };
  if (outline ? !text : !currentView().selection) inst.trigger("select", detail);
  else readingStep(inst.trigger, "select", detail, { kind: "select", selection: text });
}

/** The papers table's "Clear selection" (`trigger`: the table's; `map`: its point table's URL): a
 * reading step, the link written without the shape (js/steps.js); the server's without a map.
 * @param {Trigger} trigger @param {string} map */
export function clearSelection(trigger, map) {
  if (!LINK.map) trigger("clear", { map });
  else readingStep(trigger, "clear", { map }, { kind: "select", selection: "" });
}
