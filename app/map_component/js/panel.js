// @ts-check
// The topic panel beside the map: the topic list and an opened topic, drawn in the browser from the
// map's summary file (`Summary`, app/topic_summary.py; sent once per map), counting the papers of the
// link's view (js/page.js). It is the same component as the map, a second instance (`PanelState`,
// js/protocol.js): opening a topic, Back to the list, Escape and the browser's Back and Forward between
// them are answered here without the server, which only hears which topic is open (a "topic" event:
// the header, the papers table and the link follow); ticks, values and a theme's heading are reading
// steps (js/steps.js); opening a paper and the list's order are asked of the server.
// Every text is set with textContent: names, keywords, venues and titles are untrusted.

import { element, focusedIn, freeEscape, keepFocus } from "./dom.js";
import { closePaper, watchHistory } from "./history.js";
import { pickKey } from "./legend.js";
import { LINK } from "./links.js";
import { onFacts, papersNow } from "./page.js";
import { gunzipped, mapTable, plotlyEscape, rankCounts, rawTitle } from "./load.js";
import { readingStep } from "./steps.js";
import { currentView, takeStep } from "./store.js";
import { counted, number } from "./view.js";
/** @import { PointTable } from "./load.js" */
/** @import { CentralPaper, NearPaper, PanelFacet, PanelState, PaperState, Summary, SummaryTopic, Trigger } from "./protocol.js" */

/** A theme's heading in the topic list: a button that shows only its papers, as its entry in the map's
 * key does (js/legend.js, `pickKey`), or, where it is the
 * theme shown alone (`themes`, the list's themes), shows all again.
 * @param {number} theme @param {string} name @param {number[]} themes */
function themeButton(theme, name, themes) {
  const on = themes.length === 1 && themes[0] === theme;
  const button = element("button", "atlas-section-name", name);
  button.setAttribute("type", "button");
  button.dataset.theme = String(theme);
  button.setAttribute("aria-pressed", String(on));
  button.title = on ? "Show all themes again" : "Show only this theme's papers";
  button.addEventListener("click", () => {
    if (LINK.map) pickKey(LINK.map, { theme });
  });
  return button;
}

/** A tick of the topic list (a topic's, or a theme's for all its topics), in a finger's room, its
 * `data` as data attributes (the focus finds its new self by them when the list is made afresh).
 * @param {string} name its screen reader's name @param {boolean} checked @param {Object<string, number>} data
 * @param {(on: boolean) => void} changed @returns {HTMLElement} */
function tickBox(name, checked, data, changed) {
  const tick = /** @type {HTMLInputElement} */ (element("input", "atlas-topic-tick"));
  tick.type = "checkbox";
  tick.checked = checked;
  for (const [key, value] of Object.entries(data)) tick.dataset[key] = String(value);
  tick.setAttribute("aria-label", name);
  tick.title = "Tick topics to show only their papers";
  tick.addEventListener("change", () => changed(tick.checked));
  const hit = element("label", "atlas-tick");
  hit.append(tick);
  return hit;
}

export class TopicPanel {
  /** @type {HTMLElement} */ root;
  /** @type {HTMLElement} the topic list */ listView;
  /** @type {HTMLElement} an opened topic */ topicView;
  /** @type {HTMLElement} an opened paper (the server's: `PanelState.paper`) */ paperView;
  paperKey = ""; // the opened paper drawn
  /** @type {Summary|null} */ summary = null;
  /** @type {string|null} */ summaryUrl = null;
  /** @type {Map<number, SummaryTopic>} */ byId = new Map();
  /** @type {PanelState|null} the last state the server sent */ view = null;
  /** @type {number|null} the topic shown (null: the list) */ topic = null;
  /** @type {Int32Array|null} papers in view by colour rank (null: every paper) */ counts = null;
  /** @type {string|undefined} the papers `counts` counts (js/page.js `Shown.key`) */ countsFor = undefined;
  /** @type {PointTable|null} the map's point table (the colours count the papers in view), shared with the map */ table = null;
  /** @type {string|undefined} */ listKey = undefined;
  /** @type {string|undefined} what the list drawn shows but its counts */ listShape = undefined;
  /** @type {((counts: Int32Array|null) => void)[]} each line's and heading's count written again */ recounts = [];
  chartTab = "Keywords"; // the chart an opened topic shows, kept from topic to topic
  facetsOpen = false; // the values to filter by shown (the reader opened them)
  facetsTop = 0; // how far the reader scrolled the values, kept as the list is drawn again
  /** @type {Trigger} */ trigger = () => {};
  /** @type {Promise<void>} the updates, one after another */ ready = Promise.resolve();
  /** @type {HTMLElement} */ loading;
  /** @type {(event: KeyboardEvent) => void} */ onKey;

