// @ts-check
// Who draws a reading step: one rule, here. A step the reader takes (an entry of the map's key, topics
// ticked or values pressed in the topic list, a theme's heading there, Back or Forward between two
// views) is drawn by the browser whenever the page's facts answer the view it leads to (js/page.js
// `answer`: the map's tables, and the hits of the view's search, are here) and it opens no paper (an
// abstract and its nearest papers are the server's answer): the map, the topic panel, the papers table
// and the header then follow the link (js/page.js `papersNow`). Else the server draws it from the link.
// Either way the store writes the link (js/store.js) and the server is told, with it (`drawn` says
// which of the two draws the parts; app/session.py `follow_step`).

import { LINK } from "./links.js";
import { answer, facts } from "./page.js";
import { takeStep } from "./store.js";
import { viewOfLink } from "./view.js";
/** @import { Action } from "./view.js" */
/** @import { KeyPick, ViewState } from "./protocol.js" */

/** Whether the browser draws the view of the link `search` (a query string) itself: the page's facts
 * answer it on the map drawn now (for its search: kept for the map's last searches), and it opens no
 * paper. @param {string} search */
export function browserDraws(search) {
  const view = viewOfLink(search), url = LINK.map ? LINK.map.pointsUrl : null;
  return view.paper === null && url !== null && answer(facts(view), view, url);
}

/** The map and the papers table draw the view of the address bar's link, in the task after this one
 * (the server, told in this one, works out its answer meanwhile); the topic panel and the header
 * follow every write of the link already (js/links.js `linkChanged`). */
export function partsFollow() {
  setTimeout(() => {
    for (const part of [LINK.map, LINK.table]) if (part) part.follow();
  }, 0);
}

/** The reading step `action` the reader took in a part (its `trigger`, its event `event` with
 * `detail`): the link written (a new history entry), the server told with it, and the parts drawn by
 * the browser where it draws the view the step leaves (`browserDraws`: the step changes no search and
 * opens no paper, so its facts answer the view it leads to as well). Whether the browser drew it.
 * @param {(event: any, detail: any) => void} trigger @param {string} event @param {object} detail @param {Action} action */
export function readingStep(trigger, event, detail, action) {
  const drawn = browserDraws(window.location.search);
  const query = takeStep(action);
  trigger(event, { ...detail, query, drawn });
  if (drawn) partsFollow();
  return drawn;
}

/** The reading step of a pick in the key, or of a theme's heading in the topic list (`chosen`: a theme,
 * a value of the colour column by its position; null: all again), as js/view.js `step` takes it.
 * @param {ViewState} view the map's state (its key, its colour column) @param {KeyPick|null} chosen @returns {Action} */
export function keyAction(view, chosen) {
  const theme = chosen ? chosen.theme : undefined;
  if (theme !== undefined || !view.colour) return { kind: "key", theme: theme ?? null };
  const entry = chosen && view.legend.find((e) => e.pick && e.pick.value === chosen.value);
  return { kind: "key", column: view.colour, value: entry ? entry.link : null }; // its value as the link writes it
}
