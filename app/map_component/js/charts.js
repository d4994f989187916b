// @ts-check
// The charts: two Plotly charts in one place, one shown at a time (see atlas_map.js): their traces and
// layout, showing one in the other's place, and their events.

import { drawContext, scheduleContext } from "./context.js";
import { fallbackTraces, pickedRows, scheduleDensity, showPicked } from "./fallback.js";
import { chartHeight } from "./legend.js";
import { placeMarks } from "./marks.js";
import { CONFIG, INK, MARGIN, ranges, shownState, traces } from "./plot.js";
import { drawKeyOf, outlineOf, rowsInOutline, sampleKey } from "./sampling.js";
import { selectShape } from "./select.js";
import { rememberZoom } from "./zoom.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { Chart, ChartState, LassoPath, MapView, Outline, PlotDiv, PlotEvent, Ranges, ViewState } from "./protocol.js" */
/** @import { Drawn } from "./sampling.js" */

/** @param {AtlasMap} inst @param {ViewState} view @param {Chart} chart @param {ChartState} state */
function layout(inst, view, chart, state) {
  /** @type {Object<string, any>} */
  const next = {
    height: chartHeight(inst, view),
    margin: MARGIN,
    plot_bgcolor: "#fbfbfd",
    paper_bgcolor: "rgba(0,0,0,0)",
    xaxis: { visible: false, showgrid: false, zeroline: false, range: state.x },
    yaxis: { visible: false, showgrid: false, zeroline: false, range: state.y },
    dragmode: state.dragmode || "pan",
    clickmode: "event",
    hovermode: "closest",
    hoverlabel: { bgcolor: "white", font: { size: 13, color: INK }, align: "left" },
    showlegend: false,
    images: chart.name === "sub" ? (inst.context ? [inst.context] : []) : inst.fallback && inst.density ? [inst.density] : [],
  };
  if (state.selections) next.selections = state.selections;
  return next;
}

// Draw `name`'s chart for this view if what it shows changed, bring it to the shown chart's zoom and
// drag tool, and show it in place of the other.
/** @param {AtlasMap} inst @param {MapView} view @param {"all"|"sub"} name @param {string} drawKey */
export async function showChart(inst, view, name, drawKey) {
  const Plotly = window.Plotly;
  const chart = inst.charts[name];
  const state = shownState(inst);
  if (!chart.plotted || drawKey !== chart.drawnKey) {
    const method = chart.plotted ? Plotly.react : Plotly.newPlot;
    const drawn = inst.fallback ? fallbackTraces(inst, view, name) : traces(inst, view, name);
    await method(chart.div, drawn, layout(inst, view, chart, state), CONFIG);
    if (name === "sub") inst.contextShown = Boolean(inst.context);
    if (!chart.plotted) {
      chart.plotted = true;
      chart.div.atlasTable = inst.table; // for tests and benchmarks: row -> position
      bindEvents(inst, chart);
    }
    chart.drawnKey = drawKey;
  }
  const now = /** @type {Ranges} */ (ranges(chart.div)); // drawn just now
  const differs = (/** @type {number[]} */ a, /** @type {number[]} */ b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) > 1e-9 * (Math.abs(b[1] - b[0]) || 1);
  const update = {};
  if (differs(now.x, state.x) || differs(now.y, state.y)) {
    Object.assign(update, { "xaxis.range": state.x, "yaxis.range": state.y });
  }
  if (state.dragmode && (chart.div.layout.dragmode || "pan") !== state.dragmode) update.dragmode = state.dragmode;
  if (chart.div.layout.height !== chartHeight(inst, view)) update.height = chartHeight(inst, view); // the key's row changed
  if (name === "sub" && inst.context && !inst.contextShown) {
    update["images[0]"] = inst.context; // drawn while the other chart was shown
    inst.contextShown = true;
  }
  if (Object.keys(update).length) {
    chart.syncing = true; // our own move, not the reader's
    try {
      await Plotly.relayout(chart.div, update);
    } finally {
      chart.syncing = false;
    }
  }
  inst.active = name;
  inst.gd = chart.div;
  for (const other of Object.values(inst.charts)) {
    other.div.classList.toggle("atlas-map-graph", other === chart);
    other.div.classList.toggle("atlas-map-idle", other !== chart);
  }
}

