"""The shareable view state and its round trip through the URL query string.

Everything a reader chooses that changes the view lives in `ViewState`; `to_params` writes it as
query parameters and `parse_view` reads them back, ignoring (with a notice) anything unknown or
malformed, so a hand-edited or stale link never raises.

Each setting is declared once, in `SETTINGS`: its `ViewState` field, query key, session key (read
and written by `app.session`), how a link's value is read and written. A new link setting is a
`ViewState` field, a row there and its widget (with `key=app.session.widget_key(name)`).

Query string keys (what they mean):
    map=seeds           the map folder name (see `app.data.map_catalog`)
    q=diffusion models  Search text (see docs/search.md): words or a description, "phrases", prefix*, -word
    kind=meaning        read and ignored: links from before search ranked words and meaning in one list
                        (docs/search.md) open that list
    topics=0,3          topics shown, exactly (all when absent); -1 = the unassigned papers, shown in a
                        topic or theme view only when listed here
    unassigned=hide     hide unassigned papers from the whole map (shown when absent; no effect once
                        topics or themes are chosen)
    f.<column>=<value>  metadata filter, repeated for several values (e.g. f.year=2023&f.year=2024)
    topic=3             the topic opened in the topic view (-1 = unassigned)
    paper=<doc_id>      the paper opened in the paper view
    theme=0,2           themes shown (all when absent; maps with themes only, see `app.themes`);
                        topics outside the chosen themes are ignored with a notice
    sort=rising         the topic list ordered by growth over the most recent years (by size when absent;
                        maps with years only)
    added=only          only the papers added by `python -m pipeline add` since the last full build,
                        highlighted on the map (maps with such papers only)
    colour=year         colour the map by a metadata column with few values (see `app.palette.colour_columns`)
                        instead of by topic (topics are shades of their theme's hue)
    select=box:x0,x1,y0,y1  the papers picked on the map with box select (or select=lasso:x0,y0,x1,y1,...
                        with lasso select): the papers table lists them, the header and topic list count them
    view=x0,x1,y0,y1    the map's zoom and pan (its x and y ranges); written by the map in the browser as
                        the reader zooms, restored from the link, dropped by "Reset view"
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace

from app.themes import THEME_KEY, parse_themes, theme_params
from pipeline.text import and_list, shorten

MAX_SEARCH_CHARS = 300
MAP_KEY = "map"  # which map: read by `parse_map`, before the view
SORTS = ("size", "rising")  # the topic list's orders; the first is the default


@dataclass(frozen=True)
class ViewState:
    """What the reader sees: search, filters, and the opened topic and paper (all optional)."""

    search: str = ""
    topics: tuple[int, ...] = ()  # empty: every topic; -1: the unassigned papers
    show_unassigned: bool = True
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (column, values as text), columns sorted
    topic: int | None = None
    paper: str | None = None
    themes: tuple[int, ...] = ()  # empty: every theme
    sort: str = SORTS[0]
    added_only: bool = False  # only papers added since the last full build
    colour: str = ""  # metadata column the map is coloured by; empty: by topic
    selection: str = ""  # a box or lasso drawn on the map, as the link writes it (`parse_selection`)

    def filter_dict(self) -> dict[str, tuple[str, ...]]:
        return dict(self.filters)


@dataclass(frozen=True)
class Vocabulary:
    """The values a map allows, used to validate a link (facet values are compared as text)."""

    topic_ids: frozenset[int]
    facets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    doc_ids: frozenset[str] | Mapping[str, int] = frozenset()
    theme_ids: frozenset[int] = frozenset()  # empty: the map has no themes
    sorts: tuple[str, ...] = SORTS[:1]  # "rising" only where the map has years to measure growth by
    has_added: bool = False  # the map holds papers added since its last full build
    colour_columns: tuple[str, ...] = ()  # metadata columns the map can be coloured by
    topic_themes: Mapping[int, int] = field(default_factory=dict)  # topic id -> theme id (maps with themes)
    gone_themes: Mapping[int, str] = field(default_factory=dict)  # theme id -> what a rebuild made of it


def normalise_params(params: Mapping[str, object]) -> dict[str, list[str]]:
    """Every key's values as a list of strings, whatever shape the caller's mapping uses.

    Examples:
        >>> normalise_params({"q": "llm", "f.year": ["2023", "2024"]})
        {'q': ['llm'], 'f.year': ['2023', '2024']}
    """
    normal: dict[str, list[str]] = {}
    for key, value in params.items():
        values = value if isinstance(value, list | tuple) else [value]
        normal[str(key)] = [str(v) for v in values]
    return normal


def parse_map(params: Mapping[str, list[str]], names: Iterable[str], default: str) -> tuple[str, list[str]]:
    """The map a link asks for, or `default` with a notice when it names no known map.

    Examples:
        >>> parse_map({"map": ["nope"]}, ["seeds"], "seeds")
        ('seeds', ["The link asks for map 'nope', which is not available; showing 'seeds'."])
    """
    wanted = params.get(MAP_KEY, [])
    if not wanted or wanted[-1] == "":
        return default, []
    if wanted[-1] in set(names):
        return wanted[-1], []
    return default, [
        f"The link asks for map {_show(wanted[-1])}, which is not available; showing {_show(default)}."
    ]


@dataclass
class _Link:
    """A link being read: its parameters, what the map allows, the values read so far and the notices."""

    params: Mapping[str, list[str]]
    vocabulary: Vocabulary
    values: dict[str, object] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    def last(self, key: str) -> str:
        return _last(self.params, key)

    def ignore(self, notice: str) -> None:
        self.notices.append(notice)


def _read_search(link: _Link, key: str) -> str:
    search = link.last(key).strip()
    if len(search) > MAX_SEARCH_CHARS:
        link.ignore(f"Search text was cut to its first {MAX_SEARCH_CHARS} characters.")
        search = search[:MAX_SEARCH_CHARS]
    return search


def _read_search_kind(link: _Link, key: str) -> None:
    """Links written before words and meaning were one list: `kind=words` and `kind=meaning` open it."""
    kind = link.last(key).strip().lower()
    if kind not in ("", "words", "meaning"):
        link.ignore(f"Ignored {key}={_show(kind)}: a search finds papers by their words and meaning at once.")


def _read_topics(link: _Link, key: str) -> tuple[int, ...]:
    topics: list[int] = []
    bad: list[str] = []
    for chunk in link.params.get(key, []):
        for piece in chunk.split(","):
            if not piece.strip():
                continue
            number = _int(piece)
            if number is None or number not in link.vocabulary.topic_ids:
                bad.append(piece.strip())
            elif number not in topics:
                topics.append(number)
    if bad:
        what = "topic {}: not a topic" if len(bad) == 1 else "topics {}: not topics"
        link.ignore(f"Ignored {what.format(_show_list(bad))} of this map.")
    return tuple(topics)


def _read_show_unassigned(link: _Link, key: str) -> bool:
    unassigned = link.last(key).lower()
    if unassigned in ("hide", "0", "false", "no"):
        return False
    if unassigned not in ("", "show", "1", "true", "yes"):
        link.ignore(f"Ignored {key}={_show(unassigned)}: use 'hide' or 'show'.")
    return True


def _read_filters(link: _Link, prefix: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    filters: list[tuple[str, tuple[str, ...]]] = []
    for key in sorted(k for k in link.params if k.startswith(prefix)):
        column = key[len(prefix) :]
        allowed = link.vocabulary.facets.get(column)
        if allowed is None:
            link.ignore(f"Ignored filter {_show(column)}: this map has no such filter.")
            continue
        allowed_set = set(allowed)
        values = tuple(dict.fromkeys(v for v in link.params[key] if v in allowed_set))
        unknown = [v for v in link.params[key] if v not in allowed_set]
        if unknown:
            link.ignore(f"Ignored {_show(column)} {_show_list(unknown)}: not found in this map.")
        if values:
            filters.append((column, values))
    return tuple(filters)


def _read_topic(link: _Link, key: str) -> int | None:
    raw = link.last(key)
    if not raw:
        return None
    number = _int(raw)
    if number is not None and number in link.vocabulary.topic_ids:
        return number
    link.ignore(f"Ignored {key}={_show(raw)}: not a topic of this map.")
    return None


def _read_paper(link: _Link, key: str) -> str | None:
    raw = link.last(key)
    if not raw:
        return None
    if raw in link.vocabulary.doc_ids:
        return raw
    link.ignore(f"Ignored {key}={_show(raw)}: no such paper in this map.")
    return None


def _read_themes(link: _Link, key: str) -> tuple[int, ...]:
    """The chosen themes; topics read before that lie outside them are dropped (the Topics filter
    offers only the chosen themes' topics), with a notice."""
    themes, notices = parse_themes(link.params, link.vocabulary.theme_ids, link.vocabulary.gone_themes)
    link.notices += notices
    topics = link.values.get("topics") or ()
    if themes and topics:
        outside = [t for t in topics if t != -1 and link.vocabulary.topic_themes.get(t) not in themes]
        if outside:
            one = len(outside) == 1
            link.ignore(
                f"Ignored {'topic' if one else 'topics'} {and_list(outside)}: "
                f"{'it is' if one else 'they are'} not in the chosen {'theme' if len(themes) == 1 else 'themes'}."
            )
            link.values["topics"] = tuple(t for t in topics if t not in outside)
    return themes


def _read_sort(link: _Link, key: str) -> str:
    sort = link.last(key).strip().lower() or SORTS[0]
    if sort not in link.vocabulary.sorts:
        reason = "this map has no years to measure growth by" if sort in SORTS else "use 'size' or 'rising'"
        link.ignore(f"Ignored {key}={_show(sort)}: {reason}.")
        return SORTS[0]
    return sort


def _read_added_only(link: _Link, key: str) -> bool:
    raw = link.last(key).lower()
    if raw == "only" and link.vocabulary.has_added:
        return True
    if raw == "only":
        link.ignore(f"Ignored {key}=only: this map has no papers added since its last build.")
    elif raw not in ("", "all"):
        link.ignore(f"Ignored {key}={_show(raw)}: use 'only'.")
    return False


def _read_colour(link: _Link, key: str) -> str:
    colour = link.last(key).strip()
    if colour and colour not in link.vocabulary.colour_columns:
        link.ignore(f"Ignored {key}={_show(colour)}: not a column this map can be coloured by.")
        return ""
    return colour


def _read_selection(link: _Link, key: str) -> str:
    raw = link.last(key).strip()
    if raw and parse_selection(raw) is None:
        link.ignore(
            f"Ignored {key}={_show(shorten(raw, 40))}: use box:x0,x1,y0,y1 or lasso:x0,y0,x1,y1,... "
            "(three corners at least)."
        )
        return ""
    return raw


def _check_zoom(link: _Link, key: str) -> None:
    """The zoom is the browser's (map.js): the server only says when a link's value is malformed."""
    raw = link.last(key)
    if raw and parse_zoom(raw) is None:
        link.ignore(f"Ignored {key}={_show(raw)}: use four numbers x0,x1,y0,y1.")


def _strip(value: object) -> str:
    return str(value or "").strip()


def _or(default: str) -> Callable[[object], str]:
    return lambda value: value or default


def _tuple(value: object) -> tuple:
    return tuple(value or ())


def _ids(ids: Iterable[int]) -> str | None:
    return ",".join(str(t) for t in ids) or None


@dataclass(frozen=True)
class LinkSetting:
    """One shareable setting of the view, declared once: everything that reads or writes it uses this.

    `name` is its `ViewState` field (a setting kept only in the link, the zoom, has `in_state=False`);
    `url` its query key (a prefix, with `prefix=True`: one key a metadata column); `session` the
    session key its widget keeps (a prefix likewise; None: not in the session). `read` turns a link's
    value into the field's value, giving a notice for anything it ignores; `write` gives the link's
    value (None: the default, left out of the link); `widget` and `state` convert the field's value
    to and from what the widget keeps; `reset`: "Reset view" returns it to its default.
    """

    name: str
    url: str
    session: str | None
    read: Callable[[_Link, str], object]
    write: Callable[[ViewState], str | list[str] | None] = lambda state: None
    widget: Callable[[object], object] = lambda value: value
    state: Callable[[object], object] = lambda value: value
    prefix: bool = False
    in_state: bool = True
    reset: bool = True

    @property
    def default(self) -> object:
        return VIEW_DEFAULTS[self.name]


# The link settings, in the order a link is read (and its notices given) and written.
SETTINGS = (
    LinkSetting("search", "q", "w_search", _read_search, lambda s: s.search or None, state=_strip),
    LinkSetting("search_kind", "kind", None, _read_search_kind, in_state=False),
    LinkSetting("topics", "topics", "w_topics", _read_topics, lambda s: _ids(s.topics), list, _tuple),
    LinkSetting(
        "show_unassigned",
        "unassigned",
        "w_unassigned",
        _read_show_unassigned,
        lambda s: None if s.show_unassigned else "hide",
        state=bool,
    ),
    LinkSetting(  # one key a column: f.<column>=<value>, repeated; session keys w_f_<column>
        "filters", "f.", "w_f_", _read_filters, widget=list, state=_tuple, prefix=True
    ),
    LinkSetting("topic", "topic", "topic", _read_topic, lambda s: None if s.topic is None else str(s.topic)),
    LinkSetting("paper", "paper", "paper", _read_paper, lambda s: s.paper or None),
    LinkSetting(
        "themes",
        THEME_KEY,
        "w_themes",
        _read_themes,
        lambda s: theme_params(s.themes).get(THEME_KEY),
        list,
        _tuple,
    ),
    LinkSetting(
        "sort",
        "sort",
        "w_sort",
        _read_sort,
        lambda s: None if s.sort == SORTS[0] else s.sort,
        state=_or(SORTS[0]),
        reset=False,  # "Reset view" keeps the topic list's order
    ),
    LinkSetting(
        "added_only",
        "added",
        "w_added",
        _read_added_only,
        lambda s: "only" if s.added_only else None,
        state=bool,
    ),
    LinkSetting("colour", "colour", "w_colour", _read_colour, lambda s: s.colour or None, state=_or("")),
    LinkSetting(
        "selection", "select", "selection", _read_selection, lambda s: s.selection or None, state=_strip
    ),
    # The map's zoom and pan: owned by the map in the browser (map.js); the server only checks and keeps it.
    LinkSetting("zoom", "view", None, _check_zoom, in_state=False),
)
VIEW_DEFAULTS = {f.name: f.default for f in fields(ViewState)}
SETTING = {setting.name: setting for setting in SETTINGS}
URL_KEY = {setting.name: setting.url for setting in SETTINGS}
SESSION_KEY = {setting.name: setting.session for setting in SETTINGS if setting.session}
VIEW_KEYS = tuple(setting.url for setting in SETTINGS if not setting.prefix)
ZOOM_KEY = URL_KEY["zoom"]


def parse_view(params: Mapping[str, list[str]], vocabulary: Vocabulary) -> tuple[ViewState, list[str]]:
    """Read a `ViewState` from query parameters; each ignored value yields one notice sentence.

    Examples:
        >>> vocab = Vocabulary(topic_ids=frozenset({-1, 0, 1}), facets={"year": ("2023", "2024")})
        >>> state, notices = parse_view({"topics": ["0,7,x"], "f.year": ["2024"], "zoom": ["3"]}, vocab)
        >>> state.topics, state.filters
        ((0,), (('year', ('2024',)),))
        >>> notices
        ["Ignored unknown link setting 'zoom'.", "Ignored topics '7', 'x': not topics of this map."]
    """
    link = _Link(params, vocabulary)
    prefixes = tuple(setting.url for setting in SETTINGS if setting.prefix)
    for key in params:
        if key != MAP_KEY and key not in VIEW_KEYS and not key.startswith(prefixes):
            link.ignore(f"Ignored unknown link setting {_show(key)}.")
    for setting in SETTINGS:
        value = setting.read(link, setting.url)
        if setting.in_state:
            link.values[setting.name] = value
    return ViewState(**link.values), link.notices


# The zoom's grammar, one for the server and the browser (sent to map.js as `SHARED.zoom_number` and
# `SHARED.zoom_min_span`): each of the four parts an ASCII decimal number (no "1_0", no fullwidth
# digits, no spaces, no "0x10"), each range at least ZOOM_MIN_SPAN wide (the map writes ranges with
# at most ten decimals, so a narrower one would be written back as a range of nothing).
ZOOM_NUMBER = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
ZOOM_MIN_SPAN = 1e-6
_ZOOM_NUMBER = re.compile(ZOOM_NUMBER)


# A box or lasso selection in the link (`app.selection`): select=box:x0,x1,y0,y1 or
# select=lasso:x0,y0,x1,y1,... (at least three corners, at most MAX_CORNERS), numbers as in the zoom.
SELECTION_KINDS = ("box", "lasso")
MAX_CORNERS = 64  # a lasso's corners in a link; a hand-drawn one has one a mouse move


@dataclass(frozen=True)
class Shape:
    """A selection's outline: a box (xs = (x0, x1), ys = (y0, y1), each in order) or a lasso's corners."""

    kind: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]


