// @ts-check
// Marks over the chart: topic and theme names, the opened paper's ring and its neighbours' rings, the
// placed abstract's star; HTML elements positioned with the chart's axes, set with textContent.

import { plotArea, ranges } from "./plot.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { ThemeName, TopicName } from "./protocol.js" */

const THEMES_ABOVE = 0.55; // theme names while the view spans more than this share of the map

/** @param {AtlasMap} inst @param {string} className */
export function mark(inst, className) {
  const el = document.createElement("div");
  el.className = className;
  inst.marks.appendChild(el);
  return el;
}

// Topic names (or theme names when most of the map is in view), placed greedily so none overlap.
// Sizes are measured in one pass and remembered, so following a drag or a zoom frame by frame only
// moves elements (measuring one at a time would make the browser lay the page out once per name).
/** @param {AtlasMap} inst */
export function placeMarks(inst) {
  const size = plotArea(inst.gd), now = ranges(inst.gd, inst.liveRanges);
  const view = inst.view;
  if (!size || !now || !view) return;
  const t = inst.table;
  const [x0, x1] = now.x, [y0, y1] = now.y;
  const px = (/** @type {number} */ x) => size.l + ((x - x0) / (x1 - x0)) * size.w, py = (/** @type {number} */ y) => size.t + ((y1 - y) / (y1 - y0)) * size.h;
  const inside = (/** @type {number} */ x, /** @type {number} */ y) => x >= size.l && x <= size.l + size.w && y >= size.t && y <= size.t + size.h;
  const span = Math.max((x1 - x0) / (t.range.x[1] - t.range.x[0]), (y1 - y0) / (t.range.y[1] - t.range.y[0]));
  // Zoomed out, theme names lead and the largest topics' names fill the space between them; zoomed
  // in, topic names only. A few times the limit are tried, as some will overlap.
  const themes = view.themes.length > 0 && span > THEMES_ABOVE;
  const limit = themes ? view.themes.length + Math.ceil(view.label_limit / 2) : view.label_limit;
  const inView = (/** @type {{x: number, y: number}} */ label) => inside(px(label.x), py(label.y));
  /** @type {(TopicName & {theme?: boolean} | ThemeName & {theme: true, chosen?: boolean, colour?: string})[]} */
  const candidates = [
    ...(themes ? view.themes.filter(inView).map((label) => ({ ...label, theme: /** @type {true} */ (true) })) : []),
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
  /** @type {[HTMLElement, string][]} */
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
  // Where the points are: each point centre in view counted in a cell of CELL px, the counts summed
  // (a summed-area table), so what a name's box would cover is four look-ups. The opened topic's
  // papers (and the opened paper's rings, the pin) count as walls: no name goes over them.
  const CELL = 4, WALL = 1e6;
  const cols = Math.ceil(size.w / CELL) + 2, rows = Math.ceil(size.h / CELL) + 2;
  const sums = new Float64Array((cols + 1) * (rows + 1));
  const opened = (inst.focus !== null || view.topics.some((label) => label.chosen)) && inst.mask !== null ? inst.mask : null;
  let points = 0;
  const add = (/** @type {number} */ i, /** @type {number} */ weight) => {
    const cx = Math.floor((px(t.x[i]) - size.l) / CELL), cy = Math.floor((py(t.y[i]) - size.t) / CELL);
    if (!(cx >= 0 && cx < cols && cy >= 0 && cy < rows)) return;
    if (weight < WALL) points += weight;
    sums[(cy + 1) * (cols + 1) + cx + 1] += weight;
  };
  // Past 200,000 papers every step-th counts for step (a pan's frames stay quick); walls, every one.
  const step = Math.max(1, Math.ceil(t.n / 200000));
  for (let i = 0; i < t.n; i += step) add(i, step);
  if (opened) for (let i = 0; i < t.n; i++) if (opened[i] === 1) add(i, WALL);
  // Names together cover at most this many point centres, in their order (theme names, then the
  // largest topics'): the first name and the opened topic's are shown wherever they fit, and counted.
  const budget = 0.09 * points;
  let spent = 0;
  for (let r = 1; r <= rows; r++) {
    for (let c = 1; c <= cols; c++) sums[r * (cols + 1) + c] += sums[(r - 1) * (cols + 1) + c] + sums[r * (cols + 1) + c - 1] - sums[(r - 1) * (cols + 1) + c - 1];
  }
  const covered = (/** @type {number[]} */ box) => {
    const c0 = Math.max(0, Math.floor((box[0] - size.l) / CELL)), c1 = Math.min(cols, Math.ceil((box[2] - size.l) / CELL));
    const r0 = Math.max(0, Math.floor((box[1] - size.t) / CELL)), r1 = Math.min(rows, Math.ceil((box[3] - size.t) / CELL));
    if (c1 <= c0 || r1 <= r0) return 0;
    return sums[r1 * (cols + 1) + c1] - sums[r0 * (cols + 1) + c1] - sums[r1 * (cols + 1) + c0] + sums[r0 * (cols + 1) + c0];
  };
  /** @param {number[]} a @param {number[]} b @param {number} gx @param {number} gy */
  const overlaps = (a, b, gx, gy) => a[0] < b[2] + gx && b[0] < a[2] + gx && a[1] < b[3] + gy && b[1] < a[3] + gy;
  /** @type {number[][]} */
  const walls = []; // the opened paper's ring, its neighbours' rings, the placed abstract's star
  /** @param {number} x @param {number} y @param {number} radius */
  const wall = (x, y, radius) => walls.push([px(x) - radius, py(y) - radius, px(x) + radius, py(y) + radius]);
  if (view.paper !== null && view.paper !== undefined) wall(t.x[view.paper], t.y[view.paper], t.size + 6);
  for (const row of view.neighbours || []) wall(t.x[row], t.y[row], t.size / 2 + 4);
  if (view.pin) wall(view.pin.x, view.pin.y, 12);
  /** @type {number[][]} */
  const placed = [];
  looks.forEach((look, i) => {
    const el = inst.labels[i];
    const [w, h] = /** @type {number[]} */ (sizes.get(look.key)); // measured above
    const x = px(look.label.x), y = py(look.label.y);
    // The name goes where it covers the fewest points: above its place, below, beside it, further
    // out; near an edge it slides inwards. One that would overlap a name already placed, or cover
    // the opened topic's or paper's marks wherever it goes, is left out.
    /** @type {{box: number[], cost: number}|null} */
    let best = null;
    const spots = look.label.theme // a theme's name stays on its area: it moves by less than its own size
      ? [[0, 0], [0, -0.6], [0, 0.6], [-0.25, 0], [0.25, 0], [-0.25, -0.6], [0.25, -0.6], [-0.25, 0.6], [0.25, 0.6], [0, -1.1], [0, 1.1]]
      : [[0, -1], [0, 0.2], [-0.55, -0.4], [0.55, -0.4], [0, -2], [0, 1.2], [-0.55, -1.5], [0.55, -1.5], [-0.55, 0.7], [0.55, 0.7],
         [0, -3], [0, 2.2], [-1.1, -0.4], [1.1, -0.4], [-0.55, -2.5], [0.55, -2.5], [-0.55, 1.7], [0.55, 1.7]];
    const most = placed.length === 0 || look.label.chosen ? WALL : Math.max(0.5, budget - spent + 0.5);
    for (const [k, [dx, dy]] of spots.entries()) {
      const left = Math.min(Math.max(x - w / 2 + dx * (w + 12), size.l + 2), size.l + size.w - w - 2);
      const top = Math.min(Math.max((look.label.theme ? y - h / 2 : y - 3) + dy * (h + 6), size.t + 2), size.t + size.h - h - 2);
      const box = [left, top, left + w, top + h];
      if (placed.some((b) => overlaps(box, b, 4, 2)) || walls.some((b) => overlaps(box, b, 0, 0))) continue;
      const cost = covered(box) + k * 0.01; // the nearer place first among equals
      if (cost < Math.min(WALL, most) && (best === null || cost < best.cost)) best = { box, cost };
      if (best && best.cost < 0.5) break; // covers nothing: no better place
    }
    if (placed.length >= limit || best === null) {
      el.hidden = true;
      return;
    }
    placed.push(best.box);
    spent += Math.floor(best.cost);
    el.style.transform = `translate(${Math.round(best.box[0])}px, ${Math.round(best.box[1])}px)`;
  });
  for (let i = looks.length; i < inst.labels.length; i++) inst.labels[i].hidden = true;
  // the opened paper's ring and the placed abstract's star
  const paper = view.paper === null || view.paper === undefined ? null : [t.x[view.paper], t.y[view.paper]];
  for (const [el, spot, radius] of /** @type {[HTMLElement, number[]|null, number][]} */ ([
    [inst.ring, paper, t.size + 6],
    [inst.pin, view.pin ? [view.pin.x, view.pin.y] : null, 12],
  ])) {
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
