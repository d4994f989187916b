// Abstract Atlas live map: one Plotly chart per map, drawn once from the map's point table and then
// updated in place (Plotly.react) from the few KB of view state each Streamlit rerun sends.
// What `data` holds is documented in app/map_component/__init__.py.
//
// Plotly recomputes every trace whenever any trace's data changes, so the chart holds only the
// papers in colour: all of them (a trace that never changes) or, with a filter or search, the
// highlighted ones (a new, usually small, trace). Everything else is cheaper outside Plotly's data:
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
  return once(url, async () => prepare(JSON.parse(await gunzipText(url, inline))));
}

// Points grouped by colour, the unassigned group first so topics are drawn on top. Every paper is
// drawn as one trace per colour group, a single marker colour each (Plotly converts a colour per
// point slowly); the highlighted papers are one trace with a colour per point, as hex strings, the
// cheapest form (a trace per group costs about 1 ms each to update, too much for a map of 200
// topics). Hover text is built once.
function prepare(table) {
  const unassigned = table.palette.length - 1;
  const members = table.palette.map(() => []);
  for (let i = 0; i < table.n; i++) members[table.colour[i]].push(i);
  const order = [unassigned, ...table.palette.keys()].filter((c, k) => k === 0 || c !== unassigned);
  const groups = order.map((c) => {
    const rows = members[c];
    return {
      colour: table.palette[c],
      rows,
      x: rows.map((i) => table.x[i]),
      y: rows.map((i) => table.y[i]),
      title: rows.map((i) => table.title[i]),
      detail: rows.map((i) => table.topic_names[c] + "<br>" + table.sources[table.source[i]]),
    };
  });
  return { ...table, groups, order };
}

function decodeMask(text, n) {
  if (text === null || text === undefined) return null;
  const raw = atob(text);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) mask[i] = (raw.charCodeAt(i >> 3) >> (i & 7)) & 1;
  return mask;
}

function overlay(table, mask) {
  const sub = { rows: [], x: [], y: [], title: [], detail: [], colour: [] };
  table.groups.forEach((g, k) => {
    const colour = g.colour; // hex strings: Plotly converts these faster than numbers on a colour scale
    for (let j = 0; j < g.rows.length; j++) {
      if (!mask[g.rows[j]]) continue;
      sub.rows.push(g.rows[j]);
      sub.x.push(g.x[j]);
      sub.y.push(g.y[j]);
      sub.title.push(g.title[j]);
      sub.detail.push(g.detail[j]);
      sub.colour.push(colour);
    }
  });
  return sub;
}

function traces(inst, view) {
  const t = inst.table;
  const kind = t.webgl ? "scattergl" : "scatter";
  const masked = inst.mask !== null;
  const small = t.n <= 2000;
  const opacity = t.n < 2000 ? 0.92 : t.n < 20000 ? 0.8 : 0.65;
  const plain = small ? { width: 0.8, color: "white" } : { width: 0 };
  const outline = view.search ? { width: small ? 1.2 : 0.6, color: INK } : plain;
  const size = t.size * (view.search ? 1.25 : 1);
  const all = t.groups.map((g) => ({
    type: kind, name: "papers", mode: "markers", x: g.x, y: g.y, visible: !masked && g.rows.length > 0,
    text: g.title, hovertext: g.detail, hovertemplate: HOVER, showlegend: false,
    marker: { color: g.colour, size: t.size, opacity, line: plain },
  }));
  const sub = inst.sub;
  const highlighted = {
    type: kind, name: "highlight", mode: "markers", x: sub.x, y: sub.y, visible: masked,
    text: sub.title, hovertext: sub.detail, hovertemplate: HOVER, showlegend: false,
    marker: { color: sub.colour, size, opacity, line: outline },
  };
  return [...all, highlighted];
}

function layout(inst, view) {
  const t = inst.table;
  // The chart keeps the reader's zoom (uirevision) and our own widening (keepInSight), which Plotly
  // wrote into the previous layout object: carry those ranges over.
  const previous = inst.layout;
  const range = (axis) =>
    (previous && previous[axis] && previous[axis].range ? previous[axis].range : t.range[axis[0]]).slice();
  const next = {
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
    images: inst.context ? [{ ...inst.context, visible: inst.mask !== null }] : [],
  };
  if (previous && previous.selections) next.selections = previous.selections;
  return next;
}

