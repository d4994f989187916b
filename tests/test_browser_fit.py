"""What a reader must see whole, in Chromium: no point of the map under Plotly's toolbar, the chosen
"Colour by" option, and paper titles and change notes in the tables, on a wide screen and a phone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.data import build_map_data
from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, SEED_MAP, open_app, themed_map, tiny_map, write_merged_map

pytestmark = pytest.mark.browser  # the browser fixture: tests/conftest.py


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Start an app per map folder on demand, each once a module; all stopped at its end."""
    root = tmp_path_factory.mktemp("fit")
    running: dict[Path, StreamlitServer] = {}

    def serve(folder: Path) -> StreamlitServer:
        if folder not in running:
            running[folder] = StreamlitServer(folder, root / "no-other-maps", timeout=90)
        return running[folder]

    yield serve
    for server in running.values():
        server.stop()


# Installed before any page script: a log, per canvas, of every string painted on it (fillText), where
# (in canvas pixels: left edge, centre line, width in the font it is painted in) and inside which clip
# (the intersection of the rectangles clipped to, as glide-data-grid clips each column and, when a
# cell's lines overflow it, the cell), with the animation frame it was painted in.
PAINT_LOG = """(() => {
    const logs = new WeakMap(), states = new WeakMap();
    let frame = 0;
    const tick = () => { frame++; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    window.__painted = (canvas) => logs.get(canvas) || [];
    const P = CanvasRenderingContext2D.prototype;
    const state = (ctx) => {
        let s = states.get(ctx);
        if (!s) states.set(ctx, (s = {clip: null, saved: [], path: null}));
        return s;
    };
    const at = (ctx, x, y) => {
        const m = ctx.getTransform();
        return [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
    };
    const wrap = (name, before) => {
        const original = P[name];
        P[name] = function (...args) {
            before(this, state(this), ...args);
            return original.apply(this, args);
        };
    };
    wrap('save', (ctx, s) => s.saved.push(s.clip));
    wrap('restore', (ctx, s) => { if (s.saved.length) s.clip = s.saved.pop(); });
    wrap('beginPath', (ctx, s) => { s.path = null; });
    wrap('rect', (ctx, s, x, y, w, h) => {
        const [x0, y0] = at(ctx, x, y), [x1, y1] = at(ctx, x + w, y + h);
        s.path = {x0: Math.min(x0, x1), y0: Math.min(y0, y1), x1: Math.max(x0, x1), y1: Math.max(y0, y1)};
    });
    wrap('clip', (ctx, s) => {
        if (!s.path) return;
        const c = s.clip, p = s.path;
        s.clip = c ? {x0: Math.max(c.x0, p.x0), y0: Math.max(c.y0, p.y0), x1: Math.min(c.x1, p.x1),
                      y1: Math.min(c.y1, p.y1)} : {...p};
    });
    wrap('fillText', (ctx, s, text, x, y) => {
        const [px, py] = at(ctx, x, y), m = ctx.getTransform();
        const width = ctx.measureText(String(text)).width * m.a;
        const align = ctx.textAlign;
        const left = align === 'right' || align === 'end' ? px - width : align === 'center' ? px - width / 2 : px;
        const log = logs.get(ctx.canvas) || [];
        logs.set(ctx.canvas, log);
        log.push({frame, text: String(text), left, y: py, width, clip: s.clip});
    });
})()"""

