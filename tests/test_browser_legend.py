"""In a real browser: the map's key lies beside the plot, never over it, and clicking an entry shows only
its papers (the Themes filter, or the colour column's filter, follows, with the counts and the link);
names on the map never cover the hover box or the placed abstract's tag. The steps the browser draws
itself read as the same link opened afresh, which the server draws whole: an entry of the key, Back
and Forward to a view it kept (never with an abstract placed), a box or lasso and Clear selection."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest

from app.map_component.payload import MAX_TOPIC_LABELS
from app.selection import rows_inside
from app.state import parse_selection
from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import (
    GRAPH,
    SEED_MAP,
    THEME_NAMES,
    Received,
    chips,
    draws,
    idle,
    open_app,
    sidebar_multiselect,
    themed_map,
    tiny_map,
    wait_for_redraw,
)
from tests.test_browser_steps import drag_box

pytestmark = pytest.mark.browser  # the browser and page fixtures: tests/conftest.py
THEMES = dict(enumerate(THEME_NAMES))
VENUES = ("ICML", "NeurIPS")


TRACKS = tuple(f"Track {k:02d}" for k in range(1, 23))  # more values than a colouring takes


def write_keyed_map(folder: Path) -> Path:
    """The themed tiny map with a venue column, missing for every tenth paper (so the key coloured by
    venue has a "No venue" entry), and a track column of 22 values (a filter, not a colouring)."""
    atlas = themed_map()
    atlas.papers["venue"] = [None if i % 10 == 9 else VENUES[i % 2] for i in range(len(atlas.papers))]
    atlas.papers["track"] = [TRACKS[i % len(TRACKS)] for i in range(len(atlas.papers))]
    write_map(folder, atlas)
    return folder


def theme_counts(atlas) -> pd.Series:
    """Each theme's papers on the map, by theme id (unassigned papers are in no theme)."""
    theme_of = dict(zip(atlas.topics["topic_id"], atlas.topics["theme_id"], strict=True))
    return atlas.papers["topic_id"].map(theme_of).value_counts()


@pytest.fixture(scope="module")
def keyed_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("legend")
    folder = write_keyed_map(root / "keyed")
    app = StreamlitServer(folder, root / "no-other-maps", timeout=60)
    yield app, read_map(folder)
    app.stop()


def write_many_topics_map(folder: Path, small: int = 5) -> Path:
    """More topics than a view state names (`payload.MAX_TOPIC_LABELS`): theme 0 ("Large topics") holds
    the largest, four papers each, theme 1 ("Small topics") the `small` smallest, three papers each, in
    a corner of their own: the whole map's names leave every one of them out."""
    large = MAX_TOPIC_LABELS
    topic_ids = np.r_[np.repeat(np.arange(large), 4), np.repeat(np.arange(large, large + small), 3)]
    atlas = tiny_map(len(topic_ids))
    rng = np.random.default_rng(1)
    centres = np.r_[rng.uniform(-3, 0, (large, 2)), np.c_[np.linspace(2, 3, small), np.linspace(2, 3, small)]]
    xy = centres[topic_ids] + rng.normal(0, 0.05, (len(topic_ids), 2))
    atlas.papers = atlas.papers.assign(topic_id=topic_ids, x=xy[:, 0], y=xy[:, 1])
    count = large + small
    atlas.topics = pd.DataFrame(
        {
            "topic_id": range(count),
            "label": [f"Large topic {t}" for t in range(large)] + [f"Small topic {t}" for t in range(small)],
            "keywords": [["word"]] * count,
            "keyword_weights": [[1.0]] * count,
            "size": np.bincount(topic_ids).tolist(),
            "x": centres[:, 0],
            "y": centres[:, 1],
            "representative_doc_ids": [
                atlas.papers["doc_id"][topic_ids == t].tolist()[:1] for t in range(count)
            ],
            "theme_id": [0] * large + [1] * small,
        }
    )
    atlas.themes = pd.DataFrame(
        {
            "theme_id": [0, 1],
            "label": ["Large topics", "Small topics"],
            "keywords": [["large"], ["small"]],
            "size": [4 * large, 3 * small],
            "topic_ids": [list(range(large)), list(range(large, count))],
            "x": [-1.5, 2.5],
            "y": [-1.5, 2.5],
        }
    )
    write_map(folder, atlas)
    return folder


@pytest.fixture(scope="module")
def many_topics_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("many-topics")
    app = StreamlitServer(write_many_topics_map(root / "many"), root / "no-other-maps", timeout=60)
    yield app
    app.stop()


def papers_heading(page) -> str:
    locator = page.locator("h4", has_text="Papers").first
    locator.wait_for(timeout=30_000)
    return locator.inner_text()


def wait_for_heading(page, text: str) -> None:
    page.wait_for_function(
        "(text) => [...document.querySelectorAll('h4')].some((h) => h.innerText === text)",
        arg=text,
        timeout=30_000,
    )


