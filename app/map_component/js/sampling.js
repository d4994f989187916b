// @ts-check
// Sampling: what a chart draws of the papers.
//
// Points are grouped by colour, the unassigned (or missing-value) group first so the rest is drawn on top.
// Every paper, and the highlighted papers, are each one trace with a colour per point, as hex strings,
// the cheapest form: with a trace per colour group, a box selection, and every frame while one is
// drawn, cost a WebGL batch per group, three to five times one trace's at 81,646 papers in 180
// topics (benchmarks/STEPS_RESULTS.md, slice 5).
// Hover text is made for a point when it is first hovered; groups once per colouring.
//
// A big map is drawn as a sample (`sampleRows`): at most `draw_cap` points a view, taken in the point
// file's draw order (a density-biased order: sparse places first keep every paper, dense ones are
// thinned), among the papers in view, so a frame costs the same at any map size and zooming in shows
// more until every paper in view is drawn. The highlighted papers (a filter's, a search's hits) are
// sampled the same way when more than `draw_cap` of them: a search for "learning" finds 370,000 of a
// million papers, and drawing them all was most of the step's two seconds (STEPS_RESULTS.md, slice 18).

import { detailOf, hoverTitle } from "./load.js";
import { SHARED } from "./shared.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { PointTable } from "./load.js" */
/** @import { LassoPath, MapView, Mask, Outline, PlotEvent, Ranges, ViewState } from "./protocol.js" */

/** @typedef {{groups: {colour: string, rows: Uint32Array}[], code: Uint16Array, slot: Uint32Array, palette: string[]}} Grouping */
/** @typedef {{colour: any, rows: Uint32Array|number[], x: Float32Array|number[], y: Float32Array|number[], title: string[], detail: string[], sampled?: boolean}} Drawn */

// The colouring's groups: {colour, rows} in drawing order, and `slot[code]` = a code's group.
/** @param {PointTable} table @param {string} key @returns {Grouping} */
export function grouping(table, key) {
  const made = table.groupings.get(key);
  if (made) return made;
  const by = key && table.colourings[key] ? table.colourings[key] : null;
  const palette = by ? by.palette : table.palette;
  const code = by ? by.code : table.colour;
  const grey = palette.length - 1;
  const order = [grey, ...palette.keys()].filter((c, k) => k === 0 || c !== grey);
  const slot = new Uint32Array(palette.length);
  order.forEach((c, k) => (slot[c] = k));
  const split = bySlot(table.n, null, code, slot, order.length);
  const groups = order.map((c, k) => ({ colour: palette[c], rows: split[k] }));
  const result = { groups, code, slot, palette };
  table.groupings.set(key, result);
  return result;
}

// `rows` (every row when null) split by their code's slot, each part in the order given.
/** @param {number} n @param {ArrayLike<number>|null} rows @param {ArrayLike<number>} code @param {Uint32Array} slot @param {number} slots */
function bySlot(n, rows, code, slot, slots) {
  const count = new Uint32Array(slots);
  const total = rows ? rows.length : n;
  for (let j = 0; j < total; j++) count[slot[code[rows ? rows[j] : j]]]++;
  const parts = Array.from(count, (c) => new Uint32Array(c));
  const fill = new Uint32Array(slots);
  for (let j = 0; j < total; j++) {
    const i = rows ? rows[j] : j;
    const k = slot[code[i]];
    parts[k][fill[k]++] = i;
  }
  return parts;
}

// The rows to draw for the view `range` among `candidates` (a mask, or null for every paper): null
// when all of them fit under `cap`; else the first `cap` papers in the draw order that are in the view
// (widened by a fifth each side, so a small pan shows points at once).
/** @param {PointTable} t @param {Mask|null} mask @param {Ranges} range @param {number} cap @returns {Uint32Array|null} */
export function sampleRows(t, mask, range, cap) {
  const total = mask ? mask.rows.length : t.n;
  if (total <= cap) return null;
  const padX = (range.x[1] - range.x[0]) * 0.2, padY = (range.y[1] - range.y[0]) * 0.2;
  const x0 = range.x[0] - padX, x1 = range.x[1] + padX, y0 = range.y[0] - padY, y1 = range.y[1] + padY;
  const out = new Uint32Array(cap);
  const { order, x, y } = t;
  let k = 0;
  for (let j = 0; j < t.n && k < cap; j++) {
    const i = order[j];
    if (mask && !mask[i]) continue;
    const px = x[i], py = y[i];
    if (px >= x0 && px <= x1 && py >= y0 && py <= y1) out[k++] = i;
  }
  return out.subarray(0, k);
}

