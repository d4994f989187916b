// @ts-check
// The component's entry point, the one export of map.js: Streamlit calls it on every rerun with the
// same parent element, so the map (AtlasMap) is made once and kept.

import { AtlasMap, INSTANCES, foldSidebar } from "./atlas_map.js";
import { showMapState, showPartState } from "./history.js";
import { HeaderPart } from "./header.js";
import { LINK, drawAnswer } from "./links.js";
import { TopicPanel } from "./panel.js";
import { PapersTable } from "./table.js";
import { answered, answeredStep, sentLink, sentStep } from "./zoom.js";
/** @import { HeaderState, PanelState, TableState, Trigger, ViewState } from "./protocol.js" */

/** @param {{data: ViewState|PanelState|TableState|HeaderState, parentElement: HTMLElement, setTriggerValue: Trigger}} component */
export default function (component) {
  foldSidebar();
  const { data, parentElement, setTriggerValue } = component;
  if ("summary" in data) return partEntry("panel", data, parentElement, setTriggerValue);
  if ("table" in data) return partEntry("table", data, parentElement, setTriggerValue);
  if ("sentence" in data) return headerEntry(data, parentElement);
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = new AtlasMap(parentElement);
    INSTANCES.set(parentElement, inst);
    LINK.map = inst;
    if (LINK.panel) LINK.panel.show(); // a topic already open dims the new map
  }
  inst.trigger = telling(setTriggerValue);
  inst.root.style.height = `${data.height}px`;
  if (data.link !== undefined) {
    answered(data.link);
    answeredStep(data.link);
  }
  const map = inst;
  drawAnswer("map", data, () => showMapState(map, data));
  return () => {
    inst.destroy();
    INSTANCES.delete(parentElement);
    if (LINK.map === inst) LINK.map = null;
  };
}

/** @type {WeakMap<HTMLElement, TopicPanel|PapersTable>} */
const PARTS = new WeakMap(); // parentElement -> the topic panel or the papers table, kept across reruns

// The other instances: the topic panel beside the map (js/panel.js) and the papers table under it
// (js/table.js), each made once, updated one update after another, an error said in its place
// (js/history.js, `showPartState`).
/** @param {"panel"|"table"} kind @param {PanelState|TableState} data @param {HTMLElement} parentElement @param {Trigger} setTriggerValue */
function partEntry(kind, data, parentElement, setTriggerValue) {
  let part = PARTS.get(parentElement);
  if (!part) {
    part = new { panel: TopicPanel, table: PapersTable }[kind](parentElement);
    PARTS.set(parentElement, part);
  }
  if (part instanceof TopicPanel) LINK.panel = part;
  else if (part instanceof PapersTable) LINK.table = part;
  part.trigger = telling(setTriggerValue);
  if ("height" in data) part.root.style.height = `${data.height}px`;
  if (data.link !== undefined) answered(data.link);
  const shown = part;
  drawAnswer(kind, data, () => showPartState(shown, data));
  return () => {
    shown.destroy();
    PARTS.delete(parentElement);
  };
}

/** @type {WeakMap<HTMLElement, HeaderPart>} */
const HEADERS = new WeakMap(); // parentElement -> the header's sentence, kept across reruns

/** The header's sentence (js/header.js): made once, shown for each state the server sends.
 * @param {HeaderState} data @param {HTMLElement} parentElement */
function headerEntry(data, parentElement) {
  let part = HEADERS.get(parentElement);
  if (!part) {
    part = new HeaderPart(parentElement);
    HEADERS.set(parentElement, part);
  }
  LINK.header = part;
  part.show(data);
  const shown = part;
  return () => {
    shown.destroy();
    HEADERS.delete(parentElement);
    if (LINK.header === shown) LINK.header = null;
  };
}

/** Streamlit's setTriggerValue, noting the link a step the browser drew is sent with, or that a step
 * of the server's is sent without one (js/zoom.js, `sentLink`, `sentStep`). @param {Trigger} setTriggerValue @returns {Trigger} */
const telling = (setTriggerValue) => (name, value) => {
  const query = /** @type {{query?: unknown}} */ (value).query;
  if (typeof query === "string") sentLink(query);
  else sentStep();
  setTriggerValue(name, value);
};
