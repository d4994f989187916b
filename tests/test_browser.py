"""End-to-end: the real app in headless Chromium (Debian's, driven by Playwright) on tiny synthetic maps."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from pipeline.artifacts import read_map, write_map
from tests.app_fixtures import tiny_map, write_tiny_map
from tests.devserver import StreamlitServer

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
GRAPH = ".atlas-map-graph"
POINTS = f"{GRAPH} .scatterlayer .trace path.point"
# Installed before any page script: remembers every WebGL context the page creates.
COUNT_WEBGL = """(() => {
    window.__webgl = [];
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
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    folder = write_tiny_map(root / "tiny")
    app = App(folder, root / "no-other-maps")
    yield app, folder
    app.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()


def open_app(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=60_000
    )


def draws(page) -> int:
    """How many times the map has been drawn or redrawn (the component counts them on the graph)."""
    return int(page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasDraws"))


def wait_for_redraw(page, before: int) -> None:
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before}", timeout=30_000
    )


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
    page.wait_for_url("**q=diffusion**", timeout=30_000)
    page.get_by_text("15 of the 60 papers of the map match the words “diffusion”").wait_for(timeout=30_000)
    assert heading(page, "Papers") == "Papers · 15 · best matches first"
    shared = page.url

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    open_app(other, shared)
    assert other.get_by_role("textbox", name="Search").input_value() == "diffusion"
    other.get_by_text("15 of the 60 papers of the map match the words “diffusion”").wait_for(timeout=30_000)
    assert heading(other, "Papers") == "Papers · 15 · best matches first"
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
    mark = page.locator("span.stMarkdownColoredBackground", has_text="denoising").first
    mark.wait_for(timeout=30_000)
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


def test_clicking_a_point_opens_the_paper(page, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    page.mouse.move(*point_position(page, 9))
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    page.mouse.down()
    page.mouse.up()
    page.wait_for_url("**paper=doc0009**", timeout=30_000)
    assert heading(page, "Diffusion study 9") == "Diffusion study 9"


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
    finally:
        app.stop()


@pytest.fixture(scope="module")
def webgl_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-webgl")
    folder = write_tiny_map(root / "big", n=1500)  # over 1,000 papers: the map draws with WebGL
    app = App(folder, root / "no-other-maps")
    yield app
    app.stop()


def test_one_chart_and_one_webgl_setup_survive_searches_filters_and_fifty_interactions(browser, webgl_app):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(COUNT_WEBGL)
    try:
        open_app(page, webgl_app.url)
        page.evaluate(f"document.querySelector('{GRAPH}').__original = true")  # tag the graph element
        topic_list = "[data-testid='stDataFrame']"  # the topic list beside the map, the page's first table
        page.locator(topic_list).first.wait_for(timeout=30_000)  # drawn after the map on a busy machine
        page.evaluate(f'document.querySelector("{topic_list}").__original = true')
        contexts = page.evaluate("window.__webgl.length")
        canvases = page.evaluate(f"document.querySelectorAll('{GRAPH} canvas').length")
        assert contexts == 2  # one chart: Plotly gives scattergl a drawing layer and a selection layer
        for words in ("diffusion", "policy", "graph"):  # three searches: highlights, no new chart
            search_for(page, words)
            assert page.evaluate(f"document.querySelector('{GRAPH}').__original") is True
        assert page.evaluate(f"document.querySelectorAll('{GRAPH}').length") == 1
        assert page.evaluate(f'document.querySelector("{topic_list}").__original') is True  # not remounted
        highlight = page.evaluate(
            f"document.querySelector('{GRAPH}')._fullData.filter(t => t.name === 'highlight' && t.visible)"
            ".reduce((n, t) => n + t.x.length, 0)"
        )
        assert highlight == 375  # "graph": topic 0 is every fourth paper

        # zoom with the mouse wheel, then change a filter: the zoom stays
        box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] * 0.3)
        for _ in range(3):
            page.mouse.wheel(0, -240)
            page.wait_for_timeout(150)
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

        for turn in range(50):  # fifty more view changes: still the same chart and contexts
            search_for(page, ("diffusion", "policy", "clustering", "graph nodes", "")[turn % 5])
        assert page.evaluate(f"document.querySelector('{GRAPH}').__original") is True
        assert page.evaluate("window.__webgl.length") == contexts
        assert page.evaluate(f"document.querySelectorAll('{GRAPH} canvas').length") == canvases
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
        assert page.locator(".atlas-ring:not([hidden])").count() == 0
        open_app(page, app.url + "?paper=doc0000")
        page.wait_for_function(f"() => document.querySelector('{GRAPH}')._fullLayout.xaxis.range[1] >= 400")
        page.locator(".atlas-ring:not([hidden])").wait_for(timeout=10_000)  # ringed where it lies
    finally:
        app.stop()


def test_theme_names_on_the_whole_map_and_topic_names_zoomed_in(page, tmp_path):
    import pandas as pd

    folder = write_tiny_map(tmp_path / "themed")
    pd.DataFrame(
        {
            "theme_id": [0, 1],
            "label": ["<b>Generative</b> models", "Learning on structure"],
            "keywords": [["diffusion"], ["graph"]],
            "size": [26, 26],
            "topic_ids": [[1, 2], [0, 3]],
            "x": [0.0, 0.0],
            "y": [1.5, -1.5],
        }
    ).to_parquet(folder / "themes.parquet")
    app = App(folder, tmp_path / "none")
    try:
        open_app(page, app.url)
        labels = ".atlas-label:not([hidden])"
        assert sorted(page.locator(labels).all_text_contents()) == [
            "<b>Generative</b> models",
            "Learning on structure",
        ]
        box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] * 0.25)  # over topic 1
        for _ in range(8):  # zoom in to about a quarter of the map
            page.mouse.wheel(0, -300)
            page.wait_for_timeout(150)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.atlas-label:not([hidden])')]"
            ".some(e => e.textContent === 'Diffusion models')",
            timeout=10_000,
        )
        assert "Learning on structure" not in page.locator(labels).all_text_contents()
        for _ in range(8):  # and back out: the theme names return, the topic names go
            page.mouse.wheel(0, 300)
            page.wait_for_timeout(150)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.atlas-label:not([hidden])')]"
            ".some(e => e.textContent === 'Learning on structure')",
            timeout=10_000,
        )
        assert "Diffusion models" not in page.locator(labels).all_text_contents()
    finally:
        app.stop()


def test_a_link_to_a_merged_and_renamed_topic_says_what_it_was(page, tmp_path):
    """Issue 21: topic 2 was "Segmentation", took in "Object detection" and now bears that name."""
    import pandas as pd

    atlas = tiny_map(
        labels=["Graph neural networks", "Diffusion models", "Object detection", "Multi-view clustering"]
    )
    atlas.lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3, 5],
            "status": ["kept", "kept", "merged", "kept", "gone"],
            "previous_topic_ids": [[0], [1], [2, 5], [3], [5]],
            "successor_topic_ids": [[], [], [], [], [2]],
            "previous_label": [
                "Graph neural networks",
                "Diffusion models",
                "Segmentation; Object detection",
                "Multi-view clustering",
                "Object detection",
            ],
            "shared_papers": [13, 13, 13, 13, 6],
            "previous_sizes": [[13], [13], [7, 6], [13], [6]],
        }
    )
    atlas.manifest["lineage"] = {
        "previous": {"name": "Tiny test map", "fingerprint": "f"},
        "next_topic_id": 6,
    }
    write_map(tmp_path / "rebuilt", atlas)
    app = App(tmp_path / "rebuilt", tmp_path / "none")
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
