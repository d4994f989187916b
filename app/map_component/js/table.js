// @ts-check
// The papers table under the map: the papers in view (best match first under a search), or those of
// them the map's selection holds, 50 a page, drawn in the browser from the map's point table (titles,
// topics) and the table file (sources and metadata, once per map: app/map_component/table.py). It is
// the map's component again, a third instance (`TableState`). An opened topic narrows it here
// (`LINK.topic`, set by the topic panel), and turning a page or sorting by a column never reaches the
// server; a row chosen (click, or Enter on its title) opens the paper there, as a point click does.
// Every text is set with textContent: titles, names and venues are untrusted.

import { element, focusedIn, keepFocus } from "./dom.js";
import { LINK } from "./links.js";
import { decodePoints, gunzipped, mapTable, once, rawTitle } from "./load.js";
import { facts, onFacts, papersNow } from "./page.js";
import { clearSelection } from "./select.js";
import { counted, number } from "./view.js";
/** @import { PointTable } from "./load.js" */
/** @import { HitColumn, Shown } from "./page.js" */
/** @import { TableState, Trigger } from "./protocol.js" */

/**
 * The table file, decoded: its columns after Title and Topic, the topics by palette position, each
 * title's rank in sort order.
 * @typedef {{name: string, values?: string[], codes?: Uint32Array, ends?: Uint32Array, bytes?: Uint8Array, rank?: Uint32Array}} FileColumn
 * @typedef {{n: number, columns: FileColumn[], topics: {id: number, name: string}[], topicKey: Uint32Array, titleRank: Uint32Array}} TableFile
 */

/** @param {string} url @param {string|undefined} inline @returns {Promise<TableFile>} */
function loadColumns(url, inline) {
  return once(url, async () => {
    const file = decodePoints(await (await gunzipped(url, inline)).arrayBuffer());
    const a = file.arrays;
    const column = (/** @type {string} */ name) => /** @type {Uint32Array|undefined} */ (a[name]);
    /** @type {FileColumn[]} */
    const columns = file.columns.map((/** @type {FileColumn} */ named, /** @type {number} */ k) => ({
      ...named,
      codes: column(`col${k}`), ends: column(`col${k}:ends`), bytes: /** @type {Uint8Array|undefined} */ (a[`col${k}:bytes`]), rank: column(`col${k}:rank`),
    }));
    /** @type {string[]} */
    const names = file.topics.map((/** @type {{name: string}} */ entry) => entry.name);
    const topicKey = new Uint32Array(names.length); // each palette position's place among the names
    names.map((_, k) => k).sort((x, y) => collate(names[x], names[y])).forEach((k, place) => (topicKey[k] = place));
    return { n: file.n, columns, topics: file.topics, topicKey, titleRank: /** @type {Uint32Array} */ (a.title_rank) };
  });
}

const TEXT = new TextDecoder();

/** A column's text for paper i. @param {FileColumn} column @param {number} i */
function columnText(column, i) {
  if (column.values) return column.values[/** @type {Uint32Array} */ (column.codes)[i]];
  const ends = /** @type {Uint32Array} */ (column.ends);
  return TEXT.decode(/** @type {Uint8Array} */ (column.bytes).subarray(i ? ends[i - 1] : 0, ends[i]));
}

/**
 * One column as the table draws it: its header, each listed row's text, its sort key, and how its
 * cell looks ("text", or a bar for a number in [0, top]).
 * @typedef {{name: string, text: (i: number, k: number) => string, key: (i: number, k: number) => number,
 *   bar?: {value: (k: number) => number, top: number}, phone?: string}} Column
 */

export class PapersTable {
  /** @type {HTMLElement} */ root;
  /** @type {TableState|null} the last state the server sent */ view = null;
  /** @type {PointTable|null} */ points = null;
  /** @type {TableFile|null} */ file = null;
  /** @type {Shown|null} the papers of the view the address bar says (js/page.js), listed */ shown = null;
  /** @type {(() => void)|undefined} stops following the page's facts */ stop = undefined;
  /** @type {HitColumn[]} how each hit of the view's search matched (none without a search) */ extras = [];
  page = 0;
  /** @type {{column: string, descending: boolean}|null} */ sort = null;
  listingKey = "";
  /** @type {number|null} the row last opened from here */ opened = null;
  /** @type {Trigger} */ trigger = () => {};
  /** @type {Promise<void>} */ ready = Promise.resolve();
  /** @type {HTMLElement} */ status;
  /** @type {string|undefined} the table's heading last drawn */ said = undefined;