  /** @param {HTMLElement} parentElement */
  constructor(parentElement) {
    this.root = element("div", "atlas-panel");
    this.listView = element("section", "atlas-panel-list");
    this.listView.setAttribute("aria-label", "Topics");
    this.topicView = element("section", "atlas-panel-topic");
    this.topicView.setAttribute("aria-label", "Opened topic");
    this.topicView.hidden = true;
    this.paperView = element("article", "atlas-panel-paper");
    this.paperView.setAttribute("aria-label", "Opened paper");
    this.paperView.hidden = true;
    this.loading = element("div", "atlas-map-loading", "Loading the topics…");
    this.root.append(this.loading, this.listView, this.topicView, this.paperView);
    parentElement.appendChild(this.root);
    this.onKey = (event) => {
      // An opened paper's Escape is the map's (js/atlas_map.js): back to this topic, or to the list.
      if (this.topic === null || (this.view && this.view.paper) || !freeEscape(event)) return;
      event.preventDefault();
      this.open(null, { focus: true });
    };
    document.addEventListener("keydown", this.onKey);
    watchHistory();
    this.stopFacts = onFacts(() => this.drawList()); // the page's facts changed: the view's counts
  }

  /** @param {PanelState} data */
  async update(data) {
    this.view = data;
    if (this.summaryUrl !== data.summary) {
      const response = await gunzipped(data.summary, data.summary_data);
      this.summary = /** @type {Summary} */ (await response.json());
      this.summaryUrl = data.summary;
      this.byId = new Map(this.summary.topics.map((t) => [t.id, t]));
      this.listKey = this.listShape = undefined;
      this.topicView.dataset.topic = ""; // a rebuilt or edited map: the opened topic drawn again
      if (LINK.map) LINK.map.follow(); // the map names its view's topics and themes from the summary
    }
    this.loading.hidden = true;
    this.table = await mapTable(data.points);
    this.topic = this.linkTopic();
    this.drawList();
    this.show();
  }

  /** The topic the address bar's link says (js/store.js: the view; null: none, or none of this map's). */
  linkTopic() {
    const topic = currentView().topic;
    return topic !== null && this.byId.has(topic) ? topic : null;
  }

  /** The address bar's link changed (js/links.js `linkChanged`: written, or Back or Forward): the
   * topic it says shown, as the store's view has it (a step of the server's, a link's topic dropped). */
  followLink() {
    if (!this.summary) return;
    this.drawList(); // its view's ticks, values and counts (drawn again only where they changed)
    if (this.linkTopic() === this.topic) return;
    this.topic = this.linkTopic();
    this.show();
  }

  /** What the list shows of the view: the chosen themes, the topics kept alone, each column's values
   * pressed (positions among its values), each topic's papers in view by colour rank (null: the view
   * is not narrowed), and a key of them. The link's view (js/page.js `papersNow`) once the page's facts
   * answer it (`answered`); till then the server's state, uncounted.
   * @returns {{themes: number[], ticked: number[], values: (facet: PanelFacet) => number[], counts: Int32Array|null, key: string, answered: boolean}} */
  listed() {
    const data = /** @type {PanelState} */ (this.view);
    const papers = this.table ? papersNow(data.points) : null;
    if (!papers) return { themes: data.themes, ticked: data.topics, values: (facet) => facet.chosen, counts: null, key: `server ${data.link}`, answered: false };
    const view = papers.view;
    if (this.countsFor !== papers.key) {
      const narrowed = papers.mask !== null || papers.inside !== null;
      this.counts = narrowed ? rankCounts(/** @type {PointTable} */ (this.table), papers.selected ?? papers.rows) : null;
      this.countsFor = papers.key;
    }
    const values = (/** @type {PanelFacet} */ facet) => {
      const pressed = view.filters.find((filter) => filter[0] === facet.column);
      return pressed ? pressed[1].map((value) => facet.values.indexOf(value)).filter((k) => k >= 0) : [];
    };
    return { themes: view.themes, ticked: view.topics, values, counts: this.counts, key: papers.key, answered: true };
  }

  /** Topics kept alone (ticked in the list, or "Only this topic"; none: every topic again), the link's
   * Topics filter: a reading step (js/steps.js). @param {number[]} topics */
  showTopics(topics) {
    if (this.view) readingStep(this.trigger, "only", { topics, map: this.view.points }, { kind: "topics", topics });
  }

  /** Values of a column toggled in the list (none: every value again), the column's filter in the link:
   * a reading step (js/steps.js). @param {PanelFacet} facet @param {number[]} values positions among its values */
  showValues(facet, values) {
    const { column } = facet, texts = values.map((k) => facet.values[k]);
    if (this.view) readingStep(this.trigger, "values", { column, values, map: this.view.points }, { kind: "values", column, values: texts });
  }

