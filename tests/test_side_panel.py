"""The topic panel beside the map reads whole: names are not cut, every count shows, an opened topic
lists its ten most central papers and draws the chart of the tab chosen."""

from __future__ import annotations

import numpy as np
import pytest

from app.data import build_map_data
from app.topic_summary import CENTRAL, central_papers, topic_summary
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import open_app, tiny_map

LONG_NAMES = [
    "Person re-identification & person search",
    "Two-branch recurrent networks & sequence labelling",
    "Graph neural networks",
    "Out-of-distribution detection & uncertainty estimation",
]


def long_named_map(folder, n: int = 120):
    atlas = tiny_map(n, labels=LONG_NAMES)
    atlas.papers["title"] = [
        f"A deliberately long title about {LONG_NAMES[i % 4].lower()} that goes on past one line, paper {i}"
        for i in range(n)
    ]
    write_map(folder, atlas)
    return folder


def test_an_opened_topic_lists_its_ten_most_central_papers_representatives_first(tmp_path):
    data = build_map_data("m", long_named_map(tmp_path / "m"))
    topic = 0
    rows = central_papers(data, topic)
    members = np.flatnonzero(data.topic_ids == topic)
    assert len(members) > CENTRAL and len(rows) == CENTRAL == len(set(rows.tolist()))
    assert set(rows.tolist()) <= set(members.tolist())
    representatives = [data.row_of[d] for d in data.topics.loc[topic, "representative_doc_ids"]]
    assert rows[:3].tolist() == representatives
    centre = data.vectors[members].mean(axis=0)
    closeness = data.vectors[rows[3:]] @ centre
    assert (np.diff(closeness) <= 1e-6).all()  # most like the topic's centre first
    others = sorted(set(members) - set(rows) - set(representatives))
    assert closeness.min() >= (data.vectors[others] @ centre).max() - 1e-6
    # What the panel lists (the map's summary file): those rows, with their titles as written.
    [entry] = [t for t in topic_summary(data, None)["topics"] if t["id"] == topic]
    assert [p["row"] for p in entry["central"]] == rows.tolist()
    assert [p["title"] for p in entry["central"]] == data.papers["title"].iloc[rows].tolist()


# Each name in the panel (the topic list, the nearest topics): whole, inside its row.
NAMES = """() => [...document.querySelectorAll('.atlas-panel .atlas-topic-name')]
  .filter((el) => el.offsetParent !== null)
  .map((el) => ({text: el.textContent, inside: el.scrollWidth <= el.clientWidth + 1,
                 right: el.closest('.atlas-topic').getBoundingClientRect().right,
                 panel: el.closest('.atlas-panel').getBoundingClientRect().right}))"""


@pytest.mark.browser
@pytest.mark.parametrize("query", ["?sort=rising", "?topic=0"])
def test_the_topic_panel_shows_whole_names_and_every_count(browser, tmp_path, query):
    folder = long_named_map(tmp_path / "m")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with StreamlitServer(folder, tmp_path / "none", timeout=60) as app:
        open_app(page, app.url + query)
        page.locator(".atlas-panel .atlas-topic:visible").first.wait_for(timeout=30_000)
        names = page.evaluate(NAMES)
        assert {n["text"] for n in names} <= {*LONG_NAMES, "Unassigned"} and len(names) >= 3
        assert all(n["inside"] and n["right"] <= n["panel"] + 1 for n in names)
        if query == "?sort=rising":  # each growth score in sight, beside its topic
            scores = page.locator(".atlas-panel-list .atlas-topic-growth").all_inner_texts()
            assert len(scores) == len(names) and all(s.startswith("×") or s == "–" for s in scores)
            assert page.get_by_role("button", name="Rising").get_attribute("aria-pressed") == "true"
    page.close()


@pytest.mark.browser
def test_a_topic_s_chart_tabs_draw_the_chart_of_the_tab_clicked(browser, tmp_path):
    folder = long_named_map(tmp_path / "m")
    data = build_map_data("m", folder)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with StreamlitServer(folder, tmp_path / "none", timeout=60) as app:
        open_app(page, app.url + "?topic=0")
        panel = page.locator(".atlas-panel-topic")
        panel.locator(".atlas-keyword").first.wait_for(timeout=30_000)
        keywords = panel.locator(".atlas-keyword-name").all_text_contents()
        words = [str(k) for k in data.topics.loc[0, "keywords"]]
        assert keywords == words  # the keywords, strongest first
        page.get_by_role("tab", name="Over the years").click()
        panel.locator(".atlas-year-chart .main-svg").first.wait_for(timeout=30_000)
        assert "2024" in panel.locator(".atlas-year-chart").inner_text()
        assert page.get_by_role("tab", name="Over the years").get_attribute("aria-selected") == "true"
        assert page.get_by_text("Showing the 26 papers in the topic").count() == 1  # the rest stayed
    page.close()


@pytest.mark.browser
def test_the_list_s_order_chosen_with_the_keyboard_keeps_the_focus(browser, tmp_path):
    """Enter on "Rising": the server's answer makes the list afresh in that order, and the focus is on
    the new "Rising" button (pressed), not back at the page's start."""
    folder = long_named_map(tmp_path / "m")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with StreamlitServer(folder, tmp_path / "none", timeout=60) as app:
        open_app(page, app.url)
        page.get_by_role("button", name="Rising").focus()
        page.keyboard.press("Enter")
        page.locator(".atlas-panel-list .atlas-topic-growth").first.wait_for(timeout=30_000)
        focused = "[document.activeElement.textContent, document.activeElement.getAttribute('aria-pressed')]"
        page.wait_for_function("() => location.search.includes('sort=rising')", timeout=30_000)
        assert page.evaluate(focused) == ["Rising", "true"]
    page.close()
