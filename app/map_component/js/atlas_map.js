// @ts-check
// Abstract Atlas live map: one Plotly chart per map, drawn once from the map's point table and then
// updated in place (Plotly.react) from the few KB of view state each Streamlit rerun sends
// (`ViewState`, js/protocol.js; docs/app.md, "The map component's protocol").
//
// This module holds the map's state and elements (the class AtlasMap) and applies a view state; the
// modules it imports hold the work by concern, as functions of the map (`inst`).
//
// Plotly recomputes every trace of a chart whenever any trace's data changes (a quarter of a second
// for 81,646 papers), so the map is two charts in one place, one shown at a time: "all", every paper in
// colour (one trace, a colour per point, redrawn only when the colouring changes), and "sub", with a filter
// or search, only the highlighted papers (one trace; made ahead, hidden, after the first drawing:
// `warmChart`). Clearing a search shows "all" again as it was;
// the two follow each other's zoom, pan and drag tool when one takes the other's place. The shown one
// carries the class atlas-map-graph. Everything else is cheaper outside Plotly's data:
// the faint context of papers left out is an image drawn once per view, and topic and theme names,
// the opened paper's ring and the pinned abstract are HTML elements over the chart, positioned with
// its axes. Names are set with textContent: untrusted text shows as typed and never runs.

import { showChart, showSelection, warmChart } from "./charts.js";
import { drawContext, scheduleContext } from "./context.js";
import { freeEscape } from "./dom.js";
import { showDensity, startFallback } from "./fallback.js";
import { closePaper } from "./history.js";
import { drawLegend, followLegend } from "./legend.js";
import { LINK, VIEWS, mapSummary } from "./links.js";
import { loadPlotly, loadTable, maskOf, rankCounts } from "./load.js";
import { facts, onFacts, papersNow, searchOf } from "./page.js";
import { mark, placeMarks } from "./marks.js";
import { ranges } from "./plot.js";
import { drawKeyOf, grouping, parsedOutline } from "./sampling.js";
import { SHARED } from "./shared.js";
import { ZOOM, parseZoom, rememberZoom, restoreZoom, wrapHistory } from "./zoom.js";
/** @import { PointTable } from "./load.js" */
/** @import { Chart, MapView, Mask, PlotDiv, PlotImage, Ranges, SummaryTopic, TopicName, Trigger, ViewState } from "./protocol.js" */
/** @import { Drawn } from "./sampling.js" */
/** @import { Shown } from "./page.js" */
/** @import { KeyEntry, Summary } from "./protocol.js" */

/** @type {WeakMap<HTMLElement, AtlasMap>} */
export const INSTANCES = new WeakMap(); // parentElement -> this map's state, kept across reruns

