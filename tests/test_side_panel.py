"""The side panel reads whole: names and titles are not cut, every column shows, an opened topic lists
its ten most central papers."""

from __future__ import annotations

import numpy as np
import pytest

from app.data import build_map_data
from app.topic_view import CENTRAL, central_papers
from app.widgets import SIDE_WIDTH, wrapped_height
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import open_app, start, table, tiny_map

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


def test_an_opened_topic_lists_its_ten_most_central_papers_representatives_first(tmp_path, monkeypatch):
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

    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "m"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start({"topic": str(topic)})
    listed = table(at, index=0)
    assert listed["Title"].tolist() == data.papers["title"].iloc[rows].tolist()
    assert "**Most central papers** (10 of " in " ".join(m.value for m in at.markdown)


# The grid draws on a canvas: measure each name in the grid's own font, against the room its cell has.
FITS = """([names, width]) => {
  const grids = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')]
    .filter((g) => g.getBoundingClientRect().left > 700);  // beside the map
  const font = getComputedStyle(grids[0]).fontFamily;
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `14px ${font}`;
  return {
    overflowing: grids.filter((g) => {
      const s = g.querySelector(".dvn-scroller");
      return s && s.scrollWidth > s.clientWidth + 1;
    }).length,
    grids: grids.length,
    lines: names.map((name) => {  // greedy word wrap, as the grid wraps
      let lines = 1, line = "";
      for (const word of name.split(" ")) {
        const next = line ? `${line} ${word}` : word;
        if (line && ctx.measureText(next).width > width - 17) { lines += 1; line = word; } else line = next;
      }
      return lines;
    }),
  };
}"""


@pytest.mark.browser
@pytest.mark.parametrize("query", ["?sort=rising", "?topic=0", "?paper=doc0004"])
def test_the_side_panel_tables_show_every_column_and_whole_names(browser, tmp_path, query):
    folder = long_named_map(tmp_path / "m")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with StreamlitServer(folder, tmp_path / "none", timeout=60) as app:
        open_app(page, app.url + query)
        page.wait_for_timeout(1500)
        width = SIDE_WIDTH - 20 - 70 - 62 if query == "?sort=rising" else SIDE_WIDTH - 60 - 80
        found = page.evaluate(FITS, [LONG_NAMES, width])
        assert found["grids"] >= 1
        assert found["overflowing"] == 0  # Growth, Papers and Similarity are all in sight
        if query != "?paper=doc0004":  # the topic list's or the nearest topics' names, whole
            room = (wrapped_height([(LONG_NAMES, width)]) - 10) // 21
            assert max(found["lines"]) <= room, (found["lines"], room)
    page.close()


@pytest.mark.browser
def test_a_topic_s_chart_tabs_draw_the_chart_of_the_tab_clicked(browser, tmp_path):
    folder = long_named_map(tmp_path / "m")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with StreamlitServer(folder, tmp_path / "none", timeout=60) as app:
        open_app(page, app.url + "?topic=0")
        charts = page.locator('[data-testid="stPlotlyChart"]')
        charts.first.wait_for(timeout=30_000)
        assert charts.count() == 1 and "graph" in charts.first.inner_text()  # the keywords
        page.get_by_role("tab", name="Over the years").click()
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                 .some((c) => c.innerText.includes('2024'))""",
            timeout=30_000,
        )
        assert page.get_by_text("Showing the 26 papers in the topic").count() == 1  # the rest stayed
    page.close()
