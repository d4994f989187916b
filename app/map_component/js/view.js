// @ts-check
// The view's rule, pure: the link a view writes (`linkParams`, `linkText`), and the papers it shows
// (`inView`): functions of their arguments only, no page. Python's own rule (`app.state.to_params`,
// `app.view.current_view`) and these pass the same test vectors (tests/fixtures/view_vectors.json,
// tests/test_view_rule.py, run under Node), so the two languages' rule cannot drift apart.

import { SHARED } from "./shared.js";
/** @import { SearchFacts } from "./protocol.js" */

/**
 * A view: the fields of `app.state.ViewState` (filters as [column, values] pairs, columns sorted).
 * @typedef {Object} View
 * @property {string} search
 * @property {number[]} topics
 * @property {boolean} show_unassigned
 * @property {[string, string[]][]} filters
 * @property {number|null} topic
 * @property {string|null} paper
 * @property {number[]} themes
 * @property {string} sort
 * @property {boolean} added_only
 * @property {string} colour
 * @property {string} selection
 */

/** The link's pairs as a query string: the keys in the link's order (`SHARED.link_order`, as
 * `app.state.to_params` orders them; the filters' prefix stands for every filter key), the pairs of
 * one key in the order given; unknown keys (the zoom) last. Encoded as the browser encodes a query
 * (the server's write of the same link in Python's encoding is taken as this one: js/zoom.js
 * `saysAlready`). @param {Iterable<[string, string]>} pairs */
export function linkText(pairs) {
  const prefix = SHARED.link_keys.filters;
  const order = (/** @type {string} */ key) => {
    const k = SHARED.link_order.indexOf(key.startsWith(prefix) ? prefix : key);
    return k === -1 ? SHARED.link_order.length : k;
  };
  const sorted = [...pairs].map(([key, value], i) => /** @type {[string, string, number]} */ ([key, value, i]));
  sorted.sort((a, b) => order(a[0]) - order(b[0]) || a[2] - b[2]);
  return new URLSearchParams(sorted.map(([key, value]) => [key, value])).toString();
}

/** The link's pairs for `view` (`app.state.to_params`): each setting that differs from its default,
 * under its key (`SHARED.link_keys`), in the link's order; a filter's values under one key each.
 * @param {View} view @returns {[string, string][]} */
export function linkParams(view) {
  const keys = SHARED.link_keys, defaults = SHARED.view_defaults;
  /** @type {[string, string][]} */
  const pairs = [];
  const add = (/** @type {string} */ key, /** @type {string|null|false} */ value) => {
    if (value) pairs.push([key, value]);
  };
  add(keys.search, view.search);
  add(keys.topics, view.topics.join(","));
  add(keys.show_unassigned, !view.show_unassigned && "hide");
  for (const [column, values] of view.filters) for (const value of values) pairs.push([keys.filters + column, value]);
  add(keys.topic, view.topic === null ? null : String(view.topic));
  add(keys.paper, view.paper);
  add(keys.themes, view.themes.join(","));
  add(keys.sort, view.sort !== defaults.sort && view.sort);
  add(keys.added_only, view.added_only && "only");
  add(keys.colour, view.colour);
  add(keys.selection, view.selection);
  return pairs;
}

/** The view a link says (`link`: a query string as the server writes it, `app.session.view_link`):
 * each setting under its key (`SHARED.link_keys`), its default where the link leaves it out; the
 * filters' columns sorted, as `ViewState` holds them. What a link may not choose was left out when
 * the server wrote it. @param {string} link @returns {View} */
export function viewOfLink(link) {
  const params = new URLSearchParams(link), keys = SHARED.link_keys, defaults = SHARED.view_defaults;
  const ids = (/** @type {string} */ key) => (params.get(key) || "").split(",").filter(Boolean).map(Number);
  const columns = [...new Set([...params.keys()].filter((key) => key.startsWith(keys.filters)))].sort();
  const topic = params.get(keys.topic);
  return {
    search: params.get(keys.search) ?? "",
    topics: ids(keys.topics),
    show_unassigned: params.get(keys.show_unassigned) !== "hide",
    filters: columns.map((key) => /** @type {[string, string[]]} */ ([key.slice(keys.filters.length), params.getAll(key)])),
    topic: topic === null ? null : Number(topic),
    paper: params.get(keys.paper),
    themes: ids(keys.themes),
    sort: params.get(keys.sort) ?? defaults.sort,
    added_only: params.get(keys.added_only) === "only",
    colour: params.get(keys.colour) ?? "",
    selection: params.get(keys.selection) ?? "",
  };
}