  /** The values of every filterable column, as buttons that toggle them in the
   * column's filter (`showValues`), under a heading that opens them (open while a value is chosen, or the reader opened it).
   * @param {PanelFacet[]} facets */
  facetChips(facets) {
    const block = /** @type {HTMLDetailsElement} */ (element("details", "atlas-facets"));
    const chosenIn = this.listed().values; // the values pressed in the view
    block.open = this.facetsOpen || facets.some((facet) => chosenIn(facet).length > 0);
    const summary = element("summary", "atlas-facets-summary", `Filter by ${facets.map((facet) => facet.name.toLowerCase()).join(", ")}`);
    summary.addEventListener("click", () => {
      this.facetsOpen = !block.open; // the reader's choice (a click, Enter or Space), kept as the list is drawn again
    });
    block.append(summary);
    // The values scroll in a box of their own: many (a year's, a venue's) leave the topics in sight.
    const body = element("div", "atlas-facets-values");
    body.addEventListener("scroll", () => (this.facetsTop = body.scrollTop));
    block.append(body);
    for (const facet of facets) {
      const chosen = chosenIn(facet);
      const group = element("div", "atlas-facet");
      group.setAttribute("role", "group");
      group.setAttribute("aria-label", facet.name);
      group.append(element("span", "atlas-facet-name", facet.name));
      facet.values.forEach((text, k) => {
        const on = chosen.includes(k);
        const chip = element("button", "atlas-chip", text.length > 40 ? `${text.slice(0, 39)}…` : text);
        chip.setAttribute("type", "button");
        chip.setAttribute("aria-pressed", String(on));
        chip.dataset.column = facet.column;
        chip.dataset.value = String(k);
        chip.title = `${facet.name}: ${text}` + (on ? " (chosen: press to drop it)" : " (press to show only the chosen values)");
        chip.addEventListener("click", () => {
          const next = on ? chosen.filter((v) => v !== k) : [...chosen, k];
          this.showValues(facet, next);
        });
        group.append(chip);
      });
      body.append(group);
    }
    return block;
  }

  /** The topics kept alone now: the Topics filter's (`listed`). @returns {number[]} */
  ticked() {
    return this.view ? this.listed().ticked : [];
  }