def key_entries(page) -> list[dict]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.atlas-legend .atlas-legend-item')].map((e) => ({
            text: e.textContent, button: e.tagName === 'BUTTON', on: e.classList.contains('atlas-legend-on'),
            pressed: e.getAttribute('aria-pressed'), cursor: getComputedStyle(e).cursor}))"""
    )


def rect(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


@pytest.mark.parametrize("width, height", [(1400, 900), (390, 844)])
def test_the_key_lies_outside_the_plot_area_on_a_wide_and_a_phone_screen(browser, keyed_app, width, height):
    app, _ = keyed_app
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        for query in ("", "?colour=venue"):  # theme hues; a column's values (and the missing ones)
            open_app(page, app.url + query)
            entries = key_entries(page)
            assert len(entries) == (2 if not query else 3)
            plot = rect(page, f"{GRAPH} .nsewdrag")  # the plotting rectangle
            key = rect(page, ".atlas-legend")
            assert key["width"] > 0 and key["height"] > 0
            assert not overlap(key, plot), (key, plot)
            for item in page.locator(".atlas-legend-item").all():
                assert not overlap(item.bounding_box(), plot)
            # the key is inside the map's own box, under the plot: the page's layout is unchanged
            root = rect(page, ".atlas-map")
            assert key["y"] >= plot["y"] + plot["height"] - 0.5
            assert key["y"] + key["height"] <= root["y"] + root["height"] + 0.5
            assert plot["height"] > 0.6 * root["height"]  # the chart keeps most of the map's height
    finally:
        context.close()


def test_clicking_a_theme_in_the_key_shows_only_its_papers_and_again_shows_all(page, keyed_app):
    app, atlas = keyed_app
    counts = theme_counts(atlas)
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    assert [e["text"] for e in key_entries(page)] == [THEMES[0], THEMES[1]]  # as typed, not markup
    assert papers_heading(page) == f"Papers · {len(atlas.papers)}"

    for theme, entry in ((1, 1), (0, 0)):  # one theme, then the other in its place
        before = draws(page)
        received.take()  # what came before the click
        page.locator(".atlas-legend-item").nth(entry).click()
        page.wait_for_function(
            "(id) => new URLSearchParams(location.search).get('theme') === String(id)",
            arg=theme,
            timeout=30_000,
        )
        wait_for_heading(page, f"Papers · {counts[theme]}")
        wait_for_redraw(page, before)
        page.get_by_text(f"Showing the {counts[theme]} papers in the theme “{THEMES[theme]}”").wait_for(
            timeout=30_000
        )
        marked = [e for e in key_entries(page) if e["on"]]
        assert [e["text"] for e in marked] == [THEMES[theme]] and marked[0]["pressed"] == "true"
        shown = page.evaluate(
            f"document.querySelector('{GRAPH}').data.find((t) => t.name === 'highlight').x.length"
        )
        assert shown == counts[theme]  # the map draws exactly the theme's papers in colour
        idle(page)  # the sidebar is the server's to draw: its run for the step, after the browser's drawing
        sidebar = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first
        assert THEMES[theme] in sidebar.inner_text()  # the Themes filter holds it ...
        drawn = [(kind, label) for place, kind, label in received.take() if place == "sidebar"]
        assert ("multiselect", "Themes") in drawn  # ... drawn again with it, as the server holds it

    page.locator(".atlas-legend-item.atlas-legend-on").click()  # the isolated entry again: all
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    assert not any(e["on"] for e in key_entries(page))
    assert page.locator(".atlas-legend-all").count() == 0

    page.locator(".atlas-legend-item").nth(1).click()
    wait_for_heading(page, f"Papers · {counts[1]}")
    page.locator(".atlas-legend-all", has_text="Show all").click()  # or "Show all"
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")


# What the map, the topic list beside it and the papers table show, as the reader sees them.
SHOWN = f"""() => {{
    const gd = document.querySelector('{GRAPH}');
    const hits = gd._fullData.filter((t) => t.name === 'highlight' && t.visible === true);
    return {{
        highlighted: hits.length ? hits.reduce((n, t) => n + t.x.length, 0) : null,
        names: [...document.querySelectorAll('.atlas-label:not([hidden])')].map((e) => e.textContent).sort(),
        key: [...document.querySelectorAll('.atlas-legend-item')].map((e) => [e.textContent, e.classList.contains('atlas-legend-on')]),
        showAll: document.querySelectorAll('.atlas-legend-all').length,
        topics: document.querySelector('.atlas-panel-list').innerText,
        ticked: [...document.querySelectorAll('.atlas-topic-list .atlas-topic-tick')].filter((e) => e.checked).map((e) => e.dataset.topic),
        themeTicks: [...document.querySelectorAll('.atlas-section-head .atlas-topic-tick')].map((e) => e.checked ? 'all' : e.indeterminate ? 'some' : 'none'),
        chips: [...document.querySelectorAll('.atlas-chip[aria-pressed="true"]')].map((e) => e.dataset.column + '=' + e.textContent),
        table: [...document.querySelectorAll('h4')].map((h) => h.innerText).find((t) => t.startsWith('Papers')),
        rows: [...document.querySelectorAll('.atlas-table tbody tr')].map((r) => r.innerText),
    }};
}}"""


# The focused element, if it is the one marked `window.atlasFocus` (or, `made_afresh`, a button of
# the same text): its text and aria-pressed.
FOCUSED = """(madeAfresh) => {
    const e = document.activeElement, marked = window.atlasFocus;
    const same = madeAfresh ? e && e.tagName === 'BUTTON' && e.textContent === marked.textContent : e === marked;
    return same ? [e.textContent, e.getAttribute('aria-pressed')] : null;
}"""


@pytest.mark.parametrize(
    "button, made_afresh",
    [(".atlas-legend-item", False), (".atlas-panel-list .atlas-section-name", True)],
    ids=["the key's entry", "the list's theme heading"],
)
def test_a_theme_chosen_with_the_keyboard_keeps_the_focus_and_enter_again_shows_all(
    page, keyed_app, button, made_afresh
):
    """Tab to a theme's entry in the key, or its heading in the topic list, and press Enter: its theme
    alone, the focus still on it (now pressed), so Enter again shows every paper. The key's entry is the
    same element all along; the list is made afresh, its heading given the focus back."""
    app, atlas = keyed_app
    counts = theme_counts(atlas)
    open_app(page, app.url)
    idle(page)
    key = page.get_by_role("region", name="Map of the papers").get_by_role(
        "group", name="Key: show one alone"
    )
    assert key.get_by_role("button").all_inner_texts()[:2] == [
        THEMES[0],
        THEMES[1],
    ]  # as a screen reader finds them
    page.locator(button, has_text=THEMES[1]).first.evaluate("(e) => { e.focus(); window.atlasFocus = e; }")
    assert page.evaluate(FOCUSED, made_afresh) == [THEMES[1], "false"]
    page.keyboard.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('theme') === '1'", timeout=30_000)
    wait_for_heading(page, f"Papers · {counts[1]}")
    idle(page)
    assert page.evaluate(FOCUSED, made_afresh) == [THEMES[1], "true"]
    assert page.locator(".atlas-legend-all", has_text="Show all").count() == 1
    assert page.locator(".atlas-status").text_content() == f"Papers · {counts[1]}"  # a screen reader told
    page.keyboard.press("Enter")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert page.evaluate(FOCUSED, made_afresh) == [THEMES[1], "false"]
    assert page.locator(".atlas-legend-all").count() == 0


def test_show_all_pressed_with_the_keyboard_gives_the_focus_to_the_entry_it_showed_alone(page, keyed_app):
    app, atlas = keyed_app
    open_app(page, app.url)
    idle(page)
    page.locator(".atlas-legend-item", has_text=THEMES[1]).click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('theme') === '1'", timeout=30_000)
    idle(page)
    page.locator(".atlas-legend-all").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert page.locator(".atlas-legend-all").count() == 0
    focused = "[document.activeElement.textContent, document.activeElement.getAttribute('aria-pressed')]"
    assert page.evaluate(focused) == [THEMES[1], "false"]  # not lost with the button


def test_a_theme_picked_in_the_key_from_the_whole_map_is_drawn_by_the_browser_as_the_server_draws_it(
    page, browser, keyed_app
):
    """From the whole map, a theme picked in the key is shown by the browser itself: the server
    draws only the sidebar's filters it changes, the header's sentence and the downloads (no map, topic list or
    papers table comes from it), and the page reads exactly as the same link opened afresh, which
    the server draws whole: the map's highlights and names, the key, the topic list, the table."""
    app, atlas = keyed_app
    counts = theme_counts(atlas)
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    received.take()
    before = draws(page)
    page.locator(".atlas-legend-item", has_text=THEMES[1]).click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('theme') === '1'", timeout=30_000)
    wait_for_redraw(page, before)
    page.get_by_text(f"Showing the {counts[1]} papers in the theme “{THEMES[1]}”").wait_for(timeout=30_000)
    idle(page)
    drawn = received.take()
    assert not [
        kind for place, kind, _ in drawn if kind == "bidi_component"
    ]  # the map, list and table: the browser's
    assert ("sidebar", "multiselect", "Themes") in drawn  # the filter shows the theme, as the server holds it
    # ...and of the sidebar only the filters the theme changes: not its search box, nor Reset view
    assert ("sidebar", "text_input", "Search") not in drawn and (
        "sidebar",
        "button",
        "Reset view",
    ) not in drawn
    assert [label for place, kind, label in drawn if kind == "download_button"][0] == (
        f"Download these {counts[1]} papers (CSV)"
    )
    shown = page.evaluate(SHOWN)
    assert shown["highlighted"] == counts[1] and shown["table"] == f"Papers · {counts[1]}"
    assert THEMES[1] in shown["names"] and THEMES[0] not in shown["names"]
    assert [entry for entry in shown["key"] if entry[1]] == [[THEMES[1], True]] and shown["showAll"] == 1
    assert THEMES[1] in shown["topics"] and THEMES[0] not in shown["topics"]

    assert same_link_afresh(browser, page) == shown  # drawn by the server from the start

    # Back and Forward in the browser: the whole map again, the theme again, drawn by the browser too.
    for step, wanted, heading in (
        (page.go_back, whole, len(atlas.papers)),
        (page.go_forward, shown, counts[1]),
    ):
        received.take()
        step()
        wait_for_heading(page, f"Papers · {heading}")
        idle(page)
        assert not [kind for place, kind, _ in received.take() if kind == "bidi_component"]
        assert page.evaluate(SHOWN) == wanted
        themes = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first.inner_text()
        assert (THEMES[1] in themes) == (wanted == shown)  # the sidebar's filter follows the link
    page.go_back()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert page.evaluate(SHOWN) == whole
    # Picked again, then shown all again from the key: the browser holds the view before the theme.
    for again in (".atlas-legend-all", ".atlas-legend-item.atlas-legend-on"):  # "Show all", or the entry
        page.locator(".atlas-legend-item", has_text=THEMES[1]).click()
        wait_for_heading(page, f"Papers · {counts[1]}")
        idle(page)
        received.take()
        page.locator(again).click()
        page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
        wait_for_heading(page, f"Papers · {len(atlas.papers)}")
        page.get_by_text(f"Showing the {len(atlas.papers)} papers of the map").wait_for(timeout=30_000)
        idle(page)
        assert not [kind for place, kind, _ in received.take() if kind == "bidi_component"]
        assert page.evaluate(SHOWN) == whole
    # Picked, then the other theme in its place: drawn by the browser from the view before the first.
    page.locator(".atlas-legend-item", has_text=THEMES[1]).click()
    wait_for_heading(page, f"Papers · {counts[1]}")
    other = picked_in_the_browser(page, received, THEMES[0], "q.get('theme') === '0'")
    wait_for_heading(page, f"Papers · {counts[0]}")
    page.get_by_text(f"Showing the {counts[0]} papers in the theme “{THEMES[0]}”").wait_for(timeout=30_000)
    other = page.evaluate(SHOWN)
    assert other["highlighted"] == counts[0] and [e for e in other["key"] if e[1]] == [[THEMES[0], True]]
    assert same_link_afresh(browser, page) == other
    picked_in_the_browser(page, received, "Show all", "!q.has('theme')")
    # Picked, then a paper opened (the server draws the map with the theme), then all again: the server's.
    page.locator(".atlas-legend-item", has_text=THEMES[1]).click()
    wait_for_heading(page, f"Papers · {counts[1]}")
    idle(page)
    page.locator(".atlas-table tbody .atlas-row-title").first.click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('paper')", timeout=30_000)
    idle(page)
    received.take()
    page.locator(".atlas-legend-all", has_text="Show all").click()
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert [kind for place, kind, _ in received.take() if kind == "bidi_component"]  # the map: the server's
    assert (
        not any(entry["on"] for entry in key_entries(page)) and page.locator(".atlas-legend-all").count() == 0
    )
    drawn = page.evaluate(
        f"document.querySelector('{GRAPH}')._fullData.filter((t) => t.visible === true)[0].x.length"
    )
    assert drawn == len(atlas.papers)  # every paper in colour again


