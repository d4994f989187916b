// Abstract Atlas live map: one Plotly chart per map, drawn once from the map's point table and then
// updated in place (Plotly.react) from the few KB of view state each Streamlit rerun sends.
// What `data` holds is documented in app/map_component/__init__.py.
//
// Plotly recomputes every trace of a chart whenever any trace's data changes (a quarter of a second
// for 81,646 papers), so the map is two charts in one place, one shown at a time: "all", every paper in
// colour (a trace per colour group, redrawn only when the colouring changes), and "sub", with a filter
// or search, only the highlighted papers (one trace). Clearing a search shows "all" again as it was;
// the two follow each other's zoom, pan and drag tool when one takes the other's place. The shown one
// carries the class atlas-map-graph. Everything else is cheaper outside Plotly's data:
// the faint context of papers left out is an image drawn once per view, and topic and theme names,
// the opened paper's ring and the pinned abstract are HTML elements over the chart, positioned with
// its axes. Names are set with textContent: untrusted text shows as typed and never runs.

const INSTANCES = new WeakMap(); // parentElement -> this map's state, kept across reruns
const LOADS = new Map(); // url -> Promise, shared by every instance on the page
const INK = "#1f2937";
const CONTEXT_COLOUR = "#d9dde3";
const HOVER = "<b>%{text}</b><br>%{hovertext}<extra></extra>";
const CONFIG = {
  scrollZoom: true,
  displaylogo: false,
  displayModeBar: true,
  responsive: true,
  modeBarButtonsToRemove: ["autoScale2d", "toImage", "zoomIn2d", "zoomOut2d", "zoom2d", "sendChartToCloud", "sendDataToCloud"],
  plotGlPixelRatio: 1, // software WebGL draws a third faster at screen resolution; dots look the same
};
const THEMES_ABOVE = 0.55; // theme names while the view spans more than this share of the map
const MARGIN = { l: 4, r: 4, t: 4, b: 4 }; // the charts' margins (axes are hidden: no automargin)

// ------------------------------------------------------------------ what a chart shows (public API)
// The axis ranges and drag tool come from `gd.layout`, which Plotly keeps up to date with the
// reader's pan, zoom and tool choice (relayout), and while a drag or wheel zoom is under way from
// the `plotly_relayouting` event's ranges (the layout catches up when it ends).

/** The chart's x and y ranges now, or null before it is drawn. */
function ranges(gd, live) {
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
function plotArea(gd) {
  const full = gd && gd._fullLayout;
  return full && full._size ? full._size : null;
}

function once(url, load) {
  if (!LOADS.has(url)) {
    LOADS.set(
      url,
      load(url).catch((error) => {
        LOADS.delete(url); // a failed download may be retried on the next rerun
        throw error;
      }),
    );
  }
  return LOADS.get(url);
}

// Files are named by their content, so a copy kept in the browser's Cache Storage never goes stale:
// a returning reader loads Plotly.js and the map's points without asking the server (Streamlit's
// static files come without caching headers). Cache Storage needs a secure context; elsewhere, fetch.
const CACHE = "abstract-atlas";
const KEEP = 4; // files of each kind (plotly-, points-) kept; older ones are dropped

async function download(url) {
  const store = window.caches && window.isSecureContext ? await caches.open(CACHE).catch(() => null) : null;
  const kept = store ? await store.match(url) : null;
  if (kept) return kept;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  if (!store) return response;
  await store.put(url, response.clone()).catch(() => null);
  const kind = url.split("/").pop().split("-")[0];
  const same = (await store.keys()).filter((r) => r.url.split("/").pop().startsWith(kind + "-"));
  for (const old of same.slice(0, Math.max(0, same.length - KEEP))) await store.delete(old);
  return response;
}

// `inline`: the file's bytes as base64, sent through the component where static/ is read-only.
async function gunzipText(url, inline) {
  const response = inline
    ? new Response(Uint8Array.from(atob(inline), (c) => c.charCodeAt(0)))
    : await download(url);
  const stream = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

function loadPlotly(url, inline) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  return once(url, async () => {
    const code = await gunzipText(url, inline);
    const src = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    await new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error("Plotly.js did not load"));
      document.head.appendChild(script);
    });
    URL.revokeObjectURL(src);
    return window.Plotly;
  });
}

function loadTable(url, inline) {
  return once(url, async () => {
    const response = inline
      ? new Response(Uint8Array.from(atob(inline), (c) => c.charCodeAt(0)))
      : await download(url);
    const stream = response.body.pipeThrough(new DecompressionStream("gzip"));
    return prepare(decodePoints(await new Response(stream).arrayBuffer()));
  });
}

// The point file (app/map_component/payload.py, `encode_points`): "ATLASPT2", a uint32 header length,
// a JSON header (names, palettes, ranges, and where each array is), then little-endian typed arrays,
// each 8-byte aligned: read in place, never copied.
const POINT_ARRAYS = { float32: Float32Array, uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array };
function decodePoints(buffer) {
  const bytes = new Uint8Array(buffer);
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== "ATLASPT2") throw new Error("not a point file of this version");
  const length = new DataView(buffer).getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + length)));
  const start = 12 + length;
  const arrays = {};
  for (const [name, [kind, offset, count]] of Object.entries(header.arrays)) {
    arrays[name] = new POINT_ARRAYS[kind](buffer, start + offset, count);
  }
  return { ...header, arrays };
}

