"""The papers panel under the map: the map selection or every paper in view, drawn, paged and sorted
in the browser (`app.map_component.live_table`, js/table.js)."""

from __future__ import annotations

from functools import partial

import numpy as np

from app import session
from app.data import MapData
from app.loaders import MapKey, cached_rising
from app.map_component import TABLE_KEY, live_table, points_url
from app.search import SearchResult
from app.view import view_vocabulary


def papers_panel(
    data: MapData,
    map_key: MapKey,
    in_view: np.ndarray,
    search: SearchResult | None,
    selected: np.ndarray | None,
    topic: int | None,
) -> None:
    """The papers table: the papers in view the map selection holds when there is one (`selected`:
    rows, in view or not), else every paper in view (`in_view`, a mask before an opened topic narrows
    it: the browser does), best search match first, each row saying how it matched; 50 rows a page."""
    url = points_url(data, map_key)
    vocabulary = lambda: view_vocabulary(data, cached_rising(map_key))  # noqa: E731  (what a link may choose)
    live_table(
        data,
        map_key,
        in_view,
        search,
        selected,
        topic=topic,
        files_sent=session.files_sent(),
        on_click=partial(session.on_paper_click, data, url, TABLE_KEY),
        on_clear=partial(session.on_table_clear, data, url, vocabulary),
        key_picks=session.key_picks(),
        link=session.view_link(),
    )