def parse_selection(text: str) -> Shape | None:
    """The shape a `select=` value describes (see `app.selection`), or None when it is not one.

    Examples:
        >>> parse_selection("box:1,0,-2,3")
        Shape(kind='box', xs=(0.0, 1.0), ys=(-2.0, 3.0))
        >>> parse_selection("lasso:0,0,1,0,0,1").xs
        (0.0, 1.0, 0.0)
        >>> parse_selection("box:1,1,0,1"), parse_selection("lasso:0,0,1,1"), parse_selection("ring:0,1,0,1")
        (None, None, None)
    """
    kind, _, rest = text.partition(":")
    parts = rest.split(",")
    if kind not in SELECTION_KINDS or not all(_ZOOM_NUMBER.fullmatch(p) for p in parts):
        return None
    numbers = [float(p) for p in parts]
    if not all(math.isfinite(v) for v in numbers):
        return None
    if kind == "box":
        if len(numbers) != 4:
            return None
        x0, x1, y0, y1 = numbers
        xs, ys = (min(x0, x1), max(x0, x1)), (min(y0, y1), max(y0, y1))
        if xs[0] == xs[1] or ys[0] == ys[1]:
            return None
        return Shape("box", xs, ys)
    if len(numbers) % 2 or len(numbers) < 6 or len(numbers) > 2 * MAX_CORNERS:
        return None
    return Shape("lasso", tuple(numbers[0::2]), tuple(numbers[1::2]))