// The highlighted papers' chart made ahead, hidden and with one paper, right after the map's first
// drawing (in the next task: the map is painted first): Plotly builds its WebGL programs on a first
// point, several times a redraw's work, which the reader's first search or opened topic would wait for.
/** @param {AtlasMap} inst @param {ViewState} view */
export async function warmChart(inst, view) {
  const chart = inst.charts.sub, t = inst.table;
  if (chart.plotted) return;
  await new Promise((resolve) => setTimeout(resolve, 0));
  const one = {
    type: t.webgl ? "scattergl" : "scatter", mode: "markers", x: [t.x[0]], y: [t.y[0]], hoverinfo: "skip",
    marker: { color: INK, size: t.size, opacity: 0.8, line: t.n <= 2000 ? { width: 0.8, color: "white" } : { width: 0 } },
  };
  await window.Plotly.newPlot(chart.div, [one], layout(inst, view, chart, shownState(inst)), CONFIG);
  inst.contextShown = Boolean(inst.context);
  chart.plotted = true;
  chart.div.atlasTable = inst.table;
  bindEvents(inst, chart);
}

// Rows of the papers a click or a box/lasso picked: the "all" chart's one trace holds every paper
// drawn, the "sub" chart's the highlighted papers.
/** @param {AtlasMap} inst @param {Chart} chart @param {PlotEvent["points"]} points @returns {number[]} */
function rowsOf(inst, chart, points) {
  if (inst.fallback && chart.name === "all") return pickedRows(inst, points);
  const rows = [];
  for (const p of points || []) {
    if (chart.name === "sub") rows.push(/** @type {Drawn} */ (inst.sub).rows[p.pointIndex]);
    else if (p.curveNumber === 0 && inst.every) rows.push(inst.every.rows[p.pointIndex]);
  }
  return rows;
}

/** @param {AtlasMap} inst @param {Chart} chart */
function bindEvents(inst, chart) {
  const gd = chart.div;
  const shown = () => inst.gd === gd && !chart.syncing; // the hidden chart's events are our own moves
  gd.on("plotly_click", (event) => {
    const rows = rowsOf(inst, chart, event && event.points ? event.points.slice(0, 1) : []);
    if (rows.length) inst.trigger("click", { row: rows[0], map: inst.pointsUrl });
  });
  gd.on("plotly_selected", (event) => {
    // Plotly also fires this after programmatic redraws, without a range or lasso: not the reader's.
    if (inst.silent || !shown() || !event || (!event.range && !event.lassoPoints)) return;
    // The server finds the papers the outline holds (app/selection.py) and draws it back written as
    // the link keeps it (`showSelection`); without WebGL not every paper is a point: drawn by place.
    const outline = outlineOf(event);
    inst.selectionKey = JSON.stringify(outline);
    if (inst.fallback && chart.name === "all" && outline) showPicked(inst, rowsInOutline(inst.table, null, outline));
    selectShape(inst, outline);
  });
  gd.on("plotly_deselect", () => {
    if (!inst.silent && shown() && inst.fallback) showPicked(inst, []);
    if (!inst.silent && shown()) {
      inst.selectionKey = "null";
      selectShape(inst, null);
    }
  });
  const follow = () => {
    if (inst.frame) return;
    inst.frame = requestAnimationFrame(() => {
      inst.frame = 0;
      placeMarks(inst);
    });
  };
  gd.on("plotly_relayouting", (event) => {
    // names, ring and pin move with a drag or a zoom as it happens, to the ranges under way
    if (inst.gd === gd) inst.liveRanges = event || null;
    follow();
  });
  gd.on("plotly_relayout", (event) => {
    if (inst.gd === gd) inst.liveRanges = null; // the layout holds the ranges now
    const moved = Object.keys(event || {}).some((k) => k.startsWith("xaxis") || k.startsWith("yaxis"));
    if (!moved || !shown()) return;
    follow();
    scheduleContext(inst);
    if (inst.fallback) scheduleDensity(inst); // the image for the new view
    else scheduleSample(inst); // the points for the new view
    rememberZoom(inst);
  });
  // The hover box is the chart's top layer, over the names (map.css); the names also fade while it shows.
  gd.on("plotly_hover", () => inst.marks.classList.add("atlas-hovering"));
  gd.on("plotly_unhover", () => inst.marks.classList.remove("atlas-hovering"));
}

