"""What the tests share, each once: paths, tiny synthetic maps (written with the pipeline's own
`write_map`: no model, no download) and their themed variant, a synthetic corpus to build, the one
fake encoder, and the AppTest and browser helpers that read the page. Fixtures built on these live in
`tests/conftest.py`; no test module imports another.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if str(Path(__file__).resolve().parent.parent) not in sys.path:  # `pytest` run without `python -m`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import base64
import csv
import functools
import gzip
import hashlib
import io
import json
import re

import numpy as np
import pandas as pd

from app.state import normalise_params
from pipeline.mapfolder.files import SCHEMA_VERSION
from pipeline.mapfolder.manifest import LineageBlock, Manifest, PreviousBlock
from pipeline.mapfolder.store import AtlasMap, write_map

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT
SEEDS = ROOT / "seeds"
SEED_MAP = ROOT / "assets" / "maps" / "seeds"  # the committed seed map
EXTRA = ROOT / "tests" / "fixtures" / "extra_abstracts.csv"  # four abstracts to grow the seeds with
APP = str(ROOT / "streamlit_app.py")


def quiet(message: str) -> None:
    """A build's `log` that says nothing."""


class FakeEncoder:
    """The one stand-in for the packaged model in every test (no model, no download): each text's
    vector depends on that text alone.

    A text about noise or diffusion points exactly at topic 1's direction of the tiny maps (Diffusion
    models), one about a policy or reward at topic 2's (Reinforcement learning). Any other text is a
    bag of words: the normalised sum of a fixed random vector per word (seeded by the word's hash), so
    texts sharing words are close (`synthetic_corpus` gives topics), distinct texts are far apart (rows
    out of order are caught) and every vector is nearly orthogonal to the tiny maps' topics.
    `seen` lists the texts it encoded, `calls` counts its calls.

    Pass it as `build_map(..., encoder=FakeEncoder())`; in the app, with
    `monkeypatch.setattr("app.encoder.map_encoder", lambda manifest: FakeEncoder())`; in place of the
    packaged model anywhere (`add`), with `replace_packaged_model(monkeypatch, FakeEncoder())`."""

    name = "test/fake-encoder"
    ANCHORS = {1: ("noise", "diffusion"), 2: ("policy", "reward")}  # tiny-map topic -> its words

    def __init__(self) -> None:
        self.calls = 0
        self.seen: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.seen.extend(texts)
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            topic = next((t for t, words in self.ANCHORS.items() if any(w in text for w in words)), None)
            if topic is not None:
                vectors[row, topic] = 1.0
                continue
            for word in text.lower().split():
                vectors[row] += _word_vector(word)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