/** Points drawn at most per view: the view state's, or Python's default. @param {ViewState|null} view */
export function capOf(view) {
  return view && view.draw_cap > 0 ? view.draw_cap : SHARED.draw_cap;
}

// Papers `rows` (every paper when null) to draw as one trace: grouped as the colouring is, so that
// the unassigned grey is drawn first, under the rest; typed x/y, a colour per point, and hover text
// made only for the points hovered (`lazyTexts`).
/** @param {AtlasMap} inst @param {ArrayLike<number>|null} rows @returns {Drawn} */
export function painted(inst, rows) {
  const t = inst.table;
  const g = grouping(t, inst.colourKey || "");
  const parts = rows ? bySlot(t.n, rows, g.code, g.slot, g.groups.length) : g.groups.map((group) => group.rows);
  const m = parts.reduce((total, part) => total + part.length, 0);
  const order = new Uint32Array(m), x = new Float32Array(m), y = new Float32Array(m), colour = new Array(m);
  let j = 0;
  parts.forEach((part, slot) => {
    for (const i of part) {
      order[j] = i;
      x[j] = t.x[i];
      y[j] = t.y[i];
      colour[j] = g.groups[slot].colour; // hex strings: cheaper than a colour scale
      j += 1;
    }
  });
  const title = lazyTexts(m, (k) => hoverTitle(t, order[k])), detail = lazyTexts(m, (k) => detailOf(t, order[k]));
  return { rows: order, x, y, colour, title, detail };
}

// `m` texts, each made when first read and kept: Plotly's WebGL scatter reads a point's hover text
// only when it is hovered, so a drawing makes none (making every title up front was 0.73 s of a
// first search's 370,000 hits at a million papers). Plotly's SVG scatter reads them all, as before.
/** @param {number} m @param {(k: number) => string} make @returns {string[]} */
function lazyTexts(m, make) {
  const index = (/** @type {string|symbol} */ key) => {
    if (typeof key !== "string") return -1;
    const k = Number(key);
    return Number.isInteger(k) && k >= 0 && k < m && String(k) === key ? k : -1;
  };
  return new Proxy(new Array(m), {
    get(made, key, receiver) {
      const k = index(key);
      if (k === -1) return Reflect.get(made, key, receiver);
      return made[k] === undefined ? (made[k] = make(k)) : made[k];
    },
    has: (made, key) => index(key) !== -1 || Reflect.has(made, key),
  });
}

// The highlighted papers to draw: every one, or sampled like the map when more than the cap.
/** @param {AtlasMap} inst @param {Mask} mask @param {Ranges} range */
export function overlay(inst, mask, range) {
  const sampled = sampleRows(inst.table, mask, range, capOf(inst.view));
  const sub = painted(inst, sampled || mask.rows);
  sub.sampled = sampled !== null;
  return sub;
}

// What the shown chart draws of the papers, as a key: redrawn when it changes (`resample`).
/** @param {AtlasMap} inst @param {"all"|"sub"} name */
export function sampleKey(inst, name) {
  const t = inst.table;
  const total = name === "all" ? t.n : inst.mask ? inst.mask.rows.length : 0;
  if (total <= capOf(inst.view)) return "every";
  return `sample${inst.sampleGen}`;
}

/** @param {AtlasMap} inst @param {MapView} view @param {"all"|"sub"} name */
export function drawKeyOf(inst, view, name) {
  const colourKey = view.colour || "";
  const base = name === "all" ? `${colourKey}|${view.height}` : `${colourKey}|${inst.maskKey}|${view.search}|${view.height}`;
  return `${base}|${sampleKey(inst, name)}`;
}

