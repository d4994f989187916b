"""In a real browser, each step reruns only the parts of the page it changes (keyed fragments): what a
reader sees stays whole and true. The header says what the page shows beside and under the map (an
opened topic's papers, a box selection), every count checked against the map's own tables."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from app.data import build_map_data
from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, chips, choose, idle, open_app, themed_map, write_tiny_map

pytestmark = pytest.mark.browser
# The header's sentence: the one line saying what the page shows (js/header.js).
SENTENCE = re.compile(r"^(Showing the |None of |[\d,]+ of )")


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-steps")
    folder = write_tiny_map(root / "tiny")
    app = StreamlitServer(folder, root / "no-other-maps", timeout=60)
    yield app, folder
    app.stop()


def header(page) -> str:
    """The header's sentence, as the reader sees it."""
    texts = page.locator("[data-testid='stMain'] .atlas-sentence").all_inner_texts()
    [sentence] = [t.strip() for t in texts if SENTENCE.match(t.strip())]
    return sentence


def wait_for_header(page, text: str) -> None:
    page.locator("[data-testid='stMain'] .atlas-sentence", has_text=text).first.wait_for(timeout=30_000)
    idle(page)
    assert header(page) == text


def search_for(page, words: str) -> None:
    box = page.get_by_role("textbox", name="Search")
    box.fill(words)
    box.press("Enter")
    idle(page)


def open_first_listed_topic(page) -> str:
    """Click the topic list's first topic (as a reader does); the name of the topic it opened."""
    first = page.locator(".atlas-panel-list .atlas-topic").first
    first.wait_for(timeout=30_000)
    first.click()
    page.locator(".atlas-panel-topic .atlas-back").wait_for(timeout=30_000)
    idle(page)
    return page.locator(".atlas-panel-topic h4").inner_text()


def drag_box(page, box: tuple[float, float, float, float]) -> None:
    """A box selection with the modebar's Box Select over data coordinates (x0, y0, x1, y1)."""
    page.locator(f"{GRAPH} .modebar-btn[data-val='select']").click()
    corners = page.evaluate(
        """([selector, x0, y0, x1, y1]) => {
            const gd = document.querySelector(selector);
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return [r.left + xa.l2p(x0), r.top + ya.l2p(y0), r.left + xa.l2p(x1), r.top + ya.l2p(y1)];
        }""",
        [GRAPH, *box],
    )
    page.mouse.move(corners[0], corners[1])
    page.mouse.down()
    page.mouse.move((corners[0] + corners[2]) / 2, (corners[1] + corners[3]) / 2, steps=5)
    page.mouse.move(corners[2], corners[3], steps=5)
    page.mouse.up()


def test_opening_a_topic_from_the_list_the_header_counts_its_papers(page, tiny_app):
    app, folder = tiny_app
    topics = read_map(folder).topics.set_index("label")
    open_app(page, app.url)
    idle(page)
    assert header(page) == "Showing the 60 papers of the map"
    name = open_first_listed_topic(page)
    size = int(topics.loc[name, "size"])  # topics.parquet's own count
    wait_for_header(page, f"Showing the {size} papers in the topic “{name}”")
    page.wait_for_function("() => location.href.includes('topic=')", timeout=30_000)
    listed = page.locator("h4", has_text="Papers ·").first
    assert listed.inner_text() == f"Papers · {size}"  # the table under the map lists the topic's papers
    page.get_by_role("button", name="Back to the topic list").click()
    wait_for_header(page, "Showing the 60 papers of the map")  # as before the topic was opened
    page.wait_for_function("() => !location.href.includes('topic=')", timeout=30_000)


# Counts the map's own redrawings of a selection (`Plotly.relayout` of `selections`): Plotly's drawing
# of the reader's box goes by another way.
WATCH_SELECTIONS = """() => {
    window.__selectionsDrawn = 0;
    const relayout = Plotly.relayout;
    Plotly.relayout = function (gd, update, ...rest) {
        if (update && "selections" in update) window.__selectionsDrawn += 1;
        return relayout.call(this, gd, update, ...rest);
    };
}"""


def test_a_box_selection_the_header_counts_the_papers_the_table_lists(page, tiny_app):
    app, folder = tiny_app
    papers = read_map(folder).papers
    box = (0.6, 0.6, 3.6, 3.6)  # data coordinates around topic 1's cluster at (2, 2)
    inside = papers[papers.x.between(box[0], box[2]) & papers.y.between(box[1], box[3])]
    assert 10 <= len(inside) < 60
    open_app(page, app.url)
    idle(page)
    page.evaluate(WATCH_SELECTIONS)
    drag_box(page, box)
    wait_for_header(page, f"Showing the {len(inside)} papers you selected on the map")
    listed = page.locator("h4", has_text="Selected on the map").first.inner_text()
    assert listed == f"Selected on the map · {len(inside)}"  # the table lists as many as the header says
    idle(page)
    # The server's answer draws back the box as drawn: the map does not make Plotly select it again
    # (half a second at 81,646 papers), and the box stays on the map.
    assert page.evaluate("() => window.__selectionsDrawn") == 0
    assert drawn_selection(page)["type"] == "rect"
    page.get_by_role("button", name="Clear selection").click()
    wait_for_header(page, "Showing the 60 papers of the map")