  /** @param {HTMLElement} parentElement */
  constructor(parentElement) {
    this.root = element("section", "atlas-table");
    this.root.setAttribute("aria-label", "Papers");
    this.loading = element("div", "atlas-map-loading", "Loading the papers…");
    this.root.append(this.loading);
    // What the table lists, said to a screen reader when it changes (a filter, a search, a pick in the
    // key, a selection): a live region of its own beside the table, which is made afresh on each step.
    this.status = element("p", "atlas-status");
    this.status.setAttribute("role", "status");
    parentElement.append(this.root, this.status);
  }

  /** @param {TableState} data */
  async update(data) {
    const [points, file] = await Promise.all([mapTable(data.points), loadColumns(data.table, data.table_data)]);
    this.view = data;
    this.points = points;
    this.file = file;
    if (!LINK.panel) LINK.topic = data.topic; // else the panel's, the link's (js/panel.js)
    const map = LINK.map && LINK.map.received;
    if (map && map.points === data.points) this.opened = map.paper ?? null; // the paper open beside the map
    this.stop ??= onFacts(() => this.follow());
    this.follow();
  }

  /** The papers of the view the address bar says (js/page.js `papersNow`), listed: on each state the
   * server sends, each step the browser draws, Back or Forward (js/links.js `linkChanged`) and each
   * time the page's facts change; kept as they are until the facts answer the view's search. */
  follow() {
    if (!this.view || !this.points || !this.file) return;
    const shown = papersNow(this.view.points), known = facts();
    if (!shown || !known) return;
    this.shown = shown;
    this.extras = shown.view.search.trim() ? known.columns : [];
    this.loading.hidden = true;
    this.draw();
  }

  /** The paper open beside the map (null: none), however it was opened: its row marked where listed.
   * @param {number|null} row */
  markOpened(row) {
    if (row === this.opened) return;
    this.opened = row;
    for (const tr of this.root.querySelectorAll("tr[aria-selected]")) tr.removeAttribute("aria-selected");
    const tr = row === null ? null : this.root.querySelector(`tr[data-row="${row}"]`);
    if (tr) tr.setAttribute("aria-selected", "true");
  }

  /** The topic panel opened or closed a topic: the table lists its papers. */
  showTopic() {
    if (this.shown) this.draw();
  }

  /** The papers listed: their rows, their places among the search's hits (for its columns), and the
   * papers inside the selection (in view or not). */
  listing() {
    const t = /** @type {PointTable} */ (this.points), file = /** @type {TableFile} */ (this.file);
    const shown = /** @type {Shown} */ (this.shown), known = facts();
    const topic = LINK.topic;
    const rank = topic === null || topic === undefined ? -1 : file.topics.findIndex((entry) => entry.id === topic);
    const listed = (shown.selected ?? shown.rows).filter((i) => rank === -1 || t.colour[i] === rank);
    const place = known && known.position && this.extras.length ? known.position : null;
    const positions = listed.map((i) => (place ? place[i] : -1));
    return { rows: listed, positions, inside: shown.inside ? shown.inside.length : 0 };
  }

  /** @returns {Column[]} the columns in order: Title, how a search matched, Topic, Source, metadata */
  columns() {
    const t = /** @type {PointTable} */ (this.points), file = /** @type {TableFile} */ (this.file);
    const topicNames = file.topics.map((entry) => entry.name), topicKey = file.topicKey;
    /** @type {Column[]} */
    const columns = [{ name: "Title", phone: "Paper", text: (i) => rawTitle(t, i), key: (i) => file.titleRank[i] }];
    if (!this.selecting()) {
      for (const extra of this.extras) {
        if (extra.codes) {
          const codes = extra.codes, values = /** @type {string[]} */ (extra.values);
          columns.push({ name: extra.name, text: (_, k) => values[codes[k]], key: (_, k) => codes[k] });
        } else {
          const numbers = /** @type {Float32Array} */ (extra.numbers);
          const percent = extra.name === "Closer than";
          columns.push({
            name: extra.name,
            text: (_, k) => (percent ? `${numbers[k].toFixed(1)}% of pairs` : numbers[k].toFixed(2)),
            key: (_, k) => numbers[k],
            bar: { value: (k) => numbers[k], top: percent ? 100 : 1 },
          });
        }
      }
    }
    columns.push({ name: "Topic", text: (i) => topicNames[t.colour[i]], key: (i) => topicKey[t.colour[i]] });
    for (const column of file.columns) {
      const codes = column.codes, rank = column.rank;
      columns.push({
        name: column.name,
        text: (i) => columnText(column, i),
        key: codes ? (i) => codes[i] : (i) => /** @type {Uint32Array} */ (rank)[i],
      });
    }
    return columns;
  }

