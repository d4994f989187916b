"""The live map: a Streamlit Custom Components v2 component of our own that draws with Plotly.js.

Two Plotly charts per map live in the page across reruns, in one place, one shown at a time (every
paper; the highlighted ones: see map.js). The browser downloads two files once (see `assets`):
Plotly.js, the gl2d bundle committed in assets/plotly/, and the map's point table, named by its
content's fingerprint. Every rerun then sends only the view state below, a few KB at any size.

What the browser receives as the component's `data` on each rerun (`payload.view_state`):

    points       "app/static/atlas/points-<fingerprint>.json.gz": the map's point table, gzip'd JSON
                 (`payload.point_table`): n, x, y, colour (palette position per row), source
                 (index into sources), sources, title (hover titles), palette, topic_names, range
                 (opening x/y ranges), size (marker px), webgl, colourings ({column: {values, code
                 per row, palette}} for the columns the map can be coloured by). Every text is
                 Plotly-escaped. `source`/`sources` say where a paper is from (venue · year ·
                 collection where the map has them, else the input's source).
    plotly       "app/static/atlas/plotly-<fingerprint>.min.js.gz": Plotly.js, loaded once per page
    n            number of papers
    mask         papers in view: base64 of one bit a row (little-endian in each byte), null = all
    search       true when the mask comes from a search (hits are drawn larger, outlined)
    paper        row of the opened paper (ringed), or null
    pin          {x, y, topic} of a placed abstract (a star), or null
    topics       topic names to place, in priority order: [{text, x, y, colour, chosen}]
    themes       theme names shown while most of the map is in view: [{text, x, y}]; [] without themes
                 (names are raw text: the browser sets them with textContent, never as markup)
    label_limit  at most this many topic names at once
    neighbours   rows of the opened paper's nearest papers (small rings), [] when none is open
    colour       the metadata column the points are coloured by, "" = by topic
    legend       the map's key, a row under the chart: [{text, colour, pick, on}] (theme hues, or the
                 column's values; `payload.legend`); [] = none
    reset        a counter; when it changes the map returns to its opening view ("Reset view")
    clear        a counter; when it changes the box/lasso selection on the chart is dropped
    height       pixels

What comes back, as trigger values (each is seen by one rerun only):

    click        {"row": int, "map": points}: the reader clicked a paper
    select       {"rows": [int], "map": points}: a box or lasso selection (rows = [] when cleared)
    legend       {"theme": id} or {"value": position in the colour column's values}, with "map": points:
                 the reader clicked that entry of the key (show it alone; again: show all); {"theme": null}
                 or {"value": null}: "Show all"

`map` names the point table the event came from, so an event from a map that was just switched
away from is ignored.

Zoom and pan never rerun the script: the browser keeps them in the address bar's `view=x0,x1,y0,y1`
(replacing the current history entry, and carried over when Streamlit pushes the next one), and
restores them from it on opening a link and on Back/Forward (see map.js, "zoom in the link").
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from app.data import MapData
from app.map_component.assets import URL_PREFIX, plotly_bundle, publish
from app.map_component.payload import Pin, points_file, view_state

KEY = "atlas_map"
HERE = Path(__file__).resolve().parent


def compact_source(text: str, *, css: bool = False) -> str:
    r"""The component's script (or style sheet) without comments, indentation or blank lines.

    Streamlit sends a component's inline code with every rerun (in the element's protobuf), so its
    comments would cost bytes on every click. In the script only doc comments at a line's start and
    `//` comments a line holds alone, or after code with no open quote before them, are dropped;
    lines stay lines, so the script means what it did.

    Examples:
        >>> compact_source('  // a note\n  const a = "x // y"; // why\n\n  /** @type {number} */ n;  // go\n')
        'const a = "x // y";\nn;\n'
        >>> compact_source("/* the map */\n.a {\n  top: 0; /* edge */\n}\n", css=True)
        '.a {\ntop: 0;\n}\n'
    """
    # CSS comments anywhere; in the script, the doc comments (/** ... */) that start on a line
    text = re.sub(r"/\*.*?\*/" if css else r"(?m)^\s*/\*\*.*?\*/", "", text, flags=re.S)
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        for cut in [] if css else re.finditer(r"(^|\s)//(\s|$)", line):
            head = line[: cut.start()]
            if all(head.count(quote) % 2 == 0 for quote in "\"'`"):
                line = head.rstrip()
                break
        if line:
            lines.append(line)
    return "\n".join(lines) + "\n"


_component = st.components.v2.component(
    "abstract_atlas.map",
    js=compact_source((HERE / "map.js").read_text()),
    css=compact_source((HERE / "map.css").read_text(), css=True),
    isolate_styles=False,  # Plotly.js has event and layout bugs inside a shadow root
)


@st.cache_resource(show_spinner=False)
def _plotly_file() -> tuple[str, bytes]:
    return plotly_bundle()


@st.cache_resource(show_spinner=False, max_entries=8)
def _points_file(_data: MapData, token: tuple) -> tuple[str, bytes]:
    """The map's point table file, made once per loaded map (`token` identifies the map)."""
    return points_file(_data)


