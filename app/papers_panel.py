"""The papers panel under the map: the map selection or every paper in view, drawn, paged and sorted
in the browser (`app.map_component.live_table`, js/table.js)."""

from __future__ import annotations

from functools import partial

from app import session
from app.data import MapData
from app.loaders import MapKey, cached_rising
from app.map_component import TABLE_KEY, live_table, points_url
from app.view import view_vocabulary


def papers_panel(data: MapData, map_key: MapKey, topic: int | None) -> None:
    """The papers table: the papers in view the map selection holds when there is one, else every
    paper in view, best search match first, each row saying how it matched; 50 rows a page. The browser
    works them out from the link's view and the page's facts (js/page.js, js/table.js)."""
    url = points_url(data, map_key)
    vocabulary = lambda: view_vocabulary(data, cached_rising(map_key))  # noqa: E731  (what a link may choose)
    live_table(
        data,
        map_key,
        topic=topic,
        files_sent=session.files_sent(),
        on_click=partial(session.on_paper_click, data, url, TABLE_KEY),
        on_clear=partial(session.on_table_clear, data, url, vocabulary),
        browser_steps=session.browser_steps(),
        link=session.view_link(),
    )