/**
 * A reading step, as both languages write it (`app.state.Action`): a topic opened (null: closed; the
 * paper closes with it), a paper opened by its doc id (null: closed), topics kept alone (none: all),
 * one column's values, an entry of the map's key shown alone (a theme, or a value of the colour
 * column; null, or the entry shown alone again: all again), a box or lasso as the link writes it
 * ("": none), the unassigned papers shown or hidden, every setting back but the topic list's order.
 * @typedef {{kind: "topic", topic: number|null} | {kind: "paper", paper: string|null}
 *   | {kind: "topics", topics: number[]} | {kind: "values", column: string, values: string[]}
 *   | {kind: "key", theme: number|null} | {kind: "key", column: string, value: string|null}
 *   | {kind: "select", selection: string} | {kind: "unassigned", show: boolean} | {kind: "reset"}} Action
 */

/** The view after the reading step `action`, as `app.state.step` gives it (the same test vectors):
 * `themeOf` is each topic's theme (a topic outside the chosen themes drops them; a theme shown alone
 * closes an opened topic outside it). @param {View} view @param {Action} action
 * @param {Object<string, number>} [themeOf] @returns {View} */
export function step(view, action, themeOf = {}) {
  switch (action.kind) {
    case "topic":
      return { ...view, topic: action.topic, paper: null };
    case "paper":
      return { ...view, paper: action.paper };
    case "topics": {
      const topics = [...new Set(action.topics)];
      const outside = topics.some((t) => t !== SHARED.unassigned && !view.themes.includes(themeOf[t]));
      return { ...view, topics, themes: view.themes.length && outside ? [] : view.themes };
    }
    case "values":
      return withFilter(view, action.column, [...new Set(action.values)]);
    case "key": {
      if ("theme" in action) {
        const theme = action.theme;
        if (theme === null || (view.themes.length === 1 && view.themes[0] === theme)) return { ...view, themes: [] };
        const keep = view.topic === null || themeOf[view.topic] === theme;
        return { ...view, themes: [theme], topics: [], topic: keep ? view.topic : null };
      }
      const now = view.filters.find(([column]) => column === action.column);
      const alone = action.value !== null && !(now && now[1].length === 1 && now[1][0] === action.value);
      return withFilter(view, action.column, alone && action.value !== null ? [action.value] : []);
    }
    case "select":
      return { ...view, selection: action.selection };
    case "unassigned":
      return { ...view, show_unassigned: action.show };
    case "reset": // every setting back but those `app.state.SETTINGS` marks reset=False (the sort)
      return { ...viewOfLink(""), sort: view.sort };
  }
}

/** `view` with the column's filter set to `values` (none: dropped), the columns sorted.
 * @param {View} view @param {string} column @param {string[]} values @returns {View} */
