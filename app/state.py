"""The shareable view state and its round trip through the URL query string.

Everything a reader chooses that changes the view lives in `ViewState`; `to_params` writes it as
query parameters and `parse_view` reads them back, ignoring (with a notice) anything unknown or
malformed, so a hand-edited or stale link never raises.

Query string keys:
    map=seeds           the map folder name (see `app.data.map_catalog`)
    q=diffusion models  Search text (see docs/search.md): whole words, "phrases", prefix*; all must match
    kind=meaning        search by meaning instead of by words (words when absent)
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
    view=x0,x1,y0,y1    the map's zoom and pan (its x and y ranges); written by the map in the browser as
                        the reader zooms, restored from the link, dropped by "Reset view"
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.search import KINDS
from app.themes import THEME_KEY, parse_themes, theme_params

MAX_SEARCH_CHARS = 300
FILTER_PREFIX = "f."
SORT_KEY = "sort"
KIND_KEY = "kind"
SORTS = ("size", "rising")  # the topic list's orders; the first is the default
COLOUR_KEY = "colour"
ZOOM_KEY = "view"  # owned by the map in the browser (map.js); the server only checks and keeps it
VIEW_KEYS = (
    "q",
    KIND_KEY,
    "topics",
    "unassigned",
    "topic",
    "paper",
    THEME_KEY,
    SORT_KEY,
    "added",
    COLOUR_KEY,
    ZOOM_KEY,
)


@dataclass(frozen=True)
class ViewState:
    """What the reader sees: search, filters, and the opened topic and paper (all optional)."""

    search: str = ""
    search_kind: str = KINDS[0]  # "words" or "meaning"
    topics: tuple[int, ...] = ()  # empty: every topic; -1: the unassigned papers
    show_unassigned: bool = True
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (column, values as text), columns sorted
    topic: int | None = None
    paper: str | None = None
    themes: tuple[int, ...] = ()  # empty: every theme
    sort: str = SORTS[0]
    added_only: bool = False  # only papers added since the last full build
    colour: str = ""  # metadata column the map is coloured by; empty: by topic

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
    wanted = params.get("map", [])
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


def _read_search(link: _Link) -> str:
    search = link.last("q").strip()
    if len(search) > MAX_SEARCH_CHARS:
        link.ignore(f"Search text was cut to its first {MAX_SEARCH_CHARS} characters.")
        search = search[:MAX_SEARCH_CHARS]
    return search


def _read_search_kind(link: _Link) -> str:
    kind = link.last(KIND_KEY).strip().lower() or KINDS[0]
    if kind not in KINDS:
        link.ignore(f"Ignored {KIND_KEY}={_show(kind)}: use 'words' or 'meaning'.")
        return KINDS[0]
    return kind


def _read_topics(link: _Link) -> tuple[int, ...]:
    topics: list[int] = []
    bad: list[str] = []
    for chunk in link.params.get("topics", []):
        for piece in chunk.split(","):
            if not piece.strip():
                continue
            number = _int(piece)
            if number is None or number not in link.vocabulary.topic_ids:
                bad.append(piece.strip())
            elif number not in topics:
                topics.append(number)
    if bad:
        link.ignore(f"Ignored topics {_show_list(bad)}: not topics of this map.")
    return tuple(topics)


def _read_show_unassigned(link: _Link) -> bool:
    unassigned = link.last("unassigned").lower()
    if unassigned in ("hide", "0", "false", "no"):
        return False
    if unassigned not in ("", "show", "1", "true", "yes"):
        link.ignore(f"Ignored unassigned={_show(unassigned)}: use 'hide' or 'show'.")
    return True


def _read_filters(link: _Link) -> tuple[tuple[str, tuple[str, ...]], ...]:
    filters: list[tuple[str, tuple[str, ...]]] = []
    for key in sorted(k for k in link.params if k.startswith(FILTER_PREFIX)):
        column = key[len(FILTER_PREFIX) :]
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


def _read_topic(link: _Link) -> int | None:
    raw = link.last("topic")
    if not raw:
        return None
    number = _int(raw)
    if number is not None and number in link.vocabulary.topic_ids:
        return number
    link.ignore(f"Ignored topic={_show(raw)}: not a topic of this map.")
    return None


def _read_paper(link: _Link) -> str | None:
    raw = link.last("paper")
    if not raw:
        return None
    if raw in link.vocabulary.doc_ids:
        return raw
    link.ignore(f"Ignored paper={_show(raw)}: no such paper in this map.")
    return None


def _read_themes(link: _Link) -> tuple[int, ...]:
    """The chosen themes; topics read before that lie outside them are dropped (the Topics filter
    offers only the chosen themes' topics), with a notice."""
    themes, notices = parse_themes(link.params, link.vocabulary.theme_ids)
    link.notices += notices
    topics = link.values.get("topics") or ()
    if themes and topics:
        outside = [t for t in topics if t != -1 and link.vocabulary.topic_themes.get(t) not in themes]
        if outside:
            link.ignore(
                f"Ignored topics {', '.join(map(str, outside))}: not in the chosen theme"
                f"{'s' if len(themes) > 1 else ''}."
            )
            link.values["topics"] = tuple(t for t in topics if t not in outside)
    return themes


def _read_sort(link: _Link) -> str:
    sort = link.last(SORT_KEY).strip().lower() or SORTS[0]
    if sort not in link.vocabulary.sorts:
        reason = "this map has no years to measure growth by" if sort in SORTS else "use 'size' or 'rising'"
        link.ignore(f"Ignored sort={_show(sort)}: {reason}.")
        return SORTS[0]
    return sort


def _read_added_only(link: _Link) -> bool:
    raw = link.last("added").lower()
    if raw == "only" and link.vocabulary.has_added:
        return True
    if raw == "only":
        link.ignore("Ignored added=only: this map has no papers added since its last build.")
    elif raw not in ("", "all"):
        link.ignore(f"Ignored added={_show(raw)}: use 'only'.")
    return False


def _read_colour(link: _Link) -> str:
    colour = link.last(COLOUR_KEY).strip()
    if colour and colour not in link.vocabulary.colour_columns:
        link.ignore(f"Ignored colour={_show(colour)}: not a column this map can be coloured by.")
        return ""
    return colour


def _check_zoom(link: _Link) -> None:
    """The zoom is the browser's (map.js): the server only says when a link's value is malformed."""
    raw = link.last(ZOOM_KEY)
    if raw and parse_zoom(raw) is None:
        link.ignore(f"Ignored view={_show(raw)}: use four numbers x0,x1,y0,y1.")


# Each `ViewState` field and how a link's value for it is read, in the order notices are given.
READERS = (
    ("search", _read_search),
    ("search_kind", _read_search_kind),
    ("topics", _read_topics),
    ("show_unassigned", _read_show_unassigned),
    ("filters", _read_filters),
    ("topic", _read_topic),
    ("paper", _read_paper),
    ("themes", _read_themes),
    ("sort", _read_sort),
    ("added_only", _read_added_only),
    ("colour", _read_colour),
)


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
    for key in params:
        if key != "map" and key not in VIEW_KEYS and not key.startswith(FILTER_PREFIX):
            link.ignore(f"Ignored unknown link setting {_show(key)}.")
    for name, read in READERS:
        link.values[name] = read(link)
    _check_zoom(link)
    return ViewState(**link.values), link.notices


def parse_zoom(text: str) -> tuple[float, float, float, float] | None:
    """The map ranges in a `view=` value, or None when it is not four finite numbers with x0 < x1, y0 < y1.

    Examples:
        >>> parse_zoom("-1.5,2,0,3.25"), parse_zoom("1,0,0,1"), parse_zoom("nan,1,0,1")
        ((-1.5, 2.0, 0.0, 3.25), None, None)
    """
    try:
        numbers = tuple(float(v) for v in text.split(","))
    except ValueError:
        return None
    if len(numbers) != 4 or not all(math.isfinite(v) for v in numbers):
        return None
    x0, x1, y0, y1 = numbers
    return numbers if x0 < x1 and y0 < y1 else None


def to_params(state: ViewState, map_name: str | None = None) -> dict[str, str | list[str]]:
    """Query parameters for `state`; defaults are left out so links stay short.

    Examples:
        >>> to_params(ViewState(search="graph", topics=(3, 1), filters=(("year", ("2024",)),)), "seeds")
        {'map': 'seeds', 'q': 'graph', 'topics': '3,1', 'f.year': ['2024']}
    """
    params: dict[str, str | list[str]] = {}
    if map_name:
        params["map"] = map_name
    if state.search:
        params["q"] = state.search
        if state.search_kind != KINDS[0]:
            params[KIND_KEY] = state.search_kind
    if state.topics:
        params["topics"] = ",".join(str(t) for t in state.topics)
    if not state.show_unassigned:
        params["unassigned"] = "hide"
    for column, values in state.filters:
        if values:
            params[FILTER_PREFIX + column] = list(values)
    if state.topic is not None:
        params["topic"] = str(state.topic)
    if state.paper:
        params["paper"] = state.paper
    params.update(theme_params(state.themes))
    if state.sort != SORTS[0]:
        params[SORT_KEY] = state.sort
    if state.added_only:
        params["added"] = "only"
    if state.colour:
        params[COLOUR_KEY] = state.colour
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
    value = value if len(value) <= limit else value[: limit - 1] + "…"
    return repr(value)
