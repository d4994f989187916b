"""Find map folders and precompute, once per map, everything the app's reruns reuse."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from app.changes import TopicEdits
from app.palette import theme_topic_colours
from app.state import Vocabulary
from app.text import HIDDEN_PATTERN, visible
from app.themes import theme_of_topic
from pipeline.mapfolder.files import MANIFEST, MAP_FILES, PAPERS, TOPICS
from pipeline.mapfolder.manifest import Manifest
from pipeline.mapfolder.search_index import SearchIndex, index_for, paper_fingerprint
from pipeline.mapfolder.store import added_mask, read_map
from pipeline.modelling.floors import PairSimilarities, map_pair_similarities

REPO = Path(__file__).resolve().parent.parent
MAPS_ROOT = REPO / "assets" / "maps"
DEFAULT_MAP = MAPS_ROOT / "seeds"
UNASSIGNED_LABEL = "Unassigned"
# Never offered as filters.
CORE_COLUMNS = ("doc_id", "title", "abstract", "topic_id", "x", "y", "added", "via_add")
_HIDDEN = re.compile(HIDDEN_PATTERN)
MAX_FACET_VALUES = 60  # a metadata column with more distinct values is not offered as a filter
# An input file's name ("000_d810000eb6448a23.txt"), what `pipeline.ingest` puts in `source`: it says
# little to a reader, so it is neither a filter nor what the hover and the papers table call a source.
INPUT_FILE = re.compile(r"\.(?:txt|csv|tsv|jsonl?|parquet)$", re.IGNORECASE)
PLACE_COLUMNS = ("venue", "year", "collection")  # where a paper is from, in a reader's terms


@dataclass(frozen=True)
class MapRef:
    """A map the app can open: its URL name (the folder's) and folder."""

    name: str
    path: Path

    @property
    def title(self) -> str:
        """What the map selector shows: the map's own name (its manifest's), else the folder's."""
        return map_title(self.path) or self.name


def map_title(folder: Path) -> str:
    """The name a map's manifest gives it ("ICML 2025"), or "" where the manifest holds none or is
    unreadable (the map's own page then says what is wrong)."""
    from pipeline.mapfolder.manifest import read_manifest

    try:
        return read_manifest(folder, check=False).name.strip()
    except Exception:  # noqa: BLE001 - a damaged map is named by its folder; opening it says why
        return ""


def map_titles(catalog: Sequence[MapRef]) -> dict[str, str]:
    """Each map's name in the selector by its URL name: its manifest's name, with the folder's added
    where two maps share one ("ICML 2025 (seeds)")."""
    titles = {m.name: m.title for m in catalog}
    shared = {t for t in titles.values() if list(titles.values()).count(t) > 1}
    return {k: f"{t} ({k})" if t in shared and t != k else t for k, t in titles.items()}


def requested_map(argv: Sequence[str], environ: Mapping[str, str]) -> Path | None:
    """The map asked for by `streamlit run streamlit_app.py -- --map DIR`, else by `ATLAS_MAP`.

    Examples:
        >>> requested_map(["--map", "maps/x"], {}), requested_map([], {"ATLAS_MAP": "y"})
        (PosixPath('maps/x'), PosixPath('y'))
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--map")
    known, _ = parser.parse_known_args(list(argv))
    chosen = known.map or environ.get("ATLAS_MAP")
    return Path(chosen).expanduser() if chosen else None


def maps_root(environ: Mapping[str, str]) -> Path:
    """The folder searched for maps: `ATLAS_MAPS_DIR`, else `assets/maps` in the repository."""
    return Path(environ["ATLAS_MAPS_DIR"]).expanduser() if environ.get("ATLAS_MAPS_DIR") else MAPS_ROOT


def discover_maps(root: Path) -> list[MapRef]:
    """Every map folder (one holding a manifest) directly under `root`, by name."""
    if not root.is_dir():
        return []
    return [
        MapRef(p.name, p)
        for p in sorted(root.iterdir())
        if p.is_dir() and not p.name.startswith(".") and (p / MANIFEST).is_file()
    ]


def map_catalog(requested: Path | None, root: Path = MAPS_ROOT) -> list[MapRef]:
    """The maps on offer, the default first: the requested one, else `seeds`, else the first found."""
    found = discover_maps(root)
    if requested is not None:
        requested = requested.resolve()
        others = [m for m in found if m.path.resolve() != requested]
        taken = {m.name for m in others}
        name = requested.name or "map"
        if name in taken:  # e.g. a second "seeds" elsewhere: name it by its parent folder too
            name = f"{requested.parent.name}-{name}"
        while name in taken:
            name += "-2"
        return [MapRef(name, requested), *others]
    found.sort(key=lambda m: m.name != DEFAULT_MAP.name)
    return found


def map_signature(path: Path) -> tuple:
    """Modification times and sizes of the artifacts and the edits: a new value means the map was
    rebuilt or edited."""
    signature = []
    for name in sorted(MAP_FILES):
        try:
            stat = (Path(path) / name).stat()
            signature.append((name, stat.st_mtime_ns, stat.st_size))
        except OSError:
            signature.append((name, None, None))
    return tuple(signature)


@dataclass
class MapData:
    """A loaded map with its per-map precomputations. Shared between sessions: treat as read-only."""

    name: str
    path: Path
    manifest: Manifest
    papers: pd.DataFrame
    topics: pd.DataFrame  # indexed by topic_id, sorted by size (largest first)
    vectors: np.ndarray  # unit rows as stored (float16, memory-mapped read-only), row i = papers row i
    search_index: SearchIndex  # the full-text index of titles and abstracts (pipeline.mapfolder.search_index)
    colour_index: np.ndarray  # position of each paper's colour in `palette` (unassigned last)
    palette: list[str]  # colours in topic_order, then the unassigned grey
    doc_ids: np.ndarray  # row -> doc_id (str objects, shared with row_of's keys)
    row_of: dict[str, int]  # doc_id -> row
    topic_ids: np.ndarray
    labels: dict[int, str]  # topic_id -> name; -1 -> "Unassigned"
    colours: dict[int, str]
    theme_colours: dict[int, str]  # theme_id -> its colour (the key's); its topics are shades of it
    sizes: dict[int, int]
    topic_order: list[int]  # topic ids, largest first
    topic_similarity: np.ndarray  # cosine between topic centroids, rows/cols in topic_order
    facets: dict[str, tuple[str, ...]]  # filterable metadata column -> its values as text
    facet_text: dict[str, pd.Series]  # the same columns as text, for filtering
    table_columns: list[str]  # metadata shown in paper tables
    show_source: bool  # paper tables have a Source column (`source_tells_more`: not a copy of their columns)
    themes: pd.DataFrame | None = (
        None  # themes.parquet when the map has one: theme_id, label, size, topic_ids, x, y
    )
    lineage: pd.DataFrame | None = None  # lineage.parquet when the map was built with a previous map
    added: np.ndarray | None = None  # papers placed by `pipeline add` since the last full build
    topic_edits: TopicEdits = TopicEdits()  # what the curator's merges and hides did to the built topics
    pairs: PairSimilarities | None = (
        None  # the map's pair similarities (`pipeline.modelling.floors`): its floors
    )
    notices: tuple[str, ...] = ()  # what the page must say about the map (e.g. a damaged search index)

    @property
    def n(self) -> int:
        return len(self.papers)

    def vocabulary(self) -> Vocabulary:
        unassigned = (
            [-1] if self.sizes.get(-1) else []
        )  # "Unassigned" is a topic view only when it has papers
        return Vocabulary(
            topic_ids=frozenset([*self.topic_order, *unassigned]),
            facets=self.facets,
            doc_ids=self.row_of,
            has_added=self.added is not None and bool(self.added.any()),
            topic_themes=self.topic_themes(),
        )

    def topic_themes(self) -> dict[int, int]:
        """Topic id -> theme id, for maps whose topics carry one."""
        if "theme_id" not in self.topics.columns:
            return {}
        themes = self.topics["theme_id"]
        return {int(t): int(th) for t, th in zip(self.topics["topic_id"], themes) if pd.notna(th)}

    def label(self, topic_id: int) -> str:
        return self.labels.get(int(topic_id), f"Topic {topic_id}")


def facet_columns(papers: pd.DataFrame, max_values: int = MAX_FACET_VALUES) -> dict[str, tuple[str, ...]]:
    """Metadata columns worth a filter: scalar values, 2 to `max_values` distinct and mostly repeated,
    present for at least half the papers (a column only some added papers have is no filter).

    `source` and `collection` come first; identifier-like columns (a url per paper) are left out, and
    so is a `source` of input file names (`INPUT_FILE`): the collection, venue or year says more.

    Examples:
        >>> frame = pd.DataFrame({"doc_id": list("abc"), "year": [2023, 2024, 2023], "one": ["x"] * 3})
        >>> facet_columns(frame)
        {'year': ('2023', '2024')}
        >>> facet_columns(frame.assign(source=["a.txt", "b.txt", "a.txt"]))
        {'year': ('2023', '2024')}
    """
    facets: dict[str, tuple[str, ...]] = {}
    columns = [c for c in papers.columns if c not in CORE_COLUMNS]
    columns.sort(key=lambda c: (c != "source", c != "collection", c))
    for column in columns:
        values = papers[column]
        sample = values.dropna().head(200)
        if sample.map(lambda v: isinstance(v, list | tuple | dict | np.ndarray)).any():
            continue  # list-valued metadata (authors, keywords) is shown, not filtered on
        present = values.dropna()
        present = present[present.astype(str).str.strip() != ""]
        if len(present) * 2 < len(papers):
            continue
        distinct = values.dropna().unique()
        if column == "source" and all(INPUT_FILE.search(str(v)) for v in distinct):
            continue
        if 2 <= len(distinct) <= min(max_values, max(2, len(papers) // 2)):
            facets[column] = tuple(sorted({str(v) for v in distinct}, key=_natural_key))
    return facets


def paper_places(papers: pd.DataFrame) -> pd.Series:
    """Where each paper is from, as the hover and the papers table say it: its `source` unless that is
    an input file's name, then its venue, year and collection where the map has them (each said once),
    else its `source` after all (a file name says little to a reader, so it is the last resort).

    Examples:
        >>> paper_places(pd.DataFrame({"source": ["a.txt", "b.txt"], "year": [2024.0, None]})).tolist()
        ['2024', 'b.txt']
        >>> paper_places(pd.DataFrame({"source": ["ICML", "arXiv"], "venue": ["ICML", None]})).tolist()
        ['ICML', 'arXiv']
    """
    columns = ["source", *(c for c in PLACE_COLUMNS if c in papers.columns)]
    codes, texts = zip(*(_distinct_text(papers[c]) for c in columns), strict=True)
    # Few distinct combinations (sources x venues x years): each is worded once, then given to its papers.
    combo = np.zeros(len(papers), dtype=np.int64)
    for code, text in zip(codes, texts, strict=True):  # combination numbers stay below the paper count
        combo = pd.factorize(combo * len(text) + code % len(text))[0]
    places = []
    for row in np.unique(combo, return_index=True)[1]:  # one paper of each combination, in number order
        source, *rest = (text[code[row]] for text, code in zip(texts, codes, strict=True))
        parts = ["" if INPUT_FILE.search(source) else source, *rest]
        places.append(" · ".join(dict.fromkeys(p for p in parts if p)) or source)
    return pd.Series(np.array(places, dtype=object)[combo], index=papers.index, dtype=object)


def source_tells_more(papers: pd.DataFrame, shown: Sequence[str]) -> bool:
    """Whether a papers table needs its Source column (`paper_places`) beside the metadata columns it
    shows (`shown`): not when every paper's place is only what those columns say ("COLM · 2025" beside
    Venue and Year), with an input file's name the rest.

    Examples:
        >>> papers = pd.DataFrame({"source": ["a.csv", "b.csv"], "venue": ["COLM"] * 2, "year": [2024, 2025]})
        >>> source_tells_more(papers, ["venue", "year"]), source_tells_more(papers, ["year"])
        (False, True)
    """
    told = [c for c in PLACE_COLUMNS if c in shown and c in papers.columns]
    rest = paper_places(papers.drop(columns=told)).astype(str)
    redundant = rest.str.contains(INPUT_FILE) | rest.eq("")
    for column in told:
        codes, text = _distinct_text(papers[column])
        redundant |= rest.eq(pd.Series(np.array(text, dtype=object)[codes], index=papers.index))
    return not bool(redundant.all())


def _distinct_text(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Each value's position among the distinct values, and those as a reader reads them (2024.0 as
    "2024"); a missing value's position is -1, the last text, ""."""
    codes, uniques = pd.factorize(values)
    text = [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip() for v in uniques]
    return codes, [*text, ""]


