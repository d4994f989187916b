// @ts-check
// The key under the map, and the room it takes.

import { LINK, partsShow, showing } from "./links.js";
import { decodeMask, rankCounts } from "./load.js";
import { placeMarks } from "./marks.js";
import { SHARED } from "./shared.js";
import { takeStep } from "./store.js";
import { keyInBrowser, ticksInBrowser, valuesInBrowser, viewOfLink } from "./view.js";
/** @import { AtlasMap } from "./atlas_map.js" */
/** @import { Action } from "./view.js" */
/** @import { TopicPanel } from "./panel.js" */
/** @import { Events, KeyEntry, KeyPick, KeyShown, LegendEvent, PanelFacet, PanelState, ShownPick, TopicName, ViewState } from "./protocol.js" */

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
    list.forEach((entry, k) => {
      const item = document.createElement(entry.pick ? "button" : "div");
      item.className = "atlas-legend-item";
      if (entry.pick) {
        /** @type {HTMLButtonElement} */ (item).type = "button";
        item.addEventListener("click", () => pickKey(inst, /** @type {KeyPick} */ (entry.pick), inst.legendOn[k]));
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
    button.addEventListener("click", () => pickKey(inst, { [kind]: null }, false));
    inst.legend.appendChild(button);
  }
  inst.legend.hidden = list.length === 0;
}

// A click on an entry of the key (or "Show all"), or Back or Forward in the browser to the link it
// wrote (`query`: the entry's, js/history.js `historyStep`). An entry the view lets the browser show
// (`keyShown`: a theme, or a value of the column the map is coloured by, while the server's view has no
// theme, topic or paper chosen but the topic the panel opened, no filter on that column and no search by
// meaning) is shown here; so,
// while the map, the topic panel and the papers table still hold the view before such an entry, are
// that entry shown all again and another entry in its place (drawn from that view). The link is
// written (a new history entry; Back or Forward: the entry's own), the server told in the task before
// they draw it (as the panel opens a topic), so the server draws only what it owns (the sidebar's
// filter, the header's sentence, the downloads). Any other pick is the server's (a click is sent to
// it; Back or Forward is left to Streamlit's rerun of the link).
/** @param {AtlasMap} inst @param {KeyPick} chosen what the entry shows alone (null: "Show all") @param {boolean} on it is shown alone now
 * @param {string} [query] Back or Forward: the link of the entry gone to @returns {boolean} whether the browser shows it */
export function pickKey(inst, chosen, on, query) {
  const pick = { ...chosen, map: inst.pointsUrl }, view = inst.received;
  const shown = inst.keyShown;
  /** The server's to draw: its link written by the store all the same, and sent. */
  const server = () => {
    if (query === undefined && view) inst.trigger("legend", { ...pick, query: takeStep(keyAction(view, chosen)), drawn: false });
    return false;
  };
  // Topics kept alone (ticked in the topic list, or "Only this topic"), or values toggled there: the
  // server's to combine with the pick; so is any pick while the parts do not show the link's view yet.
  if ((shown && (shown.pick.topics !== undefined || shown.pick.values !== undefined)) || (query === undefined && !showing(window.location.search))) return server();
  // The topic panel and the papers table show the entry the map does, each from the view before it.
  const held = Boolean(shown) && partsHold(/** @type {KeyShown} */ (shown));
  if (shown && (entryOf(chosen) === null || (on && samePick(chosen, shown.pick)))) {
    if (held) return showKeyPick(inst, pick, null, query);
  }
  // Another entry while one is shown is drawn from the view before it, which the three parts still
  // hold. A topic open in the panel stays open, unless the pick is a theme it is not in: then the
  // panel closes it with the same step (never a step of Back or Forward, whose link would differ in
  // the topic too).
  const local = inst.received && keyLocal(inst.received) && (!shown || held);
  const shows = local ? keyShown(inst, chosen) : null;
  const open = LINK.topic ?? null, panel = LINK.panel;
  const closes = shows !== null && open !== null && typeof chosen.theme === "number" && !(panel && panel.inTheme(open, chosen.theme));
  if (shows && !(closes && (query !== undefined || !panel))) return showKeyPick(inst, pick, shows, query, closes);
  return server();
}

/** The reading step of a pick in the key, or of a theme's heading in the topic list (`chosen`: a theme,
 * a value of the colour column by its position; null: all again), as js/view.js `step` takes it.
 * @param {ViewState} view @param {KeyPick|null} chosen @returns {Action} */
function keyAction(view, chosen) {
  const theme = chosen ? chosen.theme : undefined;
  if (theme !== undefined || !view.colour) return { kind: "key", theme: theme ?? null };
  const entry = chosen && view.legend.find((e) => e.pick && samePick(e.pick, chosen));
  return { kind: "key", column: view.colour, value: entry ? entry.link : null }; // its value as the link writes it
}

/** Whether an entry of the key is the browser's to show from the view the map received (js/view.js
 * `keyInBrowser`, of the view its link says). @param {ViewState} view */
const keyLocal = (view) =>
  view.link !== undefined && keyInBrowser(viewOfLink(view.link), view.legend.some((entry) => typeof entry.pick?.theme === "number"));

/** The papers in view without the view's Topics filter, which topics ticked over that filter narrow,
 * where the browser draws such ticks (js/view.js `ticksInBrowser`); null: not. @param {ViewState} view */
const unticked = (view) => (view.unticked && view.link !== undefined && ticksInBrowser(viewOfLink(view.link)) ? view.unticked : null);

/** The link's key an entry of the map's key writes: the themes', or the colour column's filter's.
 * @param {ViewState} view */
export const keyParam = (view) => (view.colour ? SHARED.filter_key + view.colour : SHARED.theme_key);

/** Whether the topic panel and the papers table still show what the map shows alone (`showInParts`
 * gives the three the same pick), each drawn from the view received before it. @param {KeyShown} shown */
const partsHold = (shown) => [LINK.panel, LINK.table].every((part) => part && part.keyShown === shown);

/** The entry a pick names (null: "Show all"). @param {KeyPick} pick */
const entryOf = (pick) => pick.theme ?? pick.value ?? null;

/** @param {ShownPick} a @param {ShownPick} b */
const samePick = (a, b) =>
  a.theme === b.theme && a.value === b.value && String(a.topics) === String(b.topics) && a.column === b.column && String(a.values) === String(b.values);

/** What the view shows with only the entry `pick`'s papers (or the topics'), from the map's point
 * table and the topic panel's summary (null where the browser cannot tell: not loaded yet, not an
 * entry of this key, or the unassigned papers where the view holds none of them: a view that hides
 * them has none to narrow, where the server, told to show them, shows them). Topics narrow the view
 * without its Topics filter where the server sent it (`unticked`; no topics: all of it), else the
 * view received.
 * @param {AtlasMap} inst @param {ShownPick} pick @returns {KeyShown|null} */
function keyShown(inst, pick) {
  const t = inst.table, view = inst.received, summary = LINK.panel && LINK.panel.summary;
  const wide = pick.topics && view ? unticked(view) : null;
  const some = (pick.topics && (pick.topics.length || wide)) || (pick.values && pick.values.length);
  if (!t || !view || !summary || (entryOf(pick) === null && !some)) return null;
  /** @type {((row: number) => boolean)[]} what a paper shown holds: ticked topics, pressed values; or a key's entry */
  const tests = [];
  const base = decodeMask(wide ? wide.mask : view.mask, t.n);
  let unassigned = -1; // the unassigned papers' colour rank, where they are picked
  if (pick.topics && pick.topics.length) {
    const picked = new Set(pick.topics), topics = summary.topics.filter((topic) => picked.has(topic.id));
    if (topics.length !== picked.size) return null;
    const ranks = new Set(topics.map((topic) => topic.rank));
    tests.push((i) => ranks.has(t.colour[i]));
    const none = topics.find((topic) => topic.id === -1);
    if (none) unassigned = none.rank;
  } // topics: [] is every paper of the view without its Topics filter
  if (pick.values) {
    const code = pick.column !== undefined ? t.codes[pick.column] : undefined;
    if (!code) return null;
    const values = new Set(pick.values);
    tests.push((i) => values.has(code[i]));
  }
  if (typeof pick.theme === "number") {
    if (view.colour) return null; // the key shows the column's values: a theme is the server's to show
    const ranks = new Set(summary.topics.filter((topic) => topic.theme === pick.theme).map((topic) => topic.rank));
    if (!ranks.size) return null;
    tests.push((i) => ranks.has(t.colour[i]));
  } else if (pick.value !== undefined) {
    const by = view.colour ? t.colourings[view.colour] : undefined;
    if (!by || typeof pick.value !== "number" || pick.value >= by.values.length) return null;
    const code = by.code, value = pick.value;
    tests.push((i) => code[i] === value);
  }
  const [first, second] = tests;
  const has = second ? (/** @type {number} */ i) => first(i) && second(i) : first || null;
  const counts = rankCounts(t, base && base.rows, has);
  if (unassigned >= 0 && !counts[unassigned]) return null;
  // The names as the server sends them for the view: its topics with papers in view, largest first
  // (no topic is opened here), at most `max_topic_labels`; its themes holding any.
  const visible = summary.topics.filter((topic) => topic.id !== -1 && counts[topic.rank] > 0).sort((a, b) => a.rank - b.rank);
  const topics = visible.slice(0, SHARED.max_topic_labels).map((topic) => ({
    text: topic.name, x: /** @type {number} */ (topic.x), y: /** @type {number} */ (topic.y), colour: topic.colour, chosen: false,
  }));
  const held = new Set(visible.map((topic) => topic.theme));
  const themes = (wide ? wide.themes : view.themes).filter((name) => held.has(name.id));
  return { pick, has, wide: Boolean(wide), base, counts, topics, themes };
}

/** The browser shows the key's entry `shown` (null: all again) in the map, the topic panel and the
 * papers table, with the link written (`query`: Back or Forward went to it); `closes`: the topic open
 * in the panel closed with it (a theme it is not in).
 * @param {AtlasMap} inst @param {LegendEvent} pick @param {KeyShown|null} shown @param {string} [query] @param {boolean} [closes] */
function showKeyPick(inst, pick, shown, query, closes = false) {
  if (query === undefined) query = takeStep(keyAction(/** @type {ViewState} */ (inst.received), shown && shown.pick));
  inst.trigger("legend", { ...pick, query, drawn: true });
  if (closes && LINK.panel) LINK.panel.open(null, { query, tell: false }); // the server closes it too
  showInParts(shown, query);
  return true;
}

/** What the browser shows alone itself (null: the view the server sent), taken in by the map, the topic
 * panel and the papers table in the task after this one (the server, told in this one, works out its
 * answer meanwhile): the view of the link `query`. @param {KeyShown|null} shown @param {string} query */
function showInParts(shown, query) {
  partsShow(query);
  setTimeout(() => {
    for (const part of [LINK.map, LINK.panel, LINK.table]) if (part) part.showKeyPick(shown);
  }, 0);
}

// Topics ticked in the topic list, or "Only this topic" for the topic the panel has open (js/panel.js):
// their papers alone (none: all again), shown by the browser where it would show an entry of the key
// (`keyLocal`, nothing shown alone yet), where the server sent the view without its Topics filter
// (`unticked`: they narrow that), or while the map, the panel and the table still hold the view under
// topics it showed so (drawn from that view), as the server would (a topic open in the panel stays
// open); so are ticks over values it pressed there, where the view would let it tick. The link is
// written with the topics as the Topics filter's choice (`query`: Back or Forward went to it), and the
// server told in the task before the parts take it in, as for a pick in the key.
// Any other is the server's (told so; Back or Forward is left to Streamlit's rerun of the link).
/** @param {number[]} topics @param {string} [query] @returns {boolean} whether the browser shows them */
export function showTopics(topics, query) {
  const inst = LINK.map, panel = LINK.panel, view = inst && inst.received;
  if (!panel || !panel.view) return false;
  const shown = inst && inst.keyShown;
  // Over values it pressed, where the view would let it tick (as the first tick, or over its Topics filter).
  const overValues = Boolean(
    shown && shown.pick.topics === undefined && shown.pick.values && view && (keyLocal(view) || unticked(view)),
  );
  const first = Boolean(view && ((keyLocal(view) && topics.length) || unticked(view))); // nothing shown alone yet
  const held = shown ? (shown.pick.topics !== undefined || overValues) && partsHold(shown) : first;
  return listStep("only", { topics }, held, { kind: "topics", topics }, query);
}

// Values of a metadata column toggled in the topic list (js/panel.js): their papers alone (none: all
// again), shown by the browser where the view lets it (js/view.js `valuesInBrowser`) and the column has no
// filter of its own, or while the map, the panel and the table still hold the view under values of the
// column it showed so (drawn from that view), as the server would; so are values over topics it ticked
// there (one column's, with no filter of its own). The link is written with the values
// as the column's filter (`query`: Back or Forward went to it), and the server told in the task before
// the parts take it in, as for a pick in the key. Any other is the server's, as for ticks.
/** @param {PanelFacet} facet @param {number[]} values @param {string} [query] @returns {boolean} whether the browser shows them */
export function showValues(facet, values, query) {
  const inst = LINK.map, panel = LINK.panel, state = panel && panel.view;
  if (!panel || !state) return false;
  const shown = inst && inst.keyShown, column = facet.column;
  // Over topics it ticked, where the view would let it press values of a column without a filter.
  const free = state.link !== undefined && valuesInBrowser(viewOfLink(state.link)) && !facet.chosen.length;
  const overTicks = Boolean(shown && shown.pick.topics !== undefined && shown.pick.column === undefined && free);
  const held = shown ? (shown.pick.column === column || overTicks) && partsHold(shown) : free && values.length > 0;
  const texts = values.map((k) => facet.values[k]);
  return listStep("values", { column, values }, held, { kind: "values", column, values: texts }, query);
}

/** A step in the topic list (the event `event`, its `change` to the pick: ticks, or a column's values)
 * shown by the browser where the view lets it (`held`) and it can tell what to show (`keyShown`; none
 * ticked or pressed: the view received again, or, where the server drew a Topics filter, all of the view
 * without it): the link of the step `action` written (js/store.js; or `query`, Back or Forward's), the
 * server told, the parts given it. Else the server's (told so, but on Back or Forward, which Streamlit's
 * rerun follows).
 * @template {"only"|"values"} K @param {K} event @param {ShownPick} change @param {boolean} held
 * @param {Action} action @param {string|undefined} query @returns {boolean} whether the browser shows it */
function listStep(event, change, held, action, query) {
  const inst = LINK.map, panel = /** @type {TopicPanel} */ (LINK.panel), view = inst && inst.received;
  const next = inst && view && held ? listPick(inst.keyShown, change, view) : null;
  const shows = next ? keyShown(/** @type {AtlasMap} */ (inst), next) : null;
  /** @param {object} more @returns {Events[K]} the event: the change, and what it says of the step */
  const told = (more) => /** @type {any} */ ({ ...change, ...more });
  if (!inst || !view || !held || (next && !shows) || (query === undefined && !showing(window.location.search))) {
    // The server's to draw: the link written by the store all the same, and sent.
    if (query === undefined) panel.trigger(event, told({ query: takeStep(action), drawn: false, map: /** @type {PanelState} */ (panel.view).points }));
    return false;
  }
  const written = takeStep(action, query);
  panel.trigger(event, told({ query: written, drawn: true, map: inst.pointsUrl }));
  showInParts(shows, written);
  return true;
}

/** What the browser shows alone after a step in the topic list: the topics it ticked and one column's
 * values it pressed (`shown`'s) with `change`; a choice left empty dropped, but no topics ticked over a
 * view whose Topics filter the server drew (`unticked`): all of the view without it. Null: the view
 * received again. @param {KeyShown|null} shown @param {ShownPick} change @param {ViewState} view @returns {ShownPick|null} */
function listPick(shown, change, view) {
  const pick = { ...(shown ? shown.pick : {}), ...change };
  if (pick.topics && !pick.topics.length && !unticked(view)) delete pick.topics;
  if (pick.values && !pick.values.length) {
    delete pick.values;
    delete pick.column;
  }
  return Object.keys(pick).length ? pick : null;
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

// The view state as drawn while a topic is open: its name alone on the map (no theme names); while an
// entry picked in the key is shown: the names of its topics and themes, its entry marked in the key.
/** @param {ViewState} view @param {{label: TopicName|null}|null} focus @param {KeyShown|null} shown @returns {ViewState} */
export function focused(view, focus, shown) {
  // Values toggled in the topic list of the column the map is coloured by: their entries on, as the server marks them.
  const toggled = shown && shown.pick.values && shown.pick.column === view.colour ? shown.pick.values : [];
  const on = (/** @type {KeyPick|null} */ pick) => Boolean(pick && (samePick(pick, /** @type {KeyShown} */ (shown).pick) || (pick.value !== undefined && toggled.includes(pick.value))));
  const legend = shown ? view.legend.map((entry) => ({ ...entry, on: on(entry.pick) })) : view.legend;
  if (focus) return { ...view, topics: focus.label ? [focus.label] : [], themes: [], legend };
  if (!shown) return view;
  return { ...view, topics: shown.topics, themes: shown.themes, legend };
}