  /** Whether the view has a box or lasso (the table lists its papers). */
  selecting() {
    return Boolean(this.shown && this.shown.inside);
  }

  draw() {
    if (!this.view || !this.points || !this.file || !this.shown) return;
    const held = focusedIn(this.root);
    this.drawListing();
    // Gone with the step (Clear selection, with the selection): the heading, which says what the table lists now.
    if (held && !this.root.contains(held)) keepFocus(this.root, held, /** @type {HTMLElement|null} */ (this.root.querySelector(".atlas-table-title")));
    const title = this.root.querySelector(".atlas-table-title");
    const said = title ? title.textContent : "";
    if (this.said !== undefined && said !== this.said) this.status.textContent = said; // not on the first drawing
    this.said = said;
  }

  drawListing() {
    const { rows, positions, inside } = this.listing();
    const columns = this.columns();
    const sort = this.sort;
    const sorted = sort && columns.find((c) => c.name === sort.column);
    const order = sort && sorted ? sortedOrder(rows, positions, sorted, sort.descending) : null;
    const key = `${this.shown && this.shown.key}|${LINK.topic}|${this.sort && this.sort.column}|${this.sort && this.sort.descending}`;
    if (key !== this.listingKey) {
      this.page = 0; // a new listing starts at its first page
      this.listingKey = key;
    }
    const size = /** @type {TableState} */ (this.view).page_rows, count = rows.length;
    const pages = Math.max(1, Math.ceil(count / size));
    this.page = Math.min(Math.max(this.page, 0), pages - 1);
    const start = this.page * size, end = Math.min(count, start + size);

    const parts = [];
    const head = element("div", "atlas-table-head");
    const title = element("h4", "atlas-table-title");
    title.tabIndex = -1; // where the focus goes when what had it is gone (`keepFocus`)
    head.append(title);
    if (this.selecting()) {
      title.textContent = `Selected on the map · ${number(count)}`;
      const clear = element("button", "atlas-table-button", "Clear selection");
      clear.setAttribute("type", "button");
      clear.addEventListener("click", () => {
        clearSelection(this.trigger, this.view ? this.view.points : "");
      });
      head.append(clear);
      parts.push(head);
      const hidden = inside - count;
      if (hidden > 0) {
        parts.push(element("p", "atlas-caption", `${counted(hidden, "paper")} inside the selection ${hidden === 1 ? "is" : "are"} hidden by the current filters and search.`));
      }
    } else {
      let said = `Papers · ${number(count)}`;
      if (sort && sorted) said += ` · by ${sorted.name.toLowerCase()}, ${sort.descending ? "descending" : "ascending"}`;
      else if (this.extras.length && count > 1) said += " · best matches first";
      title.textContent = said;
      parts.push(head);
    }
    if (!count) {
      parts.push(element("p", "atlas-info", "No papers match the current filters and search."));
      this.root.replaceChildren(this.loading, ...parts);
      return;
    }
    const table = element("table", "atlas-papers");
    table.setAttribute("aria-label", this.selecting() ? "Papers selected on the map" : "Papers");
    table.setAttribute("aria-rowcount", String(count + 1));
    const header = element("tr");
    for (const column of columns) {
      const cell = element("th");
      cell.setAttribute("scope", "col");
      cell.dataset.column = column.name;
      const button = element("button", "atlas-sort");
      button.setAttribute("type", "button");
      button.dataset.column = column.name;
      if (column.phone) button.append(element("span", "atlas-wide-head", column.name), element("span", "atlas-phone-head", column.phone));
      else button.textContent = column.name;
      const state = sort && sorted === column ? (sort.descending ? "descending" : "ascending") : "none";
      cell.setAttribute("aria-sort", state);
      button.title = state === "ascending" ? `Sorted by ${column.name.toLowerCase()}: click for descending` : state === "descending" ? "Click for the table's own order" : `Sort by ${column.name.toLowerCase()}`;
      button.addEventListener("click", () => this.sortBy(column.name));
      cell.append(button);
      header.append(cell);
    }
    const thead = element("thead");
    thead.append(header);
    const body = element("tbody");
    for (let j = start; j < end; j++) {
      const k = order ? order[j] : j;
      const i = rows[k], position = positions[k];
      const tr = element("tr");
      tr.dataset.row = String(i);
      tr.setAttribute("aria-rowindex", String(j + 2));
      if (i === this.opened) tr.setAttribute("aria-selected", "true");
      columns.forEach((column, c) => {
        const cell = element("td");
        const text = column.text(i, position);
        if (c === 0) {
          const open = element("button", "atlas-row-title", text);
          open.setAttribute("type", "button");
          cell.append(open);
        } else if (column.bar) {
          const bar = element("span", "atlas-cell-bar");
          bar.style.setProperty("--share", String(Math.max(0, Math.min(1, column.bar.value(position) / column.bar.top))));
          cell.append(bar, element("span", "atlas-cell-number", text));
        } else {
          cell.textContent = text;
        }
        cell.dataset.column = column.name;
        tr.append(cell);
      });
      tr.addEventListener("click", () => this.openRow(i));
      body.append(tr);
    }
    table.append(thead, body);
    const scroller = element("div", "atlas-table-scroll");
    scroller.append(table);
    parts.push(scroller);
    if (count > size) {
      const pager = element("div", "atlas-pager");
      const back = /** @type {HTMLButtonElement} */ (element("button", "atlas-table-button", "← Previous"));
      back.setAttribute("type", "button");
      back.disabled = this.page === 0;
      back.addEventListener("click", () => this.turn(-1));
      const forward = /** @type {HTMLButtonElement} */ (element("button", "atlas-table-button", "Next →"));
      forward.setAttribute("type", "button");
      forward.disabled = this.page >= pages - 1;
      forward.addEventListener("click", () => this.turn(1));
      const where = element("p", "atlas-caption", `Papers ${number(start + 1)}–${number(end)} of ${number(count)} · page ${number(this.page + 1)} of ${number(pages)}. Select a row to read the paper; the CSV download below has them all.`);
      pager.append(back, where, forward);
      parts.push(pager);
    } else {
      parts.push(element("p", "atlas-caption", "Select a row to read the paper."));
    }
    this.root.replaceChildren(this.loading, ...parts);
  }

