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
  /** @type {number[][]} */
  const placed = [];
  looks.forEach((look, i) => {
    const el = inst.labels[i];
    const [w, h] = /** @type {number[]} */ (sizes.get(look.key)); // measured above
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