def test_a_filter_or_search_in_the_sidebar_is_drawn_by_the_browser_as_the_server_draws_it(
    page, browser, keyed_app
):
    """A theme, then a venue chosen in the sidebar's filters, then a search: the server writes the link
    and draws what it owns (the sidebar, the header's state with the search's hits, the downloads), the
    browser draws the map, the topic list and the papers table from the link (none comes from the
    server), and the page reads as the same link opened afresh. With a paper open, a filter is the
    server's to draw (the paper's panel is its answer)."""
    app, atlas = keyed_app
    counts = theme_counts(atlas)
    received = Received(page)
    open_app(page, app.url)
    idle(page)

    def choose(label: str, option: str) -> None:
        sidebar_multiselect(page, label).click()
        page.get_by_role("option", name=option, exact=True).click()
        page.keyboard.press("Escape")

    def search(words: str) -> None:
        page.get_by_role("textbox", name="Search").fill(words)
        page.keyboard.press("Enter")

    for step, query in (
        (lambda: choose("Themes", f"{THEMES[1]} ({counts[1]:,})"), "theme=1"),
        (lambda: choose("Venue", "NeurIPS"), "f.venue=NeurIPS"),
        (lambda: search("learning"), "q=learning"),
    ):
        before = draws(page)
        received.take()
        step()
        page.wait_for_function("(q) => location.search.includes(q)", arg=query, timeout=30_000)
        wait_for_redraw(page, before)
        idle(page)
        drawn = received.take()
        assert not [kind for place, kind, _ in drawn if kind == "bidi_component"]  # the browser's
        assert [kind for place, kind, _ in drawn if kind == "download_button"]  # the server's
        shown = page.evaluate(SHOWN)
        assert same_link_afresh(browser, page) == shown
        if query == "f.venue=NeurIPS":
            theme = atlas.papers.topic_id.map(
                dict(zip(atlas.topics.topic_id, atlas.topics.theme_id, strict=True))
            )
            wanted = int(((theme == 1) & (atlas.papers.venue == "NeurIPS")).sum())
            assert shown["highlighted"] == wanted and shown["table"] == f"Papers · {wanted}"
    assert page.get_by_text("match the words “learning”").count() == 1  # the header: a search answered
    open_app(page, app.url + "?paper=doc0003")  # a paper opened
    idle(page)
    received.take()
    choose("Venue", "ICML")
    page.wait_for_function("() => location.search.includes('f.venue=ICML')", timeout=30_000)
    idle(page)
    assert [kind for place, kind, _ in received.take() if kind == "bidi_component"]  # the server's
    assert same_link_afresh(browser, page) == page.evaluate(SHOWN)


def test_coloured_by_a_column_a_value_in_the_key_filters_by_it_and_missing_values_are_inert(page, keyed_app):
    app, atlas = keyed_app
    open_app(page, app.url + "?colour=venue")
    entries = key_entries(page)
    assert [e["text"] for e in entries] == [*VENUES, "No venue"]
    assert [e["button"] for e in entries] == [True, True, False]
    assert [e["cursor"] for e in entries] == ["pointer", "pointer", "default"]  # "No venue" is not clickable
    neurips = int((atlas.papers["venue"] == "NeurIPS").sum())

    page.locator(".atlas-legend-item", has_text="NeurIPS").click()
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('f.venue') === 'NeurIPS'", timeout=30_000
    )
    wait_for_heading(page, f"Papers · {neurips}")
    assert [e["text"] for e in key_entries(page) if e["on"]] == ["NeurIPS"]

    before = page.evaluate("location.href")
    page.locator(".atlas-legend-item", has_text="No venue").click()  # inert: nothing changes
    page.wait_for_timeout(1500)
    assert page.evaluate("location.href") == before
    assert papers_heading(page) == f"Papers · {neurips}"

    page.locator(".atlas-legend-item", has_text="NeurIPS").click()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('f.venue')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")


HOVER_OVER_NAME = """([graph]) => {
    // With every layer taking the pointer, the topmost element painted at a point is the one hit.
    const style = document.createElement('style');
    style.textContent = '.atlas-map-marks, .atlas-map-marks *, .main-svg, .main-svg * { pointer-events: auto !important; }';
    document.head.appendChild(style);
    try {
        const box = document.querySelector(graph + ' .hoverlayer .hovertext').getBoundingClientRect();
        const names = [...document.querySelectorAll('.atlas-label:not([hidden])')].map((e) => e.getBoundingClientRect())
            .filter((r) => r.left < box.right && box.left < r.right && r.top < box.bottom && box.top < r.bottom);
        const spots = [[(box.left + box.right) / 2, (box.top + box.bottom) / 2]];
        for (const r of names) {  // and the middle of each name's overlap with the box
            spots.push([(Math.max(r.left, box.left) + Math.min(r.right, box.right)) / 2,
                        (Math.max(r.top, box.top) + Math.min(r.bottom, box.bottom)) / 2]);
        }
        const top = spots.map(([x, y]) => {
            const hit = document.elementFromPoint(x, y);
            return hit && hit.closest('.hoverlayer') ? 'hover' : hit && hit.closest('.atlas-label') ? 'name' : 'other';
        });
        return { covered: names.length, top };
    } finally {
        style.remove();
    }
}"""


def point_position(page, row: int) -> list[float]:
    return page.evaluate(
        """([selector, row]) => {
            const gd = document.querySelector(selector);
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return [r.left + gd._fullLayout.xaxis.l2p(gd.atlasTable.x[row]),
                    r.top + gd._fullLayout.yaxis.l2p(gd.atlasTable.y[row])];
        }""",
        [GRAPH, row],
    )


def test_the_hover_box_is_drawn_over_the_names(page, keyed_app):
    """Hover papers until one's box falls over a name: at the box's centre and where it meets the name,
    the box is what shows."""
    app, atlas = keyed_app
    open_app(page, app.url)
    checked = 0
    for row in range(len(atlas.papers)):
        page.mouse.move(*point_position(page, row))
        try:
            page.wait_for_selector(f"{GRAPH} .hoverlayer .hovertext", timeout=3_000)
        except Exception:  # noqa: BLE001 (another paper drawn over this one: try the next)
            continue
        found = page.evaluate(HOVER_OVER_NAME, [GRAPH])
        assert found["top"][0] == "hover", found  # the box's centre
        if found["covered"]:
            assert found["top"] == ["hover"] * len(found["top"]), found
            checked += 1
            if checked >= 3:
                break
        page.mouse.move(2, 2)
    assert checked >= 3  # boxes over names were found and checked: the test can fail


def test_the_placed_abstracts_tag_is_drawn_over_the_names(page, keyed_app):
    """The pin (a placed abstract) moved onto a topic name, as placing an abstract there would: its star
    and "Your abstract" tag show over the name, at the tag's centre and the star's."""
    app, _ = keyed_app
    open_app(page, app.url)
    found = page.evaluate(
        """() => {
            const label = document.querySelector('.atlas-label:not([hidden]):not(.atlas-theme)');
            const pin = document.querySelector('.atlas-pin');
            pin.hidden = false;
            const r = label.getBoundingClientRect(), base = pin.offsetParent.getBoundingClientRect();
            pin.style.width = pin.style.height = '24px';
            pin.style.transform = `translate(${r.left - base.left + 4}px, ${r.top - base.top - 4}px)`;
            const tag = pin.querySelector('.atlas-pin-tag').getBoundingClientRect();
            const star = pin.getBoundingClientRect();
            const style = document.createElement('style');
            style.textContent = '.atlas-map-marks, .atlas-map-marks * { pointer-events: auto !important; }';
            document.head.appendChild(style);
            const at = (x, y) => {
                const hit = document.elementFromPoint(x, y);
                return hit.closest('.atlas-pin') ? 'pin' : hit.closest('.atlas-label') ? 'name' : 'other';
            };
            const spots = [[tag.left + 4, tag.top + tag.height / 2], [star.left + 12, star.top + 12]];
            const overlaps = spots.map(([x, y]) => x >= r.left && x <= r.right && y >= r.top && y <= r.bottom);
            const top = spots.map(([x, y]) => at(x, y));
            style.remove();
            return {overlaps, top};
        }"""
    )
    assert any(found["overlaps"]), found  # the pin lies over the name: the test can fail
    assert found["top"] == ["pin", "pin"], found