  // The list: under theme headings where the map has them, by size or growth, each topic's papers in
  // view counted where a filter or search narrows the view (or a theme picked in the key).
  drawList() {
    const data = this.view, summary = this.summary;
    if (!data || !summary) return;
    const now = this.listed(), themes = now.themes, ticked = now.ticked, counts = now.counts;
    // A search's answer on its way (the facts do not answer the link's view yet): as the header's
    // sentence, the list drawn stays till it comes (the server's state, uncounted, only for a first drawing).
    if (!now.answered && this.listShape !== undefined) return;
    const filtered = counts !== null;
    const key = `${this.summaryUrl}|${data.sort}|${now.key}|${data.facets.map((facet) => facet.values.length).join()}`;
    if (key === this.listKey) return;
    this.listKey = key;
    // Where only the counts changed (a search, a filter, a box), they are written into the lines drawn:
    // at a million papers the list's 625 topics drawn again took a quarter of a second.
    const shape = JSON.stringify([this.summaryUrl, data.sort, themes, ticked, data.facets.map((facet) => [facet.column, facet.values, now.values(facet)]), filtered]);
    if (shape === this.listShape) {
      for (const recount of this.recounts) recount(counts);
      return;
    }
    [this.listShape, this.recounts] = [shape, []];
    const view = this.listView;
    const held = focusedIn(view); // given to its new self (a theme's heading, the order, a topic's line)
    view.replaceChildren(element("h4", "atlas-panel-title", "Topics"));
    const rising = summary.lists.rising;
    if (rising) {
      const order = element("div", "atlas-order");
      order.setAttribute("role", "group");
      order.setAttribute("aria-label", "Order topics by");
      for (const [sort, text] of [["size", "Largest"], ["rising", "Rising"]]) {
        const button = element("button", "atlas-order-button", text);
        button.setAttribute("type", "button");
        button.dataset.sort = sort;
        button.setAttribute("aria-pressed", String(data.sort === sort));
        button.title = sort === "size" ? "Most papers first" : "The topic's share of papers in the most recent years divided by its share in the years before, highest first (×1.0 = steady)";
        if (data.sort !== sort) button.addEventListener("click", () => this.trigger("sort", { sort, map: data.points }));
        order.appendChild(button);
      }
      view.appendChild(order);
    }
    if (data.facets.length) {
      const block = view.appendChild(this.facetChips(data.facets));
      /** @type {HTMLElement} */ (block.lastElementChild).scrollTop = this.facetsTop;
    }
    if (ticked.length) {
      const all = element("button", "atlas-ticks-clear", "Show all topics");
      all.setAttribute("type", "button");
      all.title = "Untick every topic: all the papers again";
      all.addEventListener("click", () => this.showTopics([]));
      view.appendChild(all);
    }
    const growth = data.sort === "rising" && rising;
    const sections = (growth ? rising : summary.lists.size).filter(
      (s) => s.theme === null || themes.length === 0 || themes.includes(s.theme),
    );
    const list = element("div", "atlas-topic-sections");
    const inView = (/** @type {SummaryTopic} */ topic, /** @type {Int32Array|null} */ counts) => (counts ? counts[topic.rank] : topic.size);
    const biggest = Math.max(1, ...summary.topics.map((t) => t.size));
    for (const section of sections) {
      const group = element("div", "atlas-topic-section");
      const topics = section.topics.map((id) => this.byId.get(id)).filter((topic) => topic !== undefined);
      if (section.name !== null) {
        const head = element("div", "atlas-section-head");
        if (section.theme !== null && topics.length) {
          // The theme's tick ticks all its topics (or unticks them); part of them ticked: mixed.
          const ids = topics.map((t) => t.id), some = ids.filter((id) => ticked.includes(id)).length;
          const all = tickBox(`Show only the ticked topics: all of ${section.name}`, some === ids.length, { theme: section.theme }, (on) =>
            this.showTopics(on ? [...ticked, ...ids.filter((id) => !ticked.includes(id))] : ticked.filter((id) => !ids.includes(id))));
          /** @type {HTMLInputElement} */ (all.firstChild).indeterminate = some > 0 && some < ids.length;
          head.append(all);
        }
        const name = section.theme === null ? element("strong", "", section.name) : themeButton(section.theme, section.name, themes);
        if (section.colour) {
          const swatch = element("span", "atlas-theme-swatch"); // the theme's colour, as in the key
          swatch.style.background = section.colour;
          name.prepend(swatch);
        }
        const tally = element("span", "atlas-section-count");
        const recount = (/** @type {Int32Array|null} */ counts) => {
          const held = topics.reduce((sum, t) => sum + inView(t, counts), 0);
          tally.textContent = `· ${counted(section.size, "paper")}` + (counts ? ` · ${number(held)} in view` : "");
        };
        recount(counts);
        this.recounts.push(recount);
        head.append(name, tally);
        group.appendChild(head);
      }
      const items = element("ul", "atlas-topic-list");
      items.setAttribute("aria-label", section.name === null ? "Topics" : section.name);
      for (const topic of topics) {
        const item = element("li");
        const button = element("button", "atlas-topic");
        button.setAttribute("type", "button");
        button.dataset.topic = String(topic.id);
        const score = growth ? `, growth ${growthText(topic.growth)}` : "";
        const dot = element("span", "atlas-dot");
        dot.style.background = topic.colour;
        const bar = element("span", "atlas-topic-count");
        const recount = (/** @type {Int32Array|null} */ counts) => {
          const count = inView(topic, counts);
          const said = counts ? `${number(count)} in view` : counted(count, "paper");
          button.setAttribute("aria-label", `${topic.name}, ${said}${score}`);
          bar.textContent = number(count);
          bar.style.setProperty("--share", String(Math.min(1, count / biggest)));
        };
        recount(counts);
        this.recounts.push(recount);
        button.append(dot, element("span", "atlas-topic-name", topic.name), bar);
        if (growth) button.append(element("span", "atlas-topic-growth", growthText(topic.growth)));
        button.addEventListener("click", () => this.open(topic.id, { focus: true }));
        // Ticked topics are shown alone (the Topics filter's choice); none ticked: every topic.
        const tick = tickBox(`Show only the ticked topics: ${topic.name}`, ticked.includes(topic.id), { topic: topic.id }, (on) =>
          this.showTopics(on ? [...ticked, topic.id] : ticked.filter((id) => id !== topic.id)));
        item.append(tick, button);
        items.appendChild(item);
      }
      group.appendChild(items);
      list.appendChild(group);
    }
    view.appendChild(list);
    const column = filtered ? "In view" : "Papers";
    view.appendChild(element("p", "atlas-caption",
      `Select a topic to open it; tick topics to show only their papers. Counts: ${column.toLowerCase()}.` + (growth ? " Growth: recent share of papers ÷ earlier share (×1.0 = steady)." : "")));
    if (held) keepFocus(view, held);
  }

  /** Open a topic (null: back to the list) as the reader asked (a new history entry), or as Back or
   * Forward in the browser went to (`how.query`: the entry's link): the map dimmed, the server told
   * (`how.tell`: unless Streamlit's own rerun follows the link, js/history.js `watchHistory`).
   * @param {number|null} topic @param {{focus?: boolean, query?: string, tell?: boolean}} how */
  open(topic, how = {}) {
    if (topic !== null && !this.byId.has(topic)) return;
    const from = this.topic;
    this.topic = topic;
    const query = takeStep({ kind: "topic", topic }, how.query);
    // Told first: Streamlit sends the event in a task of its own (its widget manager's flush), so
    // the panel and the map draw in the task after it, while the server works out its answer (the
    // header, the downloads); drawn in this one, the map's redraw would hold the message back.
    if (how.tell !== false) this.trigger("topic", { topic, query, map: this.view ? this.view.points : "" });
    setTimeout(() => {
      if (this.topic === topic) this.shown(from, how.focus);
    }, 0);
  }