// One map on the page: its elements, what it shows and what it keeps between reruns (kept in
// INSTANCES by the component's parent element, since Streamlit calls the default export again on
// every rerun with the same element).
export class AtlasMap {
  // the page elements
  /** @type {HTMLElement} */ root;
  /** @type {HTMLElement} the charts and what lies over them, above the key's row */ stage;
  /** @type {{all: Chart, sub: Chart}} two charts in one place, one shown at a time */ charts;
  /** @type {PlotDiv} the shown chart's div */ gd;
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
  /** @type {string|undefined} */ legendKey = undefined; // the key's entries drawn, but for which is on
  /** @type {boolean[]} which of the key's entries is on (shown alone) */ legendOn = [];
  /** @type {ResizeObserver|null} the key's (or the note's) row changed height */ legendWatch = null;
  /** @type {HTMLElement} a row under the chart: why the map is an image (no WebGL) */ note;
  /** @type {HTMLElement} */ noteText;
  /** @type {HTMLElement} how many highlighted or selected papers are drawn, when not all */ noteCount;
  // without WebGL (a map that needs it, in a browser that has none): see "without WebGL"
  fallback = false;
  /** @type {PlotImage|null} the "all" chart's image of every paper, a Plotly layout image */ density = null;
  /** @type {string|null} */ densityUrl = null;
  /** @type {string|undefined} the colouring and view it was drawn for */ densityKey = undefined;
  densityTimer = 0;
  /** @type {number[]} rows of the box or lasso selection drawn as points on the "all" chart */ picked = [];
  /** @type {{sub?: number, picked?: number}} papers when more than FALLBACK_POINTS, else 0 */ capped = {};
  // the map's points and what the view draws of them
  /** @type {PointTable} the point table (prepare), per map: loaded before the first view is applied */
  table = /** @type {PointTable} */ (/** @type {unknown} */ (null));
  /** @type {string} the table's URL: names the map events come from ("": none yet) */ pointsUrl = "";
  /** @type {string|undefined} the colouring drawn: "" = by topic, else a column */ colourKey = undefined;
  /** @type {Drawn|null} the papers the "all" chart draws, in its order */ every = null;
  /** @type {string|undefined} the mask drawn ("all" = none) */ maskKey = undefined;
  /** @type {string|undefined} the view drawn: the link's papers (js/page.js `Shown.key`) or the server's mask, and the opened topic */ shownFor = undefined;
  /** @type {Mask|null} 1 = in view; null = every paper */ mask = null;
  /** @type {Drawn|null} the highlighted papers drawn (overlay) */ sub = null;
  sampled = false; // the "all" chart draws a sample of the papers (sampleRows)
  sampleGen = 0; // bumped by each resample after a pan or zoom
  sampleTimer = 0;
  /** @type {MapView|null} the last view state applied, as drawn (`asDrawn`) */ view = null;
  /** @type {Summary|null} the map's summary the names drawn came from (null: none yet, no names) */ namedFrom = null;
  /** @type {ViewState|null} the last view state received from the server */ received = null;
  /** @type {{rank: number, label: TopicName|null}|null} the topic the panel opened: the rest is dimmed */ focus = null;
  // the faint context image of the papers left out
  /** @type {PlotImage|null} its Plotly layout image, for the current zoom */ context = null;
  /** @type {string|null} */ contextUrl = null;
  contextShown = false;
  contextStale = false;
  contextTimer = 0;
  // what changed since the last view state
  /** @type {ViewState|null} the newest view state not applied yet */ pending = null;
  busy = false; // a view state is being applied
  stale = false; // the link moved while a view state was applied: looked at again when it ends
  plotted = false; // the map has been drawn once
  draws = 0; // views applied, for tests and benchmarks
  /** @type {number|undefined} the "Reset view" counter last seen */ reset = undefined;
  silent = false; // our own clearing of a selection is under way
  /** @type {string|undefined} the selection drawn, as JSON of its `Outline` ("null": none) */ selectionKey;
  /** @type {number|null|undefined} the opened paper and pin already brought into sight */ seenPaper = undefined;
  /** @type {string|null} */ seenPin = null;
  // zoom
  /** @type {Ranges|null} the link's view=, for the first map only */ linkZoom = null;
  /** @type {string|null} the view= text for the current zoom (null: the opening view) */ zoom = null;
  /** @type {Object<string, number>|null} a drag or wheel zoom's ranges while it is under way (plotly_relayouting) */ liveRanges = null;
  frame = 0; // the animation frame that will place the names
  // the wheel: scrolls the page until the reader clicks the map
  wheel = false;
  hintTimer = 0;
  /** @type {Trigger} Streamlit's setTriggerValue */ trigger = () => {};
  /** @type {(event: KeyboardEvent) => void} Escape closes the opened paper */ onKey = () => {};
  /** @type {(event: PointerEvent) => void} a click elsewhere hands the wheel back */ onPointer = () => {};

