"""The live map: a Streamlit Custom Components v2 component of our own that draws with Plotly.js.

Two Plotly charts per map live in the page across reruns, in one place, one shown at a time (every
paper; the highlighted ones: see map.js). The browser downloads two files once (see `assets`):
Plotly.js, the gl2d bundle committed in assets/plotly/, and the map's point table, named by its
content's fingerprint. Every rerun then sends only the view state below, a few KB at any size.

What the browser receives as the component's `data` on each rerun (`payload.view_state`):

    points       "app/static/atlas/points-<fingerprint>.bin.gz": the map's point table, a gzip'd binary
                 file (`payload.encode_points`): a JSON header (n, sources, palette, topic_names,
                 range (opening x/y ranges), size (marker px), webgl, colourings ({column: {values,
                 palette}})) and little-endian typed arrays decoded in place by the browser: x, y
                 (float32), colour (uint16 palette position per row), source (uint32 index into
                 sources), order (uint32: the density-biased draw order, `payload.draw_order`), titles
                 as one UTF-8 block (title_bytes) with each row's end (title_end), and a uint16 code per
                 row for each colouring (code:<column>). Names in the header are Plotly-escaped; titles
                 are raw and escaped by the browser as it draws them (as `app.text.plotly_wrap`).
                 `source`/`sources` say where a paper is from (venue · year · collection where the map
                 has them, else the input's source).
    plotly       "app/static/atlas/plotly-<fingerprint>.min.js.gz": Plotly.js, loaded once per page
    module       "app/static/atlas/map-<fingerprint>.js.gz": map.js itself, loaded once per page by the
                 component's few-line script (`LOADER`)
    n            number of papers
    mask         papers in view, null = all: "b" + base64 of one bit a row (little-endian in each
                 byte), or, when shorter (a search's hits), "d" + base64 of the gaps between the rows
                 as LEB128 varints (`payload.encode_mask`)
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
    draw_cap     points drawn at most per view (`payload.draw_cap`; ATLAS_DRAW_CAP): a bigger map is
                 drawn as the first papers in view in the draw order, every paper once few are in view;
                 a search's hits are always drawn, every one

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
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from app.data import MapData
from app.map_component.assets import URL_PREFIX, module_bundle, plotly_bundle, publish
from app.map_component.payload import Pin, points_file, view_state

KEY = "atlas_map"
HERE = Path(__file__).resolve().parent

# The component's own script is a few lines that load map.js once per page from its published file
# (`module` in the data; its bytes in `module_data` where static/ is read-only): an inline script is
# part of the element, sent again with every rerun (map.js is 48 KB).
LOADER = """
const MODULES = window.__atlasMapModules || (window.__atlasMapModules = new Map());
export default function (component) {
  const { data } = component;
  let load = MODULES.get(data.module);
  if (!load) {
    load = (async () => {
      const response = data.module_data
        ? new Response(Uint8Array.from(atob(data.module_data), (c) => c.charCodeAt(0)))
        : await fetch(data.module);
      if (!response.ok) throw new Error(`${data.module}: HTTP ${response.status}`);
      const code = await new Response(response.body.pipeThrough(new DecompressionStream("gzip"))).text();
      const src = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
      try {
        return await import(src);
      } finally {
        URL.revokeObjectURL(src);
      }
    })();
    load.catch(() => MODULES.delete(data.module)); // retried on the next rerun
    MODULES.set(data.module, load);
  }
  let cleanup = null, gone = false;
  load.then(
    (module) => { if (!gone) cleanup = module.default(component); },
    (error) => { component.parentElement.textContent = `The map could not be loaded: ${error.message}`; },
  );
  return () => {
    gone = true;
    if (cleanup) cleanup();
  };
}
"""

_component = st.components.v2.component(
    "abstract_atlas.map",
    js=LOADER,
    css=(HERE / "map.css").read_text(),
    isolate_styles=False,  # Plotly.js has event and layout bugs inside a shadow root
)


@st.cache_resource(show_spinner=False)
def _module_file() -> tuple[str, bytes]:
    return module_bundle()


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
    module, module_data = served(*_module_file(), files_sent)
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
    payload["module"] = module
    inline = (("points_data", points_data), ("plotly_data", plotly_data), ("module_data", module_data))
    payload.update({k: v for k, v in inline if v})
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