def _natural_key(text: str) -> tuple:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text.lower())


def point_size(n: int) -> float:
    """Marker diameter in pixels: big for a few dozen papers, small but visible for 100k.

    Examples:
        >>> [round(point_size(n), 1) for n in (57, 10_000, 80_000)]
        [11.0, 5.3, 3.0]
    """
    return float(np.clip(18.5 - 3.3 * math.log10(max(n, 1)), 3.0, 11.0))


def label_limit(n_papers: int, n_topics: int) -> int:
    """How many topic names to draw on the map: more for bigger maps, never more than 40.

    Examples:
        >>> label_limit(57, 5), label_limit(10_000, 80), label_limit(80_000, 150)
        (5, 40, 40)
    """
    return int(min(n_topics, 40, max(8, round(3 * math.log2(max(n_papers, 2))))))


def build_map_data(name: str, path: Path) -> MapData:
    """Read a map folder (raising `pipeline.UserError` when it is not one) and precompute for it."""
    import pyarrow as pa

    # Arrow's default allocator (mimalloc) keeps the pages it freed: reading papers.parquet of 81,646
    # papers left 260 MB resident for a 96 MB table. The system allocator gives them back.
    pa.set_memory_pool(pa.system_memory_pool())
    atlas = read_map(path, memory_map=True)
    as_read = atlas.papers.reset_index(drop=True)
    facts = PaperFacts(Path(path), len(as_read))
    with_hidden = facts.get("with_hidden")
    if with_hidden is None:
        with_hidden = facts.set("with_hidden", hidden_columns(as_read))
    papers = shown_as_text(as_read, check=with_hidden)
    topics = (
        shown_as_text(atlas.topics)
        .sort_values(["size", "topic_id"], ascending=[False, True])
        .set_index("topic_id", drop=False)
    )
    # The stored float16 rows, memory-mapped: searches by meaning turn them into float32 a chunk at a
    # time (`pipeline.modelling.neighbours.cosine_to`), never the whole map (1.5 GB at a million papers).
    vectors = atlas.embeddings
    topic_ids = papers["topic_id"].to_numpy(dtype=np.int64)
    topic_order = topics["topic_id"].astype(int).tolist()
    labels = {int(t): str(label) for t, label in zip(topics["topic_id"], topics["label"], strict=True)}
    labels[-1] = UNASSIGNED_LABEL
    # Sizes, centroids and colours in one pass over the papers, not a boolean scan of every paper per
    # topic (625 scans of a million rows on the million-paper benchmark map).
    offset = -min(-1, int(topic_ids.min(initial=-1)), min(topic_order, default=-1))  # ids from 0 up
    shifted = topic_ids + offset
    span = max(int(shifted.max(initial=0)), max(topic_order, default=0) + offset) + 1
    counts = np.bincount(shifted, minlength=span)
    sizes = {int(t): int(counts[t + offset]) for t in [*topic_order, -1]}
    by_topic = np.argsort(topic_ids, kind="stable")
    starts = np.searchsorted(topic_ids[by_topic], topic_order, side="left")
    ends = np.searchsorted(topic_ids[by_topic], topic_order, side="right")
    centroids = np.zeros((len(topic_order), vectors.shape[1]), dtype=np.float32)
    for position, (start, end) in enumerate(zip(starts, ends)):
        if end > start:
            centroids[position] = vectors[np.sort(by_topic[start:end])].mean(axis=0, dtype=np.float32)
    centroids /= np.clip(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12, None)

    lookup = np.full(span, len(topic_order), dtype=np.uint16)  # topic id + offset -> palette position
    lookup[np.asarray(topic_order, dtype=np.int64) + offset] = np.arange(len(topic_order))
    colour_index = lookup[shifted]
    colours, theme_colours = theme_topic_colours(
        topic_order, theme_of_topic(topics)
    )  # shades of each theme's
    facets = facet_columns(papers)
    facet_text = {column: papers[column].astype(str) for column in facets}
    extra = [c for c in ("venue", "year", "authors") if c in papers.columns and c not in ("source",)]
    doc_ids = papers["doc_id"].astype(str).to_numpy(dtype=object)
    index_notes: list[str] = []
    # The papers as read from papers.parquet (no bidi control made visible): their fingerprint is the
    # file's, kept beside the file's signature in the cache after the first load.
    known = None
    if papers is as_read:
        known = facts.get("fingerprint") or facts.set("fingerprint", paper_fingerprint(papers))
    search_index = index_for(path, papers, log=index_notes.append, fingerprint=known)
    facts.save()
    return MapData(
        name=name,
        path=Path(path),
        manifest=atlas.manifest,
        papers=papers,
        topics=topics,
        vectors=vectors,
        search_index=search_index,
        colour_index=colour_index,
        palette=[colours[t] for t in topic_order] + [colours[-1]],
        doc_ids=doc_ids,
        row_of={doc_id: row for row, doc_id in enumerate(doc_ids)},
        topic_ids=topic_ids,
        labels=labels,
        colours=colours,
        theme_colours=theme_colours,
        sizes=sizes,
        topic_order=topic_order,
        topic_similarity=centroids @ centroids.T,
        facets=facets,
        facet_text=facet_text,
        table_columns=extra,
        show_source=source_tells_more(papers, extra),
        themes=None if (themes := usable_theme_table(atlas.themes)) is None else shown_as_text(themes),
        lineage=atlas.lineage,
        added=added_mask(papers),
        topic_edits=topic_edits(Path(path), atlas),
        pairs=map_pair_similarities(atlas.manifest, vectors),
        notices=tuple(
            "This map's search index is damaged; searches use one built afresh until the map is rebuilt."
            for note in index_notes
            if "search index is" in note
        )[:1],
    )