  /** @param {HTMLElement} parentElement */
  constructor(parentElement) {
    this.stopFacts = onFacts(() => this.follow()); // the page's facts changed: the view's papers drawn
    this.root = document.createElement("div");
    this.root.className = "atlas-map";
    this.root.setAttribute("role", "region"); // named for a screen reader's list of landmarks
    this.root.setAttribute("aria-label", "Map of the papers");
    this.loading = document.createElement("div");
    this.loading.className = "atlas-map-loading";
    this.loading.textContent = "Loading the map…";
    this.error = document.createElement("div");
    this.error.className = "atlas-map-error";
    this.error.hidden = true;
    const charts = /** @type {{all: Chart, sub: Chart}} */ ({});
    for (const name of /** @type {("all"|"sub")[]} */ (["all", "sub"])) {
      const div = /** @type {PlotDiv} */ (document.createElement("div"));
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
    this.legend.setAttribute("role", "group");
    this.legend.setAttribute("aria-label", "Key: show one alone");
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
    // Escape closes the opened paper (js/history.js, closePaper), as it closes an opened topic in the
    // topic panel: back to that topic, or to the list.
    this.onKey = (/** @type {KeyboardEvent} */ event) => {
      const view = this.received;
      if (!view || view.paper === null || view.paper === undefined || !freeEscape(event)) return;
      event.preventDefault();
      closePaper(this.trigger, view.points);
    };
    document.addEventListener("keydown", this.onKey);
  }

  // The page's wheel scrolls the page until the reader clicks the map (or holds a modifier); the
  // mouse leaving the map hands the wheel back to the page.
  /** @param {HTMLElement} hint */
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
      const to = /** @type {HTMLElement|null} */ (event.relatedTarget);
      if (!(to && to.classList && to.classList.contains("dragcover"))) this.wheel = false;
    });
    this.onPointer = (/** @type {PointerEvent} */ event) => {
      if (!root.contains(/** @type {Node} */ (event.target))) this.wheel = false;
    };
    document.addEventListener("pointerdown", this.onPointer);
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
    // Touch screens: the hint says how to zoom there, and two fingers pinch to zoom (Plotly's charts
    // pan with one finger but have no pinch of their own), about the point between the fingers.
    if (!window.matchMedia || !window.matchMedia("(pointer: coarse)").matches) return;
    hint.textContent = "Pinch to zoom · drag to pan · tap a point to open its paper";
    hint.hidden = false;
    this.hintTimer = setTimeout(() => (hint.hidden = true), 4000);
    /** @type {{spread: number, x: number[], y: number[], fx: number, fy: number, chart: any}|null} */
    let pinch = null;
    let frame = 0;
    const spread = (/** @type {TouchEvent} */ event) =>
      Math.sqrt((event.touches[0].clientX - event.touches[1].clientX) ** 2 + (event.touches[0].clientY - event.touches[1].clientY) ** 2);
    root.addEventListener("touchstart", (event) => {
      const chart = /** @type {any} */ (root.querySelector(".atlas-map-graph"));
      const area = chart && chart.querySelector(".nsewdrag");
      if (event.touches.length !== 2 || !area || !chart._fullLayout) return;
      event.preventDefault();
      hint.hidden = true;
      const box = area.getBoundingClientRect(), xa = chart._fullLayout.xaxis, ya = chart._fullLayout.yaxis;
      const mx = (event.touches[0].clientX + event.touches[1].clientX) / 2 - box.left;
      const my = (event.touches[0].clientY + event.touches[1].clientY) / 2 - box.top;
      pinch = { spread: Math.max(1, spread(event)), x: xa.range.slice(), y: ya.range.slice(), fx: xa.p2l(mx), fy: ya.p2l(my), chart };
    }, { passive: false });
    root.addEventListener("touchmove", (event) => {
      if (!pinch || event.touches.length !== 2) return;
      event.preventDefault();
      const held = pinch, k = held.spread / Math.max(1, spread(event)); // fingers apart: k < 1, zoom in
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const scaled = (/** @type {number[]} */ r, /** @type {number} */ f) => [f + (r[0] - f) * k, f + (r[1] - f) * k];
        window.Plotly.relayout(held.chart, { "xaxis.range": scaled(held.x, held.fx), "yaxis.range": scaled(held.y, held.fy) });
      });
    }, { passive: false });
    root.addEventListener("touchend", (event) => {
      if (event.touches.length < 2) pinch = null;
    });
  }

  // Apply the newest view state, and any that arrives meanwhile, one at a time.
  async update() {
    if (this.busy) return; // the running loop picks up the newest view when it finishes
    this.busy = true;
    try {
      while (this.pending || (this.stale && this.moved())) {
        const view = this.pending || /** @type {ViewState} */ (this.received);
        this.pending = null;
        this.stale = false;
        const started = performance.now();
        await this.apply(view);
        const ms = String(Math.round(performance.now() - started)); // for benchmarks
        for (const chart of Object.values(this.charts)) chart.div.dataset.atlasApplyMs = ms;
      }
      this.error.hidden = true;
    } catch (error) {
      this.error.textContent = `The map could not be drawn: ${/** @type {Error} */ (error).message}`;
      this.error.hidden = false;
      console.error(error);
    } finally {
      this.busy = false;
    }
  }

  // Draw one view state: load what it names, redraw the points only when what they show changed,
  // and move the marks.
  /** @param {ViewState} view */
  async apply(view) {
    const Plotly = await loadPlotly(view.plotly, view.plotly_data);
    if (this.pointsUrl !== view.points) {
      const table = await loadTable(view.points, view.points_data);
      for (const chart of Object.values(this.charts)) {
        if (chart.plotted) Plotly.purge(chart.div); // another map: new charts, the old ones' contexts freed
        Object.assign(chart, { plotted: false, drawnKey: undefined, sampledFor: undefined });
      }
      this.linkZoom = this.plotted ? null : parseZoom(window.location.search); // the link's zoom, first map only
      Object.assign(this, {
        table, pointsUrl: view.points, plotted: false, maskKey: undefined, shownFor: undefined, colourKey: undefined,
        context: null, active: null,
      });
      startFallback(this); // no WebGL in this browser: an image of the papers instead of WebGL points
    }
    const colourKey = view.colour || "";
    const recoloured = colourKey !== this.colourKey;
    if (recoloured) {
      grouping(this.table, colourKey); // once per colouring; `traces` draws the view's points of it
      this.colourKey = colourKey;
    }
    this.received = view;
    if (LINK.table) LINK.table.markOpened(view.paper ?? null); // the table marks the paper opened here
    const papers = papersNow(view.points);
    if (!papers) return; // the facts of its view are on their way: drawn when they come (`follow`)
    const shown = this.drawnFor(papers);
    let changed = recoloured;
    if (shown.key !== this.shownFor) {
      this.shownFor = shown.key;
      const mask = shown.mask();
      if (this.maskKey === undefined || !sameRows(mask, this.mask)) {
        // the points drawn again only where the papers changed (not for a key's entry pressed over them)
        [this.mask, this.maskKey, changed] = [mask, shown.key, true];
      }
    }
    if (changed) this.sub = { rows: [], x: [], y: [], title: [], detail: [], colour: [] }; // taken for the view when drawn (`traces`)
    const named = this.asDrawn(view, papers);
    this.view = named;
    this.namedFrom = mapSummary();
    this.loading.hidden = true;
    // The points are redrawn only when what they show changed; an opened paper, its neighbours, the
    // names and the pin are marks over the chart and move without Plotly.
    drawLegend(this, named.legend);
    const name = this.mask !== null ? "sub" : "all";
    const drawKey = drawKeyOf(this, named, name);
    await showChart(this, named, name, drawKey);
    if (!this.plotted) {
      this.plotted = true;
      this.reset = named.reset;
      ZOOM.inst = this;
      wrapHistory();
      followLegend(this);
      rememberZoom(this);
    }
    if (named.reset !== this.reset) {
      this.reset = named.reset; // "Reset view" in the app: the whole map again
      await restoreZoom(this, null);
      rememberZoom(this);
    }
    if (!this.context || this.contextStale) {
      this.contextStale = false;
      if (this.mask !== null) await drawContext(this);
      else scheduleContext(this); // ready before the first search needs it
    }
    if (this.fallback) await showDensity(this);
    await showSelection(this, named.selection);
    await this.keepInSight(named);
    placeMarks(this);
    await warmChart(this, named);
    this.drawn();
  }

  // A view drawn (or the link's taken as the one drawn): counted on the charts, for tests and benchmarks.
  drawn() {
    this.draws += 1;
    for (const chart of Object.values(this.charts)) chart.div.dataset.atlasDraws = String(this.draws);
  }

  // The panel opened a topic (null: closed it): its papers stand out, the rest dimmed, as the view's
  // other papers are; drawn again from the last view state the server sent.
  /** @param {SummaryTopic|null} topic */
  focusTopic(topic) {
    const key = (/** @type {{rank: number, label: {text: string}|null}|null} */ focus) => (focus ? `${focus.rank}|${focus.label ? focus.label.text : ""}` : null);
    if (key(topic && { rank: topic.rank, label: topic.x === null ? null : { text: topic.name } }) === key(this.focus)) return;
    this.focus = topic && {
      rank: topic.rank,
      label: topic.x === null || topic.y === null ? null : { text: topic.name, x: topic.x, y: topic.y, colour: topic.colour, chosen: true },
    };
    this.redraw();
  }

  // The address bar's link changed, or the page's facts did (js/links.js `linkChanged`, js/page.js
  // `onFacts`): drawn again where the papers of its view differ from those drawn.
  // In the next task, so that a step the browser draws in this one (the panel's opened topic) is drawn
  // with it, once; a drawing under way looks again when it ends (`update`).
  follow() {
    setTimeout(() => {
      if (this.busy || this.pending) this.stale = true;
      else if (this.moved()) this.redraw();
    }, 0);
  }

  // The papers the map draws: those of the view the address bar says (`papers`, js/page.js, once the
  // page's facts answer its search); an opened topic's alone. Their key, and their mask (worked out when
  // asked: a pass over the map).
  /** @param {Shown} papers @returns {{key: string, mask: () => Mask|null}} */
  drawnFor(papers) {
    const focus = this.focus, t = this.table;
    return { key: shownKey(`link ${papers.key}`, focus), mask: () => focusMask(opened(papers, t), t, focus) };
  }

  // The view state as the map draws it: with the names (once the map's summary is here, js/panel.js),
  // the key, the box and the hits of the link's view (js/page.js `papers`); while a topic is open, its
  // name alone (no theme names).
  /** @param {ViewState} view @param {Shown} papers @returns {MapView} */
  asDrawn(view, papers) {
    const summary = mapSummary(), focus = this.focus;
    const named = namedView(view, papers, /** @type {PointTable} */ (this.table), summary);
    return focus ? { ...named, topics: focus.label ? [focus.label] : [], themes: [] } : named;
  }

  // Whether the link's view (js/page.js) is not the one drawn: its papers, or its names (the map's
  // summary came), key and box (the same papers drawn for another link are taken as this one's).
  moved() {
    const papers = this.received && papersNow(this.received.points), summary = mapSummary();
    if (!papers || !this.table || !this.received) return false;
    const shown = this.drawnFor(papers);
    if (this.shownFor === shown.key && this.namedFrom === summary) return false;
    if (!this.view || !sameRows(shown.mask(), this.mask)) return true;
    const drawing = (/** @type {MapView} */ v) => JSON.stringify([v.topics, v.themes, v.legend, v.selection, v.search]);
    if (drawing(this.asDrawn(this.received, papers)) !== drawing(this.view)) return true;
    [this.shownFor, this.namedFrom] = [shown.key, summary];
    this.drawn();
    return false;
  }

  // The last view state received drawn again (an opened topic or a key pick changed what it shows).
  redraw() {
    if (!this.received) return;
    if (!this.pending) this.pending = this.received;
    this.update();
  }

  // A newly opened paper or placed abstract outside the reader's view: widen the view to show it.
  /** @param {ViewState} view */
  keepInSight(view) {
    const t = this.table;
    const spots = [];
    if (view.paper !== null && view.paper !== undefined && view.paper !== this.seenPaper) {
      spots.push([t.x[view.paper], t.y[view.paper]]);
    }
    const pinKey = view.pin ? `${view.pin.x},${view.pin.y}` : null;
    if (view.pin && pinKey !== this.seenPin) spots.push([view.pin.x, view.pin.y]);
    this.seenPaper = view.paper;
    this.seenPin = pinKey;
    const { x: xr, y: yr } = /** @type {Ranges} */ (ranges(this.gd));
    let moved = false;
    for (const [x, y] of spots) {
      const padX = (xr[1] - xr[0]) * 0.05, padY = (yr[1] - yr[0]) * 0.05;
      if (x < xr[0]) [xr[0], moved] = [x - padX, true];
      if (x > xr[1]) [xr[1], moved] = [x + padX, true];
      if (y < yr[0]) [yr[0], moved] = [y - padY, true];
      if (y > yr[1]) [yr[1], moved] = [y + padY, true];
    }
    return moved ? window.Plotly.relayout(this.gd, { "xaxis.range": xr, "yaxis.range": yr }) : null;
  }

  // Streamlit unmounted the map: free its WebGL contexts, and its elements.
  destroy() {
    for (const chart of Object.values(this.charts)) if (window.Plotly && chart.plotted) window.Plotly.purge(chart.div);
    if (ZOOM.inst === this) ZOOM.inst = null;
    if (this.legendWatch) this.legendWatch.disconnect();
    this.stopFacts();
    document.removeEventListener("keydown", this.onKey);
    document.removeEventListener("pointerdown", this.onPointer);
    this.root.remove();
  }
}