  /** @param {number} step */
  turn(step) {
    this.page += step;
    this.draw(); // the focus stays on the button pressed (`keepFocus`) ...
    const title = /** @type {HTMLElement|null} */ (this.root.querySelector(".atlas-table-title"));
    if (title) title.scrollIntoView({ block: "nearest" });
    // ... or, at the last or first page, where it is disabled, goes to the other one.
    const [back, forward] = /** @type {HTMLButtonElement[]} */ ([...this.root.querySelectorAll(".atlas-pager .atlas-table-button")]);
    const [pressed, other] = step > 0 ? [forward, back] : [back, forward];
    if (pressed && pressed.disabled && document.activeElement === title && other) other.focus({ preventScroll: true });
  }

  /** By this column ascending, then descending, then the table's own order again. @param {string} name */
  sortBy(name) {
    if (!this.sort || this.sort.column !== name) this.sort = { column: name, descending: false };
    else if (!this.sort.descending) this.sort = { column: name, descending: true };
    else this.sort = null;
    this.draw(); // the focus stays on the column's button (`keepFocus`)
  }

  /** @param {number} row */
  openRow(row) {
    this.markOpened(row);
    this.trigger("click", { row, map: this.view ? this.view.points : "" });
  }

  destroy() {
    if (this.stop) this.stop();
    if (LINK.table === this) LINK.table = null;
    this.root.remove();
  }
}

const COLLATOR = new Intl.Collator("en", { sensitivity: "base", numeric: true });
/** @param {string} a @param {string} b */
function collate(a, b) {
  return COLLATOR.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The listed rows' order by a column (ties in the table's own order). @param {number[]} rows
 * @param {number[]} positions @param {Column} column @param {boolean} descending */
function sortedOrder(rows, positions, column, descending) {
  const keys = new Float64Array(rows.length);
  for (let k = 0; k < rows.length; k++) keys[k] = column.key(rows[k], positions[k]);
  const order = Uint32Array.from({ length: rows.length }, (_, k) => k);
  const sign = descending ? -1 : 1;
  return order.sort((a, b) => sign * (keys[a] - keys[b]) || a - b);
}