def parse_zoom(text: str) -> tuple[float, float, float, float] | None:
    """The map ranges in a `view=` value, or None when it is not four ASCII decimal numbers, finite,
    with x0 < x1 and y0 < y1 each at least `ZOOM_MIN_SPAN` apart (js/zoom.js `parseZoomText` agrees).

    Examples:
        >>> parse_zoom("-1.5,2,0,3.25"), parse_zoom("1,0,0,1"), parse_zoom("nan,1,0,1")
        ((-1.5, 2.0, 0.0, 3.25), None, None)
        >>> parse_zoom("1_0,20,0,1"), parse_zoom("０,1,0,1"), parse_zoom("0,1e-300,0,1e-300")
        (None, None, None)
    """
    parts = text.split(",")
    if len(parts) != 4 or not all(_ZOOM_NUMBER.fullmatch(part) for part in parts):
        return None
    x0, x1, y0, y1 = numbers = tuple(float(part) for part in parts)
    if not all(math.isfinite(v) for v in numbers):
        return None
    return numbers if x1 - x0 >= ZOOM_MIN_SPAN and y1 - y0 >= ZOOM_MIN_SPAN else None


# A reading step, as both languages write it (js/view.js `step` is this one's twin, held to it by
# tests/view_vectors.py): {"kind": "topic", "topic": id|None} opens a topic (closing the paper),
# "paper" opens a paper by its doc id (None: closes it), "topics" keeps those topics alone (none:
# all; themes a topic lies outside are dropped), "values" sets one column's filter, "key" shows an
# entry of the map's key alone ({"theme": id}, or {"column": the colour column, "value": text}; None, or
# the entry shown alone again: all again), "select" a box or lasso as the link writes it ("": none),
# "unassigned" shows or hides the unassigned papers ("show"), "reset" puts every setting back but
# the topic list's order.
Action = Mapping[str, object]


