// @ts-check
// Without WebGL.
// Chrome 139 and later no longer fall back to software WebGL by themselves: a browser may give the
// page no WebGL at all. A map of more than 1,000 papers draws its points with WebGL (scattergl); in
// such a browser every paper is drawn instead on a 2-D canvas, in its colour, and put into an SVG
// chart as a layout image in data coordinates (zoom and pan carry it; it is redrawn sharp for the new
// view), and what the reader asked for (search hits, a filter, an opened topic, a box or lasso
// selection) is drawn as SVG points that hover and click, at most FALLBACK_POINTS of them (an even
// sample beyond, and the note under the map says how many). Names, ring and pin are as ever.

import { pngOf } from "./context.js";
import { number } from "./view.js";
import { detailOf, hoverTitle } from "./load.js";
import { HOVER, INK, plotArea, ranges, traces } from "./plot.js";
import { grouping } from "./sampling.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { MapView, PlotEvent, ViewState } from "./protocol.js" */
/** @import { Drawn } from "./sampling.js" */

const FALLBACK_POINTS = 5000;
const DENSITY_PAD = 0.25; // the image reaches this share of the view beyond each edge
const NO_WEBGL = "This browser has no WebGL: the map is an image; search hits and selections are drawn as points.";
/** @type {boolean|undefined} whether this page can have a WebGL context, asked once */
let webgl;

function webglAvailable() {
  if (webgl === undefined) {
    const canvas = document.createElement("canvas");
    const context = canvas.getContext("webgl2") || canvas.getContext("webgl");
    webgl = Boolean(context);
    const lose = context && context.getExtension("WEBGL_lose_context");
    if (lose) lose.loseContext(); // the probe's context is given back at once
  }
  return webgl;
}

// A new point table: does this map need WebGL that the browser lacks?
/** @param {AtlasMap} inst */
export function startFallback(inst) {
  clearTimeout(inst.densityTimer);
  if (inst.densityUrl) URL.revokeObjectURL(inst.densityUrl); // the old map's charts are gone
  Object.assign(inst, {
    fallback: Boolean(inst.table.webgl) && !webglAvailable(),
    density: null, densityUrl: null, densityKey: undefined, picked: [], capped: {},
  });
  inst.noteText.textContent = inst.fallback ? NO_WEBGL : "";
  showCapped(inst, "sub", 0);
}

// Rows `idx` of every per-point column of `columns` (an overlay: rows, x, y, title, ...).
/** @param {Drawn} columns @param {number[]} idx @returns {Drawn} */
function sampleColumns(columns, idx) {
  const n = columns.rows.length;
  /** @type {Object<string, any>} */
  const out = {};
  for (const [name, values] of Object.entries(columns)) {
    out[name] = values && typeof values !== "string" && values.length === n ? idx.map((i) => values[i]) : values;
  }
  return /** @type {Drawn} */ (out);
}

/** @param {number} total @param {number} count */
function evenSample(total, count) {
  return Array.from({ length: count }, (_, k) => Math.floor((k * total) / count));
}

// The note under the map: the missing WebGL, and how many of the highlighted or selected papers are points.
/** @param {AtlasMap} inst @param {"sub"|"picked"} what @param {number} total */
function showCapped(inst, what, total) {
  inst.capped[what] = total > FALLBACK_POINTS ? total : 0;
  const words = { sub: "highlighted", picked: "selected" };
  const parts = Object.entries(inst.capped)
    .filter(([, n]) => n)
    .map(([kind, n]) => `${number(FALLBACK_POINTS)} of the ${number(n)} ${words[/** @type {"sub"|"picked"} */ (kind)]} papers are drawn (an even sample).`);
  inst.noteCount.textContent = parts.length ? " " + parts.join(" ") : "";
  inst.note.hidden = !inst.fallback;
}

// The highlighted papers the "sub" chart draws as SVG points: all of them, or an even sample.
/** @param {AtlasMap} inst @param {Drawn} sub */
function fallbackPoints(inst, sub) {
  const total = inst.mask ? inst.mask.rows.length : sub.rows.length;
  showCapped(inst, "sub", total);
  const drawn = sub.rows.length;
  return drawn > FALLBACK_POINTS ? sampleColumns(sub, evenSample(drawn, FALLBACK_POINTS)) : sub;
}

// The charts without WebGL: "sub" as ever, in SVG and capped; "all" holds only the selected papers
// (its image holds every paper).
/** @param {AtlasMap} inst @param {MapView} view @param {"all"|"sub"} name */
export function fallbackTraces(inst, view, name) {
  const t = inst.table;
  if (name === "sub") {
    const [trace] = traces(inst, view, name); // takes the highlighted papers for the view (`inst.sub`)
    const sub = (inst.sub = fallbackPoints(inst, /** @type {Drawn} */ (inst.sub))); // `traces` took them
    inst.charts.sub.div.atlasDrawn = [sub];
    return [{ ...trace, type: "scatter", x: sub.x, y: sub.y, text: sub.title, hovertext: sub.detail, marker: { ...trace.marker, color: sub.colour } }];
  }
  const rows = inst.picked;
  const g = grouping(t, inst.colourKey || "");
  // No selection: one point at no place, as Plotly hides an empty trace, and with it box and lasso.
  const none = rows.length === 0 ? [null] : null;
  return [{
    type: "scatter", name: "selected", mode: "markers", showlegend: false,
    x: none || rows.map((i) => t.x[i]), y: none || rows.map((i) => t.y[i]),
    text: rows.map((i) => hoverTitle(t, i)), hovertext: rows.map((i) => detailOf(t, i)), hovertemplate: HOVER,
    marker: { color: rows.map((i) => g.palette[g.code[i]]), size: t.size * 1.25, opacity: 0.9, line: { width: 0.6, color: INK } },
  }];
}