@functools.lru_cache(maxsize=65536)
def _word_vector(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
    return np.random.default_rng(seed).standard_normal(384).astype(np.float32)


def replace_packaged_model(monkeypatch, encoder) -> None:
    """Make `encoder` what every embedding without a caller's encoder loads (`embed_texts`, so `add`
    and a build's research areas): the packaged model is never loaded."""
    from pipeline.embedding import embed

    monkeypatch.setattr(embed, "load_encoder", lambda embedder, max_tokens: encoder)


# A synthetic corpus whose abstracts are mostly words of one of six themes: built with `FakeEncoder`
# (a bag of words for these), a map's topics follow the themes, and no model is loaded.
WORD_THEMES = {
    "optics": "laser photon lens optical waveguide refraction beam mirror prism spectrum",
    "robots": "robot gripper arm joint actuator torque manipulator servo kinematics grasp",
    "graphs": "graph vertex edge node spanning tree path coloring planar matching",
    "proteins": "protein amino folding residue enzyme binding peptide structure ligand kinase",
    "markets": "market price auction bidder trade demand supply equilibrium seller buyer",
    "speech": "speech phoneme acoustic speaker voice prosody utterance pitch audio vowel",
}
FILLER = [
    "we",
    "study",
    "a",
    "new",
    "result",
    "for",
    "the",
    "data",
    "and",
    "show",
    "that",
    "it",
    "works",
    "well",
    "in",
    "practice",
]


def synthetic_corpus(n: int, seed: int = 7) -> pd.DataFrame:
    """`n` abstracts (title "Paper i"), paper i mostly words of theme `i % 6` (its `theme` column)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        theme = list(WORD_THEMES)[i % len(WORD_THEMES)]
        words = list(rng.choice(WORD_THEMES[theme].split(), size=12)) + list(rng.choice(FILLER, size=6))
        rng.shuffle(words)
        rows.append({"title": f"Paper {i}", "abstract": f"{' '.join(words)} (study {i}).", "theme": theme})
    return pd.DataFrame(rows)


TOPIC_WORDS = [
    ("Graph neural networks", ["graph", "message passing", "nodes", "edges"]),
    ("Diffusion models", ["diffusion", "denoising", "score", "sampling"]),
    ("Reinforcement learning", ["policy", "reward", "agent", "exploration"]),
    ("Multi-view clustering", ["clustering", "views", "anchors", "consensus"]),
]
SOURCES = ("alpha.txt", "beta.txt")
YEARS = (2023, 2024)


def tiny_map(
    n: int = 60, *, seed: int = 0, titles: list[str] | None = None, labels: list[str] | None = None
) -> AtlasMap:
    """`n` papers in four topics plus every seventh paper unassigned; vectors cluster by topic.

    Paper i: topic `i % 4` (or -1 when `i % 7 == 6`), source `SOURCES[i % 2]`, year `YEARS[i % 3 == 0]`,
    title "<topic word> study i" unless `titles` is given.
    """
    rng = np.random.default_rng(seed)
    topic_ids = np.array([-1 if i % 7 == 6 else i % 4 for i in range(n)])
    directions = np.eye(384, dtype=np.float32)[:4]
    vectors = np.empty((n, 384), dtype=np.float32)
    centres = np.array([[-2.0, 2.0], [2.0, 2.0], [-2.0, -2.0], [2.0, -2.0]])
    xy = np.empty((n, 2), dtype=np.float32)
    for i, topic in enumerate(topic_ids):
        base = directions[i % 4]
        vectors[i] = base + 0.03 * rng.standard_normal(384).astype(np.float32)
        xy[i] = centres[i % 4] + rng.normal(0, 0.45, 2) if topic != -1 else rng.uniform(-3, 3, 2)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = labels or [name for name, _ in TOPIC_WORDS]
    default_titles = [f"{TOPIC_WORDS[i % 4][1][0].capitalize()} study {i}" for i in range(n)]
    papers = pd.DataFrame(
        {
            "doc_id": [f"doc{i:04d}" for i in range(n)],
            "title": titles if titles is not None else default_titles,
            "abstract": [
                f"We study {TOPIC_WORDS[i % 4][1][0]} with {TOPIC_WORDS[i % 4][1][1]} in paper {i}. "
                f"Costs are $O(n)$."
                for i in range(n)
            ],
            "source": [SOURCES[i % 2] for i in range(n)],
            "year": [YEARS[int(i % 3 == 0)] for i in range(n)],
            "topic_id": topic_ids,
            "x": xy[:, 0],
            "y": xy[:, 1],
        }
    )
    topics = pd.DataFrame(
        {
            "topic_id": range(4),
            "label": names,
            "keywords": [words for _, words in TOPIC_WORDS],
            "keyword_weights": [[0.4, 0.3, 0.2, 0.1]] * 4,
            "size": [int((topic_ids == t).sum()) for t in range(4)],
            "x": centres[:, 0],
            "y": centres[:, 1],
            "representative_doc_ids": [
                [f"doc{i:04d}" for i in range(n) if topic_ids[i] == t][:3] for t in range(4)
            ],
        }
    )
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "name": "Tiny test map",
        "papers": n,
        "topics": 4,
        "unassigned": int((topic_ids == -1).sum()),
        "config": {"embedder": "torch-fp32", "min_topic_size": 3},
        "model": {"name": "sentence-transformers/all-MiniLM-L6-v2", "encoder": "synthetic"},
        "timings_seconds": {"embed": 1.5, "topics": 2.0, "total": 3.5},
        "abstracts_per_second": 17.1,
        "quality": {
            "topics": 4,
            "unassigned_share": 0.15,
            "largest_topic_share": 0.25,
            "coherence_npmi": 0.12,
            "diversity": 1.0,
        },
        "built_at": "2026-01-01T00:00:00Z",
    }
    return AtlasMap(
        papers=papers,
        topics=topics,
        embeddings=vectors.astype(np.float16),
        manifest=Manifest.from_dict(manifest),
    )


def write_tiny_map(folder: Path, **options) -> Path:
    write_map(Path(folder), tiny_map(**options))
    return Path(folder)


THEME_NAMES = ("<b>Generative</b> models", "Learning on structure")  # markup in a name stays text


def themed_map(atlas: AtlasMap | None = None, names: tuple[str, str] = THEME_NAMES) -> AtlasMap:
    """A tiny map (`atlas`, by default `tiny_map()`) with two themes: theme 0 (`names[0]`) holds topics
    1 and 2 (Diffusion models, Reinforcement learning), theme 1 topics 0 and 3 (Graph neural networks,
    Multi-view clustering); each theme's size is its topics' papers, as a build's."""
    atlas = atlas if atlas is not None else tiny_map()
    atlas.topics["theme_id"] = [1, 0, 0, 1]
    size = dict(zip(atlas.topics["topic_id"].tolist(), atlas.topics["size"].tolist(), strict=True))
    atlas.themes = pd.DataFrame(
        {
            "theme_id": [0, 1],
            "label": list(names),
            "keywords": [["diffusion"], ["graph"]],
            "size": [size[1] + size[2], size[0] + size[3]],
            "topic_ids": [[1, 2], [0, 3]],
            "x": [0.0, 0.0],
            "y": [1.5, -1.5],
        }
    )
    return atlas


def write_merged_map(folder: Path) -> Path:
    """The tiny map as rebuilt after a merge (issue 21): topic 2 was "Segmentation", took in "Object
    detection" (id 5, now gone) and bears that name; "Diffusion models" shrank from 30 papers."""
    atlas = tiny_map(
        labels=["Graph neural networks", "Diffusion models", "Object detection", "Multi-view clustering"]
    )
    atlas.lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3, 5],
            "status": ["kept", "shrunk", "merged", "kept", "gone"],
            "previous_topic_ids": [[0], [1], [2, 5], [3], [5]],
            "successor_topic_ids": [[], [], [], [], [2]],
            "previous_label": [
                "Graph neural networks",
                "Diffusion models",
                "Segmentation; Object detection",
                "Multi-view clustering",
                "Object detection",
            ],
            "shared_papers": [13, 11, 13, 13, 6],
            "previous_sizes": [[13], [30], [7, 6], [13], [6]],
        }
    )
    atlas.manifest = replace(
        atlas.manifest,
        lineage=LineageBlock(previous=PreviousBlock(name="Tiny test map", fingerprint="f"), next_topic_id=6),
    )
    write_map(folder, atlas)
    return folder