  /** The topic just opened drawn (`show`), the focus on its Back button, or on the topic closed.
   * @param {number|null} from @param {boolean|undefined} focus */
  shown(from, focus) {
    this.show();
    if (!focus) return;
    const target = this.topic !== null
      ? this.topicView.querySelector(".atlas-back")
      : this.listView.querySelector(`.atlas-topic[data-topic="${from}"]`);
    if (target) /** @type {HTMLElement} */ (target).focus();
  }

  // Show the list, the opened topic or the opened paper, and dim the map's other papers (not beside a
  // paper: the server narrows the map to the view it was opened from).
  show() {
    const paper = this.view ? this.view.paper : null;
    const topic = paper || this.topic === null ? null : this.byId.get(this.topic) || null;
    const held = paper === null && !this.paperView.hidden && focusedIn(this.paperView);
    this.listView.hidden = topic !== null || paper !== null;
    this.topicView.hidden = topic === null;
    this.paperView.hidden = paper === null;
    if (topic && this.topicView.dataset.topic !== String(topic.id)) this.drawTopic(topic);
    if (!topic) this.topicView.dataset.topic = "";
    if (paper) this.drawPaper(paper);
    else this.paperKey = "";
    if (held) { // the paper closed from within it: the focus on what the panel shows now
      const next = /** @type {HTMLElement|null} */ ((topic ? this.topicView : this.listView).querySelector("button"));
      if (next) next.focus();
    }
    // What a step opens is read from its top: the panel's own scroll back to its start, and where the
    // panel sits under the map (a phone), the page brought to the panel's top when that is out of sight.
    const opened = paper !== null ? `paper ${JSON.stringify(paper.title)}` : topic ? `topic ${topic.id}` : "list";
    if (opened !== this.root.dataset.opened) {
      const first = this.root.dataset.opened === undefined;
      this.root.dataset.opened = opened;
      if (opened !== "list") this.root.scrollTop = 0;
      const top = this.root.getBoundingClientRect().top;
      if (!first && window.innerWidth <= 800 && (top < 0 || top > 120)) {
        this.root.scrollIntoView({ block: "start" });
      }
    }
    if (LINK.map) LINK.map.focusTopic(topic);
    if (LINK.topic !== this.topic) {
      LINK.topic = this.topic;
      if (LINK.table) LINK.table.showTopic();
    }
  }

  /** The opened paper in the list's place: its way back, title, topic, details, page, how it matched
   * the search, abstract (as written, the matches marked) and nearest papers; the focus on its way
   * back where it was in the panel (a central or a nearest paper opened it with the keyboard).
   * @param {PaperState} paper */
  drawPaper(paper) {
    const key = JSON.stringify(paper);
    if (key === this.paperKey) return;
    this.paperKey = key;
    const map = this.view ? this.view.points : "";
    const held = focusedIn(this.root);
    const back = element("button", "atlas-back", `← ${paper.back}`);
    back.setAttribute("type", "button");
    back.addEventListener("click", () => closePaper(this.trigger, map));
    const body = element("div", "atlas-topic-body");
    const topic = element("div", "atlas-paper-topic");
    const name = element("span", "atlas-paper-topic-name");
    name.append(element("strong", "", "Topic: "), paper.topic_name);
    const open = element("button", "atlas-only", "Open topic");
    open.setAttribute("type", "button");
    open.title = "Close the paper and open its topic.";
    open.addEventListener("click", () => this.trigger("paper_topic", { topic: paper.topic, map }));
    topic.append(name, open);
    body.append(marked(element("h4", "atlas-panel-title"), paper.title), topic, element("p", "atlas-caption", paper.details));
    if (paper.added) {
      body.append(element("p", "atlas-info", "Added since the last full build (with python -m pipeline add): placed among its nearest papers and given their topic; the topics themselves were not refitted."));
    }
    if (paper.url) {
      const link = /** @type {HTMLAnchorElement} */ (element("a", "atlas-page-link", "Open the paper's page ↗"));
      link.href = paper.url; // http or https only (the server's check)
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      body.append(link);
    }
    if (paper.match) {
      const note = element("p", "atlas-caption atlas-match", paper.match.text);
      note.dataset.kind = paper.match.kind;
      body.append(note);
    }
    body.append(marked(element("div", "atlas-abstract"), paper.abstract));
    body.append(element("p", "atlas-subhead", "Nearest papers (ringed on the map)"), this.paperList(paper.nearest, "Nearest papers"));
    this.paperView.replaceChildren(back, body);
    this.root.scrollTop = 0;
    if (held) back.focus();
  }