// The view state with the names, the key, the box or lasso and the hits of the link's view (js/page.js):
// the names of its topics holding papers on the map, its opened topic first, then by size (colour
// rank), at most `max_topic_labels`; of its themes holding any, largest first (none before the map's
// summary is here); the key's entries pressed for its chosen themes, or its values of the column the
// map is coloured by; its papers outlined as hits where it has a search or shows the papers added.
/** @param {ViewState} view @param {Shown} papers @param {PointTable} t @param {Summary|null} summary @returns {MapView} */
function namedView(view, papers, t, summary) {
  const chosen = papers.view.topic;
  /** @type {SummaryTopic[]} */
  let visible = [];
  if (summary) {
    const base = opened(papers, t), counts = rankCounts(t, base ? base.rows : null);
    visible = summary.topics.filter((topic) => topic.id !== -1 && counts[topic.rank] > 0).sort((a, b) => a.rank - b.rank);
    const first = visible.findIndex((topic) => topic.id === chosen);
    if (first > 0) visible.unshift(...visible.splice(first, 1));
  }
  const topics = visible.slice(0, SHARED.max_topic_labels).flatMap((topic) =>
    topic.x === null || topic.y === null ? [] : [{ text: topic.name, x: topic.x, y: topic.y, colour: topic.colour, chosen: topic.id === chosen }]);
  const held = new Set(visible.map((topic) => topic.theme));
  const themes = summary ? summary.themes.filter((theme) => held.has(theme.id)) : [];
  const pressed = papers.view.filters.find((filter) => filter[0] === view.colour);
  const on = (/** @type {KeyEntry} */ entry) =>
    entry.pick !== null && (typeof entry.pick.theme === "number" ? papers.view.themes.includes(entry.pick.theme) : Boolean(pressed && entry.link !== null && pressed[1].includes(entry.link)));
  const selection = papers.view.selection ? parsedOutline(papers.view.selection) : null;
  const search = searchOf(papers.view.search) !== "" || papers.view.added_only;
  return { ...view, search, topics, themes, legend: view.legend.map((entry) => ({ ...entry, on: on(entry) })), selection };
}