class PaperFacts:
    """What a load learns from papers.parquet's text and the next load of the same file reuses, kept in
    the cache folder under the file's path, size and modification time: its search fingerprint
    (`paper_fingerprint`: hashing a million abstracts takes 3 s) and the columns holding controls
    (`shown_as_text`: searching a million abstracts for them takes 3 s). Curation never changes a
    doc_id, title or abstract, so the facts hold for every curated view of the file."""

    def __init__(self, folder: Path, rows: int) -> None:
        import hashlib

        from pipeline.cache import cache_dir

        source = folder / PAPERS
        stat = source.stat()
        self.key = f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{rows}"
        digest = hashlib.blake2b(self.key.encode(), digest_size=12).hexdigest()
        self.path = cache_dir() / "paper-facts" / f"{digest}.json"
        self.known: dict = {}
        self.changed = False
        try:
            record = json.loads(self.path.read_text())
            if isinstance(record, dict) and record.get("key") == self.key:
                self.known = record
        except (OSError, ValueError):
            pass

    def get(self, name: str):
        return self.known.get(name)

    def set(self, name: str, value):
        if self.known.get(name) != value:
            self.known[name], self.changed = value, True
        return value

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            partial.write_text(json.dumps({**self.known, "key": self.key}))
            os.replace(partial, self.path)
        except OSError:  # no writable cache: learnt again next time
            pass