/** @param {AtlasMap} inst @param {PlotEvent["points"]} points */
export function pickedRows(inst, points) {
  return (points || []).map((p) => inst.picked[p.pointIndex]).filter((row) => row !== undefined);
}

// Show `rows` (a box or lasso selection) as points on the "all" chart.
/** @param {AtlasMap} inst @param {number[]} rows */
export async function showPicked(inst, rows) {
  showCapped(inst, "picked", rows.length);
  inst.picked = rows.length > FALLBACK_POINTS ? evenSample(rows.length, FALLBACK_POINTS).map((k) => rows[k]) : rows;
  const chart = inst.charts.all;
  if (!chart.plotted || !inst.view) return;
  const [trace] = fallbackTraces(inst, inst.view, "all");
  chart.syncing = true;
  try {
    const style = { x: [trace.x], y: [trace.y], text: [trace.text], hovertext: [trace.hovertext], "marker.color": [trace.marker.color] };
    await window.Plotly.restyle(chart.div, style, [0]);
  } finally {
    chart.syncing = false;
  }
}

// One paper on the image: a dot of `radius` px at (x, y), blended over what is there ("source over"
// in the image's own pixels: for 81,646 papers a few times faster than filling canvas paths).
/** @param {ImageData} image @param {number} x @param {number} y @param {number} radius @param {number[]} rgb @param {number} alpha */
function dot(image, x, y, radius, rgb, alpha) {
  const { width, height, data } = image;
  const x0 = Math.max(0, Math.round(x - radius)), x1 = Math.min(width, Math.round(x + radius));
  const y0 = Math.max(0, Math.round(y - radius)), y1 = Math.min(height, Math.round(y + radius));
  const round = radius > 1.6, r2 = radius * radius;
  for (let py = y0; py < y1; py++) {
    for (let px = x0; px < x1; px++) {
      if (round && (px + 0.5 - x) ** 2 + (py + 0.5 - y) ** 2 > r2) continue;
      const k = 4 * (py * width + px);
      const under = (data[k + 3] / 255) * (1 - alpha), out = alpha + under;
      data[k] = (rgb[0] * alpha + data[k] * under) / out;
      data[k + 1] = (rgb[1] * alpha + data[k + 1] * under) / out;
      data[k + 2] = (rgb[2] * alpha + data[k + 2] * under) / out;
      data[k + 3] = out * 255;
    }
  }
}

/** @param {AtlasMap} inst */
export function scheduleDensity(inst) {
  clearTimeout(inst.densityTimer);
  inst.densityTimer = setTimeout(() => {
    if (!inst.busy) showDensity(inst);
    else inst.densityKey = undefined; // drawn when the view being applied is
  }, 150);
}

// Every paper in its colour on a 2-D canvas for the current view (and a quarter of a view around it,
// so a pan shows papers until the image is redrawn), as the "all" chart's layout image in data
// coordinates. At screen resolution: the image's pixels cost most (`pngOf` writes them as they are).
/** @param {AtlasMap} inst */
export async function showDensity(inst) {
  const chart = inst.charts.all;
  if (inst.active !== "all" || !chart.plotted) return; // drawn when the whole map is shown
  const area = plotArea(chart.div), now = ranges(chart.div);
  if (!area || !now) return;
  const key = `${inst.colourKey}|${now.x}|${now.y}|${area.w}x${area.h}`;
  if (key === inst.densityKey) return;
  inst.densityKey = key;
  const started = performance.now();
  const t = inst.table;
  const padX = (now.x[1] - now.x[0]) * DENSITY_PAD, padY = (now.y[1] - now.y[0]) * DENSITY_PAD;
  const xr = [now.x[0] - padX, now.x[1] + padX], yr = [now.y[0] - padY, now.y[1] + padY];
  const width = Math.max(1, Math.round(area.w * (1 + 2 * DENSITY_PAD)));
  const height = Math.max(1, Math.round(area.h * (1 + 2 * DENSITY_PAD)));
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const g = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  const image = g.createImageData(width, height);
  const alpha = t.n < 5000 ? 0.85 : t.n < 20000 ? 0.7 : 0.55; // overlapping papers add up: density
  const radius = Math.max(0.75, t.size * 0.4);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  for (const group of grouping(t, inst.colourKey || "").groups) { // the unassigned grey first, the colours over it
    g.fillStyle = group.colour; // the canvas reads the colour: "#rrggbb" back
    const rgb = [1, 3, 5].map((k) => parseInt(String(g.fillStyle).slice(k, k + 2), 16));
    for (const i of group.rows) dot(image, (t.x[i] - xr[0]) * sx, (yr[1] - t.y[i]) * sy, radius, rgb, alpha);
  }
  const blob = pngOf(image);
  const previous = inst.densityUrl;
  inst.densityUrl = URL.createObjectURL(blob);
  inst.density = {
    source: inst.densityUrl, xref: "x", yref: "y", x: xr[0], y: yr[1], sizex: xr[1] - xr[0], sizey: yr[1] - yr[0],
    sizing: "stretch", layer: "below", opacity: 1,
  };
  chart.syncing = true;
  try {
    await window.Plotly.relayout(chart.div, { "images[0]": inst.density });
  } finally {
    chart.syncing = false;
  }
  chart.div.dataset.atlasDensity = String(Number(chart.div.dataset.atlasDensity || 0) + 1); // for tests
  chart.div.dataset.atlasDensityMs = String(Math.round(performance.now() - started)); // and benchmarks
  if (previous) URL.revokeObjectURL(previous);
}