def test_a_theme_chosen_in_the_sidebar_and_shown_all_again_from_the_key_leaves_the_themes_filter_empty(
    page, keyed_app
):
    """The sidebar writes the Themes filter's value again when the key reruns it: the browser
    never keeps a theme the server has dropped (the filter was last drawn empty, before the reader chose)."""
    app, atlas = keyed_app
    open_app(page, app.url)
    sidebar_multiselect(page, "Themes").click()
    page.get_by_role("option", name=THEMES[1], exact=False).first.click()
    page.keyboard.press("Escape")
    page.wait_for_function("() => new URLSearchParams(location.search).get('theme') === '1'", timeout=30_000)
    assert chips(page, "Themes")[0].startswith(THEMES[1])
    page.locator(".atlas-legend-item.atlas-legend-on").click()  # the theme shown alone, clicked: all again
    page.wait_for_function("() => !new URLSearchParams(location.search).has('theme')", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert chips(page, "Themes") == []


def picked_in_the_browser(
    page, received: Received, entry, wanted: str, press: str = "", reads: str = SHOWN
) -> dict:
    """Click the key's `entry` on the open page (its text; or a locator, with `press` a key pressed on
    it instead of a click; or take a step such as `page.go_back`), wait for the link (`wanted`: a JS
    test of its query) and for the page to settle; assert the server drew no map, list or table (what
    `received` decodes: it watched the page before it opened, as a socket is seen only from its
    opening); what the page shows (`reads`: a JS function reading it)."""
    idle(page)
    received.take()
    before = draws(page)
    target = page.locator(".atlas-legend button", has_text=entry) if isinstance(entry, str) else entry
    if press:
        target.press(press)
    elif hasattr(target, "click"):
        target.click()
    else:
        target()
    page.wait_for_function(
        f"() => {{ const q = new URLSearchParams(location.search); return {wanted}; }}", timeout=30_000
    )
    wait_for_redraw(page, before)
    idle(page)
    assert not [kind for place, kind, _ in received.take() if kind == "bidi_component"]
    return page.evaluate(reads)


def tick(page, topic: int):
    """The tick of `topic` in the topic list."""
    return page.locator(f".atlas-topic-tick[data-topic='{topic}']")


def with_values_open(page, url: str) -> None:
    """The page opened at `url` and settled, "Filter by …" above the topic list opened."""
    open_app(page, url)
    idle(page)
    page.locator(".atlas-facets-summary").click()


def value(page, column: str, text: str):
    """The value `text` of `column` in the topic list's "Filter by …"."""
    return page.locator(f".atlas-chip[data-column='{column}']", has_text=text)


def opened_in_the_panel(page, topic: int) -> None:
    """Open `topic` from the topic panel's list, as a reader clicks it, and wait for its link."""
    page.locator(f".atlas-panel-list .atlas-topic[data-topic='{topic}']").click()
    page.wait_for_function(
        f"() => new URLSearchParams(location.search).get('topic') === '{topic}'", timeout=30_000
    )


def same_link_afresh(browser, page, reads: str = SHOWN) -> dict:
    fresh = browser.new_page(viewport=page.viewport_size)
    try:
        open_app(fresh, page.url)  # the same link, drawn by the server from the start
        idle(fresh)
        return fresh.evaluate(reads)
    finally:
        fresh.close()


def test_a_theme_picked_with_a_topic_open_keeps_it_open_or_closes_it_as_the_server_does(
    page, browser, keyed_app
):
    """A topic opened in the panel, then a theme picked in the key: drawn by the browser, which keeps the
    topic open where it is in the theme (the link holds both) and closes it with the same step where it
    is not, as the server does; each reads as the same link opened afresh."""
    app, atlas = keyed_app
    counts = theme_counts(atlas)
    topics = atlas.topics.set_index("topic_id")
    inside = int(topics.index[topics["theme_id"] == 1][0])
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    opened_in_the_panel(page, inside)
    idle(page)
    opened = page.locator(".atlas-panel-topic h4, .atlas-panel-topic .atlas-panel-title").first.inner_text()

    kept = picked_in_the_browser(
        page, received, THEMES[1], f"q.get('theme') === '1' && q.get('topic') === '{inside}'"
    )
    assert [e for e in kept["key"] if e[1]] == [[THEMES[1], True]]
    assert page.locator(".atlas-panel-topic").is_visible()  # still open...
    assert (
        page.locator(".atlas-panel-topic h4, .atlas-panel-topic .atlas-panel-title").first.inner_text()
        == opened
    )
    assert same_link_afresh(browser, page) == kept  # ...as the server draws that link

    closed = picked_in_the_browser(page, received, THEMES[0], "q.get('theme') === '0' && !q.has('topic')")
    wait_for_heading(page, f"Papers · {counts[0]}")
    page.locator(".atlas-panel-list").wait_for(timeout=30_000)  # the topic closed: the list again
    closed = page.evaluate(SHOWN)
    assert closed["highlighted"] == counts[0] and [e for e in closed["key"] if e[1]] == [[THEMES[0], True]]
    assert same_link_afresh(browser, page) == closed
    page.get_by_text(f"Showing the {counts[0]} papers in the theme “{THEMES[0]}”").wait_for(timeout=30_000)

    # Coloured by a column, a value picked with a topic open: the topic stays open, narrowed to the value.
    open_app(page, app.url + "?colour=venue")
    idle(page)
    opened_in_the_panel(page, inside)
    venue = atlas.papers.loc[atlas.papers["topic_id"] == inside, "venue"].mode()[0]  # one the topic holds
    both = f"q.get('f.venue') === '{venue}' && q.get('topic') === '{inside}'"
    narrowed = picked_in_the_browser(page, received, venue, both)
    in_topic = atlas.papers[(atlas.papers["topic_id"] == inside) & (atlas.papers["venue"] == venue)]
    wait_for_heading(page, f"Papers · {len(in_topic)}")
    narrowed = page.evaluate(SHOWN)
    assert narrowed["highlighted"] == len(in_topic) and page.locator(".atlas-panel-topic").is_visible()
    assert same_link_afresh(browser, page) == narrowed


def test_only_this_topic_is_drawn_by_the_browser_and_reads_as_its_link_open_and_closed(
    page, browser, keyed_app
):
    """A topic opened in the panel, then "Only this topic": the browser shows its papers alone (the
    server draws only the sidebar's filters, the header and the downloads), the Topics filter holds it,
    and the page reads as the same link opened afresh; so do Back and Forward in the browser; closed,
    the topic's papers stay alone, again as that link reads afresh; so does a theme then picked in the
    key."""
    app, atlas = keyed_app
    topics = atlas.topics.set_index("topic_id")
    inside = int(topics.index[topics["theme_id"] == 1][0])
    name, size = str(topics.loc[inside, "label"]), int((atlas.papers["topic_id"] == inside).sum())
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    opened_in_the_panel(page, inside)
    both = f"q.get('topics') === '{inside}' && q.get('topic') === '{inside}'"
    alone = picked_in_the_browser(page, received, page.locator(".atlas-panel-topic .atlas-only"), both)
    page.get_by_text(f"Showing the {size} papers in the topic “{name}”").wait_for(timeout=30_000)
    assert alone["table"] == f"Papers · {size}" and chips(page, "Topics")[0].startswith(name)
    assert same_link_afresh(browser, page) == alone
    # Back in the browser: the topic open without the filter; Forward: alone again. Both drawn here.
    before = picked_in_the_browser(
        page, received, page.go_back, f"!q.has('topics') && q.get('topic') === '{inside}'"
    )
    assert chips(page, "Topics") == [] and same_link_afresh(browser, page) == before
    assert picked_in_the_browser(page, received, page.go_forward, both) == alone
    assert chips(page, "Topics")[0].startswith(name)

    closed = f"q.get('topics') === '{inside}' && !q.has('topic')"
    shown = picked_in_the_browser(page, received, page.locator(".atlas-panel-topic .atlas-back"), closed)
    assert shown["highlighted"] == size and shown["table"] == f"Papers · {size}"
    assert [entry for entry in shown["key"] if entry[1]] == [] and shown["showAll"] == 0
    assert same_link_afresh(browser, page) == shown
    # A theme then picked in the key drops the Topics filter: drawn by the browser too, as its link reads.
    themed = picked_in_the_browser(page, received, THEMES[0], "q.get('theme') === '0' && !q.has('topics')")
    assert same_link_afresh(browser, page) == themed


def test_only_the_unassigned_papers_are_drawn_by_the_browser_and_read_as_their_link(page, browser, keyed_app):
    """The topic list's "Unassigned" opened, then "Only this topic": the browser keeps the unassigned
    papers alone (the view shows them), open and closed, each as the same link reads afresh."""
    app, atlas = keyed_app
    unassigned = int((atlas.papers["topic_id"] == -1).sum())
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    opened_in_the_panel(page, -1)
    only = page.locator(".atlas-panel-topic .atlas-only")
    alone = picked_in_the_browser(page, received, only, "q.get('topics') === '-1' && q.get('topic') === '-1'")
    assert alone["table"] == f"Papers · {unassigned}" and same_link_afresh(browser, page) == alone
    back = page.locator(".atlas-panel-topic .atlas-back")
    closed = picked_in_the_browser(page, received, back, "q.get('topics') === '-1' && !q.has('topic')")
    assert closed["table"] == f"Papers · {unassigned}" and same_link_afresh(browser, page) == closed


def test_topics_ticked_in_the_list_are_drawn_by_the_browser_and_read_as_their_link(page, browser, keyed_app):
    """Topics ticked in the topic list, one by the keyboard (Space, the focus kept on its tick): the
    browser shows their papers alone (the server draws no map, list or table), the Topics filter and
    the link hold them in the order ticked, and each step reads as the same link opened afresh; so do
    Back and Forward, unticking one, and "Show all topics"."""
    app, atlas = keyed_app
    sizes = atlas.papers["topic_id"].value_counts()
    names = atlas.topics.set_index("topic_id")["label"]
    first, second = (int(t) for t in atlas.topics["topic_id"][:2])
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    assert whole["ticked"] == [] and "Show all topics" not in whole["topics"]

    one = picked_in_the_browser(page, received, tick(page, first), f"q.get('topics') === '{first}'")
    assert one["ticked"] == [str(first)] and one["table"] == f"Papers · {sizes[first]}"
    assert one["highlighted"] == sizes[first] and "Show all topics" in one["topics"]
    assert chips(page, "Topics") == [f"{names[first]} ({sizes[first]})"]
    assert same_link_afresh(browser, page) == one
    both_link = f"q.get('topics') === '{first},{second}'"
    both = picked_in_the_browser(page, received, tick(page, second), both_link, press="Space")
    assert sorted(both["ticked"]) == sorted([str(first), str(second)])
    assert both["table"] == f"Papers · {sizes[first] + sizes[second]}"
    assert page.evaluate("() => document.activeElement.dataset.topic") == str(second)
    assert same_link_afresh(browser, page) == both
    assert picked_in_the_browser(page, received, page.go_back, f"q.get('topics') === '{first}'") == one
    assert picked_in_the_browser(page, received, page.go_forward, both_link) == both

    other = picked_in_the_browser(page, received, tick(page, first), f"q.get('topics') === '{second}'")
    assert other["ticked"] == [str(second)] and other["table"] == f"Papers · {sizes[second]}"
    assert same_link_afresh(browser, page) == other
    every = page.locator(".atlas-ticks-clear")
    assert picked_in_the_browser(page, received, every, "!q.has('topics')") == whole
    assert chips(page, "Topics") == []


def test_a_theme_s_tick_ticks_all_its_topics_and_reads_as_their_link(page, browser, keyed_app):
    """A theme's tick in the topic list ticks all its topics (drawn by the browser, the link naming
    them), one of them unticked leaves the theme's tick mixed, and unticked it unticks the rest; each
    reads as the same link opened afresh."""
    app, atlas = keyed_app
    topics = atlas.topics.set_index("topic_id")
    inside = [int(t) for t in topics.index[topics["theme_id"] == 1]]
    size = int(atlas.papers["topic_id"].isin(inside).sum())
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    theme = page.locator(".atlas-section-head .atlas-topic-tick[data-theme='1']")
    ids = ",".join(str(t) for t in inside)
    whole = picked_in_the_browser(page, received, theme, f"q.get('topics') === '{ids}'")
    assert sorted(whole["ticked"]) == sorted(str(t) for t in inside) and whole["table"] == f"Papers · {size}"
    assert sorted(whole["themeTicks"]) == ["all", "none"] and same_link_afresh(browser, page) == whole
    one = tick(page, inside[0])
    mixed = picked_in_the_browser(page, received, one, f"q.get('topics') === '{ids.split(',', 1)[1]}'")
    assert sorted(mixed["themeTicks"]) == ["none", "some"] and same_link_afresh(browser, page) == mixed
    # ticked again: the rest of its topics after the one left
    again = f"q.get('topics') === '{inside[1]},{inside[0]}'"
    assert picked_in_the_browser(page, received, theme, again) == whole
    none = picked_in_the_browser(page, received, theme, "!q.has('topics')")
    assert none["ticked"] == [] and none["themeTicks"] == ["none", "none"]


def test_values_pressed_in_the_list_are_drawn_by_the_browser_and_read_as_their_link(page, browser, keyed_app):
    """Filter by … opened, a venue pressed, then another: the browser shows their papers (the server
    draws no map, list or table), the link holds the venue's filter in the order pressed, and each
    step, Back and Forward among them, reads as the same link opened afresh; both dropped, the whole
    map again. Coloured by venue,
    a venue pressed marks its entry in the key, as the server marks it."""
    app, atlas = keyed_app
    venue = atlas.papers["venue"]
    received = Received(page)
    with_values_open(page, app.url)

    def chip(text: str) -> object:
        return value(page, "venue", text)

    one = picked_in_the_browser(page, received, chip("ICML"), "q.getAll('f.venue').join() === 'ICML'")
    assert one["chips"] == ["venue=ICML"] and one["table"] == f"Papers · {int((venue == 'ICML').sum())}"
    assert same_link_afresh(browser, page) == one
    two = "q.getAll('f.venue').join() === 'ICML,NeurIPS'"
    both = picked_in_the_browser(page, received, chip("NeurIPS"), two)
    assert both["table"] == f"Papers · {int(venue.notna().sum())}" and same_link_afresh(browser, page) == both
    # Back and Forward in the browser: drawn by the browser too.
    assert picked_in_the_browser(page, received, page.go_back, "q.getAll('f.venue').join() === 'ICML'") == one
    assert picked_in_the_browser(page, received, page.go_forward, two) == both
    picked_in_the_browser(page, received, chip("ICML"), "q.getAll('f.venue').join() === 'NeurIPS'")
    none = picked_in_the_browser(page, received, chip("NeurIPS"), "!q.has('f.venue')")
    assert none["chips"] == [] and none["table"] == f"Papers · {len(venue)}"

    with_values_open(page, f"{app.url}?colour=venue")
    keyed = picked_in_the_browser(page, received, chip("NeurIPS"), "q.get('f.venue') === 'NeurIPS'")
    assert [entry for entry in keyed["key"] if entry[1]] == [["NeurIPS", True]] and keyed["showAll"] == 1
    assert same_link_afresh(browser, page) == keyed


def test_values_of_a_column_too_many_to_colour_by_are_pressed_and_drawn_by_the_browser(
    page, browser, keyed_app
):
    """A column of 22 values (more than a colouring takes, so not in Colour by) is offered in Filter by
    … too, the values scrolling in a box of their own (kept where the reader scrolled it): a track
    pressed, then another, shows their papers drawn by the browser, as the same link opened afresh
    reads; the sidebar's filter of the column follows."""
    app, atlas = keyed_app
    track = atlas.papers["track"]
    received = Received(page)
    with_values_open(page, app.url)
    assert page.locator(".atlas-chip[data-column='track']").all_inner_texts() == list(TRACKS)

    def chip(text: str) -> object:
        return value(page, "track", text)

    box = page.locator(".atlas-facets-values")  # many values scroll in a box of their own
    assert box.evaluate("(el) => el.scrollHeight > el.clientHeight")
    box.evaluate("(el) => (el.scrollTop = el.scrollHeight)")  # scrolled to its end, as a reader may
    chip("Track 21").scroll_into_view_if_needed()
    scrolled = box.evaluate("(el) => el.scrollTop")
    one = picked_in_the_browser(page, received, chip("Track 21"), "q.getAll('f.track').join() === 'Track 21'")
    assert (
        scrolled > 0 and box.evaluate("(el) => el.scrollTop") == scrolled
    )  # kept as the list is drawn again
    assert one["chips"] == ["track=Track 21"]
    assert one["table"] == f"Papers · {int((track == 'Track 21').sum())}"
    assert same_link_afresh(browser, page) == one
    two = "q.getAll('f.track').join() === 'Track 21,Track 02'"
    both = picked_in_the_browser(page, received, chip("Track 02"), two)
    assert both["table"] == f"Papers · {int(track.isin(['Track 21', 'Track 02']).sum())}"
    assert same_link_afresh(browser, page) == both
    tracks = [tag.split(",")[0] for tag in chips(page, "Track")]  # the sidebar's filter follows
    assert tracks == ["Track 21", "Track 02"]


def test_ticks_and_values_pressed_together_are_drawn_by_the_browser_and_read_as_their_link(
    page, browser, keyed_app
):
    """A topic ticked, a venue pressed, another topic ticked, the venue dropped: the browser draws each
    from the whole map (the server draws no map, list or table), each reads as the same link opened
    afresh, and Back returns to the view under both filters, drawn by the browser too; so does a tick
    over a venue pressed first."""
    app, atlas = keyed_app
    first, second = (int(t) for t in atlas.topics["topic_id"][:2])
    papers = atlas.papers
    received = Received(page)
    with_values_open(page, app.url)
    icml = value(page, "venue", "ICML")

    def count(topics: list[int], venue: bool) -> str:
        kept = papers["topic_id"].isin(topics) & ((papers["venue"] == "ICML") if venue else True)
        return f"Papers · {int(kept.sum())}"

    one = picked_in_the_browser(page, received, tick(page, first), f"q.get('topics') === '{first}'")
    assert one["table"] == count([first], venue=False)
    both = f"q.get('topics') === '{first}' && q.get('f.venue') === 'ICML'"
    narrowed = picked_in_the_browser(page, received, icml, both)
    assert narrowed["chips"] == ["venue=ICML"] and narrowed["table"] == count([first], venue=True)
    assert same_link_afresh(browser, page) == narrowed
    two = f"q.get('topics') === '{first},{second}' && q.get('f.venue') === 'ICML'"
    wider = picked_in_the_browser(page, received, tick(page, second), two)
    assert sorted(wider["ticked"]) == sorted([str(first), str(second)])
    assert wider["table"] == count([first, second], venue=True) and same_link_afresh(browser, page) == wider
    dropped = picked_in_the_browser(
        page, received, icml, f"q.get('topics') === '{first},{second}' && !q.has('f.venue')"
    )
    assert dropped["chips"] == [] and dropped["table"] == count([first, second], venue=False)
    page.locator(".atlas-facets-summary").click()  # closed, as a fresh page shows it with no value chosen
    assert same_link_afresh(browser, page) == page.evaluate(SHOWN)
    assert picked_in_the_browser(page, received, page.go_back, two) == wider
    # The other way round: a venue pressed first, then a topic ticked over it.
    with_values_open(page, app.url)
    picked_in_the_browser(page, received, icml, "q.get('f.venue') === 'ICML'")
    ticked = picked_in_the_browser(page, received, tick(page, second), f"q.get('topics') === '{second}'")
    assert ticked["table"] == count([second], venue=True) and same_link_afresh(browser, page) == ticked


def test_topics_ticked_over_a_link_s_topics_filter_are_drawn_by_the_browser_and_read_as_their_link(
    page, browser, keyed_app
):
    """A link that chose a topic (and the venue ICML): another ticked, then the first unticked, then
    "Show all topics" are drawn by the browser from the view without the Topics filter, which the
    server sent; each reads as the same link opened afresh (the whole map's names and counts again at
    the end, the venue filter kept)."""
    app, atlas = keyed_app
    first, second = (int(t) for t in atlas.topics["topic_id"][:2])
    icml = atlas.papers["venue"] == "ICML"
    received = Received(page)
    open_app(page, f"{app.url}?topics={first}&f.venue=ICML")
    idle(page)

    both = picked_in_the_browser(
        page, received, tick(page, second), f"q.get('topics') === '{first},{second}'"
    )
    in_both = int((icml & atlas.papers["topic_id"].isin([first, second])).sum())
    assert both["table"] == f"Papers · {in_both}" and same_link_afresh(browser, page) == both
    other = picked_in_the_browser(page, received, tick(page, first), f"q.get('topics') === '{second}'")
    assert other["table"] == f"Papers · {int((icml & (atlas.papers['topic_id'] == second)).sum())}"
    assert same_link_afresh(browser, page) == other
    every = picked_in_the_browser(
        page, received, page.locator(".atlas-ticks-clear"), "!q.has('topics') && q.get('f.venue') === 'ICML'"
    )
    assert every["ticked"] == [] and every["table"] == f"Papers · {int(icml.sum())}"
    assert same_link_afresh(browser, page) == every


def test_a_topic_ticked_in_a_theme_chosen_in_the_sidebar_is_drawn_by_the_browser_as_its_link_reads(
    page, browser, keyed_app
):
    """A theme chosen (a link's, as the sidebar's), then one of its topics ticked: drawn by the browser
    (js/steps.js: the page's facts answer the view; the server draws no map, list or table), which
    reads as the same link opened afresh, the theme kept (the topic lies inside it)."""
    app, atlas = keyed_app
    topics = atlas.topics.set_index("topic_id")
    inside = int(topics.index[topics["theme_id"] == 1][0])
    received = Received(page)
    open_app(page, f"{app.url}?theme=1")
    shown = picked_in_the_browser(
        page, received, tick(page, inside), f"q.get('topics') === '{inside}' && q.get('theme') === '1'"
    )
    wait_for_heading(page, f"Papers · {topics.loc[inside, 'size']}")
    shown = page.evaluate(SHOWN)
    assert shown["ticked"] == [str(inside)]
    assert same_link_afresh(browser, page) == shown


def test_a_value_picked_in_the_key_is_drawn_by_the_browser_as_the_server_draws_it(page, browser, keyed_app):
    """Coloured by a column, a value picked in the key is shown by the browser (the server draws no
    map, topic list or table for it) and reads as the same link opened afresh; "Show all" gives back
    the whole map, as the browser showed it before."""
    app, atlas = keyed_app
    neurips = int((atlas.papers["venue"] == "NeurIPS").sum())
    received = Received(page)
    open_app(page, app.url + "?colour=venue")
    idle(page)
    whole = page.evaluate(SHOWN)
    shown = picked_in_the_browser(page, received, "NeurIPS", "q.get('f.venue') === 'NeurIPS'")
    wait_for_heading(page, f"Papers · {neurips}")
    shown = page.evaluate(SHOWN)
    assert shown["highlighted"] == neurips and shown["table"] == f"Papers · {neurips}"
    assert [entry for entry in shown["key"] if entry[1]] == [["NeurIPS", True]] and shown["showAll"] == 1
    assert same_link_afresh(browser, page) == shown
    page.get_by_text(f"Showing the {neurips} papers of the map with venue NeurIPS").wait_for(timeout=30_000)

    assert picked_in_the_browser(page, received, "Show all", "!q.has('f.venue')") == whole
    # Back and Forward in the browser: the value again, the whole map again, drawn by the browser too.
    assert picked_in_the_browser(page, received, page.go_back, "q.get('f.venue') === 'NeurIPS'") == shown
    assert picked_in_the_browser(page, received, page.go_forward, "!q.has('f.venue')") == whole

    # Another value while one is shown (ICML, the key's first: position 0): drawn by the browser too, from
    # the view before the first, which the map, the list and the table still hold; one step, one entry.
    picked_in_the_browser(page, received, "NeurIPS", "q.get('f.venue') === 'NeurIPS'")
    entries = page.evaluate("history.length")
    icml = int((atlas.papers["venue"] == "ICML").sum())
    other = picked_in_the_browser(page, received, "ICML", "q.get('f.venue') === 'ICML'")
    wait_for_heading(page, f"Papers · {icml}")
    other = page.evaluate(SHOWN)
    assert other["highlighted"] == icml and [entry for entry in other["key"] if entry[1]] == [["ICML", True]]
    assert page.evaluate("history.length") == entries + 1  # not all shown first
    assert same_link_afresh(browser, page) == other
    page.get_by_text(f"Showing the {icml} papers of the map with venue ICML").wait_for(timeout=30_000)
    assert picked_in_the_browser(page, received, page.go_back, "q.get('f.venue') === 'NeurIPS'") == shown
    assert picked_in_the_browser(page, received, page.go_forward, "q.get('f.venue') === 'ICML'") == other
    assert picked_in_the_browser(page, received, "Show all", "!q.has('f.venue')") == whole


def test_a_theme_of_topics_the_whole_map_leaves_unnamed_is_named_as_the_server_names_it(
    page, browser, many_topics_app
):
    """A view state names at most `MAX_TOPIC_LABELS` topics, the largest: a theme of smaller ones picked
    in the key is named from the map's own topics, as the server names it (not from the whole map's
    names, which hold none of them)."""
    received = Received(page)
    open_app(page, many_topics_app.url)
    idle(page)
    assert not [name for name in page.evaluate(SHOWN)["names"] if name.startswith("Small topic ")]
    shown = picked_in_the_browser(page, received, "Small topics", "q.get('theme') === '1'")
    assert shown["highlighted"] == 15
    assert [name for name in shown["names"] if name.startswith("Small topic ")]
    assert same_link_afresh(browser, page) == shown


def test_a_theme_s_heading_in_the_topic_list_shows_it_alone_as_its_key_entry_does(page, browser, keyed_app):
    """The topic list's theme headings are buttons: one shows only its theme's papers, drawn by the
    browser as a pick in the key is (and reading as the same link opened afresh), pressed while it is
    shown alone; pressed again, from the keyboard, the whole map again."""
    app, atlas = keyed_app
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    headings = page.locator(".atlas-panel-list .atlas-section-name")
    assert sorted(headings.all_inner_texts()) == sorted(THEMES.values())  # as typed, not markup
    heading = headings.filter(has_text=THEMES[1])
    assert heading.get_attribute("aria-pressed") == "false"
    shown = picked_in_the_browser(page, received, heading, "q.get('theme') === '1'")
    assert [entry for entry in shown["key"] if entry[1]] == [[THEMES[1], True]]
    assert headings.all_inner_texts() == [THEMES[1]] and heading.get_attribute("aria-pressed") == "true"
    assert same_link_afresh(browser, page) == shown
    assert picked_in_the_browser(page, received, heading, "!q.has('theme')", press="Enter") == whole


def test_coloured_by_a_column_a_theme_s_heading_is_drawn_by_the_browser(page, browser, keyed_app):
    """While the key shows a column's values, a theme's heading in the list still shows only that
    theme (drawn by the browser, js/steps.js), with `theme=` in the link, reading as the same link
    opened afresh; Back, the view the link opened again, drawn by the browser too."""
    app, atlas = keyed_app
    count = int(theme_counts(atlas)[1])
    received = Received(page)
    open_app(page, app.url + "?colour=venue")
    idle(page)
    opened = page.evaluate(SHOWN)
    entries = page.evaluate("history.length")
    heading = page.locator(".atlas-panel-list .atlas-section-name", has_text=THEMES[1])
    picked_in_the_browser(page, received, heading, "q.get('theme') === '1'")
    wait_for_heading(page, f"Papers · {count}")
    shown = page.evaluate(SHOWN)
    assert [entry[0] for entry in shown["key"]] == [*VENUES, "No venue"] and not any(
        e[1] for e in shown["key"]
    )
    assert "f.venue" not in page.evaluate("location.search")
    assert page.evaluate("history.length") == entries + 1  # one step, one entry
    assert same_link_afresh(browser, page) == shown
    assert picked_in_the_browser(page, received, page.go_back, "!q.has('theme')") == opened


def test_a_theme_picked_after_closing_a_topic_a_link_opened_is_drawn_by_the_browser(page, browser, keyed_app):
    """A link that opens a topic has the map's part drawn with it open; closed in the topic panel (which
    reruns no map), a theme picked in the key is the browser's to show, as from the whole map, and reads
    as the same link opened afresh."""
    app, atlas = keyed_app
    topic = int(atlas.topics["topic_id"].iloc[0])
    received = Received(page)
    open_app(page, app.url + f"?topic={topic}")
    idle(page)
    page.get_by_role("button", name="Back to the topic list").click()
    page.wait_for_function("() => location.search === ''", timeout=30_000)
    idle(page)
    shown = picked_in_the_browser(page, received, THEMES[1], "q.get('theme') === '1'")
    assert [entry for entry in shown["key"] if entry[1]] == [[THEMES[1], True]]
    assert same_link_afresh(browser, page) == shown


def test_back_and_forward_to_views_the_server_drew_are_drawn_again_by_the_browser(page, browser, keyed_app):
    """Back after a filter chosen in the sidebar, or after a search, and Forward again: the browser draws
    the map, the topic list and the papers table again from what it kept of that view (the server draws
    no map, list or table, only the sidebar, the header and the downloads), the sidebar's filter and the
    search box follow the link, no history entry is added, and the page reads as the link opened afresh."""
    app, atlas = keyed_app
    count = int(theme_counts(atlas)[1])
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    sidebar_multiselect(page, "Themes").click()
    page.get_by_role("option", name=THEMES[1], exact=False).first.click()
    page.keyboard.press("Escape")
    page.wait_for_function("() => new URLSearchParams(location.search).get('theme') === '1'", timeout=30_000)
    wait_for_heading(page, f"Papers · {count}")
    idle(page)
    themed = page.evaluate(SHOWN)
    entries = page.evaluate("history.length")

    assert picked_in_the_browser(page, received, page.go_back, "!q.has('theme')") == whole
    page.get_by_text(f"Showing the {len(atlas.papers)} papers of the map").wait_for(timeout=30_000)
    assert chips(page, "Themes") == []
    assert picked_in_the_browser(page, received, page.go_forward, "q.get('theme') === '1'") == themed
    page.get_by_text(f"Showing the {count} papers in the theme “{THEMES[1]}”").wait_for(timeout=30_000)
    assert chips(page, "Themes")[0].startswith(THEMES[1])
    assert same_link_afresh(browser, page) == themed
    assert page.evaluate("history.length") == entries

    picked_in_the_browser(page, received, page.go_back, "!q.has('theme')")
    box = page.get_by_role("textbox", name="Search")
    box.fill("diffusion")
    box.press("Enter")
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('q') === 'diffusion'", timeout=30_000
    )
    idle(page)
    searched = page.evaluate(SHOWN)
    assert searched != whole
    assert picked_in_the_browser(page, received, page.go_back, "!q.has('q')") == whole
    page.wait_for_function(
        "() => !document.querySelector('input[aria-label=\"Search\"]').value", timeout=30_000
    )
    assert picked_in_the_browser(page, received, page.go_forward, "q.get('q') === 'diffusion'") == searched
    assert box.input_value() == "diffusion"
    assert same_link_afresh(browser, page) == searched