# What a table (glide-data-grid, drawn on a canvas) shows in one column, row by row, from PAINT_LOG:
# the strings of its last painting inside that column's clip, put in rows by their centre lines.
PAINTED_COLUMN = """([frame, name]) => {
    const canvas = frame.querySelector('canvas[data-testid="data-grid-canvas"]');
    const header = [...frame.querySelectorAll('th[role="columnheader"]')].map((th) => th.textContent);
    const column = header.indexOf(name);
    if (column < 0) return {error: `no column ${name} in ${header}`};
    const log = window.__painted(canvas);
    const last = Math.max(...log.map((r) => r.frame));
    const painted = log.filter((r) => r.frame === last && r.clip);
    // The data area's columns: the distinct outer clips strings are painted in, left to right (the
    // row-select column paints none); the header row paints on a canvas of its own.
    const clips = [];
    for (const r of painted) {
        const outer = clips.find((c) => r.clip.x0 >= c.x0 - 0.5 && r.clip.x1 <= c.x1 + 0.5);
        if (!outer) clips.push({...r.clip});
        else if (r.clip.x1 - r.clip.x0 > outer.x1 - outer.x0 || r.clip.y1 - r.clip.y0 > outer.y1 - outer.y0)
            Object.assign(outer, r.clip);
    }
    clips.sort((a, b) => a.x0 - b.x0);
    const clip = clips[column];
    if (!clip) return {error: `column ${name} paints nothing`};
    const inside = painted.filter((r) => r.clip.x0 >= clip.x0 - 0.5 && r.clip.x1 <= clip.x1 + 0.5);
    // The last pass over the column: its strings go down the column (a new pass starts at the top).
    let start = 0;
    for (let k = 1; k < inside.length; k++) if (inside[k].y <= inside[k - 1].y) start = k;
    const lines = inside.slice(start);
    const rows = Number(frame.querySelector('table[role="grid"]').getAttribute('aria-rowcount')) - 1;
    const stack = frame.querySelector('.dvn-stack > div:nth-child(2)').getBoundingClientRect().height;
    const first = clip.y0 - 1;  // the rows start under the header, whose border the column's clip leaves out
    const rowHeight = Math.round((stack - first) / rows);
    const cells = [];
    for (let row = 0; first + (row + 1) * rowHeight <= clip.y1 + 0.5 && row < rows; row++) {
        const top = first + row * rowHeight, bottom = top + rowHeight;
        const own = lines.filter((r) => r.y >= top && r.y < bottom);
        const whole = own.every((r) => r.left >= r.clip.x0 - 0.5 && r.left + r.width <= r.clip.x1 + 0.5
            && r.y - 7 >= Math.max(r.clip.y0, top) - 0.5 && r.y + 7 <= Math.min(r.clip.y1, bottom) + 0.5);
        const cell = frame.querySelector(`td[aria-colindex="${column + 1}"][id$="-${row}"]`);
        cells.push({painted: own.map((r) => r.text.trim()).join(' '), whole, lines: own.length,
                    value: cell ? cell.textContent : null});
    }
    return {cells, rowHeight};
}"""


def painted_column(page, frame, name: str) -> list[dict]:
    """The cells of the column `name` of the table `frame` (a locator of its stDataFrame) that show
    entirely in the table's box, top to bottom: `painted`, the strings the grid painted in the cell
    joined by spaces (its lines when it wraps); `whole`, whether each of them lies inside its clip
    (nothing cut off at a side, the top or the bottom); `value`, the cell's text in the grid's
    accessible table (the whole value)."""
    page.wait_for_timeout(500)  # the grid's last painting
    shown = frame.evaluate(PAINTED_COLUMN.replace("([frame, name])", "(frame, name)"), name)
    assert "error" not in shown, shown
    return shown["cells"]


# Each Title and Topic cell of the papers table (js/table.js, an HTML table) as the reader sees it: its
# text (the title's button's), whether it is shown (its column not hidden), whether its text fits its
# box whole (nothing scrolled out of it sideways or below, no ellipsis, the title's button inside its
# cell) and whether the cell lies inside the table's scrolling box.
TABLE_CELLS = """(root) => {
    const box = root.querySelector('.atlas-table-scroll').getBoundingClientRect();
    return [...root.querySelectorAll('.atlas-papers tbody td')].map((td) => {
        const inner = td.querySelector('.atlas-row-title') || td;
        const cell = td.getBoundingClientRect(), own = inner.getBoundingClientRect();
        const fits = (e) => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight;
        return {
            column: td.dataset.column, text: inner.textContent, shown: cell.width > 0 && cell.height > 0,
            whole: fits(td) && fits(inner) && own.left >= cell.left - 0.5 && own.right <= cell.right + 0.5
                && getComputedStyle(inner).textOverflow !== 'ellipsis' && getComputedStyle(td).textOverflow !== 'ellipsis',
            inBox: cell.left >= box.left - 0.5 && cell.right <= box.right + 0.5,
        };
    });
}"""