// As app.text.plotly_escape and plotly_wrap: titles are untrusted text, escaped for Plotly's hover
// (which reads a few tags and entities); <br> between wrapped lines is the one tag added.
function plotlyEscape(text) {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function plotlyWrap(text, width, maxLines) {
  if (text.length <= width && !text.includes("\n")) return plotlyEscape(text);
  const lines = [];
  let line = "";
  for (let word of text.split(/\s+/)) {
    if (!word) continue;
    while (word.length > width) {
      if (line) {
        lines.push(line);
        line = "";
      }
      lines.push(word.slice(0, width));
      word = word.slice(width);
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= width) line += " " + word;
    else {
      lines.push(line);
      line = word;
    }
    if (lines.length > maxLines) break;
  }
  if (line) lines.push(line);
  if (lines.length > maxLines) {
    lines.length = maxLines;
    lines[maxLines - 1] = lines[maxLines - 1].replace(/[ .,;:]+$/, "") + "…";
  }
  return lines.map(plotlyEscape).join("<br>");
}

/** Row i's title as stored (UTF-8 in one block). */
function rawTitle(t, i) {
  return t.decoder.decode(t.titleBytes.subarray(i ? t.titleEnd[i - 1] : 0, t.titleEnd[i]));
}

/** Row i's hover title, escaped and wrapped, made when first drawn and kept. */
function hoverTitle(t, i) {
  let title = t.titles[i];
  if (title === undefined) title = t.titles[i] = plotlyWrap(rawTitle(t, i), 64, 3);
  return title;
}

// Points grouped by colour, the unassigned (or missing-value) group first so the rest is drawn on top.
// Every paper is drawn as one trace per colour group, a single marker colour each (Plotly converts a
// colour per point slowly); the highlighted papers are one trace with a colour per point, as hex
// strings, the cheapest form (a trace per group costs about 1 ms each to update, too much for a map of
// 200 topics). Hover text is made for the points drawn, when first drawn; groups once per colouring.
//
// A big map is drawn as a sample (`sampleRows`): at most `draw_cap` points a view, taken in the point
// file's draw order (a density-biased order: sparse places first keep every paper, dense ones are
// thinned), among the papers in view, so a frame costs the same at any map size and zooming in shows
// more until every paper in view is drawn. A search's hits are always drawn, all of them.
function prepare(points) {
  const a = points.arrays;
  const table = {
    ...points, x: a.x, y: a.y, colour: a.colour, source: a.source, order: a.order,
    titleEnd: a.title_end, titleBytes: a.title_bytes, titles: new Array(points.n),
    decoder: new TextDecoder(), groupings: new Map(),
  };
  delete table.arrays;
  for (const [column, entry] of Object.entries(table.colourings)) entry.code = a[`code:${column}`];
  return table;
}

function detailOf(t, i) {
  return t.topic_names[t.colour[i]] + "<br>" + t.sources[t.source[i]];
}

// The colouring's groups: {colour, rows} in drawing order, and `slot[code]` = a code's group.
function grouping(table, key) {
  if (table.groupings.has(key)) return table.groupings.get(key);
  const by = key && table.colourings[key] ? table.colourings[key] : null;
  const palette = by ? by.palette : table.palette;
  const code = by ? by.code : table.colour;
  const grey = palette.length - 1;
  const order = [grey, ...palette.keys()].filter((c, k) => k === 0 || c !== grey);
  const slot = new Uint32Array(palette.length);
  order.forEach((c, k) => (slot[c] = k));
  const groups = order.map((c) => ({ colour: palette[c], rows: null }));
  const split = bySlot(table.n, null, code, slot, groups.length);
  groups.forEach((g, k) => (g.rows = split[k]));
  const result = { groups, code, slot, palette };
  table.groupings.set(key, result);
  return result;
}

// `rows` (every row when null) split by their code's slot, each part in the order given.
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

// A view's mask (app/map_component/payload.py, `encode_mask`): "b" + the bits in base64, or "d" + the
// gaps between its rows as LEB128 varints in base64; null = every paper. A Uint8Array (1 = in view)
// with its rows in order as `rows`.
function decodeMask(text, n) {
  if (text === null || text === undefined) return null;
  const raw = atob(text.slice(1));
  const mask = new Uint8Array(n);
  let rows;
  if (text[0] === "d") {
    const found = [];
    let row = -1, value = 0, shift = 0;
    for (let k = 0; k < raw.length; k++) {
      const byte = raw.charCodeAt(k);
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte & 0x80) continue;
      row += value;
      found.push(row);
      value = shift = 0;
    }
    rows = Uint32Array.from(found);
    for (const i of rows) mask[i] = 1;
  } else {
    let count = 0;
    for (let i = 0; i < n; i++) count += mask[i] = (raw.charCodeAt(i >> 3) >> (i & 7)) & 1;
    rows = new Uint32Array(count);
    for (let i = 0, k = 0; i < n; i++) if (mask[i]) rows[k++] = i;
  }
  mask.rows = rows;
  return mask;
}