@pytest.fixture(scope="module")
def seed_app(tmp_path_factory):
    """The committed seed map, whose model the app can load: an abstract can be placed on it."""
    app = StreamlitServer(SEED_MAP, tmp_path_factory.mktemp("seed") / "no-other-maps", timeout=60)
    yield app
    app.stop()


def place_abstract(page, abstract: str) -> None:
    """Paste `abstract` into "Where does my paper fit?" and place it: its pin drawn on the map."""
    expander = page.get_by_text("Where does my paper fit?")
    if not page.get_by_role("textbox", name="Abstract").is_visible():
        expander.click()
    page.get_by_role("textbox", name="Abstract").fill(abstract)
    page.get_by_role("button", name="Place on the map").click()
    page.get_by_role("button", name="Remove the pin").wait_for(timeout=120_000)
    page.wait_for_function("() => !document.querySelector('.atlas-pin').hidden", timeout=30_000)
    idle(page)


def searched(page, words: str) -> None:
    box = page.get_by_role("textbox", name="Search")
    box.fill(words)
    box.press("Enter")
    page.wait_for_function(
        "(w) => new URLSearchParams(location.search).get('q') === w", arg=words, timeout=30_000
    )
    idle(page)


def back_is_streamlit_s_rerun(page, browser, received: Received) -> dict:
    """Back in the browser to the link without a search: the server draws the map again (Streamlit's
    rerun of the whole page), the placed abstract dropped with its pin, verdict and button; what the
    page shows, which is what the same link opened afresh shows."""
    received.take()
    page.go_back()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('q')", timeout=30_000)
    page.get_by_role("button", name="Remove the pin").wait_for(state="detached", timeout=30_000)
    idle(page)
    assert [kind for place, kind, _ in received.take() if kind == "bidi_component"]  # the server's drawing
    assert page.evaluate("document.querySelector('.atlas-pin').hidden")
    assert not page.get_by_text("Placed in").count()
    shown = page.evaluate(SHOWN)
    assert same_link_afresh(browser, page) == shown
    return shown


