// @ts-check
// The key under the map, and the room it takes.

// The key, a row under the chart (never over it): theme hues (topics are shades of them) or the
// values of the column the map is coloured by. Clicking an entry shows only its papers (the app sets
// the Themes filter, or the column's filter, so the counts, the table and the link follow); clicking
// it again, or "Show all", shows everything. An entry without a pick (missing values) is not a button.
/** @param {AtlasMap} inst */
function drawLegend(inst, entries) {
  const key = JSON.stringify(entries || []);
  if (key === inst.legendKey) return;
  inst.legendKey = key;
  inst.legend.replaceChildren();
  const list = entries || [];
  const isolated = list.some((entry) => entry.on);
  for (const entry of list) {
    const item = document.createElement(entry.pick ? "button" : "div");
    item.className = "atlas-legend-item";
    if (entry.pick) {
      /** @type {HTMLButtonElement} */ (item).type = "button";
      item.setAttribute("aria-pressed", String(Boolean(entry.on)));
      item.title = entry.on ? "Show all again" : "Show only these papers";
      item.addEventListener("click", () => pickKey(inst, entry));
    }
    item.classList.toggle("atlas-legend-on", Boolean(entry.on));
    item.classList.toggle("atlas-legend-off", isolated && !entry.on);
    const swatch = document.createElement("span");
    swatch.className = "atlas-swatch";
    swatch.style.background = entry.colour;
    const text = document.createElement("span");
    text.className = "atlas-legend-text";
    text.textContent = entry.text; // literal text, never markup
    item.append(swatch, text);
    inst.legend.appendChild(item);
  }
  const kind = list.map((entry) => entry.pick && Object.keys(entry.pick)[0]).find(Boolean);
  if (isolated && kind) {
    const all = document.createElement("button");
    all.type = "button";
    all.className = "atlas-legend-all";
    all.textContent = "Show all";
    all.addEventListener("click", () => inst.trigger("legend", { [kind]: null, map: inst.pointsUrl }));
    inst.legend.appendChild(all);
  }
  inst.legend.hidden = list.length === 0;
}

// A click on an entry of the key. A theme the view lets the browser show (`key_in_browser`: no theme,
// topic or paper chosen, no search by meaning) is shown here: the link written (a new history entry),
// the server told in the task before the map, the topic panel and the papers table draw it (as the
// panel opens a topic), so the server draws only what it owns (the sidebar's filter, the header's
// sentence, the downloads). Any other pick is the server's to show.
/** @param {AtlasMap} inst @param {KeyEntry} entry */
function pickKey(inst, entry) {
  const pick = { ...entry.pick, map: inst.pointsUrl };
  const id = entry.pick ? entry.pick.theme : undefined;
  const summary = LINK.panel && LINK.panel.summary;
  const topics = summary && id !== undefined ? summary.topics.filter((topic) => topic.theme === id) : [];
  const local = inst.received && inst.received.key_in_browser && !inst.keyTheme && !entry.on;
  if (!local || !topics.length || (LINK.topic ?? null) !== null) {
    inst.trigger("legend", pick);
    return;
  }
  const theme = { id: /** @type {number} */ (id), ranks: new Set(topics.map((topic) => topic.rank)) };
  const query = queryWith(SHARED.theme_key, String(id));
  pushQuery(query);
  inst.trigger("legend", { ...pick, query });
  setTimeout(() => {
    for (const part of [LINK.map, LINK.panel, LINK.table]) if (part) part.showKeyTheme(theme);
  }, 0);
}

// The charts' height: the map's, less the key's row (and the note's) under them.
/** @param {AtlasMap} inst */
function chartHeight(inst, view) {
  const rows = [inst.legend, inst.note].map((el) => (el.hidden ? 0 : Math.ceil(el.getBoundingClientRect().height)));
  return Math.max(120, view.height - rows[0] - rows[1]);
}

// A narrower window wraps the key onto more lines: the shown chart gives it the room (the other
// takes its height when it is shown, in showChart).
/** @param {AtlasMap} inst */
function followLegend(inst) {
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

