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
      item.addEventListener("click", () => pickKey(inst, /** @type {KeyPick} */ (entry.pick), entry.on));
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
    all.addEventListener("click", () => pickKey(inst, { [kind]: null }, false));
    inst.legend.appendChild(all);
  }
  inst.legend.hidden = list.length === 0;
}

// A click on an entry of the key (or "Show all"). A theme the view lets the browser show
// (`key_in_browser`: no theme, topic or paper chosen, no search by meaning) is shown here, and such a
// theme shown all again too while the map, the topic panel and the papers table still hold the view
// before it: the link written (a new history entry), the server told in the task before they draw it
// (as the panel opens a topic), so the server draws only what it owns (the sidebar's filter, the
// header's sentence, the downloads). Any other pick is the server's to show.
/** @param {AtlasMap} inst @param {KeyPick} chosen what the entry shows alone (null: "Show all") @param {boolean} on it is shown alone now */
function pickKey(inst, chosen, on) {
  const pick = { ...chosen, map: inst.pointsUrl };
  const id = chosen.theme;
  const shown = inst.keyTheme;
  if (shown && (id === null || (on && id === shown.id))) {
    const held = [LINK.panel, LINK.table].every((part) => part && part.keyTheme && part.keyTheme.id === shown.id);
    if (held) return showKeyTheme(inst, pick, null);
  }
  const summary = LINK.panel && LINK.panel.summary;
  const topics = summary && typeof id === "number" ? summary.topics.filter((topic) => topic.theme === id) : [];
  // The server's `key_in_browser` is of its last view state; a topic opened in the panel since is not.
  const local = inst.received && inst.received.key_in_browser && !shown;
  if (!local || !topics.length || (LINK.topic ?? null) !== null) {
    inst.trigger("legend", pick);
    return;
  }
  showKeyTheme(inst, pick, { id: /** @type {number} */ (id), ranks: new Set(topics.map((topic) => topic.rank)) });
}

/** The browser shows `theme` (null: all again) in the map, the topic panel and the papers table.
 * @param {AtlasMap} inst @param {LegendEvent} pick @param {KeyTheme|null} theme */
function showKeyTheme(inst, pick, theme) {
  const query = queryWith(SHARED.theme_key, theme === null ? null : String(theme.id));
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