@pytest.mark.slow  # the real model embeds the abstract
def test_back_with_an_abstract_placed_is_not_drawn_again_by_the_browser(page, browser, seed_app):
    """Back is not drawn by the browser where an abstract is placed: Back drops the placement (a link
    holds no pin), which the server does, so Back is Streamlit's rerun of the whole page and the pin,
    its verdict and "Remove the pin" go together. Both ways: placed after a search (the view left had no
    pin), placed before it (the view left had the pin too). Removed after it, no pin is left to drop:
    Back to the view without the search is the browser's (js/steps.js), as without a placement."""
    abstract = pd.read_parquet(SEED_MAP / "papers.parquet")["abstract"].iloc[0]
    received = Received(page)
    open_app(page, seed_app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    searched(page, "diffusion")
    place_abstract(page, abstract)
    assert back_is_streamlit_s_rerun(page, browser, received) == whole

    place_abstract(page, abstract)
    searched(page, "diffusion")
    assert page.get_by_role("button", name="Remove the pin").count()  # a search keeps the pin
    assert back_is_streamlit_s_rerun(page, browser, received) == whole

    place_abstract(page, abstract)
    searched(page, "diffusion")
    page.get_by_role("button", name="Remove the pin").click()  # none now
    page.wait_for_function("() => document.querySelector('.atlas-pin').hidden", timeout=30_000)
    assert picked_in_the_browser(page, received, page.go_back, "!q.has('q')") == whole
    assert page.evaluate("document.querySelector('.atlas-pin').hidden")
    assert same_link_afresh(browser, page) == whole


def selected_on_the_map(page) -> str:
    return page.locator("h4", has_text="Selected on the map").first.inner_text()


def test_a_box_drawn_on_the_map_is_shown_by_the_browser_as_the_server_shows_it(page, browser, keyed_app):
    """A box drawn on the map is the browser's to show: the papers table lists the papers it holds and
    the topic list counts them (the server draws no map, list or table: only the header's sentence and
    the downloads), the link holds the box as the server writes it, and the page reads as that link
    opened afresh; Back and Forward go between the whole map and the box, drawn by the browser too."""
    app, atlas = keyed_app
    x, y = atlas.papers["x"].astype("float32"), atlas.papers["y"].astype("float32")
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)
    box = (x.quantile(0.2), y.quantile(0.2), x.quantile(0.7), y.quantile(0.7))
    shown = picked_in_the_browser(page, received, lambda: drag_box(page, box), "q.has('select')")
    [written] = parse_qs(urlparse(page.url).query)["select"]
    x0, x1, y0, y1 = (float(v) for v in written.removeprefix("box:").split(","))
    inside = int((x.between(x0, x1) & y.between(y0, y1)).sum())
    assert 5 <= inside < len(atlas.papers) // 2
    page.get_by_text(f"Showing the {inside} papers you selected on the map").wait_for(timeout=30_000)
    assert selected_on_the_map(page) == f"Selected on the map · {inside}"
    assert len(shown["rows"]) == inside and shown != whole
    assert same_link_afresh(browser, page) == shown

    assert picked_in_the_browser(page, received, page.go_back, "!q.has('select')") == whole
    page.get_by_text(f"Showing the {len(atlas.papers)} papers of the map").wait_for(timeout=30_000)
    assert picked_in_the_browser(page, received, page.go_forward, "q.has('select')") == shown
    page.get_by_text(f"Showing the {inside} papers you selected on the map").wait_for(timeout=30_000)
    assert selected_on_the_map(page) == f"Selected on the map · {inside}"

    # "Clear selection": the whole map again, drawn by the browser from the view it kept, a step of its own.
    entries = page.evaluate("history.length")
    clear = page.get_by_role("button", name="Clear selection")
    assert picked_in_the_browser(page, received, clear, "!q.has('select')") == whole
    page.get_by_text(f"Showing the {len(atlas.papers)} papers of the map").wait_for(timeout=30_000)
    assert page.evaluate(f"(document.querySelector('{GRAPH}').layout.selections || []).length") == 0
    assert page.evaluate("history.length") == entries + 1
    assert picked_in_the_browser(page, received, page.go_back, "q.has('select')") == shown