def topic_edits(path: Path, atlas) -> TopicEdits:
    """The merges and hides `read_map` applied to the map (`manifest.curation.applied`), with the
    topics as built (names with renames applied, sizes) that the lineage's story is told of."""
    applied = set(atlas.manifest.curation.applied if atlas.manifest.curation is not None else [])
    edits = [e for e in atlas.edits or [] if e.id in applied]
    moves = tuple((int(e.topic), e.action, int(e.into)) for e in edits if e.action in ("merge", "hide"))
    if not moves:
        return TopicEdits()
    built = shown_as_text(pd.read_parquet(path / TOPICS, columns=["topic_id", "label", "size"]))
    names = {int(t): str(label) for t, label in zip(built["topic_id"], built["label"], strict=True)}
    for edit in edits:
        if edit.action == "rename":
            names[int(edit.topic)] = visible(edit.name)
    sizes = dict(zip(built["topic_id"].astype(int), built["size"].astype(int), strict=True))
    return TopicEdits(moves, {topic: (names[topic], sizes[topic]) for topic in sizes})


def shown_as_text(table: pd.DataFrame, check: list[str] | None = None) -> pd.DataFrame:
    """`table` with the characters a page would obey or hide (a NUL, C0 and C1 controls, bidi controls:
    `app.text.visible`) in its text cells (and lists of text) made visible, U+FFFD: the one place the
    map's text is made safe for every element the browser draws from it (the point and table files,
    the topic panel's summary, the opened paper), so a title cannot reverse what follows it.

    Columns without such characters are `table`'s own (not copies): treat the result as read-only.
    `check`: the only columns that may hold them, when known (`PaperFacts`); None = every column.
    """
    changed = {  # columns rewritten; the rest are shared with `table`, never copied (a map's text is most of its memory)
        column: table[column].map(_visible_cell) for column in hidden_columns(table, check)
    }
    return table.assign(**changed) if changed else table