// A box or lasso the reader drew, as the map's events carry it (`Outline`) and written as the link
// keeps it (app/selection.py, `selection_text`): six significant digits a number, a box's ranges in
// order, a long lasso thinned evenly to `SHARED.max_corners` corners. The server's answer then draws
// back the very shape drawn, and `showSelection` need not make Plotly select again (0.5 s at 81,646
// papers). Null: no box or lasso.
/** @param {PlotEvent|null} event @returns {Outline|null} */
export function outlineOf(event) {
  const digits = (/** @type {number} */ v) => Number(Number(v).toPrecision(6));
  if (event && event.range && event.range.x && event.range.y) {
    const [x0, x1, y0, y1] = [...event.range.x, ...event.range.y].map(digits);
    return { box: [Math.min(x0, x1), Math.max(x0, x1), Math.min(y0, y1), Math.max(y0, y1)] };
  }
  if (!event || !event.lassoPoints || !event.lassoPoints.x) return null;
  const { x, y } = event.lassoPoints, most = SHARED.max_corners;
  const keep = x.length <= most ? x.map((_, k) => k) : Array.from({ length: most }, (_, k) => Math.round((k * (x.length - 1)) / (most - 1)));
  return { lasso: { x: keep.map((k) => digits(x[k])), y: keep.map((k) => digits(y[k])) } };
}

/** The outline a `select=` value describes, as the server sends it (payload.py `outline`, after
 * app/state.py `parse_selection`); null where it is none. @param {string} text @returns {Outline|null} */
export function parsedOutline(text) {
  const at = text.indexOf(":"), kind = text.slice(0, at), parts = text.slice(at + 1).split(",");
  const number = new RegExp(`^(?:${SHARED.zoom_number})$`);
  if ((kind !== "box" && kind !== "lasso") || !parts.every((part) => number.test(part))) return null;
  const v = parts.map(Number);
  if (!v.every(Number.isFinite)) return null;
  if (kind === "box") {
    if (v.length !== 4) return null;
    const xs = [Math.min(v[0], v[1]), Math.max(v[0], v[1])], ys = [Math.min(v[2], v[3]), Math.max(v[2], v[3])];
    return xs[0] === xs[1] || ys[0] === ys[1] ? null : { box: [...xs, ...ys] };
  }
  if (v.length % 2 || v.length < 6 || v.length > 2 * SHARED.max_corners) return null;
  return { lasso: { x: v.filter((_, k) => k % 2 === 0), y: v.filter((_, k) => k % 2 === 1) } };
}

// Rows of the papers an outline holds, among those of `mask` (all: null), found by place: the rule
// of app/selection.py `rows_inside` (a box's edges belong to it; a lasso by the even-odd rule).
/** @param {{n: number, x: ArrayLike<number>, y: ArrayLike<number>}} t the point table (`PointTable`), or its places
 * @param {Uint8Array|null} mask @param {Outline} outline @returns {number[]} */
export function rowsInOutline(t, mask, outline) {
  /** @type {(x: number, y: number) => boolean} */
  let inside;
  if (outline.box) {
    const [ax, bx, ay, by] = outline.box;
    const [x0, x1, y0, y1] = [Math.min(ax, bx), Math.max(ax, bx), Math.min(ay, by), Math.max(ay, by)];
    inside = (x, y) => x >= x0 && x <= x1 && y >= y0 && y <= y1;
  } else {
    const { x: px, y: py } = /** @type {LassoPath} */ (outline.lasso);
    const x0 = Math.min(...px), x1 = Math.max(...px), y0 = Math.min(...py), y1 = Math.max(...py);
    inside = (x, y) => {
      if (x < x0 || x > x1 || y < y0 || y > y1) return false;
      let odd = false;
      for (let a = 0, b = px.length - 1; a < px.length; b = a++) {
        if (py[a] > y !== py[b] > y && x < ((px[b] - px[a]) * (y - py[a])) / (py[b] - py[a]) + px[a]) odd = !odd;
      }
      return odd;
    };
  }
  const rows = [];
  for (let i = 0; i < t.n; i++) if ((!mask || mask[i]) && inside(t.x[i], t.y[i])) rows.push(i);
  return rows;
}