def step(state: ViewState, action: Action, theme_of: Mapping[int, int] = {}) -> ViewState:
    """The view after the reading step `action` (see `Action`); `theme_of`: each topic's theme.

    Examples:
        >>> step(ViewState(themes=(1,), topics=(4,)), {"kind": "key", "theme": 0}, {4: 1})
        ViewState(search='', topics=(), show_unassigned=True, filters=(), topic=None, paper=None, \
themes=(0,), sort='size', added_only=False, colour='', selection='')
        >>> step(ViewState(themes=(1,)), {"kind": "topics", "topics": [2, 4]}, {2: 0, 4: 1}).themes
        ()
    """
    kind = action["kind"]
    if kind == "topic":
        return replace(state, topic=action["topic"], paper=None)
    if kind == "paper":
        return replace(state, paper=action["paper"])
    if kind == "topics":
        topics = tuple(dict.fromkeys(action["topics"]))
        outside = any(t != -1 and theme_of.get(t) not in state.themes for t in topics)
        return replace(state, topics=topics, themes=() if state.themes and outside else state.themes)
    if kind == "values":
        return _with_filter(state, action["column"], tuple(dict.fromkeys(action["values"])))
    if kind == "key" and "theme" in action:
        theme = action["theme"]
        if theme is None or state.themes == (theme,):
            return replace(state, themes=())
        keep = state.topic is None or theme_of.get(state.topic) == theme
        return replace(state, themes=(theme,), topics=(), topic=state.topic if keep else None)
    if kind == "key":
        column, value = action["column"], action["value"]
        alone = value is not None and state.filter_dict().get(column, ()) != (value,)
        return _with_filter(state, column, (value,) if alone else ())
    if kind == "select":
        return replace(state, selection=action["selection"])
    if kind == "unassigned":
        return replace(state, show_unassigned=bool(action["show"]))
    if kind == "reset":  # the settings "Reset view" keeps (`LinkSetting.reset`) as they are
        return ViewState(**{s.name: getattr(state, s.name) for s in SETTINGS if s.in_state and not s.reset})
    raise ValueError(f"not a reading step: {kind!r}")