// The rows to draw for the view `range` among `candidates` (a mask, or null for every paper): null
// when all of them fit under `cap`; else the first `cap` papers in the draw order that are in the view
// (widened by a fifth each side, so a small pan shows points at once).
function sampleRows(t, mask, range, cap) {
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

function capOf(view) {
  return view && view.draw_cap > 0 ? view.draw_cap : 100000;
}

// Points of `rows` as a group to draw: typed x/y, and hover text made for these rows only.
function drawnGroup(t, colour, rows) {
  const m = rows.length;
  const x = new Float32Array(m), y = new Float32Array(m), title = new Array(m), detail = new Array(m);
  for (let j = 0; j < m; j++) {
    const i = rows[j];
    x[j] = t.x[i];
    y[j] = t.y[i];
    title[j] = hoverTitle(t, i);
    detail[j] = detailOf(t, i);
  }
  return { colour, rows, x, y, title, detail };
}

// The highlighted papers to draw (every one for a search; else sampled like the map), one trace with
// a colour per point, grouped as the colouring is so the unassigned grey is drawn first.
function overlay(inst, mask, range) {
  const t = inst.table;
  const g = grouping(t, inst.colourKey || "");
  const sampled = inst.view && inst.view.search ? null : sampleRows(t, mask, range, capOf(inst.view));
  const parts = bySlot(t.n, sampled || mask.rows, g.code, g.slot, g.groups.length);
  const m = parts.reduce((total, part) => total + part.length, 0);
  const rows = new Uint32Array(m);
  const colour = new Array(m);
  let k = 0;
  parts.forEach((part, slot) => {
    rows.set(part, k);
    colour.fill(g.groups[slot].colour, k, k + part.length); // hex strings: cheaper than a colour scale
    k += part.length;
  });
  const sub = drawnGroup(t, null, rows);
  sub.colour = colour;
  sub.sampled = sampled !== null;
  return sub;
}

// What the shown chart draws of the papers, as a key: redrawn when it changes (`resample`).
function sampleKey(inst, name) {
  const t = inst.table;
  const total = name === "all" ? t.n : inst.mask ? inst.mask.rows.length : 0;
  if ((name === "sub" && inst.view && inst.view.search) || total <= capOf(inst.view)) return "every";
  return `sample${inst.sampleGen}`;
}

// After a pan or zoom ends: the sample for the new view, drawn when it differs from the one drawn.
function scheduleSample(inst) {
  clearTimeout(inst.sampleTimer);
  if (!inst.table || !inst.active || sampleKey(inst, inst.active) === "every") return;
  inst.sampleTimer = setTimeout(() => resample(inst), 120);
}

async function resample(inst) {
  if (inst.busy) {
    scheduleSample(inst); // a view state is being drawn: try again when it is done
    return;
  }
  const name = inst.active;
  const chart = inst.charts[name];
  const now = ranges(chart.div);
  if (!now || !chart.plotted) return;
  const key = `${now.x.join()},${now.y.join()}|${inst.colourKey}|${inst.maskKey}`;
  if (chart.sampledFor === key) return;
  inst.busy = true;
  try {
    inst.sampleGen += 1;
    await showChart(inst, inst.view, name, drawKeyOf(inst, inst.view, name));
    chart.sampledFor = key;
    if (inst.context) await drawContext(inst);
  } finally {
    inst.busy = false;
  }
  if (inst.pending) update(inst);
}

function drawKeyOf(inst, view, name) {
  const colourKey = view.colour || "";
  const base = name === "all" ? `${colourKey}|${view.height}` : `${colourKey}|${inst.maskKey}|${view.search}|${view.height}`;
  return `${base}|${sampleKey(inst, name)}`;
}

// Rows under a box or lasso drawn on a sampled chart: every candidate paper in the shape, not only
// the ones drawn (null when the chart draws every candidate: Plotly's own points say it).
function rowsInShape(inst, chart, event) {
  const sampled = chart.name === "sub" ? inst.sub && inst.sub.sampled : inst.sampled;
  if (!sampled || !event) return null;
  const t = inst.table;
  const mask = chart.name === "sub" ? inst.mask : null;
  const rows = [];
  if (event.range && event.range.x && event.range.y) {
    const [x0, x1] = [Math.min(...event.range.x), Math.max(...event.range.x)];
    const [y0, y1] = [Math.min(...event.range.y), Math.max(...event.range.y)];
    for (let i = 0; i < t.n; i++) {
      if (mask && !mask[i]) continue;
      if (t.x[i] >= x0 && t.x[i] <= x1 && t.y[i] >= y0 && t.y[i] <= y1) rows.push(i);
    }
    return rows;
  }
  if (!event.lassoPoints || !event.lassoPoints.x) return null;
  const px = event.lassoPoints.x, py = event.lassoPoints.y;
  const x0 = Math.min(...px), x1 = Math.max(...px), y0 = Math.min(...py), y1 = Math.max(...py);
  for (let i = 0; i < t.n; i++) {
    if (mask && !mask[i]) continue;
    const x = t.x[i], y = t.y[i];
    if (x < x0 || x > x1 || y < y0 || y > y1) continue;
    let inside = false;
    for (let a = 0, b = px.length - 1; a < px.length; b = a++) {
      if (py[a] > y !== py[b] > y && x < ((px[b] - px[a]) * (y - py[a])) / (py[b] - py[a]) + px[a]) inside = !inside;
    }
    if (inside) rows.push(i);
  }
  return rows;
}

function traces(inst, view, name) {
  const t = inst.table;
  const kind = t.webgl ? "scattergl" : "scatter";
  const small = t.n <= 2000;
  const opacity = t.n < 2000 ? 0.92 : t.n < 20000 ? 0.8 : 0.65;
  const plain = small ? { width: 0.8, color: "white" } : { width: 0 };
  const range = shownState(inst);
  if (name === "all") {
    const g = grouping(t, inst.colourKey || "");
    const sampled = sampleRows(t, null, range, capOf(view));
    inst.sampled = sampled !== null;
    const parts = sampled ? bySlot(t.n, sampled, g.code, g.slot, g.groups.length) : g.groups.map((group) => group.rows);
    inst.groups = g.groups.map((group, k) => drawnGroup(t, group.colour, parts[k])); // rowsOf reads these
    inst.charts.all.div.atlasDrawn = inst.groups; // for tests and benchmarks: trace k, point j -> row
    return inst.groups.map((g) => ({
      type: kind, name: "papers", mode: "markers", x: g.x, y: g.y, visible: g.rows.length > 0,
      text: g.title, hovertext: g.detail, hovertemplate: HOVER, showlegend: false,
      marker: { color: g.colour, size: t.size, opacity, line: plain },
    }));
  }
  const sub = (inst.sub = inst.mask ? overlay(inst, inst.mask, range) : inst.sub);
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
function shownState(inst) {
  const shown = inst.active ? inst.charts[inst.active] : null;
  const now = shown && shown.plotted ? ranges(shown.div) : null;
  if (!now) {
    const start = inst.linkZoom || inst.table.range;
    return { x: start.x.slice(), y: start.y.slice(), dragmode: "pan", selections: undefined };
  }
  const { dragmode, selections } = shown.div.layout;
  return { x: now.x, y: now.y, dragmode: dragmode || "pan", selections };
}

function layout(inst, view, chart, state) {
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
async function showChart(inst, view, name, drawKey) {
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
  const now = ranges(chart.div);
  const differs = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) > 1e-9 * (Math.abs(b[1] - b[0]) || 1);
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

// ------------------------------------------------------------------ context image
// The papers outside the filters or search, drawn faintly: an image of every paper in grey for the
// current view, redrawn when the view moves (an image costs Plotly nothing to place).
async function drawContext(inst) {
  const area = plotArea(inst.gd), now = ranges(inst.gd);
  if (!area || !now) return null;
  const t = inst.table;
  const xr = now.x, yr = now.y;
  const width = Math.max(1, Math.round(area.w)), height = Math.max(1, Math.round(area.h));
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const g = canvas.getContext("2d");
  g.fillStyle = CONTEXT_COLOUR;
  g.globalAlpha = t.n < 5000 ? 0.8 : 0.6;
  const r = Math.max(1, (t.size * 0.85) / 2);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  const square = r <= 1.6; // dots of a pixel or three: squares look the same and draw far faster
  g.beginPath();
  const sample = sampleRows(t, null, now, capOf(inst.view)); // a big map's faint rest: a sample of it
  for (let j = 0, count = sample ? sample.length : t.n; j < count; j++) {
    const i = sample ? sample[j] : j;
    const px = (t.x[i] - xr[0]) * sx, py = (yr[1] - t.y[i]) * sy;
    if (px < -r || py < -r || px > width + r || py > height + r) continue;
    if (square) {
      g.rect(px - r, py - r, 2 * r, 2 * r);
      continue;
    }
    g.moveTo(px + r, py);
    g.arc(px, py, r, 0, 2 * Math.PI);
  }
  g.fill();
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  const previous = inst.contextUrl;
  inst.contextUrl = URL.createObjectURL(blob);
  inst.context = {
    source: inst.contextUrl,
    xref: "x", yref: "y", x: xr[0], y: yr[1], sizex: xr[1] - xr[0], sizey: yr[1] - yr[0],
    sizing: "stretch", layer: "below", opacity: 1,
  };
  const sub = inst.charts.sub;
  inst.contextShown = false;
  if (sub.plotted && inst.active === "sub") {
    inst.contextShown = true;
    sub.syncing = true;
    try {
      await window.Plotly.relayout(sub.div, { "images[0]": inst.context });
    } finally {
      sub.syncing = false;
    }
  }
  if (previous) URL.revokeObjectURL(previous); // the chart shows the new image now
}

function scheduleContext(inst) {
  clearTimeout(inst.contextTimer);
  if (inst.mask === null && inst.table.n > 100000) {
    inst.contextStale = true; // nothing is dimmed now: drawn when a filter or search needs it
    return;
  }
  inst.contextTimer = setTimeout(() => {
    if (!inst.busy) drawContext(inst);
    else inst.contextStale = true;
  }, 150);
}

// ------------------------------------------------------------------ without WebGL
// Chrome 139 and later no longer fall back to software WebGL by themselves: a browser may give the
// page no WebGL at all. A map of more than 1,000 papers draws its points with WebGL (scattergl); in
// such a browser every paper is drawn instead on a 2-D canvas, in its colour, and put into an SVG
// chart as a layout image in data coordinates (zoom and pan carry it; it is redrawn sharp for the new
// view), and what the reader asked for (search hits, a filter, an opened topic, a box or lasso
// selection) is drawn as SVG points that hover and click, at most FALLBACK_POINTS of them (an even
// sample beyond, and the note under the map says how many). Names, ring and pin are as ever.
const FALLBACK_POINTS = 5000;
const DENSITY_PAD = 0.25; // the image reaches this share of the view beyond each edge
const NO_WEBGL = "This browser has no WebGL: the map is an image; search hits and selections are drawn as points.";
let webgl; // whether this page can have a WebGL context, asked once

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
function startFallback(inst) {
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
function sampleColumns(columns, idx) {
  const n = columns.rows.length;
  const out = {};
  for (const [name, values] of Object.entries(columns)) {
    out[name] = values && typeof values !== "string" && values.length === n ? idx.map((i) => values[i]) : values;
  }
  return out;
}

function evenSample(total, count) {
  return Array.from({ length: count }, (_, k) => Math.floor((k * total) / count));
}

// The note under the map: the missing WebGL, and how many of the highlighted or selected papers are points.
function showCapped(inst, what, total) {
  inst.capped[what] = total > FALLBACK_POINTS ? total : 0;
  const words = { sub: "highlighted", picked: "selected" };
  const parts = Object.entries(inst.capped)
    .filter(([, n]) => n)
    .map(([kind, n]) => `${FALLBACK_POINTS.toLocaleString("en")} of the ${n.toLocaleString("en")} ${words[kind]} papers are drawn (an even sample).`);
  inst.noteCount.textContent = parts.length ? " " + parts.join(" ") : "";
  inst.note.hidden = !inst.fallback;
}

// The highlighted papers the "sub" chart draws as SVG points: all of them, or an even sample.
function fallbackPoints(inst, sub) {
  const total = inst.mask ? inst.mask.rows.length : sub.rows.length;
  showCapped(inst, "sub", total);
  const drawn = sub.rows.length;
  return drawn > FALLBACK_POINTS ? sampleColumns(sub, evenSample(drawn, FALLBACK_POINTS)) : sub;
}

// The charts without WebGL: "sub" as ever, in SVG and capped; "all" holds only the selected papers
// (its image holds every paper).
function fallbackTraces(inst, view, name) {
  const t = inst.table;
  if (name === "sub") {
    const [trace] = traces(inst, view, name); // takes the highlighted papers for the view (`inst.sub`)
    const sub = (inst.sub = fallbackPoints(inst, inst.sub));
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

function pickedRows(inst, points) {
  return (points || []).map((p) => inst.picked[p.pointIndex]).filter((row) => row !== undefined);
}

// Show `rows` (a box or lasso selection) as points on the "all" chart.
async function showPicked(inst, rows) {
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

// A box or lasso drawn without WebGL: the papers it holds, found by place (the chart draws only some
// of them as points), among those in view.
function selectWithoutPoints(inst, chart, event) {
  const t = inst.table, mask = inst.mask;
  let inside;
  if (event.range) {
    const [x0, x1] = [...event.range.x].sort((a, b) => a - b), [y0, y1] = [...event.range.y].sort((a, b) => a - b);
    inside = (x, y) => x >= x0 && x <= x1 && y >= y0 && y <= y1;
  } else {
    const xs = event.lassoPoints.x, ys = event.lassoPoints.y;
    inside = (x, y) => {
      let odd = false;
      for (let a = 0, b = xs.length - 1; a < xs.length; b = a++) {
        if ((ys[a] > y) !== (ys[b] > y) && x < ((xs[b] - xs[a]) * (y - ys[a])) / (ys[b] - ys[a]) + xs[a]) odd = !odd;
      }
      return odd;
    };
  }
  const rows = [];
  for (let i = 0; i < t.n; i++) if ((!mask || mask[i]) && inside(t.x[i], t.y[i])) rows.push(i);
  if (chart.name === "all") showPicked(inst, rows);
  inst.trigger("select", { rows, map: inst.pointsUrl });
}

// One paper on the image: a dot of `radius` px at (x, y), blended over what is there ("source over"
// in the image's own pixels: for 81,646 papers a few times faster than filling canvas paths).
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

function scheduleDensity(inst) {
  clearTimeout(inst.densityTimer);
  inst.densityTimer = setTimeout(() => {
    if (!inst.busy) showDensity(inst);
    else inst.densityKey = undefined; // drawn when the view being applied is
  }, 150);
}

// Every paper in its colour on a 2-D canvas for the current view (and a quarter of a view around it,
// so a pan shows papers until the image is redrawn), as the "all" chart's layout image in data
// coordinates. At screen resolution: encoding the image costs most (81,646 papers: 30 ms for a view
// of 1,100 x 700 px, 250 ms at twice the width and height).
async function showDensity(inst) {
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
  const g = canvas.getContext("2d");
  const image = g.createImageData(width, height);
  const alpha = t.n < 5000 ? 0.85 : t.n < 20000 ? 0.7 : 0.55; // overlapping papers add up: density
  const radius = Math.max(0.75, t.size * 0.4);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  for (const group of grouping(t, inst.colourKey || "").groups) { // the unassigned grey first, the colours over it
    g.fillStyle = group.colour; // the canvas reads the colour: "#rrggbb" back
    const rgb = [1, 3, 5].map((k) => parseInt(g.fillStyle.slice(k, k + 2), 16));
    for (const i of group.rows) dot(image, (t.x[i] - xr[0]) * sx, (yr[1] - t.y[i]) * sy, radius, rgb, alpha);
  }
  g.putImageData(image, 0, 0);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  if (key !== inst.densityKey) return; // a newer view is being drawn
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

// ------------------------------------------------------------------ names, ring and pin
function mark(inst, className) {
  const el = document.createElement("div");
  el.className = className;
  inst.marks.appendChild(el);
  return el;
}

// Topic names (or theme names when most of the map is in view), placed greedily so none overlap.
// Sizes are measured in one pass and remembered, so following a drag or a zoom frame by frame only
// moves elements (measuring one at a time would make the browser lay the page out once per name).
function placeMarks(inst) {
  const size = plotArea(inst.gd), now = ranges(inst.gd, inst.liveRanges);
  const view = inst.view;
  if (!size || !now || !view) return;
  const t = inst.table;
  const [x0, x1] = now.x, [y0, y1] = now.y;
  const px = (x) => size.l + ((x - x0) / (x1 - x0)) * size.w, py = (y) => size.t + ((y1 - y) / (y1 - y0)) * size.h;
  const inside = (x, y) => x >= size.l && x <= size.l + size.w && y >= size.t && y <= size.t + size.h;
  const span = Math.max((x1 - x0) / (t.range.x[1] - t.range.x[0]), (y1 - y0) / (t.range.y[1] - t.range.y[0]));
  // Zoomed out, theme names lead and the largest topics' names fill the space between them; zoomed
  // in, topic names only. A few times the limit are tried, as some will overlap.
  const themes = view.themes.length > 0 && span > THEMES_ABOVE;
  const limit = themes ? view.themes.length + Math.ceil(view.label_limit / 2) : view.label_limit;
  const inView = (label) => inside(px(label.x), py(label.y));
  const candidates = [
    ...(themes ? view.themes.filter(inView).map((label) => ({ ...label, theme: true })) : []),
    ...view.topics.filter(inView),
  ].slice(0, limit * 3);
  while (inst.labels.length < candidates.length) inst.labels.push(mark(inst, "atlas-label"));
  const shown = candidates;
  let topicRank = 0;
  const looks = shown.map((label) => {
    const rank = label.theme ? 0 : topicRank++;
    const font = label.theme ? 16 : themes ? 11 : rank < 5 ? 14 : rank < 15 ? 12.5 : 11;
    const kind = `atlas-label${label.theme ? " atlas-theme" : ""}${label.chosen ? " atlas-chosen" : ""}`;
    return { label, font, kind, key: `${kind}|${font}|${label.text}` };
  });
  const sizes = inst.labelSizes;
  const unknown = [];
  looks.forEach((look, i) => {
    const el = inst.labels[i];
    if (el.dataset.key !== look.key) {
      el.textContent = look.label.text; // literal text, never markup
      el.className = look.kind;
      el.style.fontSize = look.label.theme ? "" : `${look.font}px`;
      el.dataset.key = look.key;
    }
    el.style.borderColor = look.label.theme ? "" : look.label.colour;
    el.hidden = false;
    if (!sizes.has(look.key)) unknown.push([el, look.key]);
  });
  for (const [el, key] of unknown) sizes.set(key, [el.offsetWidth, el.offsetHeight]); // one layout
  const placed = [];
  looks.forEach((look, i) => {
    const el = inst.labels[i];
    const [w, h] = sizes.get(look.key);
    const x = px(look.label.x), y = py(look.label.y);
    // near an edge the name slides inwards; a name that would overlap one already placed is left out
    const left = Math.min(Math.max(x - w / 2, size.l + 2), size.l + size.w - w - 2);
    const top = Math.min(Math.max(look.label.theme ? y - h / 2 : y - h - 6, size.t + 2), size.t + size.h - h - 2);
    const box = [left, top, left + w, top + h];
    const clash = placed.some((b) => box[0] < b[2] + 4 && b[0] < box[2] + 4 && box[1] < b[3] + 2 && b[1] < box[3] + 2);
    if (placed.length >= limit || clash) {
      el.hidden = true;
      return;
    }
    placed.push(box);
    el.style.transform = `translate(${Math.round(left)}px, ${Math.round(top)}px)`;
  });
  for (let i = looks.length; i < inst.labels.length; i++) inst.labels[i].hidden = true;
  inst.labelCount = placed.length;
  // the opened paper's ring and the placed abstract's star
  const paper = view.paper === null || view.paper === undefined ? null : [t.x[view.paper], t.y[view.paper]];
  for (const [el, spot, radius] of [
    [inst.ring, paper, t.size + 6],
    [inst.pin, view.pin ? [view.pin.x, view.pin.y] : null, 12],
  ]) {
    if (!spot || !inside(px(spot[0]), py(spot[1]))) {
      el.hidden = true;
      continue;
    }
    el.hidden = false;
    el.style.width = el.style.height = `${2 * radius}px`;
    el.style.transform = `translate(${Math.round(px(spot[0]) - radius)}px, ${Math.round(py(spot[1]) - radius)}px)`;
  }
  if (view.pin) inst.pin.title = `Your abstract · ${view.pin.topic}`;
  // the opened paper's nearest papers, in small rings
  const near = view.neighbours || [];
  while (inst.near.length < near.length) inst.near.push(mark(inst, "atlas-ring atlas-near"));
  inst.near.forEach((el, k) => {
    const row = near[k];
    const x = row === undefined ? NaN : px(t.x[row]), y = row === undefined ? NaN : py(t.y[row]);
    el.hidden = !inside(x, y);
    if (el.hidden) return;
    const radius = t.size / 2 + 4;
    el.style.width = el.style.height = `${2 * radius}px`;
    el.style.transform = `translate(${Math.round(x - radius)}px, ${Math.round(y - radius)}px)`;
  });
}

// The key, a row under the chart (never over it): theme hues (topics are shades of them) or the
// values of the column the map is coloured by. Clicking an entry shows only its papers (the app sets
// the Themes filter, or the column's filter, so the counts, the table and the link follow); clicking
// it again, or "Show all", shows everything. An entry without a pick (missing values) is not a button.
function drawLegend(inst, entries) {
  const key = JSON.stringify(entries || []);
  if (key === inst.legendKey) return;
  inst.legendKey = key;
  inst.legend.replaceChildren();
  const list = entries || [];
  const isolated = list.some((entry) => entry.on);
  for (const entry of list) {
    const item = document.createElement(entry.pick ? "button" : "div");
    item.className = "atlas-legend-item";
    if (entry.pick) {
      item.type = "button";
      item.setAttribute("aria-pressed", String(Boolean(entry.on)));
      item.title = entry.on ? "Show all again" : "Show only these papers";
      item.addEventListener("click", () => inst.trigger("legend", { ...entry.pick, map: inst.pointsUrl }));
    }
    item.classList.toggle("atlas-legend-on", Boolean(entry.on));
    item.classList.toggle("atlas-legend-off", isolated && !entry.on);
    const swatch = document.createElement("span");
    swatch.className = "atlas-swatch";
    swatch.style.background = entry.colour;
    const text = document.createElement("span");
    text.className = "atlas-legend-text";
    text.textContent = entry.text; // literal text, never markup
    item.append(swatch, text);
    inst.legend.appendChild(item);
  }
  const kind = list.map((entry) => entry.pick && Object.keys(entry.pick)[0]).find(Boolean);
  if (isolated && kind) {
    const all = document.createElement("button");
    all.type = "button";
    all.className = "atlas-legend-all";
    all.textContent = "Show all";
    all.addEventListener("click", () => inst.trigger("legend", { [kind]: null, map: inst.pointsUrl }));
    inst.legend.appendChild(all);
  }
  inst.legend.hidden = list.length === 0;
}

// The charts' height: the map's, less the key's row (and the note's) under them.
function chartHeight(inst, view) {
  const rows = [inst.legend, inst.note].map((el) => (el.hidden ? 0 : Math.ceil(el.getBoundingClientRect().height)));
  return Math.max(120, view.height - rows[0] - rows[1]);
}

// A narrower window wraps the key onto more lines: the shown chart gives it the room (the other
// takes its height when it is shown, in showChart).
function followLegend(inst) {
  if (inst.legendWatch || !window.ResizeObserver) return;
  inst.legendWatch = new ResizeObserver(() => {
    const chart = inst.active ? inst.charts[inst.active] : null;
    if (!chart || !chart.plotted || inst.busy || !inst.view) return;
    const height = chartHeight(inst, inst.view);
    if (chart.div.layout.height === height) return;
    window.Plotly.relayout(chart.div, { height }).then(() => placeMarks(inst));
  });
  inst.legendWatch.observe(inst.legend);
  inst.legendWatch.observe(inst.note);
}

// Rows of the papers a click or a box/lasso picked: on the "all" chart traces 0..G-1 hold every paper
// of a colour group; the "sub" chart's one trace holds the highlighted papers.
function rowsOf(inst, chart, points) {
  if (inst.fallback && chart.name === "all") return pickedRows(inst, points);
  const rows = [];
  for (const p of points || []) {
    if (chart.name === "sub") rows.push(inst.sub.rows[p.pointIndex]);
    else if (p.curveNumber < inst.groups.length) rows.push(inst.groups[p.curveNumber].rows[p.pointIndex]);
  }
  return rows;
}

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
    if (inst.fallback) return selectWithoutPoints(inst, chart, event); // not every paper is a point: rows by place
    inst.trigger("select", { rows: rowsInShape(inst, chart, event) || rowsOf(inst, chart, event.points), map: inst.pointsUrl });
  });
  gd.on("plotly_deselect", () => {
    if (!inst.silent && shown() && inst.fallback) showPicked(inst, []);
    if (!inst.silent && shown()) inst.trigger("select", { rows: [], map: inst.pointsUrl });
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

// ------------------------------------------------------------------ zoom in the link
// The reader's zoom and pan live in the address bar as view=x0,x1,y0,y1, written here without a
// rerun (replacing the current history entry). Streamlit pushes a new entry, without it, whenever the
// app writes the rest of the view into the query string: the wrapped pushState/replaceState carry the
// current zoom over. Opening a link or stepping Back/Forward restores the entry's zoom.
const ZOOM = { inst: null };

function zoomText(inst) {
  const now = ranges(inst.gd);
  if (!now) return null;
  const t = inst.table;
  const xr = now.x, yr = now.y;
  const spanX = t.range.x[1] - t.range.x[0], spanY = t.range.y[1] - t.range.y[0];
  const same = (a, b, span) => Math.abs(a - b) <= span * 1e-4;
  if (same(xr[0], t.range.x[0], spanX) && same(xr[1], t.range.x[1], spanX) && same(yr[0], t.range.y[0], spanY) && same(yr[1], t.range.y[1], spanY)) {
    return null; // the opening view: no need to say it
  }
  const digits = (span) => Math.max(0, Math.min(10, 4 - Math.floor(Math.log10(Math.max(Math.abs(span), 1e-12)))));
  const dx = digits(xr[1] - xr[0]), dy = digits(yr[1] - yr[0]);
  return [xr[0].toFixed(dx), xr[1].toFixed(dx), yr[0].toFixed(dy), yr[1].toFixed(dy)].join(",");
}

function parseZoom(search) {
  const text = new URLSearchParams(search).get("view");
  if (!text) return null;
  const v = text.split(",").map(Number);
  if (v.length !== 4 || !v.every(Number.isFinite) || !(v[0] < v[1]) || !(v[2] < v[3])) return null;
  return { x: [v[0], v[1]], y: [v[2], v[3]] };
}

function withZoom(url) {
  const inst = ZOOM.inst;
  if (!inst || !inst.plotted || url === undefined || url === null) return url;
  const next = new URL(String(url), window.location.href);
  const text = inst.zoom;
  if (text) next.searchParams.set("view", text);
  else next.searchParams.delete("view");
  return next.pathname + next.search.replaceAll("%2C", ",") + next.hash;
}

function wrapHistory() {
  if (window.history.atlasWrapped) return;
  window.history.atlasWrapped = true;
  for (const name of ["pushState", "replaceState"]) {
    const original = window.history[name].bind(window.history);
    window.history[name] = (state, title, url) => original(state, title, withZoom(url));
  }
  window.addEventListener("popstate", () => {
    const inst = ZOOM.inst;
    if (inst && inst.plotted) restoreZoom(inst, parseZoom(window.location.search));
  });
}

function rememberZoom(inst) {
  inst.zoom = zoomText(inst);
  const here = window.location.pathname + window.location.search + window.location.hash;
  const wanted = withZoom(here);
  if (wanted !== here) window.history.replaceState(window.history.state, "", wanted);
}

function restoreZoom(inst, zoom) {
  const range = zoom || inst.table.range;
  return window.Plotly.relayout(inst.gd, { "xaxis.range": range.x.slice(), "yaxis.range": range.y.slice() });
}

async function apply(inst, view) {
  const Plotly = await loadPlotly(view.plotly, view.plotly_data);
  if (inst.pointsUrl !== view.points) {
    const table = await loadTable(view.points, view.points_data);
    for (const chart of Object.values(inst.charts)) {
      if (chart.plotted) Plotly.purge(chart.div); // another map: new charts, the old ones' contexts freed
      Object.assign(chart, { plotted: false, drawnKey: undefined, sampledFor: undefined });
    }
    inst.linkZoom = inst.plotted ? null : parseZoom(window.location.search); // the link's zoom, first map only
    Object.assign(inst, {
      table, pointsUrl: view.points, plotted: false, maskKey: undefined, colourKey: undefined,
      context: null, active: null,
    });
    startFallback(inst); // no WebGL in this browser: an image of the papers instead of WebGL points
  }
  const colourKey = view.colour || "";
  const recoloured = colourKey !== inst.colourKey;
  if (recoloured) {
    grouping(inst.table, colourKey); // once per colouring; `traces` draws the view's points of it
    inst.colourKey = colourKey;
  }
  const maskKey = view.mask === null ? "all" : view.mask;
  if (maskKey !== inst.maskKey || recoloured) {
    if (maskKey !== inst.maskKey) inst.mask = decodeMask(view.mask, inst.table.n);
    const none = { rows: [], x: [], y: [], title: [], detail: [], colour: [] };
    inst.sub = none; // the highlighted papers are taken for the view when drawn (`traces`)
    inst.maskKey = maskKey;
  }
  const clearing = inst.plotted && view.clear !== inst.clear; // "Clear selection" in the app
  inst.clear = view.clear;
  inst.view = view;
  inst.loading.hidden = true;
  // The points are redrawn only when what they show changed; an opened paper, its neighbours, the
  // names and the pin are marks over the chart and move without Plotly.
  drawLegend(inst, view.legend);
  const name = inst.mask !== null ? "sub" : "all";
  const drawKey = drawKeyOf(inst, view, name);
  await showChart(inst, view, name, drawKey);
  if (!inst.plotted) {
    inst.plotted = true;
    inst.reset = view.reset;
    ZOOM.inst = inst;
    wrapHistory();
    followLegend(inst);
    rememberZoom(inst);
  }
  if (view.reset !== inst.reset) {
    inst.reset = view.reset; // "Reset view" in the app: the whole map again
    await restoreZoom(inst, null);
    rememberZoom(inst);
  }
  if (!inst.context || inst.contextStale) {
    inst.contextStale = false;
    if (inst.mask !== null) await drawContext(inst);
    else scheduleContext(inst); // ready before the first search needs it
  }
  if (inst.fallback) await showDensity(inst);
  if (clearing && inst.fallback) await showPicked(inst, []);
  if (clearing) {
    inst.silent = true; // our own clearing is not the reader's deselection
    try {
      for (const chart of Object.values(inst.charts)) {
        if (!chart.plotted) continue;
        await Plotly.relayout(chart.div, { selections: [] });
        await Plotly.restyle(chart.div, { selectedpoints: [null] });
      }
    } finally {
      inst.silent = false;
    }
  }
  await keepInSight(inst, view);
  placeMarks(inst);
  inst.draws += 1;
  for (const chart of Object.values(inst.charts)) chart.div.dataset.atlasDraws = String(inst.draws);
}

// A newly opened paper or placed abstract outside the reader's view: widen the view to show it.
function keepInSight(inst, view) {
  const t = inst.table;
  const spots = [];
  if (view.paper !== null && view.paper !== undefined && view.paper !== inst.seenPaper) {
    spots.push([t.x[view.paper], t.y[view.paper]]);
  }
  const pinKey = view.pin ? `${view.pin.x},${view.pin.y}` : null;
  if (view.pin && pinKey !== inst.seenPin) spots.push([view.pin.x, view.pin.y]);
  inst.seenPaper = view.paper;
  inst.seenPin = pinKey;
  const { x: xr, y: yr } = ranges(inst.gd);
  let moved = false;
  for (const [x, y] of spots) {
    const padX = (xr[1] - xr[0]) * 0.05, padY = (yr[1] - yr[0]) * 0.05;
    if (x < xr[0]) [xr[0], moved] = [x - padX, true];
    if (x > xr[1]) [xr[1], moved] = [x + padX, true];
    if (y < yr[0]) [yr[0], moved] = [y - padY, true];
    if (y > yr[1]) [yr[1], moved] = [y + padY, true];
  }
  return moved ? window.Plotly.relayout(inst.gd, { "xaxis.range": xr, "yaxis.range": yr }) : null;
}

async function update(inst) {
  if (inst.busy) return; // the running loop picks up the newest view when it finishes
  inst.busy = true;
  try {
    while (inst.pending) {
      const view = inst.pending;
      inst.pending = null;
      const started = performance.now();
      await apply(inst, view);
      const ms = String(Math.round(performance.now() - started)); // for benchmarks
      for (const chart of Object.values(inst.charts)) chart.div.dataset.atlasApplyMs = ms;
    }
    inst.error.hidden = true;
  } catch (error) {
    inst.error.textContent = `The map could not be drawn: ${error.message}`;
    inst.error.hidden = false;
    console.error(error);
  } finally {
    inst.busy = false;
  }
}

// One map on the page: its elements, what it shows and what it keeps between reruns (kept in
// INSTANCES by the component's parent element, since Streamlit calls the default export again on
// every rerun with the same element).
class AtlasMap {
  // the page elements
  /** @type {HTMLElement} */ root;
  /** @type {HTMLElement} the charts and what lies over them, above the key's row */ stage;
  /** @type {{all: Chart, sub: Chart}} two charts in one place, one shown at a time */ charts;
  /** @type {HTMLElement} the shown chart's div */ gd;
  /** @type {"all"|"sub"|null} */ active = null;
  /** @type {HTMLElement} names, ring and pin over the chart */ marks;
  /** @type {HTMLElement} */ loading;
  /** @type {HTMLElement} */ error;
  /** @type {HTMLElement} the key, a row under the charts */ legend;
  /** @type {HTMLElement} the opened paper's ring */ ring;
  /** @type {HTMLElement} the placed abstract's star */ pin;
  /** @type {HTMLElement[]} the opened paper's nearest papers' rings */ near = [];
  /** @type {HTMLElement[]} topic and theme names */ labels = [];
  /** @type {Map<string, number[]>} a name's look -> its measured [width, height] */ labelSizes = new Map();
  labelCount = 0;
  legendKey = undefined;
  legendWatch = null; // a ResizeObserver: the key's (or the note's) row changed height
  /** @type {HTMLElement} a row under the chart: why the map is an image (no WebGL) */ note;
  /** @type {HTMLElement} */ noteText;
  /** @type {HTMLElement} how many highlighted or selected papers are drawn, when not all */ noteCount;
  // without WebGL (a map that needs it, in a browser that has none): see "without WebGL"
  fallback = false;
  density = null; // the "all" chart's image of every paper, a Plotly layout image
  densityUrl = null;
  densityKey = undefined; // the colouring and view it was drawn for
  densityTimer = 0;
  picked = []; // rows of the box or lasso selection drawn as points on the "all" chart
  capped = {}; // "sub" / "picked" -> papers when more than FALLBACK_POINTS, else 0
  // the map's points and what the view draws of them
  table = null; // the point table (prepare), per map
  pointsUrl = null; // the table's URL: names the map events come from
  colourKey = undefined; // the colouring drawn: "" = by topic, else a column
  groups = null; // points by colour group, for the colouring
  maskKey = undefined; // the mask drawn ("all" = none)
  mask = null; // Uint8Array, 1 = in view; null = every paper
  sub = null; // the highlighted papers drawn (overlay)
  sampled = false; // the "all" chart draws a sample of the papers (sampleRows)
  sampleGen = 0; // bumped by each resample after a pan or zoom
  sampleTimer = 0;
  view = null; // the last view state received
  // the faint context image of the papers left out
  context = null; // its Plotly layout image, for the current zoom
  contextUrl = null;
  contextShown = false;
  contextStale = false;
  contextTimer = 0;
  // what changed since the last view state
  pending = null; // the newest view state not applied yet
  busy = false; // a view state is being applied
  plotted = false; // the map has been drawn once
  draws = 0; // views applied, for tests and benchmarks
  clear = undefined; // the "Clear selection" counter last seen
  reset = undefined; // the "Reset view" counter last seen
  silent = false; // our own clearing of a selection is under way
  seenPaper = undefined; // the opened paper and pin already brought into sight
  seenPin = null;
  // zoom
  linkZoom = null; // the link's view=, for the first map only
  zoom = null; // the view= text for the current zoom (null: the opening view)
  liveRanges = null; // a drag or wheel zoom's ranges while it is under way (plotly_relayouting)
  frame = 0; // the animation frame that will place the names
  // the wheel: scrolls the page until the reader clicks the map
  wheel = false;
  hintTimer = 0;
  /** @type {(name: string, value: object) => void} Streamlit's setTriggerValue */ trigger = () => {};

  constructor(parentElement) {
    this.root = document.createElement("div");
    this.root.className = "atlas-map";
    this.loading = document.createElement("div");
    this.loading.className = "atlas-map-loading";
    this.loading.textContent = "Loading the map…";
    this.error = document.createElement("div");
    this.error.className = "atlas-map-error";
    this.error.hidden = true;
    const charts = {};
    for (const name of ["all", "sub"]) {
      const div = document.createElement("div");
      div.className = `atlas-map-chart ${name === "all" ? "atlas-map-graph" : "atlas-map-idle"}`;
      charts[name] = { name, div, plotted: false, drawnKey: undefined, syncing: false };
    }
    this.charts = charts;
    this.gd = charts.all.div;
    this.marks = document.createElement("div");
    this.marks.className = "atlas-map-marks";
    this.stage = document.createElement("div");
    this.stage.className = "atlas-map-stage";
    this.stage.append(charts.all.div, charts.sub.div, this.marks, this.loading, this.error);
    this.root.append(this.stage);
    parentElement.appendChild(this.root);
    this.ring = mark(this, "atlas-ring");
    this.pin = mark(this, "atlas-pin");
    this.pin.textContent = "★";
    const tag = mark(this, "atlas-pin-tag");
    tag.textContent = "Your abstract";
    this.pin.appendChild(tag);
    this.ring.hidden = this.pin.hidden = true;
    this.legend = document.createElement("div");
    this.legend.className = "atlas-legend";
    this.legend.hidden = true;
    const hint = document.createElement("div");
    hint.className = "atlas-map-hint";
    hint.textContent = "Hold Ctrl (⌘) and scroll to zoom (or click an empty spot of the map first)";
    hint.hidden = true;
    this.stage.append(hint);
    this.note = document.createElement("div");
    this.note.className = "atlas-map-note";
    this.note.setAttribute("role", "note");
    this.noteText = document.createElement("span");
    this.noteCount = document.createElement("span");
    this.note.append(this.noteText, this.noteCount);
    this.note.hidden = true;
    this.root.append(this.note, this.legend);
    this.handWheel(hint);
  }

  // The page's wheel scrolls the page until the reader clicks the map (or holds a modifier); the
  // mouse leaving the map hands the wheel back to the page.
  handWheel(hint) {
    const root = this.root;
    const activate = () => {
      this.wheel = true;
      hint.hidden = true;
    };
    root.addEventListener("pointerdown", activate, { capture: true });
    root.addEventListener("mousedown", activate, { capture: true });
    root.addEventListener("mouseleave", (event) => {
      // Plotly covers the page with a "dragcover" while a click or drag is under way: not leaving
      const to = event.relatedTarget;
      if (!(to && to.classList && to.classList.contains("dragcover"))) this.wheel = false;
    });
    document.addEventListener("pointerdown", (event) => {
      if (!root.contains(event.target)) this.wheel = false;
    });
    root.addEventListener(
      "wheel",
      (event) => {
        if (this.wheel || event.ctrlKey || event.metaKey || event.altKey) return;
        event.stopPropagation(); // Plotly never sees it; the page scrolls as usual
        hint.hidden = false;
        clearTimeout(this.hintTimer);
        this.hintTimer = setTimeout(() => (hint.hidden = true), 1500);
      },
      { capture: true },
    );
  }
}

/** @typedef {{name: "all"|"sub", div: HTMLElement, plotted: boolean, drawnKey: string|undefined, syncing: boolean}} Chart */

// Streamlit folds its sidebar at 768 px and below ("auto"); fold it up to 800 px too, once a page.
const NARROW = 800;
function foldSidebar() {
  if (window.atlasFolded || window.innerWidth > NARROW) return;
  window.atlasFolded = true;
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  if (!sidebar || sidebar.dataset.collapsed !== "false") return;
  const button = sidebar.querySelector('[data-testid="stSidebarCollapseButton"] button');
  if (button) button.click();
}

export default function (component) {
  foldSidebar();
  const { data, parentElement, setTriggerValue } = component;
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = new AtlasMap(parentElement);
    INSTANCES.set(parentElement, inst);
  }
  inst.trigger = setTriggerValue;
  inst.root.style.height = `${data.height}px`;
  inst.pending = data;
  update(inst);
  return () => {
    // Streamlit unmounted the map: free its WebGL contexts.
    for (const chart of Object.values(inst.charts)) if (window.Plotly && chart.plotted) window.Plotly.purge(chart.div);
    if (ZOOM.inst === inst) ZOOM.inst = null;
    if (inst.legendWatch) inst.legendWatch.disconnect();
    inst.root.remove();
    INSTANCES.delete(parentElement);
  };
}