  /** @param {SummaryTopic} topic */
  drawTopic(topic) {
    const view = this.topicView, summary = /** @type {Summary} */ (this.summary);
    view.dataset.topic = String(topic.id);
    const back = element("button", "atlas-back", "← Back to the topic list");
    back.setAttribute("type", "button");
    back.addEventListener("click", () => this.open(null, { focus: true }));
    const share = summary.n ? topic.size / summary.n : 0;
    const only = element("button", "atlas-only", "Only this topic");
    only.setAttribute("type", "button");
    only.title = "Filter the map and the table to this topic's papers.";
    only.addEventListener("click", () => this.showTopics([topic.id]));
    const body = element("div", "atlas-topic-body");
    view.replaceChildren(back, body);
    body.append(
      element("h4", "atlas-panel-title", topic.name),
      element("p", "atlas-caption", `${counted(topic.size, "paper")} · ${(share * 100).toFixed(1)}% of the map` + (topic.id !== -1 ? ` · topic ${topic.id}` : "")),
      only,
    );
    if (topic.id === -1) {
      body.append(element("p", "atlas-info", "Unassigned papers are those no topic claimed: too far from every cluster. They stay on the map in grey."));
      this.drawUnassigned(body, topic);
      return;
    }
    if (topic.written !== null) body.append(element("p", "atlas-written", `Its name is written by ${Math.round(topic.written * 100)}% of its papers.`));
    if (topic.note) body.append(element("p", "atlas-subhead", "Note"), element("p", "atlas-note", topic.note));
    if (topic.stability !== null) {
      const line = element("p", "atlas-stability");
      line.append(element("strong", "", `Stability ${topic.stability.toFixed(2)}`), ` · ${summary.stability_help}`);
      body.append(line);
    }
    if (topic.central.length) {
      body.append(element("p", "atlas-subhead", `Most central papers (${topic.central.length} of ${number(topic.size)}, nearest the topic's centre first)`));
      body.append(this.paperList(topic.central));
    }
    this.drawCharts(body, topic);
    if (topic.nearest.length) {
      body.append(element("p", "atlas-subhead", "Nearest topics"));
      const list = element("ul", "atlas-near-list");
      list.setAttribute("aria-label", "Nearest topics");
      for (const near of topic.nearest) {
        const other = this.byId.get(near.id);
        if (!other) continue;
        const button = element("button", "atlas-topic");
        button.setAttribute("type", "button");
        button.dataset.topic = String(other.id);
        button.setAttribute("aria-label", `${other.name}, ${counted(other.size, "paper")}, similarity ${near.similarity.toFixed(2)}`);
        const dot = element("span", "atlas-dot");
        dot.style.background = other.colour;
        button.append(dot, element("span", "atlas-topic-name", other.name),
          element("span", "atlas-topic-count", number(other.size)),
          element("span", "atlas-topic-growth", near.similarity.toFixed(2)));
        button.addEventListener("click", () => this.open(other.id, { focus: true }));
        const item = element("li");
        item.appendChild(button);
        list.appendChild(item);
      }
      body.append(list);
    }
  }

  /** Papers as buttons that open them (the server opens a paper): each its title, and an opened
   * paper's nearest their topic where it is named and their similarity.
   * @param {(CentralPaper|NearPaper)[]} papers @param {string} [label] the list's name for a screen reader */
  paperList(papers, label) {
    const list = element("ol", "atlas-paper-list");
    if (label) list.setAttribute("aria-label", label);
    for (const paper of papers) {
      const button = element("button", "atlas-paper");
      button.setAttribute("type", "button");
      if ("similarity" in paper) {
        const similarity = paper.similarity.toFixed(2);
        button.setAttribute("aria-label", `${paper.title}${paper.topic === null ? "" : `, ${paper.topic}`}, similarity ${similarity}`);
        const text = element("span", "atlas-near-text");
        text.append(element("span", "atlas-near-title", paper.title));
        if (paper.topic !== null) text.append(element("span", "atlas-near-topic", paper.topic));
        button.append(text, element("span", "atlas-near-similarity", similarity));
      } else button.textContent = paper.title;
      button.addEventListener("click", () => this.trigger("click", { row: paper.row, map: this.view ? this.view.points : "" }));
      const item = element("li");
      item.appendChild(button);
      list.appendChild(item);
    }
    return list;
  }

  /** The first 50 unassigned papers, from the point table's titles. @param {HTMLElement} body @param {SummaryTopic} topic */
  async drawUnassigned(body, topic) {
    if (!this.view) return;
    const table = await mapTable(this.view.points);
    const rows = [];
    for (let i = 0; i < table.n && rows.length < 50; i++) if (table.colour[i] === topic.rank) rows.push(i);
    body.append(this.paperList(rows.map((row) => ({ row, title: rawTitle(table, row) }))));
  }