// The papers of the view the link says (js/page.js), narrowed to its opened topic (a paper opened from a
// topic: the map stays on the topic's papers, as the panel's focus keeps them while it shows the topic).
/** @param {Shown} papers @param {PointTable} t @returns {Mask|null} */
function opened(papers, t) {
  const topic = papers.view.topic, known = facts();
  if (topic === null || !known) return papers.mask;
  const of = known.tables.topics, rows = [];
  for (const i of papers.mask ? papers.mask.rows : Uint32Array.from({ length: t.n }, (_, i) => i)) {
    if (of[i] === topic) rows.push(i);
  }
  return maskOf(rows, t.n);
}

/** What a map draws: its papers (`source`) and its opened topic. @param {string} source @param {{rank: number}|null} focus */
const shownKey = (source, focus) => source + (focus ? `|topic ${focus.rank}` : "");

/** Whether two masks hold the same papers (null: every paper). @param {Mask|null} a @param {Mask|null} b */
const sameRows = (a, b) => a === b || (a !== null && b !== null && a.rows.length === b.rows.length && a.rows.every((i, k) => b.rows[k] === i));

// The papers of the view (`base`) in the opened topic (its colour rank in the point table).
/** @param {Mask|null} base @param {PointTable} t @param {{rank: number}|null} focus @returns {Mask|null} */
function focusMask(base, t, focus) {
  if (!focus) return base;
  const rows = [];
  for (let i = 0; i < t.n; i++) if (t.colour[i] === focus.rank && (!base || base[i])) rows.push(i);
  return maskOf(rows, t.n);
}

// Streamlit folds its sidebar at 768 px and below ("auto"); fold it up to 800 px too, once a page.
const NARROW = 800;

export function foldSidebar() {
  if (window.atlasFolded || window.innerWidth > NARROW) return;
  window.atlasFolded = true;
  const sidebar = /** @type {HTMLElement|null} */ (document.querySelector('[data-testid="stSidebar"]'));
  if (!sidebar || sidebar.dataset.collapsed !== "false") return;
  const button = /** @type {HTMLElement|null} */ (sidebar.querySelector('[data-testid="stSidebarCollapseButton"] button'));
  if (button) button.click();
}