def test_clear_selection_pressed_with_the_keyboard_gives_the_focus_to_the_table_s_heading(page, keyed_app):
    """The button goes with the selection: the focus goes to the papers table's heading, which says
    what the table lists now (not lost to the page)."""
    app, atlas = keyed_app
    x, y = atlas.papers["x"].astype("float32"), atlas.papers["y"].astype("float32")
    open_app(page, app.url)
    idle(page)
    drag_box(page, (x.quantile(0.2), y.quantile(0.2), x.quantile(0.7), y.quantile(0.7)))
    page.get_by_text("Selected on the map", exact=False).first.wait_for(timeout=30_000)
    idle(page)
    page.get_by_role("button", name="Clear selection").focus()
    page.keyboard.press("Enter")
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert page.evaluate("[document.activeElement.tagName, document.activeElement.textContent]") == [
        "H4",
        f"Papers · {len(atlas.papers)}",
    ]


def test_a_lasso_drawn_on_the_map_is_shown_by_the_browser_as_the_server_shows_it(page, browser, keyed_app):
    """A lasso, like a box: shown by the browser (no map, list or table from the server), its corners in
    the link as the server writes them, and the page reads as that link opened afresh."""
    app, atlas = keyed_app
    x, y = atlas.papers["x"], atlas.papers["y"]
    corners = [(x.quantile(q), y.quantile(r)) for q, r in ((0.1, 0.1), (0.8, 0.2), (0.5, 0.9), (0.15, 0.6))]
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    whole = page.evaluate(SHOWN)

    def lasso():
        page.locator(f"{GRAPH} .modebar-btn[data-val='lasso']").click()
        spots = page.evaluate(
            """([selector, corners]) => {
                const gd = document.querySelector(selector), r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                return corners.map(([x, y]) => [r.left + gd._fullLayout.xaxis.l2p(x), r.top + gd._fullLayout.yaxis.l2p(y)]);
            }""",
            [GRAPH, corners],
        )
        page.mouse.move(*spots[0])
        page.mouse.down()
        for spot in [*spots[1:], spots[0]]:
            page.mouse.move(*spot, steps=6)
        page.mouse.up()

    shown = picked_in_the_browser(page, received, lasso, "(q.get('select') || '').startsWith('lasso:')")
    [written] = parse_qs(urlparse(page.url).query)["select"]
    count = len(rows_inside(parse_selection(written), x.to_numpy(np.float32), y.to_numpy(np.float32)))
    assert 5 <= count < len(atlas.papers) and len(shown["rows"]) == count
    page.get_by_text(f"Showing the {count} papers you selected on the map").wait_for(timeout=30_000)
    assert same_link_afresh(browser, page) == shown
    # A double-click on the map drops it (Plotly's deselection): the whole map again, by the browser.
    outside = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
    deselect = lambda: page.mouse.dblclick(outside["x"] + 8, outside["y"] + 8)  # noqa: E731
    assert picked_in_the_browser(page, received, deselect, "!q.has('select')") == whole
    page.get_by_text(f"Showing the {len(atlas.papers)} papers of the map").wait_for(timeout=30_000)