def decode_mask(text: str | None, n: int) -> np.ndarray:
    """What map.js does with a view's `mask` (`app.map_component.payload.encode_mask`): the papers in view.

    Examples:
        >>> decode_mask("bDQE=", 9).tolist()
        [True, False, True, True, False, False, False, False, True]
        >>> np.flatnonzero(decode_mask("d6Qc=", 1001)).tolist()
        [1000]
    """
    if text is None:
        return np.ones(n, dtype=bool)
    raw = base64.b64decode(text[1:])
    if text[0] == "b":
        return np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")[:n].astype(bool)
    assert text[0] == "d", text[:10]
    mask = np.zeros(n, dtype=bool)
    row, value, shift = -1, 0, 0
    for byte in raw:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte & 0x80:
            continue
        row += value
        mask[row] = True
        value = shift = 0
    return mask


def box_around(papers: pd.DataFrame, doc_ids) -> tuple[str, list[str]]:
    """A box selection (`select=box:x0,x1,y0,y1`) just around the papers `doc_ids`, and the doc_ids
    of every paper inside it, in row order, found by plain comparisons (a box's edges belong to it).

    Examples:
        >>> papers = pd.DataFrame({"doc_id": ["a", "b", "c"], "x": [0.0, 1.0, 5.0], "y": [0.0, 1.0, 5.0]})
        >>> box_around(papers, ["a", "b"])
        ('box:-0.005,1.005,-0.005,1.005', ['a', 'b'])
    """
    picked = papers[papers["doc_id"].isin(list(doc_ids))]
    x, y = papers["x"].to_numpy(dtype=np.float32), papers["y"].to_numpy(dtype=np.float32)
    pad = 1e-3 * max(float(np.ptp(x)), float(np.ptp(y)), 1e-3)
    box = [float(picked["x"].min()) - pad, float(picked["x"].max()) + pad]
    box += [float(picked["y"].min()) - pad, float(picked["y"].max()) + pad]
    text = "box:" + ",".join(f"{v:.6g}" for v in box)
    x0, x1, y0, y1 = (float(v) for v in text[4:].split(","))
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return text, papers["doc_id"][inside].astype(str).tolist()