def _with_filter(state: ViewState, column: str, values: tuple[str, ...]) -> ViewState:
    """`state` with the column's filter set to `values` (none: dropped), the columns sorted."""
    filters = {**state.filter_dict(), column: values}
    return replace(state, filters=tuple(sorted((c, v) for c, v in filters.items() if v)))


def to_params(state: ViewState, map_name: str | None = None) -> dict[str, str | list[str]]:
    """Query parameters for `state`; defaults are left out so links stay short.

    Examples:
        >>> to_params(ViewState(search="graph", topics=(3, 1), filters=(("year", ("2024",)),)), "seeds")
        {'map': 'seeds', 'q': 'graph', 'topics': '3,1', 'f.year': ['2024']}
    """
    params: dict[str, str | list[str]] = {MAP_KEY: map_name} if map_name else {}
    for setting in SETTINGS:
        if setting.prefix:  # (suffix, values) pairs: one key each
            params.update(
                {setting.url + key: list(values) for key, values in getattr(state, setting.name) if values}
            )
        elif (value := setting.write(state)) is not None:
            params[setting.url] = value
    return params


def _last(params: Mapping[str, list[str]], key: str) -> str:
    values = params.get(key) or [""]
    return values[-1]


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def _show_list(values: list[str], limit: int = 10) -> str:
    """The first `limit` values quoted, then how many more: a link with 30,000 ids gives one short line.

    Examples:
        >>> _show_list(["a", "b"]), _show_list([str(i) for i in range(30_000)], limit=2)
        ("'a', 'b'", "'0', '1' and 29,998 more")
    """
    shown = ", ".join(map(_show, values[:limit]))
    return shown if len(values) <= limit else f"{shown} and {len(values) - limit:,} more"


def _show(value: str, limit: int = 40) -> str:
    """Quote a user-supplied value for a notice, cut short so a hostile link cannot flood the page."""
    return repr(shorten(value, limit))