@pytest.mark.parametrize("link", ["?q=diffusion", "?theme=1", "?topic=TOPIC"])
def test_a_box_drawn_over_a_search_a_filter_or_an_opened_topic_reads_as_its_link_afresh(
    page, browser, keyed_app, link
):
    """Drawn over a narrower view (a search, a theme, an opened topic, each opened from its link and so
    drawn by the server), a box is still the browser's to show, and the table's rows, the list's counts
    and the map read as the same link opened afresh: the papers inside it but outside the view are
    left out of the table and the list as the server leaves them out."""
    app, atlas = keyed_app
    link = link.replace("TOPIC", str(int(atlas.topics["topic_id"].iloc[0])))
    x, y = atlas.papers["x"].astype("float32"), atlas.papers["y"].astype("float32")
    received = Received(page)
    open_app(page, app.url + link)
    idle(page)
    before = page.evaluate(SHOWN)
    box = (x.quantile(0.05), y.quantile(0.05), x.quantile(0.8), y.quantile(0.8))
    shown = picked_in_the_browser(page, received, lambda: drag_box(page, box), "q.has('select')")
    assert shown != before and page.get_by_text("you selected on the map", exact=False).count()
    assert same_link_afresh(browser, page) == shown


def test_reset_view_after_a_theme_a_value_and_ticks_drawn_by_the_browser_shows_the_whole_map(page, keyed_app):
    """Issue 66: "theme, year and topics set, then Reset: the same 19 papers". A theme picked in the key,
    a venue pressed and a topic ticked in the list (each drawn by the browser), then the sidebar's
    Reset view: the whole map again, in the header, the table, the list's ticks and the link."""
    app, atlas = keyed_app
    theme = int(atlas.topics["theme_id"].iloc[0])
    topic = int(atlas.topics.loc[atlas.topics["theme_id"] == theme, "topic_id"].iloc[0])
    name = str(atlas.themes.loc[atlas.themes["theme_id"] == theme, "label"].iloc[0])
    with_values_open(page, app.url)
    page.locator(".atlas-legend button", has_text=name).click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('theme')", timeout=30_000)
    idle(page)
    value(page, "venue", "ICML").click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('f.venue')", timeout=30_000)
    idle(page)
    tick(page, topic).click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('topics')", timeout=30_000)
    idle(page)
    assert papers_heading(page) != f"Papers · {len(atlas.papers)}"
    page.locator("[data-testid='stSidebar']").get_by_role("button", name="Reset view").click()
    page.wait_for_function("() => location.search === ''", timeout=30_000)
    wait_for_heading(page, f"Papers · {len(atlas.papers)}")
    idle(page)
    assert page.evaluate(SHOWN)["ticked"] == []
    assert page.locator(".atlas-topic-tick:checked").count() == 0