def papers_table(page):
    """The papers table under the map (js/table.js), once its rows are drawn."""
    table = page.locator(".atlas-table")
    table.locator(".atlas-papers tbody tr").first.wait_for(timeout=30_000)
    table.scroll_into_view_if_needed()
    return table


def shown_cells(table, column: str) -> list[dict]:
    return [cell for cell in table.evaluate(TABLE_CELLS) if cell["column"] == column]


def corner_map(folder: Path) -> Path:
    """The tiny map with paper 0 moved to the map's top-right corner (its largest x and y)."""
    atlas = tiny_map()
    papers = atlas.papers
    papers.loc[0, ["x", "y"]] = [papers["x"].max() + 0.5, papers["y"].max() + 0.5]
    write_map(folder, atlas)
    return folder


def covered_points(page) -> tuple[list[int], dict, dict]:
    """Rows of papers.parquet whose drawn dot (its centre and radius, where Plotly puts it) meets
    the toolbar's box; the toolbar's box; the plot area's box."""
    return page.evaluate(
        """(selector) => {
            const gd = document.querySelector(selector);
            const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
            const bar = gd.querySelector('.modebar').getBoundingClientRect();
            const t = gd.atlasTable, radius = t.size / 2, under = [];
            for (let row = 0; row < t.n; row++) {
                const x = area.left + gd._fullLayout.xaxis.l2p(t.x[row]);
                const y = area.top + gd._fullLayout.yaxis.l2p(t.y[row]);
                if (x + radius > bar.left && x - radius < bar.right && y + radius > bar.top && y - radius < bar.bottom)
                    under.push(row);
            }
            return [under, bar.toJSON(), area.toJSON()];
        }""",
        GRAPH,
    )


@pytest.mark.parametrize("width, height", [(1400, 900), (390, 844)])
def test_no_point_of_the_map_lies_under_the_toolbar(browser, servers, tmp_path_factory, width, height):
    """Plotly's toolbar (pan, box and lasso select, reset) sits in a strip of its own above the plot
    area: on the seed map (two papers under it before) and on a map with a paper in its top-right corner."""
    corner = corner_map(tmp_path_factory.mktemp("corner") / "corner")
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        for folder in (SEED_MAP, corner):
            open_app(page, servers(folder).url)
            page.wait_for_selector(f"{GRAPH} .modebar-btn[data-val='select']", state="attached")
            under, bar, area = covered_points(page)
            assert bar["width"] > 50 and bar["height"] > 15  # the toolbar is there, with its buttons
            assert under == [], (folder.name, under)
            assert bar["bottom"] <= area["top"] + 0.5, (bar, area)  # above the plot area, not over it
            if folder == corner:  # the corner paper is drawn, at the plot area's top right
                papers = read_map(corner).papers
                assert int(np.argmax(papers["x"].to_numpy())) == 0
    finally:
        context.close()


def shown_choice(page) -> dict:
    """The "Colour by" box's shown value (its text input's), the width that text takes in the input's
    font, and the input's room for it (its width less its padding) and scrolled width."""
    box = page.get_by_role("combobox", name="Colour by")
    box.wait_for(timeout=30_000)
    return box.evaluate(
        """(input) => {
            const style = getComputedStyle(input);
            const context = document.createElement('canvas').getContext('2d');
            context.font = style.font;
            const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            return {text: input.value, width: context.measureText(input.value).width, room,
                    scroll: input.scrollWidth, client: input.clientWidth};
        }"""
    )


def test_the_chosen_colour_option_reads_whole_in_its_box(page, servers, tmp_path_factory):
    folder = tmp_path_factory.mktemp("themed") / "themed"
    write_map(folder, themed_map())
    url = servers(folder).url
    for query, option in (("", "Themes and topics"), ("?colour=year", "Year")):
        open_app(page, url + query)
        shown = shown_choice(page)
        assert shown["text"] == option
        assert shown["width"] <= shown["room"] and shown["scroll"] <= shown["client"], shown
        page.get_by_role("combobox", name="Colour by").click()
        options = page.get_by_role("option").all_inner_texts()
        page.keyboard.press("Escape")
        assert shown["text"] in options  # the whole option's text, no ellipsis