// ------------------------------------------------------------------ context image
// The papers outside the filters or search, drawn faintly: an image of every paper in grey for the
// current view, redrawn when the view moves (an image costs Plotly nothing to place).
async function drawContext(inst) {
  const full = inst.gd._fullLayout;
  if (!full || !full._size) return null;
  const t = inst.table;
  const xr = full.xaxis.range, yr = full.yaxis.range;
  const width = Math.max(1, Math.round(full._size.w)), height = Math.max(1, Math.round(full._size.h));
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const g = canvas.getContext("2d");
  g.fillStyle = CONTEXT_COLOUR;
  g.globalAlpha = t.n < 5000 ? 0.8 : 0.6;
  const r = Math.max(1, (t.size * 0.85) / 2);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  g.beginPath();
  for (let i = 0; i < t.n; i++) {
    const px = (t.x[i] - xr[0]) * sx, py = (yr[1] - t.y[i]) * sy;
    if (px < -r || py < -r || px > width + r || py > height + r) continue;
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
  await window.Plotly.relayout(inst.gd, { "images[0]": { ...inst.context, visible: inst.mask !== null } });
  if (previous) URL.revokeObjectURL(previous); // the chart shows the new image now
}

function scheduleContext(inst) {
  clearTimeout(inst.contextTimer);
  inst.contextTimer = setTimeout(() => {
    if (!inst.busy) drawContext(inst);
    else inst.contextStale = true;
  }, 150);
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
  const full = inst.gd._fullLayout;
  const view = inst.view;
  if (!full || !full._size || !view) return;
  const t = inst.table;
  const xa = full.xaxis, ya = full.yaxis, size = full._size;
  const px = (x) => size.l + xa.l2p(x), py = (y) => size.t + ya.l2p(y);
  const inside = (x, y) => x >= size.l && x <= size.l + size.w && y >= size.t && y <= size.t + size.h;
  const span = Math.max(
    (xa.range[1] - xa.range[0]) / (t.range.x[1] - t.range.x[0]),
    (ya.range[1] - ya.range[0]) / (t.range.y[1] - t.range.y[0]),
  );
  const themes = view.themes.length > 0 && span > THEMES_ABOVE;
  const limit = themes ? view.themes.length : view.label_limit;
  // the names whose anchor is in view, in priority order; a few times the limit, as some will overlap
  const shown = (themes ? view.themes : view.topics)
    .filter((label) => inside(px(label.x), py(label.y)))
    .slice(0, limit * 3);
  while (inst.labels.length < shown.length) inst.labels.push(mark(inst, "atlas-label"));
  const looks = shown.map((label, rank) => {
    const font = themes ? 16 : rank < 5 ? 14 : rank < 15 ? 12.5 : 11;
    const kind = `atlas-label${themes ? " atlas-theme" : ""}${label.chosen ? " atlas-chosen" : ""}`;
    return { label, font, kind, key: `${kind}|${font}|${label.text}` };
  });
  const sizes = inst.labelSizes || (inst.labelSizes = new Map());
  const unknown = [];
  looks.forEach((look, i) => {
    const el = inst.labels[i];
    if (el.dataset.key !== look.key) {
      el.textContent = look.label.text; // literal text, never markup
      el.className = look.kind;
      el.style.fontSize = themes ? "" : `${look.font}px`;
      el.dataset.key = look.key;
    }
    el.style.borderColor = themes ? "" : look.label.colour;
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
    const top = Math.min(Math.max(themes ? y - h / 2 : y - h - 6, size.t + 2), size.t + size.h - h - 2);
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
}

// Rows of the papers a click or a box/lasso picked: traces 0..G-1 hold every paper of a colour
// group, trace G the highlighted ones.
function rowsOf(inst, points) {
  const groups = inst.table.groups;
  const rows = [];
  for (const p of points || []) {
    const k = p.curveNumber;
    if (k < groups.length) rows.push(groups[k].rows[p.pointIndex]);
    else if (k === groups.length) rows.push(inst.sub.rows[p.pointIndex]);
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
  const follow = () => {
    if (inst.frame) return;
    inst.frame = requestAnimationFrame(() => {
      inst.frame = 0;
      placeMarks(inst);
    });
  };
  gd.on("plotly_relayouting", follow); // names, ring and pin move with a drag or a zoom as it happens
  gd.on("plotly_relayout", (event) => {
    const moved = Object.keys(event || {}).some((k) => k.startsWith("xaxis") || k.startsWith("yaxis"));
    if (!moved) return;
    follow();
    scheduleContext(inst);
  });
}

async function apply(inst, view) {
  const Plotly = await loadPlotly(view.plotly, view.plotly_data);
  if (inst.pointsUrl !== view.points) {
    const table = await loadTable(view.points, view.points_data);
    if (inst.plotted) Plotly.purge(inst.gd); // another map: a new chart, the old one's context freed
    Object.assign(inst, {
      table, pointsUrl: view.points, plotted: false, maskKey: undefined, layout: null, context: null,
    });
  }
  const maskKey = view.mask === null ? "all" : view.mask;
  if (maskKey !== inst.maskKey) {
    inst.mask = decodeMask(view.mask, inst.table.n);
    const none = { rows: [], x: [], y: [], title: [], detail: [], colour: [] };
    inst.sub = inst.mask ? overlay(inst.table, inst.mask) : none;
    inst.maskKey = maskKey;
  }
  const clearing = inst.plotted && view.clear !== inst.clear; // "Clear selection" in the app
  inst.clear = view.clear;
  inst.view = view;
  const next = layout(inst, view);
  inst.layout = next;
  inst.loading.hidden = true;
  if (!inst.plotted) {
    await Plotly.newPlot(inst.gd, traces(inst, view), next, CONFIG);
    inst.plotted = true;
    inst.gd.atlasTable = inst.table; // for tests and benchmarks: row -> position
    bindEvents(inst);
  } else {
    await Plotly.react(inst.gd, traces(inst, view), next, CONFIG);
  }
  if (!inst.context || inst.contextStale) {
    inst.contextStale = false;
    if (inst.mask !== null) await drawContext(inst);
    else scheduleContext(inst); // ready before the first search needs it
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
  await keepInSight(inst, view);
  placeMarks(inst);
  inst.draws += 1;
  inst.gd.dataset.atlasDraws = String(inst.draws);
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
      inst.gd.dataset.atlasApplyMs = String(Math.round(performance.now() - started)); // for benchmarks
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
  const marks = document.createElement("div");
  marks.className = "atlas-map-marks";
  root.append(gd, marks, loading, error);
  parentElement.appendChild(root);
  const inst = { root, gd, marks, loading, error, labels: [], draws: 0, pending: null, busy: false, plotted: false };
  inst.ring = mark(inst, "atlas-ring");
  inst.pin = mark(inst, "atlas-pin");
  inst.pin.textContent = "★";
  const tag = mark(inst, "atlas-pin-tag");
  tag.textContent = "Your abstract";
  inst.pin.appendChild(tag);
  inst.ring.hidden = inst.pin.hidden = true;
  return inst;
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
