"""End-to-end: the real app in headless Chromium (Debian's, driven by Playwright) on tiny synthetic maps."""

from __future__ import annotations

import base64
import csv
import io
import struct
import zlib
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from app.data import build_map_data
from app.nearest import nearest_papers
from app.palette import CONTEXT_COLOUR
from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import (
    CHART_IMAGE_JS,
    GRAPH,
    POINTS,
    THEME_NAMES,
    draws,
    idle,
    open_app,
    themed_map,
    tiny_map,
    wait_for_redraw,
    write_merged_map,
    write_tiny_map,
)

pytestmark = pytest.mark.browser  # the browser and page fixtures: tests/conftest.py
# Installed before any page script: remembers every WebGL context the page creates; `__liveWebgl()`
# counts those not given back (map.js asks once whether WebGL works, and gives its probe's back at once).
COUNT_WEBGL = """(() => {
    window.__webgl = [];
    window.__liveWebgl = () => window.__webgl.filter((c) => !c.isContextLost()).length;
    const original = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
        const context = original.call(this, kind, ...rest);
        if (context && /webgl/.test(kind) && !window.__webgl.includes(context)) window.__webgl.push(context);
        return context;
    };
})()"""


class App(StreamlitServer):
    """The app against one map folder, its server output kept in a log file; stopped in teardown."""

    def __init__(self, map_folder: Path, empty: Path) -> None:
        self.log = open(empty.parent / f"streamlit-{map_folder.name}.log", "w")  # noqa: SIM115 (closed in stop)
        super().__init__(map_folder, empty, log=self.log, timeout=60)

    def stop(self) -> None:
        super().stop()
        self.log.close()


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    folder = write_tiny_map(root / "tiny")
    app = App(folder, root / "no-other-maps")
    yield app, folder
    app.stop()


def link(page) -> str:
    """The address bar as the page has it (Playwright's page.url can miss a history entry pushed by a fragment run)."""
    return page.evaluate("location.href")


def wait_for_link(page, part: str, timeout: float = 30_000) -> None:
    """Wait until the address bar holds `part` (e.g. "q=diffusion")."""
    page.wait_for_function("(part) => location.href.includes(part)", arg=part, timeout=timeout)


def search_for(page, words: str) -> None:
    before = draws(page)
    box = page.get_by_role("textbox", name="Search")
    box.fill(words)
    box.press("Enter")
    wait_for_redraw(page, before)


def x_range(page) -> list[float]:
    return page.evaluate(f"document.querySelector('{GRAPH}')._fullLayout.xaxis.range.slice()")


def heading(page, prefix: str) -> str:
    locator = page.locator("h4", has_text=prefix).first
    locator.wait_for(timeout=30_000)
    return locator.inner_text()