function withFilter(view, column, values) {
  const filters = view.filters.filter(([c]) => c !== column);
  if (values.length) filters.push([column, values]);
  return { ...view, filters: filters.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
}

/**
 * What a view narrows, a row of the map each: its topic's id (the unassigned: `SHARED.unassigned`),
 * the theme of each topic, each filterable column's value (its position among the column's values;
 * their number where missing), and whether it came in the last `add` (null: a full build).
 * @typedef {Object} ViewTables
 * @property {ArrayLike<number>} topics
 * @property {Object<string, number>} themeOf
 * @property {Object<string, {values: string[], codes: ArrayLike<number>}>} facets
 * @property {ArrayLike<number>|null} added
 * @property {{topics: Object<string, string>, themes: Object<string, string>}} [names] the topics' and themes' names (the header's sentence)
 */

/**
 * What the view's search and selection hold, over the whole map: the server's answer to a search, its
 * one list of the papers writing its words or close in meaning, best first (`app.search`; null: no
 * search); the papers inside the box or lasso, found by place (js/sampling.js `rowsInOutline`; null:
 * none drawn).
 * @typedef {Object} ViewHits
 * @property {number[]|null} words
 * @property {number[]|null} selected
 * @property {number[]|null} [evidence] each hit's evidence (1 writes every word, 2 several, 4 close in meaning)
 * @property {SearchFacts|null} [search] what the header's sentence quotes of the search (`app.search.search_facts`)
 */


/** The papers in view, best first (in map order without a search): the intersection of the view's
 * named sets, as `app.view.current_view` finds it. The chosen topics (inside the chosen themes, on a
 * map with themes; the themes' topics where none is chosen; the unassigned only when chosen, or,
 * where none is, unless hidden), each filtered column's values, the papers added, then the search:
 * its hits among them, in its order. And those of them inside the selection, in map order (what the papers
 * table lists and the topic list counts: `app.view.counted_in_view`; null: no selection).
 * @param {View} view @param {ViewTables} tables @param {ViewHits} hits
 * @returns {{rows: number[], selected: number[]|null}} */
export function inView(view, tables, hits) {
  const rows = searched(view, tables, hits);
  if (!hits.selected) return { rows, selected: null };
  const shown = new Set(rows);
  return { rows, selected: [...hits.selected].sort((a, b) => a - b).filter((i) => shown.has(i)) };
}

/** The papers in view (`inView`), best first. @param {View} view @param {ViewTables} tables @param {ViewHits} hits */
function searched(view, tables, hits) {
  const passes = filtered(view, tables), n = passes.length;
  const search = view.search.trim() !== "";
  if (search && hits.words) return hits.words.filter((i) => passes[i]);
  const rows = [];
  for (let i = 0; i < n; i++) if (passes[i]) rows.push(i);
  return rows;
}

/** Whether each paper passes the view's filters (`app.filters.filter_mask`): 1 or 0 a paper.
 * @param {View} view @param {ViewTables} tables */
function filtered(view, tables) {
  const n = tables.topics.length;
  const themes = new Set(Object.keys(tables.themeOf).length ? view.themes : []);
  const chosen = new Set(view.topics);
  const inTheme = (/** @type {number} */ topic) => themes.has(tables.themeOf[topic]);
  /** @type {(topic: number) => boolean} */
  let topicIn;
  if (view.topics.length) topicIn = (topic) => chosen.has(topic) && (!themes.size || inTheme(topic) || topic === SHARED.unassigned);
  else if (themes.size) topicIn = inTheme; // the unassigned are in no theme
  else topicIn = (topic) => view.show_unassigned || topic !== SHARED.unassigned;
  // Each topic's and each value's answer once, looked up a paper (a million papers: a few ms)
  let top = 0;
  for (let i = 0; i < n; i++) if (tables.topics[i] > top) top = tables.topics[i];
  const topicOk = Uint8Array.from({ length: top + 2 }, (_, k) => Number(topicIn(k - 1)));
  const columns = view.filters
    .filter(([column, values]) => values.length && column in tables.facets)
    .map(([column, values]) => {
      const facet = tables.facets[column], wanted = new Uint8Array(facet.values.length + 1); // + missing
      for (const value of values) if (facet.values.includes(value)) wanted[facet.values.indexOf(value)] = 1;
      return { codes: facet.codes, wanted };
    });
  const added = view.added_only ? tables.added : null;
  const passes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let ok = topicOk[tables.topics[i] + 1] === 1 && (!added || Boolean(added[i]));
    for (let c = 0; ok && c < columns.length; c++) ok = columns[c].wanted[columns[c].codes[i]] === 1;
    passes[i] = Number(ok);
  }
  return passes;
}

// Numbers as the page writes them (12,345, as Python's `{:,}`), by one formatter: `toLocaleString`
// with a locale makes a formatter each call, and the topic list's 400 numbers at 179 topics took 20 ms
// of each redraw.
const NUMBER = new Intl.NumberFormat("en-US");

/** @param {number} n */
export function number(n) {
  return NUMBER.format(n);
}

/** A count with its noun, as `app.text.counted` writes it ("1 paper", "1,357 papers").
 * @param {number} count @param {string} noun @param {string} [plural] */
export function counted(count, noun, plural) {
  return `${number(count)} ${count === 1 ? noun : plural ?? noun + "s"}`;
}

/** What the `count` filtered papers are, as `app.view.view_scope` (`app.filters.scope_phrase`) says
 * it: `topics` named instead of the chosen ones (an opened topic).
 * @param {View} view @param {ViewTables} tables @param {number} count @param {number[]} [topics] */