def test_every_title_and_topic_in_the_papers_table_reads_whole_at_1400_by_900(browser, servers):
    """The seed map's titles are long (up to 89 characters, ending in "…" where the pipeline cut a
    first sentence): each on the table's first page shows whole, wrapped onto lines, inside the table's
    box, and reads as papers.parquet has it, byte for byte; so does each paper's topic."""
    data = build_map_data("seeds", SEED_MAP)
    papers = read_map(SEED_MAP).papers
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        open_app(page, servers(SEED_MAP).url)
        table = papers_table(page)
        titles, topics = shown_cells(table, "Title"), shown_cells(table, "Topic")
        rows = min(len(papers), 50)
        assert len(titles) == len(topics) == rows
        assert [c["text"] for c in titles] == papers["title"].tolist()[:rows]  # the map's papers, in order
        names = [data.label(int(t)) for t in papers["topic_id"].tolist()[:rows]]
        assert [c["text"] for c in topics] == names
        for cell in titles + topics:
            assert cell["shown"] and cell["whole"] and cell["inBox"], cell
        heights = table.evaluate(
            "(root) => [...root.querySelectorAll('tbody td[data-column=\"Title\"] .atlas-row-title')]"
            ".map((b) => b.offsetHeight / parseFloat(getComputedStyle(b).lineHeight))"
        )
        assert max(heights) >= 1.9  # long titles wrap onto a second line
    finally:
        context.close()


def test_every_cell_of_the_changes_table_reads_whole_at_1400_by_900(browser, servers, tmp_path_factory):
    """A rebuilt map's "Changes since the previous build" table: each topic's name and what became of
    it (a merge names every topic it took in) is painted whole, as the table holds it."""
    folder = write_merged_map(tmp_path_factory.mktemp("merged") / "merged")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.add_init_script(PAINT_LOG)
    try:
        open_app(page, servers(folder).url)
        page.get_by_text("Changes since the previous build").click()
        table = page.locator("[data-testid='stDataFrame']", has=page.locator("th", has_text="Change")).last
        table.wait_for(timeout=30_000)
        table.scroll_into_view_if_needed()
        for column in ("Topic", "Change"):
            cells = painted_column(page, table, column)
            assert len(cells) == 5, cells  # every topic of the map and the one gone
            for cell in cells:
                assert cell["whole"] and cell["painted"] == cell["value"], (column, cell)
        assert any("merged into it" in c["value"] for c in cells)  # the long ones are there
    finally:
        context.close()


def test_on_a_phone_the_papers_table_shows_titles_and_topics_whole_without_scrolling_sideways(
    browser, servers
):
    """At 390x844 the papers table is the title (headed "Paper") and the topic only, each cell whole
    (wrapped) inside the screen, the page not scrolling sideways; tapping a row opens that paper."""
    papers = read_map(SEED_MAP).papers
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        open_app(page, servers(SEED_MAP).url)
        table = papers_table(page)
        headers = table.locator(".atlas-papers th:visible").all_inner_texts()
        assert [h.strip() for h in headers] == ["Paper", "Topic"]  # the title, and its topic
        cells = table.evaluate(TABLE_CELLS)
        assert {c["column"] for c in cells if c["shown"]} == {"Title", "Topic"}
        assert {c["column"] for c in cells if not c["shown"]} >= {"Source"}  # the rest are hidden
        titles = [c for c in cells if c["column"] == "Title"]
        assert [c["text"] for c in titles] == papers["title"].tolist()[: len(titles)]
        for cell in cells:
            if cell["shown"]:
                assert cell["whole"] and cell["inBox"], cell
        box = table.locator(".atlas-table-scroll").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert table.locator(".atlas-table-scroll").evaluate("(e) => e.scrollWidth <= e.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        first = table.locator(".atlas-papers tbody tr").first
        row = int(first.get_attribute("data-row"))
        first.locator("td[data-column='Topic']").click()
        page.wait_for_function("() => location.href.includes('paper=')", timeout=30_000)
        assert f"paper={papers['doc_id'].iloc[row]}" in page.evaluate("location.href")
    finally:
        context.close()