// The selection the view holds (`ViewState.selection`: the reader's, written as the link keeps it, or a
// link's), drawn on the shown chart where it differs from what is drawn; none: the drawn one dropped.
/** @param {AtlasMap} inst @param {Outline|null} outline */
export async function showSelection(inst, outline) {
  if (!inst.gd) return;
  const key = JSON.stringify(outline), moved = key !== inst.selectionKey;
  // Without a selection in the view, no chart keeps a box or lasso: one the link could not hold, or
  // one the reader drew before "Clear selection" or "Reset view".
  const stale = outline ? [] : Object.values(inst.charts).filter((chart) => chart.plotted && hasSelection(chart.div));
  if (!moved && !stale.length) return;
  inst.selectionKey = key;
  inst.silent = true; // our own drawing is not the reader's selection
  try {
    if (outline) await window.Plotly.relayout(inst.gd, { selections: [selectionShape(outline)] });
    for (const chart of stale) await dropSelection(chart.div);
  } finally {
    inst.silent = false;
  }
  if (inst.fallback) await showPicked(inst, outline ? rowsInOutline(inst.table, null, outline) : []);
}

/** Whether a chart shows a box or lasso of Plotly's. @param {HTMLElement} gd */
function hasSelection(gd) {
  const layout = /** @type {any} */ (gd).layout;
  return Boolean(layout && layout.selections && layout.selections.length);
}

// Plotly's box or lasso dropped from the chart `gd` with its dimming of the points outside it, as
// Plotly drops a selection the reader erases (its layout's `_deselect`: the points' selection state
// cleared, 0.03 s at 81,646 papers); where that leaves a trace's `selectedpoints` (another Plotly),
// by a restyle of them, which recomputes the whole trace (0.3 s).
/** @param {HTMLElement} gd */
export async function dropSelection(gd) {
  const plot = /** @type {any} */ (gd), drawn = (plot.layout && plot.layout.selections) || [];
  if (plot._fullLayout && drawn.length) plot._fullLayout._deselect = { xref: drawn[0].xref || "x", yref: drawn[0].yref || "y" };
  await window.Plotly.relayout(gd, { selections: [] });
  if ((plot.data || []).some((/** @type {any} */ trace) => trace.selectedpoints !== undefined && trace.selectedpoints !== null)) {
    await window.Plotly.restyle(gd, { selectedpoints: [null] });
  }
}

// An outline as a Plotly layout selection: a rectangle, or a closed path through the lasso's corners.
/** @param {Outline} outline */
function selectionShape(outline) {
  const line = { xref: "x", yref: "y" };
  if (outline.box) {
    const [x0, x1, y0, y1] = outline.box;
    return { ...line, type: "rect", x0, x1, y0, y1 };
  }
  const { x, y } = /** @type {LassoPath} */ (outline.lasso);
  return { ...line, type: "path", path: "M" + x.map((v, /** @type {number} */ k) => `${v},${y[k]}`).join("L") + "Z" };
}

// After a pan or zoom ends: the sample for the new view, drawn when it differs from the one drawn.
/** @param {AtlasMap} inst */
function scheduleSample(inst) {
  clearTimeout(inst.sampleTimer);
  if (!inst.table || !inst.active || sampleKey(inst, inst.active) === "every") return;
  inst.sampleTimer = setTimeout(() => resample(inst), 120);
}

/** @param {AtlasMap} inst */
async function resample(inst) {
  if (inst.busy) {
    scheduleSample(inst); // a view state is being drawn: try again when it is done
    return;
  }
  const name = inst.active;
  if (!name) return;
  const chart = inst.charts[name];
  const now = ranges(chart.div);
  if (!now || !chart.plotted) return;
  const key = `${now.x.join()},${now.y.join()}|${inst.colourKey}|${inst.maskKey}`;
  if (chart.sampledFor === key) return;
  inst.busy = true;
  try {
    inst.sampleGen += 1;
    await showChart(inst, /** @type {MapView} */ (inst.view), name, drawKeyOf(inst, /** @type {MapView} */ (inst.view), name));
    chart.sampledFor = key;
    if (inst.context) await drawContext(inst);
  } finally {
    inst.busy = false;
  }
  if (inst.pending) inst.update();
}