  // The keywords, and where the map has them the years and venues, as tabs: the chosen one drawn.
  /** @param {HTMLElement} body @param {SummaryTopic} topic */
  drawCharts(body, topic) {
    const tabs = [];
    if (topic.keywords.length) tabs.push("Keywords");
    if (topic.years.length >= 2) tabs.push("Over the years");
    if (topic.venues.length) tabs.push("Venues");
    if (!tabs.length) return;
    if (!tabs.includes(this.chartTab)) this.chartTab = tabs[0];
    const bar = element("div", "atlas-tabs");
    bar.setAttribute("role", "tablist");
    const panel = element("div", "atlas-tab-panel");
    panel.setAttribute("role", "tabpanel");
    const draw = () => {
      for (const button of bar.children) button.setAttribute("aria-selected", String(button.textContent === this.chartTab));
      panel.replaceChildren();
      if (this.chartTab === "Keywords") keywordBars(panel, topic);
      else if (this.chartTab === "Venues") {
        const venues = topic.venues;
        barChart(panel, "Share of each venue's papers", venues.map((v) => v.venue), venues.map((v) => v.share * 100), topic.colour,
          (s) => `${s.toFixed(1)}%`, (k) => ` (${venues[k].papers} of ${venues[k].total})`, "% of the venue's papers");
      }
      else yearChart(panel, topic);
    };
    for (const name of tabs) {
      const button = element("button", "atlas-tab", name);
      button.setAttribute("type", "button");
      button.setAttribute("role", "tab");
      button.addEventListener("click", () => {
        this.chartTab = name;
        draw();
      });
      bar.appendChild(button);
    }
    body.append(bar, panel);
    draw();
  }

  destroy() {
    this.stopFacts();
    document.removeEventListener("keydown", this.onKey);
    if (LINK.panel === this) LINK.panel = null;
    if (LINK.map) LINK.map.focusTopic(null);
    this.root.remove();
  }
}

/** `into` holding the pieces of a text, those the search matched marked. @param {HTMLElement} into
 * @param {[string, boolean][]} pieces */
function marked(into, pieces) {
  into.append(...pieces.map(([text, hit]) => (hit ? element("mark", "atlas-mark", text) : text)));
  return into;
}

/** @param {number|null} score */
function growthText(score) {
  return score === null ? "–" : `×${score.toFixed(2)}`;
}

const BAR_LABEL = 28; // characters of a name beside its bar; the whole name in the hover and the list

// The venue bars' font, Plotly's own family: the names' margin is measured in it (`textWidth`), not left
// to Plotly's automargin, which draws a chart twice.
const BAR_FONT = { size: 12, family: '"Open Sans", verdana, arial, sans-serif' };

/** @type {CanvasRenderingContext2D|null} */
let MEASURE = null;

/** The widest of `texts` in `font`, in pixels (a canvas measures as the SVG text draws).
 * @param {string[]} texts @param {{size: number, family: string}} font */
function textWidth(texts, font) {
  const context = MEASURE || (MEASURE = /** @type {CanvasRenderingContext2D} */ (document.createElement("canvas").getContext("2d")));
  context.font = `${font.size}px ${font.family}`;
  return Math.max(0, ...texts.map((text) => context.measureText(text).width));
}

/** The charts drawn so far: those no longer in the page are purged (their resize listener, their state). */
const CHARTS = new Set();

/** @param {any} Plotly @param {HTMLElement} div */
function tracked(Plotly, div) {
  for (const old of CHARTS) {
    if (old.isConnected) continue;
    Plotly.purge(old);
    CHARTS.delete(old);
  }
  CHARTS.add(div);
}

/** A chart's data for a screen reader, one item a bar or point (the drawing itself is hidden from it).
 * @param {string} name @param {string[]} items */
function chartData(name, items) {
  const list = element("ul", "atlas-chart-data");
  list.setAttribute("aria-label", name);
  for (const item of items) list.appendChild(element("li", "", item));
  return list;
}

const KEYWORD_FONT = { size: 14, family: '"Source Sans", "Source Sans Pro", sans-serif' }; // .atlas-panel's

// The keywords, strongest first: each one's name, a bar as long as its weight against the strongest's,
// and its weight, as a list the page draws itself (a Plotly chart here took 30 ms of the page's main
// thread for every topic opened). The names' column is as wide as the widest, up to 55% of the
// panel: a longer name is cut short by an ellipsis, whole in its tooltip. A screen reader reads the
// list as it is; names are text, never markup.
/** @param {HTMLElement} panel @param {SummaryTopic} topic */
function keywordBars(panel, topic) {
  const list = element("ol", "atlas-keywords");
  list.setAttribute("aria-label", "Keywords, weight (c-TF-IDF)");
  list.style.setProperty("--colour", topic.colour);
  list.style.setProperty("--names", `${Math.ceil(textWidth(topic.keywords, KEYWORD_FONT)) + 1}px`); // the widest name's room
  const top = Math.max(...topic.weights, 1e-12);
  topic.keywords.forEach((word, k) => {
    const name = element("span", "atlas-keyword-name", word);
    name.title = word;
    const track = element("span", "atlas-keyword-track"), bar = element("span", "atlas-keyword-bar");
    track.setAttribute("aria-hidden", "true");
    bar.style.width = `${(100 * Math.max(0, topic.weights[k])) / top}%`;
    track.appendChild(bar);
    const item = element("li", "atlas-keyword");
    item.append(name, track, element("span", "atlas-keyword-weight", topic.weights[k].toFixed(3)));
    list.appendChild(item);
  });
  panel.append(list, element("p", "atlas-caption", "Weight (c-TF-IDF): how often the topic's papers use the word, weighed against how often all the map's papers do."));
}