def hidden_columns(table: pd.DataFrame, check: list[str] | None = None) -> list[str]:
    r"""The text columns of `table` (among `check`, when given) holding a character `visible` replaces.

    Examples:
        >>> hidden_columns(pd.DataFrame({"a": ["x\u202ey", "z"], "b": ["plain", "te\x00xt"], "n": [1, 2]}))
        ['a', 'b']
    """
    found_in = []
    for column in table.columns if check is None else [c for c in check if c in table.columns]:
        values = table[column]
        if not (values.dtype == object or pd.api.types.is_string_dtype(values)):
            continue
        if values.dtype != object:  # Arrow-backed text: one vectorised search, no Python strings made
            found = bool(values.str.contains(HIDDEN_PATTERN, regex=True, na=False).any())
        else:
            # One search over the column's text first, and a regular expression only when it holds
            # something unprintable: almost every map has no such character, and a per-cell pass over
            # 80,000 abstracts would cost seconds at every map load.
            text = " ".join(
                v if isinstance(v, str) else " ".join(map(str, v))
                for v in values.tolist()
                if isinstance(v, str | list | tuple | np.ndarray)
            )
            found = not text.isprintable() and _HIDDEN.search(text) is not None
        if found:
            found_in.append(column)
    return found_in


def _visible_cell(value: object) -> object:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list | tuple | np.ndarray) and len(value) and isinstance(value[0], str):
        return [visible(v) for v in value]
    return value


def usable_theme_table(themes: pd.DataFrame | None) -> pd.DataFrame | None:
    """The map's themes (schema 2, optional; `read_map` checked their columns and applied edits)."""
    if themes is None:
        return None
    themes = themes.copy()
    themes["label"] = themes["label"].fillna("").astype(str)
    return themes.reset_index(drop=True)
