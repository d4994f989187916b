"""The live map: a Streamlit Custom Components v2 component of our own that draws with Plotly.js.

Two Plotly charts per map live in the page across reruns, in one place, one shown at a time (every
paper; the highlighted ones: see js/atlas_map.js). The browser downloads two files once (see `assets`):
Plotly.js, the partial bundle committed in assets/plotly/ (scatter, scattergl, bar), and the map's
point table, named by its content's fingerprint. Every rerun then sends only the view state (`payload.ViewState`), a few KB at any size.

What the browser receives as the component's `data` on each rerun, and the events it sends back, are
typed in `payload` (`ViewState`, `EVENTS`) and mirrored in js/protocol.js; docs/app.md ("The map
component's protocol") says what each field means. The browser's code is js/, one file a concern,
published as one file, map.js (`assets.map_script`).

Zoom and pan never rerun the script: the browser keeps them in the address bar's `view=x0,x1,y0,y1`
(replacing the current history entry, and carried over when Streamlit pushes the next one), and
restores them from it on opening a link and on Back/Forward (see js/zoom.js).
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import streamlit as st

from app.data import MapData
from app.loaders import MapKey
from app.map_component.assets import URL_PREFIX, module_bundle, plotly_bundle, publish
from app.map_component.payload import (
    PaperState,
    Pin,
    header_state,
    panel_state,
    points_file,
    summary_file,
    view_state,
)
from app.map_component.table import search_columns, table_file, table_state
from app.state import ViewState
from app.topic_summary import topic_summary

KEY = "atlas_map"
PANEL_KEY = "atlas_panel"  # the topic panel beside the map: the same component, a second instance
TABLE_KEY = "atlas_table"  # the papers table under the map: a third instance
HEADER_KEY = "atlas_header"  # the header's sentence: a fourth

# The component's own script is a few lines that load map.js once per page from its published file
# (`module` in the data; its bytes in `module_data` where static/ is read-only): an inline script is
# part of the element, sent again with every rerun (map.js is 73 KB).
LOADER = """
const MODULES = window.__atlasMapModules || (window.__atlasMapModules = new Map());
// Where static/ is read-only, map.js's bytes come with one instance's data only (the first the server
// drew in that session), and fetching the file fails: another instance that mounts first waits for them.
function start(data) {
  const kept = MODULES.get(data.module);
  if (kept && (kept.inline || !data.module_data)) return kept.load;
  const load = (async () => {
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
  const entry = { load, inline: Boolean(data.module_data) };
  load.catch(() => {
    if (MODULES.get(data.module) === entry) MODULES.delete(data.module); // retried on the next rerun
  });
  MODULES.set(data.module, entry);
  return load;
}
async function loaded(data) {
  try {
    return await start(data);
  } catch (error) {
    for (let wait = 0; !data.module_data && wait < 100; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const kept = MODULES.get(data.module);
      if (kept && kept.inline) return kept.load;
    }
    throw error;
  }
}
export default function (component) {
  const { data } = component;
  let cleanup = null, gone = false;
  loaded(data).then(
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
    js=LOADER,  # map.css comes with map.js, once a page (`assets.style_script`)
    isolate_styles=False,  # Plotly.js has event and layout bugs inside a shadow root
)


@st.cache_resource(show_spinner=False)
def _module_file() -> tuple[str, bytes]:
    return module_bundle()


@st.cache_resource(show_spinner=False)
def _plotly_file() -> tuple[str, bytes]:
    return plotly_bundle()


@st.cache_resource(show_spinner=False, max_entries=8)
def _points_file(_data: MapData, token: MapKey) -> tuple[str, bytes]:
    """The map's point table file, made once per loaded map (`token` identifies the map)."""
    return points_file(_data)


@st.cache_resource(show_spinner=False, max_entries=8)
def _summary_file(_data: MapData, token: MapKey, _rising) -> tuple[str, bytes]:
    """The topic panel's summary file, made once per loaded map (`token` identifies the map; `_rising`:
    its growth scores, None where the list offers no "Rising" order)."""
    return summary_file(topic_summary(_data, _rising))


@st.cache_resource(show_spinner=False, max_entries=8)
def _table_file(_data: MapData, token: MapKey) -> tuple[str, bytes]:
    """The papers table's columns file, made once per loaded map (`token` identifies the map)."""
    return table_file(_data)


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


def with_files(payload: dict, module: str, **inline: str | None) -> dict:
    """A component's data with map.js's URL, and, only where static/ is read-only, the files themselves
    (base64, `served`) in the first rerun that names them."""
    payload["module"] = module
    payload.update({name: value for name, value in inline.items() if value})
    return payload


def points_url(data: MapData, token: MapKey) -> str:
    """The URL that names the map's point table, and so the map its events come from."""
    return URL_PREFIX + _points_file(data, token)[0]


def live_map(
    data: MapData,
    token: MapKey,
    *,
    chosen_row: int | None,
    pin: Pin | None,
    neighbours: list[int] | None = None,
    colour: str = "",
    reset_zoom: int = 0,
    files_sent: set[str] | None = None,
    on_click: Callable[[], None],
    on_select: Callable[[], None],
    on_legend: Callable[[], None] | None = None,
    themes: tuple[int, ...] = (),
    values: tuple[str, ...] = (),
    selection: str = "",
    browser_steps: int = 0,
    height: int = 640,
    link: str | None = None,
    on_history: Callable[[], None] | None = None,
):
    """Mount (first run) or update (later runs) the map; read events with `app.session.map_event(name)`
    in callbacks. `files_sent`: the files this session's browser already has (`app.session.files_sent`; None: none).
    `themes`, `values`: the chosen themes and the colour column's chosen values, marked in the key;
    `selection`: the box or lasso selection, as the link writes it (drawn on the map); `browser_steps`:
    how many steps the browser has drawn so far
    (`app.session.browser_steps`); `link`: the view's link (`app.session.view_link`),
    by which the browser keeps this state, and the panel's and the table's, to draw Back or Forward to
    the view again itself (the "history" event, `on_history`; None: not kept)."""
    files_sent = set() if files_sent is None else files_sent
    points, points_data = served(*_points_file(data, token), files_sent)
    plotly, plotly_data = served(*_plotly_file(), files_sent)
    module, module_data = served(*_module_file(), files_sent)
    payload = view_state(
        data,
        points_url=points,
        plotly_url=plotly,
        chosen_row=chosen_row,
        neighbours=neighbours,
        colour=colour,
        pin=pin,
        reset_zoom=reset_zoom,
        height=height,
        themes=themes,
        values=values,
        selection=selection,
        browser_steps=browser_steps,
    )
    if link is not None:
        payload["link"] = link
    with_files(payload, module, points_data=points_data, plotly_data=plotly_data, module_data=module_data)
    callbacks = {"on_legend_change": on_legend} if on_legend else {}  # None: clicks in the key change nothing
    if on_history:
        callbacks["on_history_change"] = on_history
    return _component(
        key=KEY,
        # the map's cell of the page: the panel beside it draws itself in another (`live_panel`)
        data=payload,
        height=height,
        on_click_change=on_click,
        on_select_change=on_select,
        **callbacks,
    )


def live_panel(
    data: MapData,
    token: MapKey,
    state: ViewState,
    *,
    rising,
    files_sent: set[str],
    sent_before_map: set[str],
    on_topic: Callable[[], None],
    on_only: Callable[[], None],
    on_values: Callable[[], None],
    on_click: Callable[[], None],
    on_sort: Callable[[], None],
    on_paper_topic: Callable[[], None],
    height: int,
    browser_steps: int = 0,
    link: str | None = None,
    paper: PaperState | None = None,
):
    """Mount or update the topic panel beside the map (js/panel.js): the topic list and an opened
    topic, drawn in the browser from the map's summary file, or an opened paper in their place
    (`paper`: `app.paper_view.paper_state`), each topic's papers in view counted from the link's view
    (js/page.js); `state`: the view's (its order, themes, topics and metadata filters;
    the topic the panel opens is the link's, js/panel.js); `browser_steps`, `link`: as for `live_map`. Its events: "topic"
    (opened or closed), "only" (topics ticked, or "Only this topic"), "values" (a column's values
    toggled), "sort" (the list's order), "click" (a paper opened: a central or a nearest paper; or, with no
    row, the opened paper closed) and "paper_topic" (the opened paper's topic opened), read with
    `app.session.map_event(name, PANEL_KEY)`.

    Where static/ is read-only, `sent_before_map` (the files the session had received before this run's
    map) sends the panel Plotly.js and map.js in the same run as the map: either may load first."""
    summary, summary_data = served(*_summary_file(data, token, rising), files_sent)
    points = points_url(data, token)  # the panel waits for the map's copy of the table (its bytes)
    plotly, plotly_data = served(*_plotly_file(), set(sent_before_map))
    module, module_data = served(*_module_file(), set(sent_before_map))
    payload = panel_state(
        data,
        summary_url=summary,
        points_url=points,
        plotly_url=plotly,
        sort=state.sort,
        themes=state.themes,
        topics=state.topics,
        filters=state.filter_dict(),
        height=height,
        browser_steps=browser_steps,
        paper=paper,
    )
    if link is not None:
        payload["link"] = link  # as for `live_map`
    with_files(payload, module, summary_data=summary_data, plotly_data=plotly_data, module_data=module_data)
    return _component(
        key=PANEL_KEY,
        data=payload,
        height=height,
        on_topic_change=on_topic,
        on_only_change=on_only,
        on_values_change=on_values,
        on_click_change=on_click,
        on_sort_change=on_sort,
        on_paper_topic_change=on_paper_topic,
    )


def live_table(
    data: MapData,
    token: MapKey,
    *,
    topic: int | None,
    files_sent: set[str],
    on_click: Callable[[], None],
    on_clear: Callable[[], None],
    browser_steps: int = 0,
    link: str | None = None,
):
    """Mount or update the papers table under the map (js/table.js, `app.map_component.table`): the
    map's table file, which the browser lists the papers of the link's view from (js/page.js: in view,
    best match first under a search, or those of them the map's selection holds; `topic`: the opened
    topic, where no topic panel says it); `browser_steps`, `link`: as for `live_map`. Its events:
    "click" (a row opened) and "clear" ("Clear selection"), read with
    `app.session.map_event(name, TABLE_KEY)`. It draws after the map (it waits for the map's point
    table), so the map's run has sent map.js already where static/ is read-only."""
    table, table_data = served(*_table_file(data, token), files_sent)
    module, module_data = served(*_module_file(), files_sent)
    payload = table_state(
        table_url=table,
        points_url=points_url(data, token),
        topic=topic,
        browser_steps=browser_steps,
    )
    if link is not None:
        payload["link"] = link  # as for `live_map`
    with_files(payload, module, table_data=table_data, module_data=module_data)
    return _component(key=TABLE_KEY, data=payload, on_click_change=on_click, on_clear_change=on_clear)


def live_header(
    data: MapData,
    token: MapKey,
    sentence: tuple[str, str],
    hits: dict,
    *,
    files_sent: set[str],
    link: str | None = None,
):
    """Mount or update the header's sentence (js/header.js): the browser writes it for the view the
    address bar says (js/view.js `sentence`, the rule of `app.view.header_sentence`) from the map's point
    table and `hits` (`app.view.sentence_hits`); `sentence`, the server's for the view of `link`, is
    drawn until it can. It sends no events, and never map.js's bytes: where static/ is read-only, it
    waits for the map's (the map is drawn in the same run)."""
    module, _ = served(*_module_file(), set(files_sent))
    found = hits.get("found")
    columns = search_columns(found) if found is not None else []
    payload = header_state(data, sentence, hits, points_url=points_url(data, token), columns=columns)
    if link is not None:
        payload["link"] = link  # the view the hits are for
    with_files(payload, module)
    return _component(key=HEADER_KEY, data=payload)