// Horizontal Plotly bars, the first on top: `values` against `labels`, each bar's value as `said`
// says it beside it and with `more` in its hover. The names are untrusted text and Plotly reads tags
// and entities in tick labels and hovers: each is escaped (`plotlyEscape`, as the map's titles) and
// shortened to BAR_LABEL characters beside its bar. The bars are placed at 0, 1, 2, … with the names
// as their ticks' text, so two names alike when shortened stay two bars. The title is HTML.
/** @param {HTMLElement} panel @param {string} title @param {string[]} labels @param {number[]} values
 * @param {string} colour @param {(value: number) => string} said @param {(k: number) => string} more
 * @param {string} axis */
async function barChart(panel, title, labels, values, colour, said, more, axis) {
  if (title) panel.append(element("p", "atlas-chart-title", title));
  const texts = values.map((v) => said(v));
  panel.append(chartData(title || `Keywords, ${axis}`, labels.map((label, k) => `${label}: ${texts[k]}${more(k)}`)));
  const div = element("div", "atlas-bars");
  div.setAttribute("aria-hidden", "true");
  panel.append(div);
  const Plotly = await plotlyReady();
  tracked(Plotly, div);
  const short = (/** @type {string} */ label) => (label.length > BAR_LABEL ? label.slice(0, BAR_LABEL - 1).trimEnd() + "…" : label);
  const rows = labels.map((_, k) => k);
  const top = Math.max(...values, 1e-12);
  const ticks = labels.map(short);
  await Plotly.newPlot(div, [{
    type: "bar", orientation: "h", x: values, y: rows, marker: { color: colour },
    text: texts, textposition: "outside", cliponaxis: false,
    customdata: labels.map((label, k) => [plotlyEscape(label), plotlyEscape(texts[k] + more(k))]),
    hovertemplate: "%{customdata[0]}: %{customdata[1]}<extra></extra>",
  }], {
    height: 40 + 22 * labels.length, margin: { l: Math.ceil(textWidth(ticks, BAR_FONT)) + 6, r: 10, t: 4, b: 36 },
    showlegend: false, bargap: 0.25,
    xaxis: { title: { text: axis, standoff: 4 }, range: [0, top * 1.3], fixedrange: true, zeroline: false },
    yaxis: {
      tickmode: "array", tickvals: rows, ticktext: ticks.map(plotlyEscape),
      range: [labels.length - 0.5, -0.5], fixedrange: true, showgrid: false,
    },
    font: BAR_FONT, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
  }, { displayModeBar: false, responsive: true });
}

// A topic's share of each year's papers, a Plotly line (a year without enough papers is a gap). The
// title is HTML, so no name goes through Plotly's pseudo-HTML.
/** @param {HTMLElement} panel @param {SummaryTopic} topic */
async function yearChart(panel, topic) {
  panel.append(element("p", "atlas-chart-title", "Share of each year's papers"));
  panel.append(chartData("Share of each year's papers", topic.years.map(
    (y) => `${y.year}: ${(y.share * 100).toFixed(1)}% (${y.papers} of ${y.total})`)));
  const div = element("div", "atlas-year-chart");
  div.setAttribute("aria-hidden", "true");
  panel.append(div);
  const Plotly = await plotlyReady();
  tracked(Plotly, div);
  const known = new Map(topic.years.map((y) => [y.year, y]));
  const first = topic.years[0].year, last = topic.years[topic.years.length - 1].year;
  const years = [];
  for (let y = first; y <= last; y++) years.push(y);
  await Plotly.newPlot(div, [{
    type: "scatter", mode: "lines+markers", connectgaps: false, x: years,
    y: years.map((y) => known.get(y)).map((at) => (at ? Math.round(at.share * 10000) / 100 : null)),
    customdata: years.map((y) => known.get(y)).map((at) => (at ? [at.papers, at.total] : [0, 0])),
    line: { color: topic.colour }, marker: { color: topic.colour },
    hovertemplate: "%{x}: %{y:.1f}% of papers (%{customdata[0]} of %{customdata[1]})<extra></extra>",
  }], {
    height: 240, margin: { l: 50, r: 10, t: 10, b: 40 }, showlegend: false,
    xaxis: { title: { text: "Year" }, tickformat: "d", dtick: years.length <= 12 ? 1 : undefined },
    yaxis: { title: { text: "% of that year's papers" }, rangemode: "tozero" },
    paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "white",
  }, { displayModeBar: false, responsive: true });
}

/** Plotly.js as the map loaded it (its bytes may have come through the map's instance), in a later
 * task than the step's own: a chart below the map's is drawn once the map has been. */
async function plotlyReady() {
  while (!window.Plotly) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 0));
  return window.Plotly;
}