# --------------------------------------------------------------------------- maps with hostile text
def long_words(size: int = 1_000_000) -> list[str]:
    """Words of `size` characters (no space) made of what each regular expression over text repeats:
    letters, dots, digits, `@`, `-`, `/`, `www.`, quotes. A pattern that tries every start and scans on
    (a quadratic one) takes hours on each; a linear one, a second."""
    units = ["a", ".", "!", "1a", "a@", "1", "a-", "/a", "www.", '"', "a:", "_a"]
    return [unit * (size // len(unit)) for unit in units]


HOSTILE_CELLS = ['=HYPERLINK("http://evil","x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd", "fine"]


def hostile_map(n: int = 7) -> AtlasMap:
    """`n` papers in two topics and two themes whose every text cell is a spreadsheet formula or
    another hostile value (`HOSTILE_CELLS`), with random vectors: for exports and the map folder."""
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    papers = pd.DataFrame(
        {
            "doc_id": [f"{i:016x}" for i in range(n)],
            "title": (HOSTILE_CELLS * n)[:n],
            "abstract": [f"{HOSTILE_CELLS[i % len(HOSTILE_CELLS)]} abstract 中文 {i}" for i in range(n)],
            "source": ["=cmd|' /C calc'!A0"] + ["a.csv"] * (n - 1),
            "topic_id": [0, 0, 1, 1, -1, 0, 1][:n],
            "x": rng.standard_normal(n).astype(np.float32),
            "y": rng.standard_normal(n).astype(np.float32),
            "venue": ["-ICML"] * n,
        }
    )
    topics = pd.DataFrame(
        {
            "topic_id": [0, 1],
            "label": ["=Evil topic", "Optimal transport"],
            "keywords": [["=a", "b"], ["transport", "optimal transport"]],
            "keyword_weights": [[0.2, 0.1], [0.3, 0.2]],
            "size": [3, 3],
            "x": [0.0, 1.0],
            "y": [0.0, 1.0],
            "representative_doc_ids": [["0000000000000000"], ["0000000000000002"]],
            "theme_id": [1, 0],
            "stability": [0.9, np.nan],
            "centroid": [vectors[0], vectors[2]],
        }
    )
    themes = pd.DataFrame(
        {
            "theme_id": [0, 1],
            "label": ["Transport", "@Evil theme"],
            "keywords": [["transport"], ["=a"]],
            "size": [3, 3],
            "topic_ids": [[1], [0]],
            "x": [1.0, 0.0],
            "y": [1.0, 0.0],
        }
    )
    manifest = Manifest(schema_version=SCHEMA_VERSION, name="tiny", papers=n, topics=2, themes=2)
    return AtlasMap(
        papers=papers, topics=topics, embeddings=vectors.astype(np.float16), manifest=manifest, themes=themes
    )


# --------------------------------------------------------------------------- the page, as AppTest sees it
def start(params: dict | None = None, panels: tuple[str, ...] = ()) -> AppTest:
    """The app run once, headless, with `params` as its query string and the expanders keyed `panels`
    open (a closed one's body is not made)."""
    from streamlit.testing.v1 import AppTest

    at = keeping_facts(AppTest.from_file(APP, default_timeout=60))
    at.query_params.update(params or {})
    for key in panels:
        at.session_state[key] = True
    return at.run()


def keeping_facts(at: AppTest) -> AppTest:
    """`at`, keeping the header's state (the page's facts, js/page.js) of the runs that sent it, as the
    browser keeps it: a step that reruns only some parts leaves the header's out of AppTest's tree."""
    run = at._run

    def _run(*args, **kwargs):
        out = run(*args, **kwargs)
        found = [data for data in _component_data(at) if "sentence" in data]
        if found:
            at._atlas_facts = found[0]
        return out

    at._run = _run
    return at


def whole_page(at: AppTest) -> AppTest:
    """The whole page again. After a step AppTest holds only the parts of the page the step reran (the
    keyed fragments its callback named; a browser keeps the rest as it was): to reach a widget of a part
    that did not rerun, run the page once more, from the same session state."""
    return at.run()


def open_panel(at: AppTest, key: str) -> AppTest:
    """Open the expander with `key` as a reader's click does: its body is made only while it is open."""
    at.session_state[key] = True
    return at.run()


def table(at: AppTest, first_column: str = "Title", index: int = -1):
    """The papers table's first page as js/table.js draws it (`papers_table`); with `first_column`
    other than "Title" or an `index`, the `index`-th Streamlit dataframe whose first column that is
    (the placement panel's tables)."""
    if first_column == "Title" and index == -1:
        return papers_table(at)["page"]
    frames = [df.value for df in at.dataframe if list(df.value.columns)[:1] == [first_column]]
    return frames[index]


def table_state(at: AppTest) -> dict | None:
    """The state the papers table under the map received on the last run (None: its part did not run)."""
    found = [data for data in _component_data(at) if "table" in data]
    return found[0] if found else None


def papers_table(at: AppTest) -> dict:
    """What the papers table (js/table.js) shows, worked out as the browser does (js/page.js) from the
    link's view (the server's reading of it: `link_in_view`, and the link's selection), the page's facts
    (the header's state: the search's ranked hits over the whole map and how each matched), the map's
    point table and the table file: `heading` (its title line),
    `notice` (the selection's hidden papers, or the empty view's message), `caption` (under it),
    `rows` (every listed paper: a DataFrame of the columns it shows, in order) and `page` (its first
    50). tests/test_browser_table.py holds the drawn table to this, cell by cell."""
    from app.map_component.payload import decode_points

    state = table_state(at)
    assert state is not None, "the papers table's part did not run"
    raw = state.get("table_data")
    name = state["table"].split("/")[-1]
    packed = base64.b64decode(raw) if raw else (REPO / "static" / "atlas" / name).read_bytes()
    file = decode_points(gzip.decompress(packed))
    columns, arrays = file["meta"]["columns"], file["arrays"]
    point_file = _point_file(state["points"])
    facts, in_view = live_header(at), link_in_view(at)
    hits = None if facts["hits"] is None else varint_values(base64.b64decode(facts["hits"]))
    order = np.flatnonzero(in_view).tolist() if hits is None else [i for i in hits if in_view[i]]
    place = {} if hits is None else {row: k for k, row in enumerate(hits)}
    selection = _selection_rows(at, point_file)
    extras = facts["columns"] if hits is not None else []
    topics = [t["name"] for t in file["meta"]["topics"]]
    ids = [t["id"] for t in file["meta"]["topics"]]
    rank = ids.index(state["topic"]) if state["topic"] is not None else None
    colour = point_file["arrays"]["colour"]
    titles = _stored_titles(point_file)  # as stored: the table shows them unescaped
    if selection is not None:
        inside = selection.tolist()
        listed = [i for i in inside if in_view[i] and (rank is None or colour[i] == rank)]
        positions = [-1] * len(listed)
    else:
        inside = []
        listed = [i for i in order if rank is None or colour[i] == rank]
        positions = [place.get(i, -1) for i in listed]
    frame = {"Title": [titles[i] for i in listed]}
    if selection is None:
        for extra in extras:
            if "codes" in extra:
                codes = np.frombuffer(base64.b64decode(extra["codes"]), dtype=np.uint8)
                frame[extra["name"]] = [extra["values"][codes[k]] for k in positions]
            else:
                numbers = np.frombuffer(base64.b64decode(extra["numbers"]), dtype="<f4")
                frame[extra["name"]] = [float(numbers[k]) for k in positions]
    frame["Topic"] = [topics[colour[i]] for i in listed]
    for k, column in enumerate(columns):
        if "values" in column:
            codes = arrays[f"col{k}"]
            frame[column["name"]] = [column["values"][codes[i]] for i in listed]
        else:
            ends = arrays[f"col{k}:ends"].astype(np.int64)
            block = arrays[f"col{k}:bytes"].tobytes()
            frame[column["name"]] = [block[(ends[i - 1] if i else 0) : ends[i]].decode() for i in listed]
    rows = pd.DataFrame(frame)
    count = len(rows)
    notice = None
    if selection is not None:
        heading = f"Selected on the map · {count:,}"
        hidden = len(inside) - count
        if hidden > 0:
            notice = (
                f"{hidden:,} paper{'s' if hidden != 1 else ''} inside the selection "
                f"{'is' if hidden == 1 else 'are'} hidden by the current filters and search."
            )
    else:
        heading = f"Papers · {count:,}" + (" · best matches first" if extras and count > 1 else "")
    if not count:
        notice = "No papers match the current filters and search."
    size = state["page_rows"]
    if count > size:
        pages = -(-count // size)
        caption = (
            f"Papers 1–{size:,} of {count:,} · page 1 of {pages:,}. Select a row to read the paper; "
            "the CSV download below has them all."
        )
    else:
        caption = "Select a row to read the paper." if count else None
    return {"heading": heading, "notice": notice, "caption": caption, "rows": rows, "page": rows.head(size)}


def varint_values(raw: bytes) -> list[int]:
    """Unsigned LEB128 varints (`app.map_component.payload.varints`) back to numbers."""
    values, value, shift = [], 0, 0
    for byte in raw:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte & 0x80:
            continue
        values.append(value)
        value = shift = 0
    return values


def topic_table(at: AppTest) -> pd.DataFrame:
    """The topic list as the panel beside the map draws it (js/panel.js, from its state and the map's
    summary file): Topic names in order, their Papers (or In view, under a filter), and Growth when
    ordered by it. tests/test_browser_panel.py holds the drawn list to the same tables."""
    state, summary = live_panel(at), panel_summary(at)
    by_id = {t["id"]: t for t in summary["topics"]}
    rising = state["sort"] == "rising" and "rising" in summary["lists"]
    sections = summary["lists"]["rising" if rising else "size"]
    ids = [
        t
        for s in sections
        if s["theme"] is None or not state["themes"] or s["theme"] in state["themes"]
        for t in s["topics"]
    ]
    table = pd.DataFrame({"Topic": [by_id[t]["name"] for t in ids]})
    view = live_map(at)
    colour = np.asarray(points(at)["colour"])
    mask = link_in_view(at)  # the link's view, as the server reads it
    selection = _selection_rows(at, _point_file(view["points"]))
    if selection is not None:
        inside = np.zeros(len(colour), dtype=bool)
        inside[selection] = True
        mask &= inside
    if not mask.all() or selection is not None:  # narrowed: each topic's papers in view
        table["In view"] = [int((mask & (colour == by_id[t]["rank"])).sum()) for t in ids]
    else:
        table["Papers"] = [by_id[t]["size"] for t in ids]
    if rising:
        table["Growth"] = ["–" if by_id[t]["growth"] is None else f"×{by_id[t]['growth']:.2f}" for t in ids]
    return table


def figure(at: AppTest, index: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def live_header(at: AppTest) -> dict:
    """The header's state (the page's facts, js/page.js) as last sent (`keeping_facts`)."""
    found = [data for data in _component_data(at) if "sentence" in data]
    return found[0] if found else at._atlas_facts


def _selection_rows(at: AppTest, point_file: dict):
    """The rows inside the link's box or lasso (in view or not; None: none), found by their places as the
    browser finds them (js/sampling.js `rowsInOutline`, held to `app.selection.rows_inside`)."""
    from app.selection import parse_selection, rows_inside

    text = url(at).get("select", [""])[0]
    shape = parse_selection(text) if text else None
    if shape is None:
        return None
    arrays = point_file["arrays"]
    return rows_inside(
        shape, np.asarray(arrays["x"], dtype=np.float32), np.asarray(arrays["y"], dtype=np.float32)
    )


def link_in_view(at: AppTest) -> np.ndarray:
    """The papers in the link's view as the server reads it (`app.view.current_view`, kept by the page's
    parts), a bool a row: the browser works out the same from the page's facts (js/page.js `inView`,
    held to the same rule by tests/test_view_rule.py), and the map, the topic list and the table draw them."""
    from app.session import CURRENT_VIEW

    return np.asarray(at.session_state[CURRENT_VIEW][1].in_view, dtype=bool)


def map_shown(at: AppTest) -> np.ndarray:
    """The papers the map draws in colour, a bool a row: those in view (`link_in_view`), of the link's opened
    topic alone where it has one (js/atlas_map.js `opened`)."""
    shown, topic = link_in_view(at), url(at).get("topic")
    if not topic:
        return shown
    ranks, colour = live_header(at)["ranks"], np.asarray(points(at)["colour"])
    return shown & (np.asarray(ranks)[colour] == int(topic[0]))


def map_names(at: AppTest) -> dict[str, list]:
    """The names the map places for the link's view (js/atlas_map.js `namedView`, from the map's summary,
    before it tries them for room): `topics` ({"text", "chosen"}) of the topics holding papers it draws
    in colour (`map_shown`), the link's opened topic first, then by colour rank, at most
    `max_topic_labels`; `themes` (their texts), those holding any of them, in the summary's order."""
    from app.map_component.payload import MAX_TOPIC_LABELS

    summary, colour = panel_summary(at), np.asarray(points(at)["colour"])
    held = set(np.unique(colour[map_shown(at)]).tolist())
    topic = url(at).get("topic")
    chosen = int(topic[0]) if topic else None
    visible = sorted(
        (t for t in summary["topics"] if t["id"] != -1 and t["rank"] in held), key=lambda t: t["rank"]
    )
    visible.sort(key=lambda t: t["id"] != chosen)  # (stable) the opened topic first
    return {
        "topics": [
            {"text": t["name"], "chosen": t["id"] == chosen}
            for t in visible[:MAX_TOPIC_LABELS]
            if t["x"] is not None and t["y"] is not None
        ],
        "themes": [t["text"] for t in summary["themes"] if t["id"] in {v["theme"] for v in visible}],
    }


def live_map(at: AppTest) -> dict:
    """The view state the live map component received on the last run (its `data`)."""
    [view] = [data for data in _component_data(at) if not {"summary", "table", "sentence"} & set(data)]
    return view


def opened_paper(at: AppTest) -> dict | None:
    """The opened paper as the topic panel received it on the last run (`PaperState`; None: none open)."""
    return live_panel(at)["paper"]


def paper_text(at: AppTest) -> str:
    """What the opened paper's panel says, as the reader sees it: its lines, the title's and abstract's
    pieces joined (js/panel.js, drawPaper)."""
    paper = opened_paper(at)
    if paper is None:
        return ""
    match = paper["match"]["text"] if paper["match"] else ""
    lines = [paper["back"], "".join(p for p, _ in paper["title"]), f"Topic: {paper['topic_name']}"]
    lines += [paper["details"], match, "".join(p for p, _ in paper["abstract"])]
    return "\n".join(lines + [n["title"] for n in paper["nearest"]])


def live_panel(at: AppTest) -> dict | None:
    """The state the topic panel beside the map received on the last run (None: no panel)."""
    found = [data for data in _component_data(at) if "summary" in data]
    return found[0] if found else None


def panel_summary(at: AppTest) -> dict:
    """The topic panel's summary file (`app.topic_summary`), read from the static file the browser downloads."""
    name = live_panel(at)["summary"].split("/")[-1]
    return json.loads(gzip.decompress((REPO / "static" / "atlas" / name).read_bytes()))


def _component_data(at: AppTest) -> list[dict]:
    return [json.loads(e.proto.json) for e in walk(at._tree) if getattr(e, "type", "") == "bidi_component"]


def walk(node) -> list:
    found = []
    for child in getattr(node, "children", {}).values():
        found += [child, *walk(child)]
    return found


def points(at: AppTest) -> dict:
    """The map's point table, read from the static file the browser downloads (`payload.decode_points`): its header's fields, and each
    array as a list; `title` as the browser's hover shows each title (map.js escapes and wraps them as
    `app.text.plotly_wrap` does)."""
    from app.text import plotly_wrap

    table = _point_file(live_map(at)["points"])
    out = {**table["meta"], **{k: v.tolist() for k, v in table["arrays"].items() if k != "title_bytes"}}
    out["title"] = [plotly_wrap(title, 64, 3) for title in _stored_titles(table)]
    return out


def _point_file(url: str) -> dict:
    from app.map_component.payload import decode_points

    return decode_points(gzip.decompress((REPO / "static" / "atlas" / url.split("/")[-1]).read_bytes()))


def _stored_titles(table: dict) -> list[str]:
    """The point table's titles as stored (UTF-8 in one block)."""
    ends, block = table["arrays"]["title_end"].astype(np.int64), table["arrays"]["title_bytes"].tobytes()
    starts = np.r_[0, ends[:-1]]
    return [block[a:b].decode("utf-8") for a, b in zip(starts, ends, strict=True)]


def select_box(at: AppTest, doc_ids, papers: pd.DataFrame | None = None) -> list[str]:
    """Draw a box just around `doc_ids` on the page's map (`box_around`; `papers`: the map's papers,
    the tiny map's by default), as the map's select event leaves it, and run the page; the doc_ids
    inside the box, in row order."""
    text, inside = box_around(tiny_map().papers if papers is None else papers, doc_ids)
    at.session_state["selection"] = text
    at.run()
    return inside


def map_doc_ids(at: AppTest) -> set[str]:
    """doc_ids the map draws in colour (`map_shown`; tiny maps: row i = doc i)."""
    return {f"doc{row:04d}" for row in np.flatnonzero(map_shown(at))}


def page_bytes(at: AppTest) -> int:
    """Bytes of every element the run sent (their protobufs), what a rerun costs on the wire at most."""
    return sum(e.proto.ByteSize() for e in walk(at._tree) if getattr(e, "proto", None) is not None)


def url(at: AppTest) -> dict[str, list[str]]:
    """The query string the app left in the address bar, every value as a list."""
    return normalise_params(at.query_params)


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.text]
    return "\n".join([*parts[:1], *header_sentence(at)[:1], *parts[1:]])


def header_sentence(at: AppTest) -> list[str]:
    """The header's sentence as the page shows it, as Markdown writes it (the number bold); none where
    the page drew no header: [] . The browser writes it for the view the address bar says (js/header.js,
    js/view.js `sentence`) by the rule of `app.view.header_sentence`, held to it by the view vectors and
    the link corpus (tests/test_view_rule.py): here Python's, for the link the app left in the address
    bar (the server sends the header no state for a reading step: its part does not rerun)."""
    import os

    from app import session
    from app.data import map_catalog, maps_root, requested_map
    from app.loaders import MapKey, cached_rising, load_map
    from app.state import parse_view
    from app.text import markdown_literal
    from app.view import current_view, opened_topic_view, selected_rows, view_vocabulary
    from app.view import header_sentence as python_sentence
    from pipeline import UserError

    chosen = at.session_state.get(session.MAP_CHOICE, None)
    found = [m for m in map_catalog(requested_map([], os.environ), maps_root(os.environ)) if m.name == chosen]
    if not found or at.exception:
        return []
    key = MapKey.of(found[0].name, found[0].path)
    try:
        data = load_map(key)
    except UserError:  # a map that does not load: no header
        return []
    state, _ = parse_view(url(at), view_vocabulary(data, cached_rising(key)))
    view = opened_topic_view(data, state, current_view(data, key, state))
    number, rest = python_sentence(data, view, selected_rows(data, key, state))
    return [(f"**{markdown_literal(number)}** " if number else "") + markdown_literal(rest)]


def plain(at: AppTest) -> str:
    """`texts` with Markdown's backslash escapes removed and bold markers dropped: what a reader sees."""
    return re.sub(r"\\(.)", r"\1", texts(at)).replace("**", "")


def rows_of(data) -> list[dict]:
    raw = data() if callable(data) else data
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 byte-order mark: spreadsheets read accents right
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))


# --------------------------------------------------------------------------- the page in Chromium
def node_test(folder: Path, test: str, modules: tuple[str, ...], env: dict[str, str] | None = None) -> int:
    """Run tests/js/`test` under `node --test` in `folder`, beside the map's JS `modules` (js/; `plot.js`
    a stand-in where not asked for: the modules here do not draw), the generated `shared.js` and the
    stand-in page (tests/js/page.mjs); how many of its tests passed (skipped where Node is missing)."""
    import os
    import shutil
    import subprocess

    import pytest

    from app.map_component.assets import MAP_JS_DIR
    from app.map_component.payload import shared_constants

    if not shutil.which("node"):
        pytest.skip("Node is not installed")
    for name in modules:
        shutil.copy(MAP_JS_DIR / name, folder / name)
    for name in (test, "page.mjs"):
        shutil.copy(REPO / "tests" / "js" / name, folder / name)
    (folder / "shared.js").write_text(
        f"export const SHARED = Object.freeze({json.dumps(shared_constants())});\n"
    )
    if "plot.js" not in modules:
        (folder / "plot.js").write_text("export const ranges = () => null;\n")
    (folder / "package.json").write_text('{"type": "module"}\n')
    done = subprocess.run(
        ["node", "--test", test], cwd=folder, capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = int(re.search(r"^# pass (\d+)$", done.stdout, re.M).group(1))
    assert passed == int(re.search(r"^# tests (\d+)$", done.stdout, re.M).group(1))
    return passed


CHROMIUM = "/usr/bin/chromium"
GRAPH = ".atlas-map-graph"  # the map's shown chart
# The shown chart's layout image (the faint rest under a search, or the no-WebGL map's image) decoded
# as the browser shows it: a JavaScript function, `chartImage(graph)`, for a page script to start with.
# It gives {image (the layout entry), width, height, data (RGBA bytes)}, or null when there is none.
CHART_IMAGE_JS = """async function chartImage(graph) {
    const image = (document.querySelector(graph).layout.images || [])[0];
    if (!image) return null;
    const img = new Image();
    img.src = image.source;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    return {image, width: canvas.width, height: canvas.height, data: g.getImageData(0, 0, canvas.width, canvas.height).data};
}
"""
POINTS = f"{GRAPH} .scatterlayer .trace path.point"


def idle(page) -> None:
    """Wait until Streamlit has finished the step (script not running, nothing of the last run stale)."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return app && app.dataset.testScriptState === 'notRunning' && !document.querySelector('[data-stale="true"]');
        }""",
        timeout=30_000,
    )


def open_app(page, url: str) -> None:
    """Open the app and wait until the map has been drawn."""
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=60_000
    )


def sidebar_multiselect(page, label: str):
    """The sidebar's multiselect whose label is `label` (exactly: "Topics" is not "All topics in the
    chosen themes", a placeholder)."""
    widgets = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']")
    return widgets.filter(has=page.get_by_text(label, exact=True))


def chips(page, label: str) -> list[str]:
    """The options the sidebar's multiselect `label` shows chosen, as the reader sees them (read at
    once: a chip Streamlit removes between a count and a read is not waited for)."""
    tags = sidebar_multiselect(page, label).locator("[data-tag]")
    return tags.evaluate_all("(tags) => tags.map((tag) => tag.getAttribute('aria-label'))")


def choose(page, label: str, option: str) -> None:
    """Pick `option` in the sidebar's multiselect `label`, as a reader does, and close its list."""
    sidebar_multiselect(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")
    idle(page)


class Received:
    """The elements the page receives from the server, decoded from its WebSocket's messages (Streamlit's
    `ForwardMsg`): for each new element, (its place: "sidebar" or "main", its kind, its label; the
    header's instance of the component is "header_sentence", the map's, the panel's and the table's
    "bidi_component"). Watch a page before opening it; `take()` gives what came since the last call."""

    def __init__(self, page) -> None:
        self.elements: list[tuple[str, str, str]] = []
        self.sockets = 0
        page.on("websocket", self._watch)

    def _watch(self, socket) -> None:
        self.sockets += 1
        socket.on("framereceived", self._got)

    def _got(self, frame) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        from app.map_component import HEADER_KEY

        message = ForwardMsg()
        message.ParseFromString(frame if isinstance(frame, bytes) else frame.encode("latin-1"))
        delta = message.delta if message.WhichOneof("type") == "delta" else None
        if delta is None or delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        label = getattr(getattr(element, kind), "label", "")
        if kind == "bidi_component" and element.bidi_component.id.endswith(HEADER_KEY):
            kind = "header_sentence"  # the header's hits (js/header.js), not the map, the panel or the table
        place = "sidebar" if message.metadata.delta_path[:1] == [1] else "main"
        self.elements.append((place, kind, label))

    def take(self) -> list[tuple[str, str, str]]:
        assert self.sockets, "no socket seen: watch the page before it opens"  # or nothing could be
        taken, self.elements = self.elements, []
        return taken


def draws(page) -> int:
    """How many times the map has been drawn or redrawn (the component counts them on the graph)."""
    return int(page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasDraws"))


def wait_for_redraw(page, before: int) -> None:
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before}", timeout=30_000
    )


def panel_topic(at: AppTest) -> int | None:
    """The topic the panel beside the map opens: the link's (js/panel.js; None: none, or no panel)."""
    topic = url(at).get("topic")
    return int(topic[0]) if topic and live_panel(at) is not None else None


def opened_topic(at: AppTest) -> str | None:
    """The name of the topic the panel beside the map has open (None: the topic list; no panel: a paper)."""
    topic = panel_topic(at)
    if topic is None:
        return None
    return next(t["name"] for t in panel_summary(at)["topics"] if t["id"] == topic)