def test_app_loads_and_shows_the_map(page, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    assert page.locator(POINTS).count() == 60
    assert page.get_by_role("heading", name="Tiny test map").is_visible()
    labels = page.locator(".atlas-label:not([hidden])").all_text_contents()
    assert labels == [
        "Graph neural networks",
        "Diffusion models",
        "Reinforcement learning",
        "Multi-view clustering",
    ]
    assert heading(page, "Papers") == "Papers · 60"


def test_search_narrows_the_view_lands_in_the_url_and_the_url_restores_it(page, browser, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    search = page.get_by_role("textbox", name="Search")
    search.fill("diffusion")
    search.press("Enter")
    wait_for_link(page, "q=diffusion")
    page.get_by_text("15 of the 60 papers of the map match the words “diffusion”").wait_for(timeout=30_000)
    assert heading(page, "Papers · 15") == "Papers · 15 · best matches first"  # not the stale header
    shared = link(page)

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    open_app(other, shared)
    assert other.get_by_role("textbox", name="Search").input_value() == "diffusion"
    other.get_by_text("15 of the 60 papers of the map match the words “diffusion”").wait_for(timeout=30_000)
    assert heading(other, "Papers · 15") == "Papers · 15 · best matches first"
    other.context.close()


def highlighted_titles(page) -> list[str]:
    """Titles of the papers the map draws in colour over the faint rest (its "highlight" trace)."""
    return page.evaluate(
        f"document.querySelector('{GRAPH}').data.find((t) => t.name === 'highlight').text.slice()"
    )


def test_a_topic_filter_shows_exactly_its_papers_and_search_words_are_highlighted(page, tiny_app):
    app, folder = tiny_app
    papers = read_map(folder).papers
    diffusion = papers[papers["topic_id"] == 1]
    open_app(page, app.url)
    before = draws(page)
    page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first.click()
    page.get_by_role("option", name=f"Diffusion models ({len(diffusion)})").click()
    page.keyboard.press("Escape")  # close the list of options
    wait_for_redraw(page, before)
    page.get_by_text(f"Showing the {len(diffusion)} papers in the topic “Diffusion models”").wait_for(
        timeout=30_000
    )
    assert sorted(highlighted_titles(page)) == sorted(diffusion["title"])  # no unassigned paper among them
    assert heading(page, f"Papers · {len(diffusion)}") == f"Papers · {len(diffusion)}"
    search_for(page, "denoising")
    page.get_by_text(
        f"{len(diffusion)} of the {len(diffusion)} papers in the topic “Diffusion models” match the words “denoising”"
    ).wait_for(timeout=30_000)
    page.wait_for_url(lambda address: "q=denoising" in address and "topics=1" in address, timeout=30_000)
    open_app(page, page.url + f"&paper={diffusion['doc_id'].iloc[0]}")  # the shared link, a paper opened
    mark = page.locator(".atlas-abstract mark", has_text="denoising").first
    mark.wait_for(timeout=30_000)
    assert page.locator(".atlas-panel-paper mark").all_text_contents() == ["denoising"]  # that word alone
    colour = mark.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")  # the matched word is marked
    assert page.get_by_text("$O(n)$").count() >= 1  # the rest of the abstract as written, no LaTeX


def point_position(page, row: int) -> list[float]:
    """Screen position of the paper in `row` of papers.parquet (tiny maps: doc_id f"doc{row:04d}")."""
    return page.evaluate(
        """([selector, row]) => {
            const gd = document.querySelector(selector);
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return [r.left + gd._fullLayout.xaxis.l2p(gd.atlasTable.x[row]),
                    r.top + gd._fullLayout.yaxis.l2p(gd.atlasTable.y[row])];
        }""",
        [GRAPH, row],
    )


def click_paper(page, row: int) -> None:
    """Hover the paper in `row` until its label shows, click it, and wait for its link."""
    page.mouse.move(*point_position(page, row))
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    page.mouse.down()
    page.mouse.up()
    wait_for_link(page, f"paper=doc{row:04d}")


# The faint image under a search's hits, decoded as the browser shows it: its colour and opacity at
# each of `spots` (data coordinates), as [r, g, b, a].
READ_CONTEXT = (
    "async ([graph, spots]) => {\n"
    + CHART_IMAGE_JS
    + """
    const {image, width, height, data} = await chartImage(graph);
    return spots.map(([x, y]) => {
        const px = Math.floor(((x - image.x) / image.sizex) * width);
        const py = Math.floor(((image.y - y) / image.sizey) * height);
        const at = (py * width + px) * 4;
        return Array.from(data.slice(at, at + 4));
    });
}"""
)

PNG_BYTES = """async (graph) => {
    const blob = await (await fetch(document.querySelector(graph).layout.images[0].source)).blob();
    return await new Promise((resolve) => {
        const reader = new FileReader();
        reader.onload = () => resolve(String(reader.result).split(',')[1]);
        reader.readAsDataURL(blob);
    });
}"""


def test_the_papers_a_search_leaves_out_are_drawn_faintly_in_their_places(page, tiny_app):
    app, folder = tiny_app
    open_app(page, app.url)
    search_for(page, "diffusion")
    papers = read_map(folder).papers
    spots = papers[["x", "y"]].to_numpy()
    corner = [
        float(spots[:, 0].min() - 0.02 * np.ptp(spots[:, 0])),
        float(spots[:, 1].max() + 0.02 * np.ptp(spots[:, 1])),
    ]
    shown = page.evaluate(READ_CONTEXT, [GRAPH, [*spots.tolist(), corner]])
    *at_papers, at_corner = shown
    context = [int(CONTEXT_COLOUR[k : k + 2], 16) for k in (1, 3, 5)]
    for rgba in at_papers:  # every paper's place, in the context colour at 0.8 (fewer than 5,000 papers)
        assert all(abs(a - b) <= 2 for a, b in zip(rgba, [*context, 204], strict=True)), rgba
    assert at_corner[3] == 0  # and nothing where no paper is
    # A valid PNG to the letter, as stricter decoders than Chromium's read it (every chunk's CRC, the
    # zlib stream's Adler-32 and end): what Firefox and Safari would refuse shows nothing there.
    png = base64.b64decode(page.evaluate(PNG_BYTES, GRAPH))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = png_chunks(png[8:])
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    assert list(chunks) == [b"IHDR", b"IDAT", b"IEND"]
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (4 * width + 1)


def png_chunks(body: bytes) -> dict[bytes, bytes]:
    """A PNG's chunks after its signature, by kind (IDAT's parts joined), each one's CRC checked."""
    at, chunks = 0, {}
    while at < len(body):
        (length,) = struct.unpack(">I", body[at : at + 4])
        kind, data = body[at + 4 : at + 8], body[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", body[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + data), kind
        chunks[kind] = chunks.get(kind, b"") + data
        at += 12 + length
    return chunks


def test_clicking_a_point_opens_the_paper(page, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    click_paper(page, 9)
    assert heading(page, "Diffusion study 9") == "Diffusion study 9"


def test_after_a_search_clicks_answer_on_the_highlighted_papers_and_the_drag_tool_carries_over(
    page, tiny_app
):
    """With a search the map shows its second chart, the highlighted papers only: a click there opens the
    paper under the pointer, and the reader's drag tool and zoom go with them from one chart to the other."""
    app, _ = tiny_app
    open_app(page, app.url)
    page.locator(f"{GRAPH} .modebar-btn[data-val='select']").click()  # Box Select, on the whole map
    zoom_in(page, 1)  # towards topic 1, up and to the right
    page.wait_for_timeout(300)
    zoomed = x_range(page)
    search_for(page, "diffusion")
    traces = page.evaluate(f"document.querySelector('{GRAPH}')._fullData.map((t) => [t.name, t.x.length])")
    assert traces == [["highlight", 15]]  # topic 1's 15 papers hold the word; nothing else is drawn
    assert page.evaluate(f"document.querySelector('{GRAPH}')._fullLayout.dragmode") == "select"
    assert x_range(page) == pytest.approx(zoomed)
    page.locator(f"{GRAPH} .modebar-btn[data-val='pan']").click()
    click_paper(page, 9)
    assert heading(page, "Diffusion study 9") == "Diffusion study 9"
    search_for(page, "")  # the whole map again, as the reader left the other chart: pan tool, same zoom
    names = page.evaluate(f"[...new Set(document.querySelector('{GRAPH}')._fullData.map((t) => t.name))]")
    assert names == ["papers"]
    assert page.evaluate(f"document.querySelector('{GRAPH}')._fullLayout.dragmode") == "pan"
    assert x_range(page) == pytest.approx(zoomed)


def test_a_box_selection_on_the_map_fills_the_table(page, tiny_app):
    app, folder = tiny_app
    open_app(page, app.url)
    papers = read_map(folder).papers
    box = (0.6, 0.6, 3.6, 3.6)  # data coordinates around topic 1's cluster at (2, 2)
    inside = papers[papers.x.between(box[0], box[2]) & papers.y.between(box[1], box[3])]
    assert 10 <= len(inside) < 60
    page.locator(".modebar-btn[data-val='select']").first.click()  # the map's Box Select tool
    corners = page.evaluate(
        """([x0, y0, x1, y1]) => {
            const gd = document.querySelector('.atlas-map-graph');
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            const px = (v) => r.left + xa.l2p(v), py = (v) => r.top + ya.l2p(v);
            return [px(x0), py(y0), px(x1), py(y1)];
        }""",
        list(box),
    )
    page.mouse.move(corners[0], corners[1])
    page.mouse.down()
    page.mouse.move((corners[0] + corners[2]) / 2, (corners[1] + corners[3]) / 2, steps=5)
    page.mouse.move(corners[2], corners[3], steps=5)
    page.mouse.up()
    assert heading(page, "Selected on the map") == f"Selected on the map · {len(inside)}"
    button = page.get_by_role("button", name=f"Download these {len(inside)} papers (CSV)")
    button.wait_for(timeout=30_000)
    before = draws(page)
    page.get_by_role("button", name="Clear selection").click()
    heading(page, "Papers · 60")
    wait_for_redraw(page, before)
    assert page.evaluate(f"(document.querySelector('{GRAPH}').layout.selections || []).length") == 0


def test_download_returns_the_rows_in_view_as_csv(page, tiny_app):
    app, folder = tiny_app
    open_app(page, app.url + "?topics=2&unassigned=hide")
    button = page.get_by_role("button", name="Download these 13 papers (CSV)")
    button.wait_for(timeout=30_000)
    with page.expect_download(timeout=30_000) as download_info:
        button.click()
    raw = Path(download_info.value.path()).read_bytes()
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    papers = read_map(folder).papers
    assert {r["doc_id"] for r in rows} == set(papers.loc[papers.topic_id == 2, "doc_id"])
    assert {r["topic"] for r in rows} == {"Reinforcement learning"}
    assert download_info.value.suggested_filename == "tiny-view.csv"


def test_hostile_titles_and_topic_names_show_as_typed_and_run_no_script(page, tmp_path):
    titles = [
        '<img src=x onerror="window.__xss=1;alert(1)">',
        "<script>window.__xss=2;alert(2)</script>",
        '<b onmouseover="alert(3)">bold</b> $x$ **y** [z](javascript:alert(4))',
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<b>bold</b>",
    ]
    titles += [f"Paper {i}" for i in range(len(titles), 60)]
    labels = [
        '<img src=x onerror="window.__xss=3;alert(5)">',
        "<i>B</i>",
        "C & D",
        '<a href="javascript:alert(6)">D</a>',
    ]
    folder = write_tiny_map(tmp_path / "hostile", titles=titles, labels=labels)
    app = App(folder, tmp_path / "none")
    try:
        open_app(page, app.url + "?paper=doc0000")
        page.get_by_role("heading", name=titles[0]).wait_for(timeout=30_000)  # shown as text
        annotations = page.locator(".atlas-label:not([hidden])").all_text_contents()
        assert (
            annotations[0] == labels[0] and "<i>B</i>" in annotations and labels[3] in annotations
        )  # as typed
        for row in range(6):  # hover each hostile point: Plotly draws its title as typed
            page.mouse.move(*point_position(page, row))
            hover = page.locator(f"{GRAPH} .hoverlayer .hovertext").first
            hover.wait_for(timeout=10_000)
            shown = hover.text_content()
            assert titles[row][:20] in shown.replace("\n", "") or titles[row][:20] in " ".join(
                hover.locator("tspan").all_text_contents()
            )
            page.mouse.move(5, 5)
        page.goto(app.url + "?paper=doc0001")
        page.get_by_role("heading", name=titles[1]).wait_for(timeout=30_000)
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=60_000
        )
        page.wait_for_timeout(500)
        assert page.dialogs == []
        assert page.evaluate("window.__xss") is None
        assert page.locator('img[src="x"]').count() == 0
        assert page.evaluate("[...document.scripts].some(s => s.textContent.includes('__xss'))") is False
        assert page.locator("b[onmouseover], a[href^='javascript']").count() == 0
        assert page.locator(f"{GRAPH} b:text-is('bold')").count() == 0
        page.locator(f"{NEAREST} .atlas-near-title").first.wait_for(timeout=30_000)
        listed = page.locator(f"{NEAREST} .atlas-near-title").all_text_contents()
        assert [t for t in listed if t in titles[:6]]  # the nearest papers' hostile titles, as typed
        assert page.locator(f"{NEAREST} img, {NEAREST} b, {NEAREST} script, {NEAREST} a").count() == 0
    finally:
        app.stop()


@pytest.fixture(scope="module")
def webgl_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-webgl")
    folder = write_tiny_map(root / "big", n=1500)  # over 1,000 papers: the map draws with WebGL
    app = App(folder, root / "no-other-maps")
    yield app
    app.stop()


def test_two_charts_and_their_webgl_setups_survive_searches_filters_and_fifty_interactions(
    browser, webgl_app
):
    """The map is two charts in one place (every paper; the highlighted ones), each made once (the
    highlighted one ahead, right after the first drawing, so that the first search does not wait for
    Plotly's WebGL set-up): searches, filters and zooms redraw them, never make new ones
    or new WebGL contexts."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(COUNT_WEBGL)
    charts = ".atlas-map-chart"
    try:
        open_app(page, webgl_app.url)
        page.evaluate(f"document.querySelectorAll('{charts}').forEach((c) => (c.__original = true))")
        topic_list = ".atlas-panel"  # the topic panel beside the map
        page.locator(topic_list).first.wait_for(timeout=30_000)  # drawn after the map on a busy machine
        page.evaluate(f'document.querySelector("{topic_list}").__original = true')
        # Plotly's scattergl: a drawing and a selection layer a chart; the highlighted papers' chart is
        # made ahead, hidden, with the first drawing
        assert page.evaluate("window.__liveWebgl()") == 4
        assert page.evaluate(f"document.querySelectorAll('{GRAPH}').length") == 1  # the other one hidden
        canvases = page.evaluate(f"document.querySelectorAll('{charts} canvas').length")
        search_for(page, "diffusion")  # the highlighted papers drawn in the chart made ahead
        contexts = page.evaluate("window.__liveWebgl()")
        assert contexts == 4
        assert page.evaluate(f"document.querySelectorAll('{charts} canvas').length") == canvases
        for words in ("policy", "graph"):  # more searches: highlights redrawn, no new chart
            search_for(page, words)
            assert page.evaluate(f"document.querySelector('{GRAPH}').__original") is True
        assert page.evaluate(f"document.querySelectorAll('{GRAPH}').length") == 1  # one chart shown
        assert page.evaluate(f"[...document.querySelectorAll('{charts}')].every((c) => c.__original)") is True
        assert page.evaluate(f'document.querySelector("{topic_list}").__original') is True  # not remounted
        highlight = page.evaluate(
            f"document.querySelector('{GRAPH}')._fullData.filter(t => t.name === 'highlight' && t.visible)"
            ".reduce((n, t) => n + t.x.length, 0)"
        )
        assert highlight == 375  # "graph": topic 0 is every fourth paper

        # zoom with the mouse wheel, then change a filter: the zoom stays
        zoom_in(page, 3, at=(0.7, 0.3))
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}')._fullLayout.xaxis.range[1] - "
            f"document.querySelector('{GRAPH}')._fullLayout.xaxis.range[0] < 6",
            timeout=10_000,
        )
        zoomed = x_range(page)
        before = draws(page)
        page.get_by_role("switch", name="Show unassigned papers").click(force=True)
        wait_for_redraw(page, before)
        assert x_range(page) == pytest.approx(zoomed)

        for turn in range(50):  # fifty more view changes: still the same charts and contexts
            # typed once the last is answered (1 run in about 25 had a search draw nothing in 30 s, here and at 3fad51b)
            idle(page)
            search_for(page, ("diffusion", "policy", "clustering", "graph nodes", "")[turn % 5])
        assert page.evaluate(f"[...document.querySelectorAll('{charts}')].every((c) => c.__original)") is True
        assert page.evaluate(f"document.querySelectorAll('{charts}').length") == 2
        assert page.evaluate("window.__liveWebgl()") == contexts
        assert page.evaluate(f"document.querySelectorAll('{charts} canvas').length") == canvases
        assert x_range(page) == pytest.approx(zoomed)
    finally:
        context.close()


def test_an_opened_paper_far_outside_the_view_is_brought_into_sight(page, tmp_path):
    atlas = tiny_map(600)  # 500 papers or more: the opening view leaves out the outermost 0.2%
    atlas.papers.loc[0, ["x", "y"]] = [400.0, -400.0]  # a detached strand, far from everything
    write_map(tmp_path / "far", atlas)
    app = App(tmp_path / "far", tmp_path / "none")
    try:
        open_app(page, app.url)
        assert x_range(page)[1] < 10  # the opening view is the mass of the map, not the strand
        assert page.locator(".atlas-ring:not(.atlas-near):not([hidden])").count() == 0
        open_app(page, app.url + "?paper=doc0000")
        page.wait_for_function(f"() => document.querySelector('{GRAPH}')._fullLayout.xaxis.range[1] >= 400")
        page.locator(".atlas-ring:not(.atlas-near):not([hidden])").wait_for(
            timeout=10_000
        )  # ringed where it lies
    finally:
        app.stop()


@pytest.fixture(scope="module")
def themed_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("themed")
    write_map(root / "themed", themed_map())  # topics 1 and 2, 0 and 3 in two themes
    app = App(root / "themed", root / "no-other-maps")
    app.folder = root / "themed"
    yield app
    app.stop()


def zoom_in(page, notches: int, *, at=(0.75, 0.25)) -> None:
    """Click the map (so the wheel zooms it, not the page), then scroll up `notches` times over `at`."""
    box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
    page.mouse.click(box["x"] + 4, box["y"] + box["height"] - 4)  # an empty corner: opens nothing
    page.mouse.move(box["x"] + box["width"] * at[0], box["y"] + box["height"] * at[1])
    before = x_range(page)
    for _ in range(notches):
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(150)
    page.wait_for_function(
        f"(before) => document.querySelector('{GRAPH}')._fullLayout.xaxis.range[1] !== before[1]", arg=before
    )


def test_theme_names_with_the_largest_topics_on_the_whole_map_and_topic_names_zoomed_in(page, themed_app):
    open_app(page, themed_app.url)
    labels = ".atlas-label:not([hidden])"
    themes = page.locator(".atlas-theme:not([hidden])").all_text_contents()
    assert sorted(themes) == sorted(THEME_NAMES)  # as typed, not markup
    assert len(page.locator(labels).all_text_contents()) > 2  # topic names fill the space between them
    zoom_in(page, 8)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.atlas-label:not([hidden])')]"
        ".some(e => e.textContent === 'Diffusion models')",
        timeout=10_000,
    )
    assert page.locator(".atlas-theme:not([hidden])").count() == 0  # zoomed in: topic names only
    box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] * 0.25)
    for _ in range(8):  # and back out: the theme names return
        page.mouse.wheel(0, 300)
        page.wait_for_timeout(150)
    page.wait_for_function("() => document.querySelectorAll('.atlas-theme:not([hidden])').length === 2")
    open_app(page, f"{themed_app.url}?topics=0")  # the graph papers alone: the theme holding them
    page.wait_for_function("() => document.querySelectorAll('.atlas-theme:not([hidden])').length === 1")
    assert page.locator(".atlas-theme:not([hidden])").all_text_contents() == ["Learning on structure"]


def marker_colours(page) -> dict[str, str]:
    """Topic name -> the colour its papers are drawn in (from the chart's own traces)."""
    return page.evaluate(
        f"""() => {{
            const gd = document.querySelector('{GRAPH}');
            const out = {{}};
            gd._fullData.filter((t) => t.name === 'papers' && t.visible === true).forEach((t) => {{
                t.hovertext.forEach((text, j) => (out[text.split('<br>')[0]] = t.marker.color[j]));
            }});
            return out;
        }}"""
    )


def legend(page) -> list[tuple[str, str]]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.atlas-legend-item')].map(
            (e) => [e.textContent, getComputedStyle(e.querySelector('.atlas-swatch')).backgroundColor])"""
    )


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_topics_are_shades_of_their_theme_and_the_map_can_be_coloured_by_year(page, themed_app):
    import numpy as np

    from app.palette import HUE_TURN, oklab_of

    open_app(page, themed_app.url)
    colours = marker_colours(page)

    def hue(name):  # as a reader sees it: OKLab's hue
        _, a, b = oklab_of([colours[name]])[0]
        return float(np.degrees(np.arctan2(b, a)))

    def gap(a, b):
        return abs((a - b + 180) % 360 - 180)

    assert len(set(colours.values())) == 5  # four topics and the unassigned grey
    assert gap(hue("Diffusion models"), hue("Reinforcement learning")) <= 2 * HUE_TURN + 1  # one theme
    assert gap(hue("Graph neural networks"), hue("Multi-view clustering")) <= 2 * HUE_TURN + 1
    assert gap(hue("Diffusion models"), hue("Graph neural networks")) > 40
    key = legend(page)
    assert [k[0] for k in key] == list(THEME_NAMES)
    assert key[0][1] == rgb(colours["Diffusion models"])  # the key shows the theme's hue, as drawn

    before = draws(page)
    page.get_by_role("combobox", name="Colour by").click()
    page.get_by_role("option", name="Year").click()
    wait_for_redraw(page, before)
    wait_for_link(page, "colour=year")
    key = legend(page)
    assert [k[0] for k in key] == ["2023", "2024"]
    drawn = page.evaluate(
        f"""() => document.querySelector('{GRAPH}')._fullData
            .filter((t) => t.name === 'papers' && t.visible === true)
            .flatMap((t) => t.marker.color)"""
    )
    by_colour = {rgb(c): drawn.count(c) for c in set(drawn)}
    # One trace, a colour per point: a box selection or a pan redraws one WebGL batch, not one a colour.
    assert page.evaluate(f"document.querySelector('{GRAPH}')._fullData.length") == 1
    assert by_colour == {key[0][1]: 40, key[1][1]: 20}  # papers 0, 3, 6, ... are from 2024

    other = page.context.new_page()  # the colouring is in the link
    open_app(other, link(page))
    assert [k[0] for k in legend(other)] == ["2023", "2024"]
    other.close()


def test_an_opened_paper_and_topic_are_read_beside_the_map_at_1400_by_900(browser, themed_app):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        open_app(page, themed_app.url)
        page.mouse.move(*point_position(page, 9))
        page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
        page.mouse.down()
        page.mouse.up()
        wait_for_link(page, "paper=doc0009")
        title = page.locator("h4", has_text="Diffusion study 9").first
        title.wait_for(timeout=30_000)
        graph = page.locator(GRAPH).bounding_box()
        seen = title.bounding_box()
        assert seen["x"] > graph["x"] + graph["width"] and seen["y"] + seen["height"] < 900  # beside it
        abstract = page.get_by_text("We study diffusion with denoising in paper 9.")
        box = abstract.bounding_box()
        assert (
            box["y"] + box["height"] < 900 and page.evaluate("window.scrollY") == 0
        )  # read without scrolling
        assert page.locator(".atlas-near:not([hidden])").count() == 8  # its nearest papers ringed on the map

        page.get_by_role("button", name="Open topic").click()
        wait_for_link(page, "topic=1")
        heading(page, "Diffusion models")
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}')._fullData.some((t) => t.name === 'highlight' && t.visible === true)"
        )
        highlighted = page.evaluate(
            f"document.querySelector('{GRAPH}')._fullData.find((t) => t.name === 'highlight').x.length"
        )
        assert highlighted == int(
            (tiny_map().papers["topic_id"] == 1).sum()
        )  # the topic stands out, the rest dimmed
        # The paper's rings go with it (the map's next update may land a moment after the highlight).
        page.wait_for_function("() => document.querySelectorAll('.atlas-near:not([hidden])').length === 0")
        page.get_by_role("button", name="Back to the topic list").click()
        heading(page, "Topics")
        page.wait_for_function("() => !location.search.includes('topic=')")
    finally:
        context.close()


NEAREST = '.atlas-panel-paper ol[aria-label="Nearest papers"]'  # an opened paper's (js/panel.js, drawPaper)


def test_an_opened_paper_s_nearest_papers_are_listed_from_the_map_and_each_opens(page, themed_app):
    data = build_map_data("themed", themed_app.folder)
    open_app(page, themed_app.url + "?paper=doc0009")
    heading(page, "Diffusion study 9")
    rows, similarity = nearest_papers(data, 9)
    differ = len(set(data.topic_ids[rows])) > 1
    buttons = page.locator(f"{NEAREST} .atlas-paper")
    buttons.first.wait_for(timeout=30_000)
    shown = [
        (
            b.locator(".atlas-near-title").text_content(),
            b.locator(".atlas-near-topic").all_text_contents(),
            b.locator(".atlas-near-similarity").text_content(),
            b.get_attribute("aria-label"),
        )
        for b in buttons.all()
    ]
    expected = []
    for row, s in zip(rows, similarity, strict=True):
        title, topic = data.papers["title"].iloc[row], data.label(int(data.topic_ids[row]))
        said = str(Decimal(round(s, 4)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))  # as toFixed(2)
        expected.append(
            (
                title,
                [topic] if differ else [],
                said,
                f"{title}{f', {topic}' if differ else ''}, similarity {said}",
            )
        )
    assert shown == expected  # nearest first, each title as written, its similarity as the map holds it
    # the same papers ringed on the map
    assert page.locator(".atlas-near:not([hidden])").count() == len(rows)
    buttons.nth(1).focus()  # the keyboard opens one as a click does
    page.keyboard.press("Enter")
    second = data.doc_ids[rows[1]]
    wait_for_link(page, f"paper={second}")
    heading(page, str(data.papers["title"].iloc[rows[1]]))
    page.wait_for_function(
        "(title) => ![...document.querySelectorAll('.atlas-panel-paper .atlas-near-title')]"
        ".some((t) => t.textContent === title)",
        arg=str(data.papers["title"].iloc[rows[1]]),
    )  # its own nearest papers now, which it is not one of


def test_back_and_forward_step_through_views(page, themed_app):
    open_app(page, themed_app.url + "?q=diffusion&paper=doc0005")
    heading(page, "Diffusion study 5")
    page.get_by_role("button", name="Back to the topic list").click()  # a step: the paper closes
    heading(page, "Topics")
    page.wait_for_function("() => location.search === '?q=diffusion'")
    search_for(page, "policy")  # another step
    wait_for_link(page, "q=policy")

    page.go_back()  # the search undone, the paper still closed
    page.wait_for_function("() => location.search === '?q=diffusion'")
    page.get_by_text("15 of the 60 papers of the map match").wait_for(timeout=30_000)
    page.wait_for_function(
        "() => document.querySelector('input[aria-label=\"Search\"]').value === 'diffusion'"
    )
    page.go_back()  # the paper open again
    heading(page, "Diffusion study 5")
    assert "paper=doc0005" in link(page)
    page.go_forward()
    page.go_forward()
    page.wait_for_function("() => location.search === '?q=policy'")
    page.wait_for_function("() => document.querySelector('input[aria-label=\"Search\"]').value === 'policy'")
    heading(page, "Topics")


def test_zoom_and_pan_are_in_the_link_and_reset_view_resets_them(page, themed_app):
    open_app(page, themed_app.url)
    opening = x_range(page)
    box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)  # the page's wheel: without a click on the map it does not zoom
    page.wait_for_timeout(500)
    assert x_range(page) == opening and "view=" not in link(page)
    zoom_in(page, 4)
    wait_for_link(page, "view=")
    zoomed = x_range(page)
    assert zoomed[1] - zoomed[0] < (opening[1] - opening[0]) * 0.9
    search_for(page, "diffusion")  # a new history entry keeps the zoom
    wait_for_link(page, "q=diffusion")
    assert "view=" in link(page) and x_range(page) == zoomed

    other = page.context.new_page()
    open_app(other, link(page))
    restored = x_range(other)
    assert all(abs(a - b) < (zoomed[1] - zoomed[0]) * 1e-3 for a, b in zip(restored, zoomed))
    other.get_by_role("button", name="Reset view").click()
    other.wait_for_function("() => !location.search.includes('view=')", timeout=30_000)
    other.wait_for_function(
        f"(opening) => Math.abs(document.querySelector('{GRAPH}')._fullLayout.xaxis.range[0] - opening[0]) < 1e-9",
        arg=opening,
    )
    other.close()


def test_back_and_forward_lay_the_map_out_again_only_where_the_zoom_differs(page, themed_app):
    """Back and Forward show each entry's zoom (js/zoom.js, `restoreZoom`); between entries that differ
    only in what they show, the map is not laid out again (its faint image and sample stay)."""
    open_app(page, themed_app.url)
    idle(page)
    opening = x_range(page)
    search_for(page, "diffusion")  # a new entry, the same zoom
    wait_for_link(page, "q=diffusion")
    idle(page)
    page.evaluate(
        """() => { window.__relayouts = 0;
        document.querySelectorAll('.atlas-map-chart').forEach((c) => c.on('plotly_relayout', () => window.__relayouts++)); }"""
    )
    before = draws(page)
    page.go_back()  # the whole map again, the zoom unchanged
    wait_for_redraw(page, before)
    idle(page)
    assert "q=" not in link(page) and x_range(page) == opening
    assert page.evaluate("window.__relayouts") == 0  # nothing laid out again
    zoom_in(page, 4)  # the first entry now keeps a zoom; the second has none
    wait_for_link(page, "view=")
    zoomed = x_range(page)
    page.evaluate("window.__relayouts = 0")
    page.go_forward()  # the search again, at the opening view
    page.wait_for_function("() => location.search.includes('q=diffusion')", timeout=30_000)
    page.wait_for_function(
        f"(opening) => Math.abs(document.querySelector('{GRAPH}')._fullLayout.xaxis.range[0] - opening[0]) < 1e-9",
        arg=opening,
    )
    assert page.evaluate("window.__relayouts") >= 1 and zoomed != opening


@pytest.mark.parametrize("width, height", [(800, 900), (390, 844)])
def test_a_narrow_window_gives_the_map_the_width_and_cuts_no_control(browser, themed_app, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        open_app(page, themed_app.url + "?paper=doc0009")
        page.wait_for_function(
            "() => document.querySelector('[data-testid=\"stSidebar\"]').dataset.collapsed === 'true'"
        )
        graph = page.locator(GRAPH).bounding_box()
        main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
        assert graph["width"] > main["width"] - 80  # the map takes the width
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing sticks out sideways
        for name in ("Open topic", "Back to the topic list"):
            button = page.get_by_role("button", name=name)
            inner = button.evaluate("(b) => [b.scrollWidth, b.clientWidth]")
            assert inner[0] <= inner[1] + 1, name  # the label fits its button
        heading(page, "Diffusion study 9")
    finally:
        context.close()


def test_a_link_to_a_merged_and_renamed_topic_says_what_it_was(page, tmp_path):
    """Issue 21: topic 2 was "Segmentation", took in "Object detection" and now bears that name."""
    app = App(write_merged_map(tmp_path / "rebuilt"), tmp_path / "none")
    try:
        open_app(page, app.url + "?topic=2")
        assert heading(page, "Object detection") == "Object detection"
        notice = page.get_by_text("from this link was").first
        notice.wait_for(timeout=30_000)
        assert notice.inner_text() == (
            "Topic 2 from this link was “Segmentation” before the map was rebuilt; it is now "
            "“Object detection” (“Object detection” merged into it)."
        )
        page.get_by_text("Changes since the previous build").first.wait_for(timeout=30_000)
    finally:
        app.stop()


def test_renaming_a_topic_in_the_app_saves_the_edit_and_redraws_the_name(page, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_EDITING", "1")
    folder = write_tiny_map(tmp_path / "editable")
    app = App(folder, tmp_path / "no-other-maps")
    try:
        open_app(page, app.url + "?topic=2")
        assert heading(page, "Reinforcement") == "Reinforcement learning"
        page.get_by_text("Edit this topic").click()
        name = page.get_by_role("textbox", name="Name")
        name.fill("Curated RL")
        page.get_by_role("button", name="Rename topic").click()
        assert heading(page, "Curated") == "Curated RL"
        page.locator(".atlas-label:not([hidden])", has_text="Curated RL").first.wait_for(timeout=30_000)
        assert "Reinforcement learning" not in page.locator(".atlas-label:not([hidden])").all_text_contents()
        assert '"name": "Curated RL"' in (folder / "curation.json").read_text()
    finally:
        app.stop()


def test_the_edit_forms_follow_the_topics_opened_and_closed_in_the_topic_panel(page, tmp_path, monkeypatch):
    """Where editing is on, the topic panel opens and closes topics in the browser and the edit forms
    under it are the server's (a part of their own): a topic opened in place of another (its nearest
    topics) brings its own forms, its name in the Name field, and the topic list takes them away."""
    monkeypatch.setenv("ATLAS_EDITING", "1")
    app = App(write_tiny_map(tmp_path / "editable"), tmp_path / "no-other-maps")
    try:
        open_app(page, app.url)
        page.locator(".atlas-panel-list .atlas-topic[data-topic='2']").click()
        assert heading(page, "Reinforcement") == "Reinforcement learning"
        page.get_by_text("Edit this topic").click()
        page.wait_for_function(NAME_FIELD_SAYS, arg="Reinforcement learning", timeout=30_000)
        near = page.locator(".atlas-panel-topic .atlas-near-list .atlas-topic").first
        other = near.get_attribute("data-topic")
        name = near.locator(".atlas-topic-name").inner_text()
        near.click()
        assert heading(page, name[:8]) == name
        page.wait_for_function(NAME_FIELD_SAYS, arg=name, timeout=30_000)  # the open forms, the new topic's
        assert page.evaluate("location.search") == f"?topic={other}"
        page.get_by_role("button", name="Back to the topic list").click()
        page.get_by_text("Edit this topic").wait_for(state="detached", timeout=30_000)
        assert page.evaluate("location.search") == ""
    finally:
        app.stop()


# The edit forms' Name field shows `arg` (and only one such field is on the page).
NAME_FIELD_SAYS = """(name) => {
    const fields = [...document.querySelectorAll('input[aria-label="Name"]')];
    return fields.length === 1 && fields[0].value === name;
}"""
