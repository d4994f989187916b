"""End-to-end: the real app in headless Chromium (Debian's, driven by Playwright) on tiny synthetic maps."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.devserver import StreamlitServer
from pipeline.artifacts import read_map
from tests.app_fixtures import write_tiny_map

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
POINTS = ".js-plotly-plot .scatterlayer .trace path.point"


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
    page.wait_for_selector(POINTS, timeout=60_000)


def heading(page, prefix: str) -> str:
    locator = page.locator("h4", has_text=prefix).first
    locator.wait_for(timeout=30_000)
    return locator.inner_text()


def test_app_loads_and_shows_the_map(page, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    assert page.locator(POINTS).count() == 60
    assert page.get_by_role("heading", name="Tiny test map").is_visible()
    labels = page.locator(".js-plotly-plot .annotation-text").all_text_contents()
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
    page.get_by_text("15 of 60 papers match").wait_for(timeout=30_000)
    assert heading(page, "Papers") == "Papers · 15"
    shared = page.url

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    open_app(other, shared)
    assert other.get_by_role("textbox", name="Search").input_value() == "diffusion"
    other.get_by_text("15 of 60 papers match").wait_for(timeout=30_000)
    assert heading(other, "Papers") == "Papers · 15"
    other.context.close()


def point_position(page, doc_id: str) -> list[float]:
    """Screen position of a paper's point, found through its customdata."""
    return page.evaluate(
        """(docId) => {
            const gd = document.querySelector('.js-plotly-plot');
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            for (const trace of gd._fullData) {
                const i = Array.from(trace.customdata || []).indexOf(docId);
                if (i >= 0) return [r.left + gd._fullLayout.xaxis.l2p(trace.x[i]),
                                    r.top + gd._fullLayout.yaxis.l2p(trace.y[i])];
            }
            return null;
        }""",
        doc_id,
    )


def test_clicking_a_point_opens_the_paper(page, tiny_app):
    app, _ = tiny_app
    open_app(page, app.url)
    page.mouse.move(*point_position(page, "doc0009"))
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
            const gd = document.querySelector('.js-plotly-plot');
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


def test_hostile_titles_and_topic_names_run_no_script(page, tmp_path):
    titles = [
        '<img src=x onerror="window.__xss=1;alert(1)">',
        "<script>window.__xss=2;alert(2)</script>",
        '<b onmouseover="alert(3)">bold</b> $x$ **y** [z](javascript:alert(4))',
    ]
    titles += [f"Paper {i}" for i in range(len(titles), 60)]
    labels = ['<img src=x onerror="window.__xss=3;alert(5)">', "<i>B</i>", "C & D", "D"]
    folder = write_tiny_map(tmp_path / "hostile", titles=titles, labels=labels)
    app = App(folder, tmp_path / "none")
    try:
        open_app(page, app.url + "?paper=doc0000")
        page.get_by_role("heading", name=titles[0]).wait_for(timeout=30_000)  # shown as text
        annotations = page.locator(".js-plotly-plot .annotation-text").all_text_contents()
        assert annotations[0].startswith("<img src=x") and "<i>B</i>" in annotations  # literal, wrapped
        for row in range(3):  # hover each hostile point so Plotly renders its hover label
            position = point_position(page, f"doc{row:04d}")
            page.mouse.move(*position)
            page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
            assert "<" in page.locator(".hoverlayer .hovertext").first.text_content()
        page.goto(app.url + "?paper=doc0001")
        page.wait_for_selector(POINTS, timeout=60_000)
        page.get_by_role("heading", name=titles[1]).wait_for(timeout=30_000)
        page.wait_for_timeout(500)
        assert page.dialogs == []
        assert page.evaluate("window.__xss") is None
        assert page.locator('img[src="x"]').count() == 0
        assert page.evaluate("[...document.scripts].some(s => s.textContent.includes('__xss'))") is False
        assert page.locator("b[onmouseover], a[href^='javascript']").count() == 0
    finally:
        app.stop()
