// @ts-check
// The key under the map, and the room it takes.

import { placeMarks } from "./marks.js";
import { keyAction, readingStep } from "./steps.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { KeyEntry, KeyPick, ViewState } from "./protocol.js" */

// The key, a row under the chart (never over it): theme hues (topics are shades of them) or the
// values of the column the map is coloured by. Clicking an entry shows only its papers (the app sets
// the Themes filter, or the column's filter, so the counts, the table and the link follow); clicking
// it again, or "Show all", shows everything. An entry without a pick (missing values) is not a button.
/** @param {AtlasMap} inst @param {KeyEntry[]|null|undefined} entries */
export function drawLegend(inst, entries) {
  const list = entries || [];
  // The entries are made afresh only when their names, colours or picks change; a pick changes only
  // which is on, marked in place, so the entry clicked keeps the focus (Enter again shows all).
  const key = JSON.stringify(list.map(({ on, ...entry }) => entry));
  if (key !== inst.legendKey) {
    inst.legendKey = key;
    inst.legend.replaceChildren();
    list.forEach((entry) => {
      const item = document.createElement(entry.pick ? "button" : "div");
      item.className = "atlas-legend-item";
      if (entry.pick) {
        /** @type {HTMLButtonElement} */ (item).type = "button";
        item.addEventListener("click", () => pickKey(inst, /** @type {KeyPick} */ (entry.pick)));
      }
      const swatch = document.createElement("span");
      swatch.className = "atlas-swatch";
      swatch.style.background = entry.colour;
      const text = document.createElement("span");
      text.className = "atlas-legend-text";
      text.textContent = entry.text; // literal text, never markup
      item.append(swatch, text);
      inst.legend.appendChild(item);
    });
  }
  const was = inst.legendOn.indexOf(true); // the entry shown alone before (-1: none)
  inst.legendOn = list.map((entry) => Boolean(entry.on));
  const isolated = inst.legendOn.some(Boolean);
  const items = /** @type {HTMLElement[]} */ (Array.from(inst.legend.querySelectorAll(".atlas-legend-item")));
  items.forEach((item, k) => {
    const on = inst.legendOn[k];
    if (list[k].pick) {
      item.setAttribute("aria-pressed", String(on));
      item.title = on ? "Show all again" : "Show only these papers";
    }
    item.classList.toggle("atlas-legend-on", on);
    item.classList.toggle("atlas-legend-off", isolated && !on);
  });
  // "Show all" while an entry is shown alone.
  const all = inst.legend.querySelector(".atlas-legend-all");
  const kind = list.map((entry) => entry.pick && Object.keys(entry.pick)[0]).find(Boolean);
  if (all && !isolated) {
    const focused = document.activeElement === all;
    all.remove();
    if (focused && items.length) items[Math.max(0, was)].focus(); // the keyboard keeps its place in the key
  }
  if (!all && isolated && kind) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "atlas-legend-all";
    button.textContent = "Show all";
    button.addEventListener("click", () => pickKey(inst, { [kind]: null }));
    inst.legend.appendChild(button);
  }
  inst.legend.hidden = list.length === 0;
}

// A click on an entry of the key (or "Show all"): the entry's papers alone (the Themes filter, or the
// colour column's filter, set to it), or all again; a reading step (js/steps.js: the browser draws it
// where the page's facts answer the view, else the server does; the link written either way).
/** @param {AtlasMap} inst @param {KeyPick} chosen what the entry shows alone (null: "Show all") */
export function pickKey(inst, chosen) {
  const view = inst.received;
  if (view) readingStep(inst.trigger, "legend", { ...chosen, map: inst.pointsUrl }, keyAction(view, chosen));
}

// The charts' height: the map's, less the key's row (and the note's) under them.
/** @param {AtlasMap} inst @param {ViewState} view */
export function chartHeight(inst, view) {
  const rows = [inst.legend, inst.note].map((el) => (el.hidden ? 0 : Math.ceil(el.getBoundingClientRect().height)));
  return Math.max(120, view.height - rows[0] - rows[1]);
}

// A narrower window wraps the key onto more lines: the shown chart gives it the room (the other
// takes its height when it is shown, in showChart).
/** @param {AtlasMap} inst */
export function followLegend(inst) {
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
