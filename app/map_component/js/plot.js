// @ts-check
// What a chart shows: the charts' constants, their ranges and plot area now, and the traces of the
// papers each draws (js/charts.js draws them).

import { capOf, overlay, painted, sampleRows } from "./sampling.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { ChartState, MapView, PlotDiv, Ranges } from "./protocol.js" */
/** @import { Drawn } from "./sampling.js" */

export const INK = "#1f2937";

export const HOVER = "<b>%{text}</b><br>%{hovertext}<extra></extra>";
export const CONFIG = {
  scrollZoom: true,
  displaylogo: false,
  displayModeBar: true,
  responsive: true,
  modeBarButtonsToRemove: ["autoScale2d", "toImage", "zoomIn2d", "zoomOut2d", "zoom2d", "sendChartToCloud", "sendDataToCloud"],
  plotGlPixelRatio: 1, // software WebGL draws a third faster at screen resolution; dots look the same
};

// The charts' margins (axes are hidden: no automargin). The top one is the toolbar's strip: Plotly puts
// its modebar at the chart's top right, and there it would cover the papers drawn in that corner.
export const MARGIN = { l: 4, r: 4, t: 30, b: 4 };

// ------------------------------------------------------------------ what a chart shows (public API)
// The axis ranges and drag tool come from `gd.layout`, which Plotly keeps up to date with the
// reader's pan, zoom and tool choice (relayout), and while a drag or wheel zoom is under way from
// the `plotly_relayouting` event's ranges (the layout catches up when it ends).

/** The chart's x and y ranges now, or null before it is drawn.
 * @param {PlotDiv|null} gd @param {Object<string, number>|null} [live] @returns {Ranges|null} */
export function ranges(gd, live) {
  const layout = gd && gd.layout;
  if (!layout || !layout.xaxis || !layout.yaxis || !layout.xaxis.range || !layout.yaxis.range) return null;
  const x = layout.xaxis.range.slice(), y = layout.yaxis.range.slice();
  if (live) {
    for (let k = 0; k < 2; k++) {
      if (live[`xaxis.range[${k}]`] !== undefined) x[k] = live[`xaxis.range[${k}]`];
      if (live[`yaxis.range[${k}]`] !== undefined) y[k] = live[`yaxis.range[${k}]`];
    }
  }
  return { x, y };
}

// The plot area in pixels ({l, t, w, h}): Plotly has no public API for it (the chart's width follows
// its container, and the area is what remains inside the margins), so this one read of Plotly's
// computed layout stays.
/** @param {PlotDiv|null} gd @returns {{l: number, t: number, w: number, h: number}|null} */
export function plotArea(gd) {
  const full = gd && gd._fullLayout;
  return full && full._size ? full._size : null;
}

/** @param {AtlasMap} inst @param {MapView} view @param {"all"|"sub"} name */
export function traces(inst, view, name) {
  const t = inst.table;
  const kind = t.webgl ? "scattergl" : "scatter";
  const small = t.n <= 2000;
  const opacity = t.n < 2000 ? 0.92 : t.n < 20000 ? 0.8 : 0.65;
  const plain = small ? { width: 0.8, color: "white" } : { width: 0 };
  const range = shownState(inst);
  if (name === "all") {
    const sampled = sampleRows(t, null, range, capOf(view));
    inst.sampled = sampled !== null;
    const every = (inst.every = painted(inst, sampled)); // rowsOf reads it
    inst.charts.all.div.atlasDrawn = [every]; // for tests and benchmarks: point j -> row
    return [{
      type: kind, name: "papers", mode: "markers", x: every.x, y: every.y, visible: every.rows.length > 0,
      text: every.title, hovertext: every.detail, hovertemplate: HOVER, showlegend: false,
      marker: { color: every.colour, size: t.size, opacity, line: plain },
    }];
  }
  const sub = /** @type {Drawn} */ ((inst.sub = inst.mask ? overlay(inst, inst.mask, range) : inst.sub)); // drawn before, without a mask
  inst.charts.sub.div.atlasDrawn = [sub];
  const outline = view.search ? { width: small ? 1.2 : 0.6, color: INK } : plain;
  return [{
    type: kind, name: "highlight", mode: "markers", x: sub.x, y: sub.y, visible: true,
    text: sub.title, hovertext: sub.detail, hovertemplate: HOVER, showlegend: false,
    marker: { color: sub.colour, size: t.size * (view.search ? 1.25 : 1), opacity, line: outline },
  }];
}

// What the shown chart has that the other must take over when it takes its place: the reader's zoom
// and pan (or a link's zoom, or the opening view), the drag tool, and a drawn box or lasso.
/** @param {AtlasMap} inst @returns {ChartState} */
export function shownState(inst) {
  const shown = inst.active ? inst.charts[inst.active] : null;
  const now = shown && shown.plotted ? ranges(shown.div) : null;
  if (!shown || !now) {
    const start = inst.linkZoom || inst.table.range;
    return { x: start.x.slice(), y: start.y.slice(), dragmode: "pan", selections: undefined };
  }
  const { dragmode, selections } = shown.div.layout;
  return { x: now.x, y: now.y, dragmode: dragmode || "pan", selections };
}