def drawn_selection(page) -> dict | None:
    """The box or lasso the map draws (Plotly's layout selection), or None."""
    return page.evaluate(f"(document.querySelector('{GRAPH}').layout.selections || [])[0] || null")


def test_a_box_selection_is_in_the_link_and_the_link_draws_it_again(page, tiny_app, browser):
    app, folder = tiny_app
    papers = read_map(folder).papers
    box = (0.6, 0.6, 3.6, 3.6)
    inside = papers[papers.x.between(box[0], box[2]) & papers.y.between(box[1], box[3])]
    open_app(page, app.url)
    idle(page)
    drag_box(page, box)
    wait_for_header(page, f"Showing the {len(inside)} papers you selected on the map")
    page.wait_for_function("() => location.search.includes('select=box')", timeout=30_000)
    link = page.url
    [written] = parse_qs(urlparse(link).query)["select"]
    x0, x1, y0, y1 = (float(v) for v in written.removeprefix("box:").split(","))  # as drawn, six digits
    assert (papers.x.between(x0, x1) & papers.y.between(y0, y1)).sum() == len(inside)
    # The copied link, in a new page: the same papers, counted the same, and the box drawn on the map.
    other = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        open_app(other, link)
        wait_for_header(other, f"Showing the {len(inside)} papers you selected on the map")
        listed = other.locator("h4", has_text="Selected on the map").first.inner_text()
        assert listed == f"Selected on the map · {len(inside)}"
        drawn = drawn_selection(other)
        assert drawn["type"] == "rect" and [drawn[k] for k in ("x0", "x1", "y0", "y1")] == [x0, x1, y0, y1]
        # Cleared, then Back in the browser's history: the selection, on the map too, comes back.
        other.get_by_role("button", name="Clear selection").click()
        wait_for_header(other, "Showing the 60 papers of the map")
        other.wait_for_function("() => !location.search.includes('select=')", timeout=30_000)
        assert drawn_selection(other) is None
        other.go_back()
        wait_for_header(other, f"Showing the {len(inside)} papers you selected on the map")
        assert drawn_selection(other)["type"] == "rect"
    finally:
        other.close()


def test_a_lasso_in_a_link_is_drawn_and_holds_the_papers_inside_it(page, tiny_app):
    app, folder = tiny_app
    papers = read_map(folder).papers
    corners = [(0.6, 0.6), (3.6, 0.6), (0.6, 3.6)]  # a triangle over topic 1's cluster at (2, 2)
    x, y = papers.x.to_numpy(), papers.y.to_numpy()
    inside = (x >= 0.6) & (y >= 0.6) & (x + y <= 4.2)  # the triangle's three sides
    assert 3 <= inside.sum() < 60
    text = "lasso:" + ",".join(f"{v:g}" for corner in corners for v in corner)
    open_app(page, f"{app.url}?select={text}")
    wait_for_header(page, f"Showing the {int(inside.sum())} papers you selected on the map")
    drawn = drawn_selection(page)
    assert drawn["type"] == "path" and drawn["path"].startswith("M0.6,0.6L3.6,0.6L0.6,3.6")
    # The topic list beside the map counts the selected papers, as the header and the table do.
    topics = read_map(folder).topics.set_index("topic_id")["label"].to_dict() | {-1: "Unassigned"}
    per_topic = papers[inside]["topic_id"].value_counts()
    panel = page.locator(".atlas-panel .atlas-topic-list").first
    panel.locator(".atlas-topic").first.wait_for(timeout=30_000)
    names = panel.locator(".atlas-topic-name").all_inner_texts()
    counts = panel.locator(".atlas-topic-count").all_inner_texts()
    want = {name: str(int(per_topic.get(topic, 0))) for topic, name in topics.items()}
    assert dict(zip(names, counts, strict=True)) == {name: want[name] for name in names} and len(names) >= 4


