// @ts-check
// The one store of the view in the browser: the view is what the address bar's link says (read with
// js/view.js `viewOfLink`; Back and Forward are the link read back), a reading step the browser takes
// is `step(view, action)` (js/view.js, the same rule as the server's `app.state.step`), and the link
// is written here alone, whole, from the view (`linkParams`, `linkText`: today's keys, in the link's
// order), the map's name and the zoom kept.

import { mapSummary } from "./links.js";
import { SHARED } from "./shared.js";
import { linkParams, linkText, step, viewOfLink } from "./view.js";
import { HISTORY } from "./zoom.js";
/** @import { Action, View } from "./view.js" */

/** The view the address bar's link says now. @returns {View} */
export const currentView = () => viewOfLink(window.location.search);

/** Each topic's theme, from the topic panel's summary (none loaded yet: {}). @returns {Object<string, number>} */
function themeOf() {
  const summary = mapSummary();
  return Object.fromEntries((summary ? summary.topics : []).flatMap((topic) => (topic.theme === null ? [] : [[topic.id, topic.theme]])));
}

/** The link of `view`, in the link's order, with the address bar's map name and zoom.
 * @param {View} view */
export function linkOf(view) {
  const now = new URLSearchParams(window.location.search);
  /** @type {[string, string][]} */
  const kept = ["map", SHARED.zoom_key].flatMap((key) => now.getAll(key).map((value) => /** @type {[string, string]} */ ([key, value])));
  return linkText([...kept, ...linkParams(view)]);
}

/** The link the reading step `action` leads to from the view shown now (not written).
 * @param {Action} action */
export const linkAfter = (action) => linkOf(step(currentView(), action, themeOf()));

/** The link `query` written into the address bar, as a new history entry (so Back undoes it): the
 * store's only write of the link (the zoom's own `replaceState`, js/zoom.js, keeps the entry's view). @param {string} query */
export function writeLink(query) {
  HISTORY.push(window.history.state, "", window.location.pathname + (query ? `?${query}` : "") + window.location.hash);
}

/** The reading step `action` taken by the browser: its link written (`writeLink`) and returned; or,
 * on Back or Forward, which went to it already, the entry's own link (`query`).
 * @param {Action} action @param {string} [query] @returns {string} */
export function takeStep(action, query) {
  if (query !== undefined) return query;
  const written = linkAfter(action);
  writeLink(written);
  return written;
}
