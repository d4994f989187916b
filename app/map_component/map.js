// Abstract Atlas live map: one Plotly chart per map, drawn once from the map's point table and then
// updated in place (Plotly.react) from the few KB of view state each Streamlit rerun sends.
// What `data` holds is documented in app/map_component/__init__.py.

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

async function gunzipText(url) {
  const response = await download(url);
  const stream = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  return once(url, async () => {
    const code = await gunzipText(url);
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

function loadTable(url) {
  return once(url, async () => prepare(JSON.parse(await gunzipText(url))));
}

// Points in draw order (unassigned first, so topics sit on top), with their hover text built once.
function prepare(table) {
  const n = table.n;
  const unassigned = table.palette.length - 1;
  const order = new Int32Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) if (table.colour[i] === unassigned) order[k++] = i;
  for (let i = 0; i < n; i++) if (table.colour[i] !== unassigned) order[k++] = i;
  const x = new Array(n), y = new Array(n), title = new Array(n), detail = new Array(n);
  const colour = new Float32Array(n);
  for (let j = 0; j < n; j++) {
    const i = order[j];
    x[j] = table.x[i];
    y[j] = table.y[i];
    title[j] = table.title[i];
    detail[j] = table.topic_names[table.colour[i]] + "<br>" + table.sources[table.source[i]];
    colour[j] = table.colour[i] + 0.5;
  }
  const scale = [];
  table.palette.forEach((c, i) => {
    scale.push([i / table.palette.length, c], [(i + 1) / table.palette.length, c]);
  });
  return { ...table, order, ox: x, oy: y, otitle: title, odetail: detail, ocolour: colour, scale };
}

function decodeMask(text, n) {
  if (text === null || text === undefined) return null;
  const raw = atob(text);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) mask[i] = (raw.charCodeAt(i >> 3) >> (i & 7)) & 1;
  return mask;
}

function overlay(table, mask) {
  const rows = [], x = [], y = [], title = [], detail = [], colour = [];
  for (let j = 0; j < table.n; j++) {
    const i = table.order[j];
    if (!mask[i]) continue;
    rows.push(i);
    x.push(table.ox[j]);
    y.push(table.oy[j]);
    title.push(table.otitle[j]);
    detail.push(table.odetail[j]);
    colour.push(table.ocolour[j]);
  }
  return { rows, x, y, title, detail, colour };
}

function traces(inst, view) {
  const t = inst.table;
  const kind = t.webgl ? "scattergl" : "scatter";
  const masked = inst.mask !== null;
  const small = t.n <= 2000;
  const search = view.search;
  const marker = (colour, size, line) => ({
    color: colour,
    cmin: 0,
    cmax: t.palette.length,
    colorscale: t.scale,
    showscale: false,
    size,
    opacity: t.n < 2000 ? 0.92 : t.n < 20000 ? 0.8 : 0.65,
    line,
  });
  const plain = small ? { width: 0.8, color: "white" } : { width: 0 };
  const outline = search ? { width: small ? 1.2 : 0.6, color: INK } : plain;
  const sub = inst.sub;
  const opened = view.paper === null || view.paper === undefined ? [] : [view.paper];
  return [
    {
      type: kind, name: "context", mode: "markers", x: t.ox, y: t.oy, visible: masked,
      hoverinfo: "skip", showlegend: false,
      marker: { color: CONTEXT_COLOUR, size: t.size * 0.85, opacity: t.n < 5000 ? 0.55 : 0.35 },
    },
    {
      type: kind, name: "papers", mode: "markers", x: t.ox, y: t.oy, visible: !masked,
      text: t.otitle, hovertext: t.odetail, hovertemplate: HOVER, showlegend: false,
      marker: marker(t.ocolour, t.size, plain),
    },
    {
      type: kind, name: "highlight", mode: "markers", x: sub.x, y: sub.y, visible: masked,
      text: sub.title, hovertext: sub.detail, hovertemplate: HOVER, showlegend: false,
      marker: marker(sub.colour, t.size * (search ? 1.25 : 1), outline),
    },
    {
      type: "scatter", name: "opened paper", mode: "markers", hoverinfo: "skip", showlegend: false,
      x: opened.map((i) => t.x[i]), y: opened.map((i) => t.y[i]),
      marker: { symbol: "circle-open", size: t.size * 2 + 10, color: INK, line: { width: 3 } },
    },
    {
      type: "scatter", name: "your abstract", mode: "markers", showlegend: false,
      x: view.pin ? [view.pin.x] : [], y: view.pin ? [view.pin.y] : [],
      hovertemplate: view.pin ? `<b>Your abstract</b><br>${view.pin.label}<extra></extra>` : "",
      marker: { symbol: "star", size: 24, color: "#111827", line: { width: 1.5, color: "white" } },
    },
  ];
}

// Topic names (or theme names when most of the map is in view), placed greedily so none overlap.
function annotations(inst, view) {
  const t = inst.table;
  const full = inst.gd._fullLayout;
  const xr = full && full.xaxis ? full.xaxis.range : t.range.x;
  const yr = full && full.yaxis ? full.yaxis.range : t.range.y;
  const width = full && full._size ? full._size.w : inst.gd.clientWidth || 600;
  const height = full && full._size ? full._size.h : view.height;
  const span = Math.max(
    (xr[1] - xr[0]) / (t.range.x[1] - t.range.x[0]),
    (yr[1] - yr[0]) / (t.range.y[1] - t.range.y[0]),
  );
  const themes = view.themes.length > 0 && span > THEMES_ABOVE;
  const candidates = themes ? view.themes : view.topics;
  const limit = themes ? candidates.length : view.label_limit;
  const placed = [], notes = [];
  for (const label of candidates) {
    if (notes.length >= limit) break;
    const rank = notes.length;
    const font = themes ? 16 : rank < 5 ? 14 : rank < 15 ? 12.5 : 11;
    const lines = label.text.split("<br>");
    const halfW = (Math.max(...lines.map((l) => l.length)) * font * 0.5 + 10) / width / 2;
    const halfH = (lines.length * font * 1.25 + 8) / height / 2;
    let u = (label.x - xr[0]) / (xr[1] - xr[0]);
    const v = (label.y - yr[0]) / (yr[1] - yr[0]);
    if (u < 0 || u > 1 || v < 0 || v > 1) continue;
    u = Math.min(Math.max(u, halfW), 1 - halfW); // a name near the edge slides inwards
    if (placed.some((p) => Math.abs(u - p[0]) < halfW + p[2] && Math.abs(v - p[1]) < halfH + p[3])) continue;
    placed.push([u, v, halfW, halfH]);
    notes.push({
      x: xr[0] + u * (xr[1] - xr[0]),
      y: label.y,
      text: label.chosen || themes ? `<b>${label.text}</b>` : label.text,
      showarrow: false,
      yshift: themes ? 0 : 14,
      font: { size: font, color: themes ? "#334155" : INK },
      bgcolor: themes ? "rgba(255,255,255,0.72)" : "rgba(255,255,255,0.82)",
      bordercolor: themes ? "rgba(0,0,0,0)" : label.colour,
      borderwidth: label.chosen ? 3 : themes ? 0 : 1.5,
      borderpad: 3,
      opacity: 0.95,
      name: themes ? "theme" : "topic",
    });
  }
  if (view.pin) {
    notes.push({
      x: view.pin.x, y: view.pin.y, text: "<b>Your abstract</b>", showarrow: true, arrowhead: 0,
      ax: 36, ay: -30, font: { size: 13, color: "white" }, bgcolor: "#111827", borderpad: 4,
      arrowcolor: "#111827", name: "pin",
    });
  }
  return notes;
}

function layout(inst, view) {
  const t = inst.table;
  // The chart keeps the reader's zoom (uirevision) and our own widening (keepInSight), which Plotly
  // wrote into the previous layout object: carry those ranges over.
  const previous = inst.layout;
  const range = (axis) => (previous && previous[axis] && previous[axis].range ? previous[axis].range : t.range[axis[0]]).slice();
  return {
    height: view.height,
    margin: { l: 4, r: 4, t: 4, b: 4 },
    plot_bgcolor: "#fbfbfd",
    paper_bgcolor: "rgba(0,0,0,0)",
    xaxis: { visible: false, showgrid: false, zeroline: false, range: range("xaxis") },
    yaxis: { visible: false, showgrid: false, zeroline: false, range: range("yaxis") },
    dragmode: "pan",
    clickmode: "event",
    hovermode: "closest",
    hoverlabel: { bgcolor: "white", font: { size: 13, color: INK }, align: "left" },
    showlegend: false,
    uirevision: view.points, // constant per map: zoom, pan and the drag tool survive every redraw
    annotations: [],
  };
}

// Rows of the papers a click or a box/lasso picked, from the coloured traces only.
function rowsOf(inst, points) {
  const rows = [];
  for (const p of points || []) {
    const name = p.data && p.data.name;
    if (name === "papers") rows.push(inst.table.order[p.pointIndex]);
    else if (name === "highlight") rows.push(inst.sub.rows[p.pointIndex]);
  }
  return rows;
}

function bindEvents(inst) {
  const gd = inst.gd;
  gd.on("plotly_click", (event) => {
    const rows = rowsOf(inst, event && event.points ? event.points.slice(0, 1) : []);
    if (rows.length) inst.trigger("click", { row: rows[0], map: inst.pointsUrl });
  });
  gd.on("plotly_selected", (event) => {
    // Plotly also fires this after programmatic redraws, without a range or lasso: not the reader's.
    if (inst.silent || !event || (!event.range && !event.lassoPoints)) return;
    inst.trigger("select", { rows: rowsOf(inst, event.points), map: inst.pointsUrl });
  });
  gd.on("plotly_deselect", () => {
    if (!inst.silent) inst.trigger("select", { rows: [], map: inst.pointsUrl });
  });
  gd.on("plotly_relayout", (event) => {
    const moved = Object.keys(event || {}).some((k) => k.startsWith("xaxis") || k.startsWith("yaxis"));
    if (moved && !inst.busy) relabel(inst);
  });
}

function relabel(inst) {
  const notes = annotations(inst, inst.view);
  const key = JSON.stringify(notes);
  if (key === inst.labelKey) return;
  inst.labelKey = key;
  inst.layout.annotations = notes;
  window.Plotly.relayout(inst.gd, { annotations: notes });
}

async function apply(inst, view) {
  const Plotly = await loadPlotly(view.plotly);
  if (inst.pointsUrl !== view.points) {
    const table = await loadTable(view.points);
    if (inst.plotted) Plotly.purge(inst.gd); // another map: a new chart, the old one's context freed
    Object.assign(inst, { table, pointsUrl: view.points, plotted: false, maskKey: undefined, layout: null });
  }
  const maskKey = view.mask === null ? "all" : view.mask;
  if (maskKey !== inst.maskKey) {
    inst.mask = decodeMask(view.mask, inst.table.n);
    inst.sub = inst.mask ? overlay(inst.table, inst.mask) : { rows: [], x: [], y: [], title: [], detail: [], colour: [] };
    inst.maskKey = maskKey;
  }
  const data = traces(inst, view);
  const clearing = inst.plotted && view.clear !== inst.clear; // "Clear selection" in the app
  inst.clear = view.clear;
  const previous = inst.layout;
  const next = layout(inst, view);
  if (previous && previous.selections) next.selections = previous.selections;
  inst.layout = next;
  inst.view = view;
  inst.loading.hidden = true;
  if (!inst.plotted) {
    await Plotly.newPlot(inst.gd, data, next, CONFIG);
    inst.plotted = true;
    inst.gd.atlasTable = inst.table; // for tests and benchmarks: row -> position
    bindEvents(inst);
    inst.labelKey = undefined;
    relabel(inst); // the first placement needs the drawn plot's size
  } else {
    next.annotations = annotations(inst, view); // the reader's current zoom, from the live chart
    inst.labelKey = JSON.stringify(next.annotations);
    await Plotly.react(inst.gd, data, next, CONFIG);
    relabel(inst); // only if the view the names were placed for has moved meanwhile
  }
  if (clearing) {
    inst.silent = true; // our own clearing is not the reader's deselection
    try {
      await Plotly.relayout(inst.gd, { selections: [] });
      await Plotly.restyle(inst.gd, { selectedpoints: [null] });
    } finally {
      inst.silent = false;
    }
  }
  inst.draws += 1;
  inst.gd.dataset.atlasDraws = String(inst.draws);
  keepInSight(inst, view);
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
  const full = inst.gd._fullLayout;
  const xr = full.xaxis.range.slice(), yr = full.yaxis.range.slice();
  let moved = false;
  for (const [x, y] of spots) {
    const padX = (xr[1] - xr[0]) * 0.05, padY = (yr[1] - yr[0]) * 0.05;
    if (x < xr[0]) { xr[0] = x - padX; moved = true; }
    if (x > xr[1]) { xr[1] = x + padX; moved = true; }
    if (y < yr[0]) { yr[0] = y - padY; moved = true; }
    if (y > yr[1]) { yr[1] = y + padY; moved = true; }
  }
  if (moved) window.Plotly.relayout(inst.gd, { "xaxis.range": xr, "yaxis.range": yr });
}

async function update(inst) {
  if (inst.busy) return; // the running loop picks up the newest view when it finishes
  inst.busy = true;
  try {
    while (inst.pending) {
      const view = inst.pending;
      inst.pending = null;
      await apply(inst, view);
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

function create(parentElement) {
  const root = document.createElement("div");
  root.className = "atlas-map";
  const loading = document.createElement("div");
  loading.className = "atlas-map-loading";
  loading.textContent = "Loading the map…";
  const error = document.createElement("div");
  error.className = "atlas-map-error";
  error.hidden = true;
  const gd = document.createElement("div");
  gd.className = "atlas-map-graph";
  root.append(loading, error, gd);
  parentElement.appendChild(root);
  return { root, gd, loading, error, draws: 0, pending: null, busy: false, plotted: false };
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = create(parentElement);
    INSTANCES.set(parentElement, inst);
  }
  inst.trigger = setTriggerValue;
  inst.root.style.height = `${data.height}px`;
  inst.pending = data;
  update(inst);
  return () => {
    // Streamlit unmounted the map: free its WebGL context.
    if (window.Plotly && inst.plotted) window.Plotly.purge(inst.gd);
    inst.root.remove();
    INSTANCES.delete(parentElement);
  };
}