def test_after_a_search_the_sidebar_stays_and_a_topic_opened_and_closed_keeps_the_search(page, tiny_app):
    """A search reruns the header, the map and the table, not the sidebar: its widgets are still there
    with what the reader chose; opening a topic keeps the search, and Back returns to the same header."""
    app, folder = tiny_app
    atlas = read_map(folder)
    open_app(page, app.url)
    idle(page)
    search_for(page, "diffusion")
    said = "15 of the 60 papers of the map match the words “diffusion”"
    wait_for_header(page, said)
    assert page.locator("h4", has_text="Papers · ").first.inner_text() == "Papers · 15 · best matches first"
    sidebar = page.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_role("textbox", name="Search").input_value() == "diffusion"
    assert sidebar.locator("[data-testid='stMultiSelect']").count() == 2  # Topics and Year (tiny map)
    assert sidebar.get_by_role("button", name="Reset view").is_visible()

    name = open_first_listed_topic(page)
    topic = int(atlas.topics.set_index("label").loc[name, "topic_id"])
    in_topic = atlas.papers.topic_id == topic
    hits = int((in_topic & atlas.papers.abstract.str.contains("diffusion")).sum())
    verb = "matches" if hits == 1 else "match"
    wait_for_header(
        page, f"{hits} of the {int(in_topic.sum())} papers in the topic “{name}” {verb} the words “diffusion”"
    )
    assert sidebar.get_by_role("textbox", name="Search").input_value() == "diffusion"  # the search stays
    assert "q=diffusion" in page.evaluate("location.href")
    page.get_by_role("button", name="Back to the topic list").click()
    wait_for_header(page, said)  # the same header as before the topic was opened
    assert page.locator("h4", has_text="Papers · ").first.inner_text() == "Papers · 15 · best matches first"