function scope(view, tables, count, topics = view.topics) {
  const names = tables.names || { topics: {}, themes: {} };
  const themeNames = Object.keys(tables.themeOf).length ? view.themes.filter((t) => String(t) in names.themes).map((t) => names.themes[t]) : [];
  const named = topics.filter((t) => t !== SHARED.unassigned);
  let where;
  if (topics.length) {
    if (named.length === 1) where = String(named[0]) in names.topics ? `in the topic “${names.topics[named[0]]}”` : `in Topic ${named[0]}`;
    else where = named.length ? `in ${counted(named.length, "topic")}` : "";
    if (topics.includes(SHARED.unassigned)) where = where ? `${where} and the unassigned papers` : "that no topic claimed";
  } else if (themeNames.length) {
    where = themeNames.length === 1 ? `in the theme “${themeNames[0]}”` : `in ${counted(themeNames.length, "theme")}`;
  } else where = view.show_unassigned ? "of the map" : "in a topic";
  const parts = [`the ${counted(count, "paper")} ${where}`];
  for (const [column, values] of view.filters) if (values.length) parts.push(`with ${column.replaceAll("_", " ")} ${values.join(" or ")}`);
  if (view.added_only && tables.added) parts.push("added since the last build");
  return parts.join(" ");
}

/** The header's sentence, as (number, rest), the number shown bold: what the page shows beside the
 * map and under it, as the server's `app.view.header_sentence` writes it (the same test vectors): the
 * papers in view (narrowed to an opened topic), and a search's hits among them counted by their
 * evidence, or those of them the map's selection holds. Plain text: the page never reads it as HTML.
 * @param {View} view @param {ViewTables} tables @param {ViewHits} hits @returns {[string, string]} */
export function sentence(view, tables, hits) {
  const passes = filtered(view, tables), n = passes.length;
  if (view.topic !== null) for (let i = 0; i < n; i++) if (passes[i] && tables.topics[i] !== view.topic) passes[i] = 0;
  let count = 0;
  for (let i = 0; i < n; i++) count += passes[i];
  const where = scope(view, tables, count, view.topic === null ? view.topics : [view.topic]);
  const facts = view.search.trim() && hits.words && hits.search ? hits.search : null;
  /** @type {number[]} */
  const evidence = [];
  let shown = passes; // the papers the page lists: those in view, or a search's hits among them
  if (facts) {
    const marks = hits.evidence || [];
    shown = new Uint8Array(n);
    /** @type {number[]} */ (hits.words).forEach((i, k) => {
      if (passes[i]) (shown[i] = 1), evidence.push(marks[k] || 0);
    });
  }
  const [number, rest] = facts ? searchSentence(facts, evidence, where) : ["", `Showing ${where}`];
  if (!hits.selected) return [number, rest];
  const picked = counted(hits.selected.filter((i) => shown[i]).length, "paper");
  if ((facts ? evidence.length : count) === n) return ["", `Showing the ${picked} you selected on the map`];
  return [number, `${rest}; the table lists the ${picked} of them you selected on the map`];
}

/** A search's part of the header's sentence (`app.search.search_sentence`): its hits in view counted
 * by their evidence (`evidence`, one a hit), in the words of their Match labels.
 * @param {SearchFacts} facts @param {number[]} evidence @param {string} where @returns {[string, string]} */
function searchSentence(facts, evidence, where) {
  const count = evidence.length, shown = facts.shown;
  if (!facts.fused) return [number(count), `of ${where} ${count === 1 ? "matches" : "match"} the words “${shown}”`];
  if (!count) return ["None", `of ${where} writes “${shown}” or is close in meaning to it${facts.nearest}`];
  const has = (/** @type {number} */ bit) => evidence.filter((e) => e & bit).length;
  const every = has(1), some = has(2), near = has(4), both = evidence.filter((e) => e & 4 && e & 3).length;
  const verb = (/** @type {number} */ k, /** @type {string} */ one, /** @type {string} */ many) => `${number(k)} ${k === 1 ? one : many}`;
  const parts = [
    every ? verb(every, `writes “${shown}”`, `write “${shown}”`) : "",
    some ? verb(some, "writes several of its words", "write several of its words") : "",
    near ? verb(near, "is", "are") + ` close in meaning (${facts.close})` : "",
    both ? `${number(both)} of them both` : "",
  ];
  return [number(count), `of ${where} ${count === 1 ? "matches" : "match"} “${shown}”: ` + parts.filter(Boolean).join(", ")];
}