def served(name: str, content: bytes, sent: set[str]) -> tuple[str, str | None]:
    """The file's URL, and, when `static/` cannot be written, its bytes as base64 for the component.

    The bytes go to a session once (`sent`: the names this session's browser received): the browser
    keeps what it loaded, by URL, for the page's life.
    """
    try:
        return publish(name, content), None
    except OSError:  # a read-only checkout: send the file through the component instead
        if name in sent:
            return URL_PREFIX + name, None
        sent.add(name)
        return URL_PREFIX + name, base64.b64encode(content).decode("ascii")


def points_url(data: MapData, token: tuple) -> str:
    """The URL that names the map's point table, and so the map its events come from."""
    return URL_PREFIX + _points_file(data, token)[0]


def live_map(
    data: MapData,
    token: tuple,
    in_view: np.ndarray,
    *,
    search_active: bool,
    chosen_row: int | None,
    chosen_topic: int | None,
    pin: Pin | None,
    clear_selection: int,
    neighbours: list[int] | None = None,
    colour: str = "",
    reset_zoom: int = 0,
    files_sent: set[str] | None = None,
    on_click: Callable[[], None],
    on_select: Callable[[], None],
    on_legend: Callable[[], None] | None = None,
    themes: tuple[int, ...] = (),
    values: tuple[str, ...] = (),
    height: int = 640,
):
    """Mount (first run) or update (later runs) the map; read events with `app.session.map_event(name)`
    in callbacks. `files_sent`: the files this session's browser already has (`app.session.files_sent`; None: none).
    `themes`, `values`: the chosen themes and the colour column's chosen values, marked in the key."""
    files_sent = set() if files_sent is None else files_sent
    points, points_data = served(*_points_file(data, token), files_sent)
    plotly, plotly_data = served(*_plotly_file(), files_sent)
    payload = view_state(
        data,
        in_view,
        points_url=points,
        plotly_url=plotly,
        search_active=search_active,
        chosen_row=chosen_row,
        chosen_topic=chosen_topic,
        neighbours=neighbours,
        colour=colour,
        pin=pin,
        clear_selection=clear_selection,
        reset_zoom=reset_zoom,
        height=height,
        themes=themes,
        values=values,
    )
    # Only where static/ is read-only: the files themselves, in the first rerun that names them.
    payload.update({k: v for k, v in (("points_data", points_data), ("plotly_data", plotly_data)) if v})
    legend_callback = (
        {"on_legend_change": on_legend} if on_legend else {}
    )  # None: clicks in the key change nothing
    return _component(
        key=KEY,
        data=payload,
        height=height,
        on_click_change=on_click,
        on_select_change=on_select,
        **legend_callback,
    )