def test_a_filter_changes_the_header_map_and_table_and_reset_brings_the_sidebar_back(page, tiny_app):
    """A filter that changes the sidebar's shape (the unassigned switch goes in a topic view) reruns the
    sidebar too; Reset view puts every widget back."""
    app, folder = tiny_app
    papers = read_map(folder).papers
    diffusion = int((papers.topic_id == 1).sum())
    open_app(page, app.url)
    idle(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_text("Show unassigned papers", exact=False).count() == 1
    sidebar.locator("[data-testid='stMultiSelect']").first.click()
    page.get_by_role("option", name=f"Diffusion models ({diffusion})").click()
    page.keyboard.press("Escape")
    wait_for_header(page, f"Showing the {diffusion} papers in the topic “Diffusion models”")
    assert sidebar.get_by_text("Show unassigned papers", exact=False).count() == 0  # in a topic view
    assert page.locator("h4", has_text="Papers · ").first.inner_text() == f"Papers · {diffusion}"
    search_for(page, "denoising")
    sidebar.get_by_role("button", name="Reset view").click()
    wait_for_header(page, "Showing the 60 papers of the map")
    assert sidebar.get_by_role("textbox", name="Search").input_value() == ""
    assert sidebar.get_by_text("Show unassigned papers", exact=False).count() == 1
    assert sidebar.get_by_text("Diffusion models", exact=False).count() == 0  # the Topics filter is empty


def test_two_forwards_in_a_row_land_on_the_view_of_the_link(page, tiny_app):
    """The view changing under a table (a paper closed) can make it report a selection while Streamlit
    reruns for Back or Forward: that run must still follow the link, not rerun a part of the old view.
    Three sessions in a row: a warm server answers fast enough for the two to meet."""
    app, folder = tiny_app
    hits = int(read_map(folder).papers.abstract.str.contains("policy").sum())
    for _ in range(3):
        tab = page.context.new_page()
        open_app(tab, app.url + "?q=diffusion&paper=doc0005")
        tab.get_by_role("button", name="Back to the topic list").click()
        tab.wait_for_function("() => location.search === '?q=diffusion'", timeout=30_000)
        search_for(tab, "policy")
        tab.wait_for_function("() => location.search === '?q=policy'", timeout=30_000)
        for address in ("?q=diffusion", "?q=diffusion&paper=doc0005"):
            tab.go_back()
            tab.wait_for_function("(a) => location.search === a", arg=address, timeout=30_000)
            tab.wait_for_timeout(1500)
            idle(tab)
        tab.go_forward()
        tab.go_forward()
        tab.wait_for_timeout(1500)
        idle(tab)
        assert tab.evaluate("location.search") == "?q=policy"
        assert tab.get_by_role("textbox", name="Search").input_value() == "policy"
        wait_for_header(tab, f"{hits} of the 60 papers of the map match the words “policy”")
        tab.close()


def test_a_theme_chosen_drops_the_topics_outside_it_from_the_topics_filter_as_shown(page, tmp_path):
    """The Topics filter reruns alone when a theme is chosen (app.controls.topics_filter): a topic chosen
    before, outside the theme, leaves the filter the reader sees, not only the server's state."""
    write_map(tmp_path / "themed", themed_map())
    data = build_map_data("themed", tmp_path / "themed")
    outside = 0  # "Graph neural networks", a topic of theme 1
    theme = data.themes.set_index("theme_id").loc[0]
    topic_option = f"{data.label(outside)} ({data.sizes[outside]:,})"
    theme_option = f"{theme['label']} ({int(theme['size']):,})"
    with StreamlitServer(tmp_path / "themed", tmp_path / "none", timeout=60) as app:
        open_app(page, app.url)
        idle(page)
        choose(page, "Topics", topic_option)
        wait_for_header(
            page, f"Showing the {data.sizes[outside]} papers in the topic “{data.label(outside)}”"
        )
        assert chips(page, "Topics") == [topic_option]
        choose(page, "Themes", theme_option)
        wait_for_header(page, f"Showing the {int(theme['size'])} papers in the theme “{theme['label']}”")
        assert chips(page, "Topics") == []  # dropped where the reader sees it too
        assert chips(page, "Themes") == [theme_option]
        assert "topics=" not in page.evaluate("location.search")


@pytest.fixture(scope="module")
def webgl_app(tmp_path_factory):
    """A map over the WebGL threshold (`payload.WEBGL_ABOVE`): its points are one scattergl trace."""
    root = tmp_path_factory.mktemp("browser-webgl")
    folder = write_tiny_map(root / "webgl", n=1_200)
    app = StreamlitServer(folder, root / "no-other-maps", timeout=60)
    yield app, folder
    app.stop()


# Plotly's restyles of the map's charts, counted (a restyle of `selectedpoints` recomputes the trace).
WATCH_RESTYLES = """() => {
    window.__restyles = 0;
    const restyle = Plotly.restyle;
    Plotly.restyle = function (...args) { window.__restyles += 1; return restyle.apply(this, args); };
}"""


def test_clear_selection_drops_the_box_and_its_dimming_without_recomputing_the_map(page, webgl_app):
    """On a WebGL map, "Clear selection" drops the box from the map and Plotly's dimming of the points
    outside it (no trace keeps `selectedpoints`) as Plotly drops a selection the reader erases, without
    a restyle (which recomputes the whole trace: 0.3 s at 81,646 papers); so do Back to the view before
    and the sidebar's Reset view."""
    app, folder = webgl_app
    papers = read_map(folder).papers
    box = (0.6, 0.6, 3.6, 3.6)
    inside = int((papers.x.between(box[0], box[2]) & papers.y.between(box[1], box[3])).sum())
    open_app(page, app.url)
    idle(page)
    assert page.evaluate(f"document.querySelector('{GRAPH}')._fullData[0].type") == "scattergl"
    page.evaluate(WATCH_RESTYLES)
    dimmed = f"document.querySelector('{GRAPH}').data.filter((t) => t.selectedpoints != null).length"
    for leave in ("clear", "back", "reset"):
        drag_box(page, box)
        wait_for_header(page, f"Showing the {inside:,} papers you selected on the map")
        idle(page)
        assert page.evaluate(dimmed) == 1 and drawn_selection(page)["type"] == "rect"
        if leave == "clear":
            page.get_by_role("button", name="Clear selection").click()
        elif leave == "back":
            page.go_back()
        else:
            page.locator("[data-testid='stSidebar']").get_by_role("button", name="Reset view").click()
        wait_for_header(page, f"Showing the {len(papers):,} papers of the map")
        page.wait_for_function("() => !location.search.includes('select=')", timeout=30_000)
        idle(page)
        assert drawn_selection(page) is None and page.evaluate(dimmed) == 0, leave
    assert page.evaluate("window.__restyles") == 0


def highlight_style(page) -> tuple[list[float], dict, int]:
    """The highlighted papers' trace as drawn: their marker's size, its outline, and how many."""
    return page.evaluate(
        f"""() => {{
            const [t] = document.querySelector('{GRAPH}')._fullData.filter((t) => t.name === 'highlight' && t.visible);
            return [[t.marker.size].flat(), t.marker.line, t.x.length];
        }}"""
    )


def test_papers_added_since_the_last_build_are_drawn_as_search_hits_are(tmp_path_factory, page):
    """The "Highlight papers added" toggle's link draws the added papers larger and outlined over the
    faint rest, as a search's hits are (the server's state says so; the browser drew them plain)."""
    import shutil
    import subprocess
    import sys

    from tests.helpers import EXTRA, REPO, SEED_MAP

    root = tmp_path_factory.mktemp("browser-added")
    folder = root / "seeds"
    shutil.copytree(SEED_MAP, folder)
    command = [sys.executable, "-m", "pipeline", "add", str(folder), str(EXTRA), "--quiet"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    app = StreamlitServer(folder, root / "no-other-maps", timeout=60)
    try:
        open_app(page, f"{app.url}?q=diffusion")
        idle(page)
        size, outline, hits = highlight_style(page)
        assert hits > 4 and outline["width"] > 0
        open_app(page, f"{app.url}?added=only")
        idle(page)
        assert highlight_style(page) == [size, outline, 4]  # the four papers `add` brought
    finally:
        app.stop()
