"""In a real browser without WebGL (Chrome 139+ no longer falls back to software WebGL by itself): a map
of more than 1,000 papers, which draws its points with WebGL elsewhere, still shows, as an image of its
papers with the theme and topic names, and a search's hits as points that hover and click."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import (
    CHART_IMAGE_JS,
    CHROMIUM,
    GRAPH,
    POINTS,
    TOPIC_WORDS,
    Received,
    draws,
    idle,
    open_app,
    themed_map,
    tiny_map,
)
from tests.test_browser_legend import picked_in_the_browser, same_link_afresh

pytestmark = pytest.mark.browser
N = 6000  # over 1,000 papers: a map drawn with WebGL where there is WebGL
THEMES = ("Generative models", "Learning on structure")
NOTICE = "This browser has no WebGL: the map is an image; search hits and selections are drawn as points."
NO_WEBGL = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-webgl",
    "--disable-3d-apis",
]


def title(i: int) -> str:
    """Paper i's title: its topic's word, text a page could mangle, and "survey" in nine papers of ten."""
    word = ["Graph", "Diffusion", "Policy", "Clustering"][i % 4]
    return f"{word} study {i}: “ünïcode” <b>not bold</b> & $x^2$" + (" survey" if i % 10 else "")


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium with WebGL turned off."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=NO_WEBGL)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def big_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("no-webgl")
    folder = root / "big"
    write_map(folder, themed_map(tiny_map(N, titles=[title(i) for i in range(N)]), names=THEMES))
    app = StreamlitServer(folder, root / "no-other-maps", timeout=90)
    yield app, read_map(folder).papers
    app.stop()


def search_for(page, words: str) -> None:
    before = draws(page)
    box = page.get_by_role("textbox", name="Search")
    box.fill(words)
    box.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before}", timeout=30_000
    )


# The chart's image of the papers, read back: its pixels that hold ink, and its distinct colours.
READ_IMAGE = (
    "async (graph) => {\n"
    + CHART_IMAGE_JS
    + """
    const read = await chartImage(graph);
    if (!read) return null;
    const {image, data} = read;
    let ink = 0;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] < 128) continue;
        ink += 1;
        colours.add(`${data[i] >> 5},${data[i + 1] >> 5},${data[i + 2] >> 5}`);
    }
    const shown = document.querySelector(graph + ' .layer-below image, ' + graph + ' image');
    return {ink, pixels: read.width * read.height, colours: colours.size, xref: image.xref, x: image.x,
            sizex: image.sizex, inPage: Boolean(shown)};
}"""
)


def test_without_webgl_the_map_is_an_image_of_its_papers_with_names_and_a_notice(browser, big_app):
    app, papers = big_app
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    try:
        page.goto(app.url)
        assert page.evaluate(
            "() => { const c = document.createElement('canvas'); return [c.getContext('webgl'), c.getContext('webgl2')]; }"
        ) == [None, None]  # this browser really has no WebGL
        open_app(page, app.url)
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}').dataset.atlasDensity >= 1", timeout=30_000
        )
        assert page.locator(".atlas-map-error").is_hidden()
        assert page.locator(".atlas-map-note").inner_text() == NOTICE
        kinds = page.evaluate(f"document.querySelector('{GRAPH}')._fullData.map((t) => t.type)")
        assert kinds and set(kinds) == {"scatter"}  # SVG, no scattergl
        image = page.evaluate(READ_IMAGE, GRAPH)
        assert image and image["inPage"] and image["xref"] == "x"  # in data coordinates: zoom and pan move it
        assert image["ink"] > 0.02 * image["pixels"]  # not blank: thousands of papers drawn
        assert image["colours"] >= 4  # in their topics' colours
        names = page.locator(".atlas-theme:not([hidden])").all_text_contents()
        assert sorted(names) == list(THEMES)
        assert page.locator(".atlas-label:not(.atlas-theme):not([hidden])").count() >= 2  # and topic names

        # zooming in redraws the image for the new view
        before = int(page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasDensity"))
        box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] * 0.25)
        page.keyboard.down("Control")
        for _ in range(4):
            page.mouse.wheel(0, -300)
            page.wait_for_timeout(120)
        page.keyboard.up("Control")
        # the image drawn for the view now: 1.5 times its span (a quarter of a view around it, for panning)
        page.wait_for_function(
            f"""(n) => {{
                const gd = document.querySelector('{GRAPH}');
                const span = gd.layout.xaxis.range[1] - gd.layout.xaxis.range[0];
                return gd.dataset.atlasDensity > n && Math.abs(gd.layout.images[0].sizex - 1.5 * span) < 1e-6 * span;
            }}""",
            arg=before,
            timeout=30_000,
        )
        zoomed = page.evaluate(READ_IMAGE, GRAPH)
        assert zoomed["sizex"] < image["sizex"] * 0.7 and zoomed["ink"] > 0.02 * zoomed["pixels"]

        # the topic panel beside the map is the same without WebGL: its list, and a topic opened from it
        topics = papers["topic_id"].value_counts()
        counts = page.locator(".atlas-panel-list .atlas-topic-count").all_inner_texts()
        assert sorted(int(c.replace(",", "")) for c in counts) == sorted(topics.tolist())
        first = page.locator(".atlas-panel-list .atlas-topic").first
        topic = int(first.get_attribute("data-topic"))
        first.click()
        page.locator(".atlas-panel-topic h4").wait_for(timeout=30_000)
        name = page.locator(".atlas-panel-topic h4").inner_text()
        keywords = page.locator(".atlas-panel-topic .atlas-keyword-name")  # the panel's own bars
        keywords.first.wait_for(timeout=30_000)
        assert keywords.all_text_contents() == TOPIC_WORDS[topic][1]
        bars = page.locator(".atlas-panel-topic .atlas-keyword-bar").evaluate_all(
            "(bars) => bars.map((b) => b.getBoundingClientRect().width)"
        )
        assert len(bars) == len(TOPIC_WORDS[topic][1]) and min(bars) > 0
        page.wait_for_function("() => location.search.includes('topic=')", timeout=30_000)
        page.locator(".atlas-sentence", has_text=f"papers in the topic “{name}”").first.wait_for(
            timeout=30_000
        )
    finally:
        page.context.close()


def lonely_hit(papers: pd.DataFrame, hits: np.ndarray) -> int:
    """The row among `hits` farthest from any other paper: nothing else lies under the pointer there."""
    xy = papers[["x", "y"]].to_numpy(dtype=float)
    best, row = -1.0, -1
    for i in np.flatnonzero(hits):
        d = np.hypot(*(xy - xy[i]).T)
        d[i] = np.inf
        if d.min() > best:
            best, row = float(d.min()), int(i)
    return row


def test_without_webgl_search_hits_are_points_and_clicking_one_opens_the_paper(browser, big_app):
    app, papers = big_app
    hits = papers["abstract"].str.contains("diffusion").to_numpy()
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    try:
        open_app(page, app.url)
        search_for(page, "diffusion")
        page.get_by_text(f"{int(hits.sum()):,} of the {N:,} papers of the map match").wait_for(timeout=30_000)
        assert page.locator(POINTS).count() == int(hits.sum())  # every hit is a point (fewer than 5,000)
        assert "highlighted papers are drawn" not in page.locator(".atlas-map-note").inner_text()

        row = lonely_hit(papers, hits)
        spot = page.evaluate(
            """([graph, row]) => {
                const gd = document.querySelector(graph);
                const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                return [r.left + gd._fullLayout.xaxis.l2p(gd.atlasTable.x[row]),
                        r.top + gd._fullLayout.yaxis.l2p(gd.atlasTable.y[row])];
            }""",
            [GRAPH, row],
        )
        page.mouse.move(*spot)
        hover = page.locator(f"{GRAPH} .hoverlayer .hovertext")
        hover.wait_for(timeout=10_000)
        assert f"study {row}:" in hover.text_content()  # hovering works on the points
        page.mouse.down()
        page.mouse.up()
        doc_id = papers["doc_id"].iloc[row]
        page.wait_for_function("(id) => location.href.includes('paper=' + id)", arg=doc_id, timeout=30_000)
        expected = papers["title"].iloc[row]
        heading = page.locator("h4", has_text=f"study {row}:").first
        heading.wait_for(timeout=30_000)
        assert heading.inner_text().encode() == expected.encode()  # byte for byte as in papers.parquet
    finally:
        page.context.close()


@pytest.mark.parametrize("width, height", [(1400, 900), (390, 844)])
def test_without_webgl_more_hits_than_points_say_how_many_are_drawn(browser, big_app, width, height):
    app, papers = big_app
    hits = int(papers["title"].str.contains("survey").sum())
    assert hits > 5000
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    try:
        open_app(page, app.url)
        search_for(page, "survey")
        page.get_by_text(f"{hits:,} of the {N:,} papers of the map match").wait_for(timeout=30_000)
        assert page.locator(POINTS).count() == 5000
        note = page.locator(".atlas-map-note").inner_text()
        assert note == f"{NOTICE} 5,000 of the {hits:,} highlighted papers are drawn (an even sample)."
        plot = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
        shown = page.locator(".atlas-map-note").bounding_box()
        assert shown["y"] >= plot["y"] + plot["height"] - 0.5  # under the plot, covering none of it
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # and within the page's width
    finally:
        page.context.close()


def test_without_webgl_a_box_selection_lists_its_papers_and_draws_them_as_points(browser, big_app):
    """Without WebGL too a box and Clear selection are the browser's steps: the link takes the box, the
    map draws its papers as points, the table lists them; the server sends no map, list or table."""
    app, papers = big_app
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    received = Received(page)
    try:
        open_app(page, app.url)
        idle(page)
        received.take()
        page.locator(f"{GRAPH} .modebar-btn[data-val='select']").click()
        box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
        corners = [
            (box["x"] + box["width"] * a, box["y"] + box["height"] * b) for a, b in ((0.55, 0.1), (0.9, 0.45))
        ]
        page.mouse.move(*corners[0])
        page.mouse.down()
        page.mouse.move(*corners[1], steps=8)
        page.mouse.up()
        page.wait_for_function(f"() => document.querySelectorAll('{POINTS}').length > 0", timeout=30_000)
        drawn = page.locator(POINTS).count()
        selected = page.evaluate(f"document.querySelector('{GRAPH}').layout.selections[0]")
        xs = sorted([selected["x0"], selected["x1"]])
        ys = sorted([selected["y0"], selected["y1"]])
        inside = papers["x"].between(*xs) & papers["y"].between(*ys)
        assert drawn == int(inside.sum()) > 100  # the papers in the box, as points
        heading = page.locator("h4", has_text="Selected on the map").first
        heading.wait_for(timeout=30_000)
        assert heading.inner_text() == f"Selected on the map · {int(inside.sum()):,}"  # the table lists them
        clicked = page.evaluate(f"document.querySelector('{GRAPH}').data[0].text.length")
        assert clicked == drawn
        page.wait_for_function("() => location.search.includes('select=box')", timeout=30_000)
        idle(page)
        assert not [kind for _, kind, _ in received.take() if kind == "bidi_component"]
        page.get_by_role("button", name="Clear selection").click()
        page.wait_for_function("() => !location.search.includes('select=')", timeout=30_000)
        page.locator("h4", has_text=f"Papers · {len(papers):,}").first.wait_for(timeout=30_000)
        idle(page)
        assert page.locator(POINTS).count() == 0
        assert not [kind for _, kind, _ in received.take() if kind == "bidi_component"]
    finally:
        page.context.close()


# What the page shows without WebGL: the points drawn over the image, the names, the key, the table.
FALLBACK_SHOWN = f"""() => ({{
    points: document.querySelectorAll('{POINTS}').length,
    names: [...document.querySelectorAll('.atlas-label:not([hidden])')].map((e) => e.textContent).sort(),
    key: [...document.querySelectorAll('.atlas-legend-item')].map((e) => [e.textContent, e.classList.contains('atlas-legend-on')]),
    table: [...document.querySelectorAll('h4')].map((h) => h.innerText).find((t) => t.startsWith('Papers')),
    rows: [...document.querySelectorAll('.atlas-table tbody tr')].slice(0, 5).map((r) => r.innerText),
}})"""


def test_without_webgl_a_theme_in_the_key_and_topics_kept_alone_read_as_their_links_afresh(browser, big_app):
    """Without WebGL the browser still shows a theme picked in the key, a topic kept alone ("Only this
    topic", then closed), another ticked with it in the list, and a year pressed there, itself (no map, topic list or papers table from the server): the page
    reads as the same link opened afresh, which the server draws."""
    app, papers = big_app
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    received = Received(page)

    def step(target, wanted: str) -> dict:
        return picked_in_the_browser(page, received, target, wanted, reads=FALLBACK_SHOWN)

    try:
        open_app(page, app.url)
        entry = page.locator(".atlas-legend-item", has_text=THEMES[1])
        themed = step(entry, "q.get('theme') === '1'")
        assert [entry for entry in themed["key"] if entry[1]] == [[THEMES[1], True]]
        assert themed == same_link_afresh(browser, page, FALLBACK_SHOWN)

        step(entry, "!q.has('theme')")  # all again
        topic = page.locator(".atlas-panel-list .atlas-topic").first
        chosen = topic.get_attribute("data-topic")
        step(topic, f"q.get('topic') === '{chosen}'")
        step(page.locator(".atlas-panel-topic .atlas-only"), f"q.get('topics') === '{chosen}'")
        closed = f"q.get('topics') === '{chosen}' && !q.has('topic')"
        alone = step(page.locator(".atlas-panel-topic .atlas-back"), closed)  # its papers alone
        size = int((papers["topic_id"] == int(chosen)).sum())
        assert alone["table"] == f"Papers · {size:,}"
        assert alone == same_link_afresh(browser, page, FALLBACK_SHOWN)
        tick = page.locator(".atlas-topic-list .atlas-topic-tick").nth(1)  # another topic ticked with it
        both = step(tick, f"q.get('topics') === '{chosen},{tick.get_attribute('data-topic')}'")
        assert both == same_link_afresh(browser, page, FALLBACK_SHOWN) and both != alone
        step(page.locator(".atlas-ticks-clear"), "!q.has('topics')")  # every topic again
        page.locator(".atlas-facets-summary").click()  # a year pressed in the list
        year = step(
            page.locator(".atlas-chip[data-column='year']", has_text="2024"), "q.get('f.year') === '2024'"
        )
        assert year["table"] == f"Papers · {int((papers['year'] == 2024).sum()):,}"
        assert year == same_link_afresh(browser, page, FALLBACK_SHOWN)
    finally:
        page.close()
