"""Search: the full-text index written with the map (whole words, phrases, prefixes, BM25, scripts without
spaces, any query safe), its life with `add` and older maps, and search by meaning in the app."""

from __future__ import annotations

import random
import re
import sqlite3

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.ingest import ingest
from pipeline.mapfolder.files import SEARCH_INDEX
from pipeline.mapfolder.query import parse_query
from pipeline.mapfolder.search_index import (
    SearchIndex,
    highlight,
    index_for,
    paper_fingerprint,
    read_meta,
    verify_index,
    write_index,
)
from pipeline.mapfolder.store import read_map, write_map
from pipeline.modelling.floors import CLOSE_PERCENTILE
from tests.helpers import (
    REPO,
    SEED_MAP,
    SEEDS,
    FakeEncoder,
    header_sentence,
    keeping_facts,
    opened_paper,
    papers_table,
    tiny_map,
    whole_page,
)


def frame(texts: list[str], titles: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(len(texts))],
            "title": titles or [""] * len(texts),
            "abstract": texts,
        }
    )


def index_of(papers: pd.DataFrame, tmp_path, name: str = "index.sqlite") -> SearchIndex:
    write_index(tmp_path / name, papers)
    return SearchIndex(tmp_path / name, len(papers))


def found(index: SearchIndex, query: str) -> list[int]:
    return sorted(index.search(query).rows.tolist())


# --------------------------------------------------------------------------- whole words
@pytest.fixture(scope="module")
def seed_papers() -> pd.DataFrame:
    return ingest([SEEDS]).papers.reset_index(drop=True)


# Each word with every form of it the seed abstracts could hold (porter stems them to the word).
WORD_FORMS = {
    "pose": r"pose|poses|posed|posing",
    "ot": r"ot|ots",
    "art": r"art|arts",
    "gan": r"gan|gans",
    "graph": r"graph|graphs",
    "rank": r"rank|ranks|ranked|ranking|rankings",
    "transport": r"transport|transports|transported|transporting",
}


def test_words_match_whole_words_counted_against_the_text(seed_papers, tmp_path):
    index = index_of(seed_papers, tmp_path)
    text = (seed_papers["title"] + " " + seed_papers["abstract"]).str.lower()
    for word, forms in WORD_FORMS.items():
        expected = sorted(np.flatnonzero(text.str.contains(rf"\b(?:{forms})\b", regex=True)).tolist())
        assert found(index, word) == expected, word
    # "propose" holds "pose": the old substring search matched 32 of the 57 seed abstracts
    assert text.str.contains("pose", regex=False).sum() > 25
    assert found(index, "POSE") == found(index, "pose") and len(found(index, "pose")) <= 3
    assert len(found(index, "ot")) < text.str.contains("ot", regex=False).sum() / 10


def test_stems_phrases_prefixes_and_all_words(tmp_path):
    papers = frame(
        [
            "We propose a pose estimator for hands.",  # 0
            "Poses and posed bodies; ranking by purpose.",  # 1
            "Neural radiance field rendering.",  # 2
            "A neural field for rank aggregation, exposed.",  # 3
            "Learning to rank with ranked lists.",  # 4
        ]
    )
    index = index_of(papers, tmp_path)
    assert found(index, "pose") == [0, 1]  # never "propose", "purpose" or "exposed"
    assert found(index, "rank") == [1, 3, 4]  # porter: "ranking", "ranked"
    assert found(index, '"neural field"') == [3]  # the phrase, in that order
    assert found(index, "neural field") == [2, 3]  # both words, anywhere
    assert found(index, "rank*") == [1, 3, 4] and found(index, "expos*") == [3]
    assert found(index, "neural rank") == [3]
    assert highlight("We propose pose-aware ranking.", parse_query("pose rank")) == [
        ("We propose ", False),
        ("pose", True),
        ("-aware ", False),
        ("ranking", True),
        (".", False),
    ]


def test_the_typed_word_comes_before_its_forms_and_a_stem_never_joins_words_of_another_meaning(tmp_path):
    papers = frame(
        [
            "The Radon transform of an image, and how images transform.",  # 0
            "A vision transformer for detection.",  # 1
            "Transformers and more transformers.",  # 2
            "We transformed the inputs; the transformation is linear.",  # 3
            "Learning to rank: a ranking loss for ranked lists.",  # 4
            "Low-rank adaptation.",  # 5
        ]
    )
    index = index_of(papers, tmp_path)
    hits = index.search("transformer")
    # porter stems all four to "transform": the old index found every one, the Radon transform first
    assert hits.rows.tolist() == [1, 2] and hits.match_labels() == ["exact word", "word form"]
    assert found(index, "transform") == [0, 3]  # transform, transformed; never transformer(s), transformation
    assert found(index, "transformers") == [1, 2]  # a typed plural finds the singular too
    rank = index.search("rank")
    assert sorted(rank.rows.tolist()) == [4, 5] and rank.rows.tolist()[0] == 5  # "rank" as typed first
    assert rank.match_labels() == ["exact word", "exact word"]  # 4 holds "rank" too
    assert index.search("ranking").match_labels() == ["exact word"]
    assert index.search('"low rank"').match_labels() == ["phrase"]
    assert index.search("transf*").match_labels() == ["prefix"] * 4
    marked = [
        p
        for p, hit in highlight(
            papers["abstract"][0] + " " + papers["abstract"][2], parse_query("transformer")
        )
        if hit
    ]
    assert marked == ["Transformers", "transformers"]  # never the "transform" of the Radon transform


def test_minus_or_not_and_quotes_work_as_people_expect_against_the_maps_own_text(seed_papers, tmp_path):
    index = index_of(seed_papers, tmp_path)
    text = (seed_papers["title"] + " " + seed_papers["abstract"]).str.lower()

    def holding(pattern: str) -> set[int]:
        return set(np.flatnonzero(text.str.contains(pattern, regex=True)).tolist())

    models, language = holding(r"\bmodel(?:s|l?ing|l?ed)?\b"), holding(r"\blanguages?\b")
    diffusion, transport = holding(r"\bdiffusions?\b"), holding(r"\btransport(?:s|ed|ing)?\b")
    assert models - language and models & language  # the seeds hold both kinds
    assert (
        set(found(index, "model -language")) == models - language
    )  # the old index: papers holding "language"
    assert set(found(index, "model NOT language")) == models - language
    assert set(found(index, 'model -"language model"')) == models - holding(r"\blanguage models?\b")
    assert set(found(index, "diffusion OR transport")) == diffusion | transport
    assert set(found(index, "model diffusion OR transport")) == models & (diffusion | transport)
    assert set(found(index, '"optimal transport"')) == holding(r"\boptimal transport")
    assert set(found(index, "-diffusion")) == set(range(len(seed_papers))) - diffusion
    # taken literally, with a notice: C++ is the word "c" here, and a dangling OR is left out
    cpp = index.search("C++")
    assert cpp.notices == (
        "Searched 'C++' as 'c': only -word, OR, NOT, quotes and a final * are operators here.",
    )
    assert "Left out OR" in " ".join(index.search("diffusion OR").notices)
    assert found(index, "diffusion OR") == sorted(diffusion)
    # lower-case "or" and "not" are words, as written
    assert parse_query("depth or not stereo").shown() == "depth or not stereo"


def test_best_matches_come_first(tmp_path):
    papers = frame(
        [
            "A long abstract about many things " * 20 + "and once about diffusion.",
            "Diffusion, diffusion and more diffusion in a short text.",
            "Nothing relevant here.",
        ],
        titles=["Something else", "Diffusion models", "Other"],
    )
    assert index_of(papers, tmp_path).search("diffusion").rows.tolist() == [1, 0]


def test_scripts_without_spaces_are_found_by_substring(tmp_path):
    papers = frame(
        [
            "我们提出了一种新的扩散模型用于图像生成。",
            "本文研究大语言模型的安全性。We also test BERT.",
            "拡散モデルによる画像生成を提案する。",
            "An English abstract about diffusion models.",
            "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
        ]
    )
    index = index_of(papers, tmp_path)
    assert found(index, "扩散模型") == [0]
    assert found(index, "模型") == [0, 1]  # two characters: fewer than a trigram, still found
    assert found(index, "拡散モデル") == [2]
    assert found(index, "BERT 安全") == [1]
    assert found(index, "diffusion") == [3]
    assert found(index, "การเว้นวรรค") == [4]
    pieces = highlight(papers["abstract"][1], parse_query("模型 bert"))
    assert [p for p, hit in pieces if hit] == ["模型", "BERT"]


HOSTILE_QUERIES = [
    '"unbalanced quote',
    'two "unbalanced "quotes',
    "NEAR(",
    "NEAR(a b, 2)",
    "-",
    "-diffusion",
    "*",
    "* *",
    "*diffusion",
    "AND OR",
    "NOT",
    "a OR",
    "title:diffusion",
    "abstract : x",
    "{title}: x",
    "(",
    ")",
    "^diffusion",
    "'",
    '""',
    '"',
    "\\",
    "%_%",
    "\x00",
    "\x02diffusion\x03",
    "🙂🙂",
    "diffusion 🙂",
    "x" * 10_000,
    "diffusion " * 2_000,
    "扩",
    "Ω≈ç√∫",
    "SELECT * FROM words; DROP TABLE meta",
]


@pytest.mark.parametrize(
    "text, left_out",
    [
        ("*", "'*'"),
        ("**", "'**'"),
        ("* *", "'*'"),
        ('""', "'\"\"'"),
        ("-*", "'-*'"),
        ("AND", "AND"),
        ("AND AND", "AND"),
    ],
)
def test_a_search_with_nothing_to_look_for_says_what_was_left_out(text, left_out):
    query = parse_query(text)
    assert query.empty  # every paper is shown, with the line saying why
    assert len(query.notices) == 1 and query.notices[0].startswith(f"Left out {left_out}:"), query.notices


def test_an_and_between_two_words_is_a_space_and_a_dangling_one_is_said():
    assert parse_query("graph AND pose").shown() == "graph pose" and not parse_query("graph AND pose").notices
    assert parse_query("graph AND").notices[0].startswith("Left out AND:")


def test_any_query_gives_a_result_or_a_plain_notice_never_an_error(seed_papers, tmp_path):
    index = index_of(seed_papers, tmp_path)
    rng = random.Random(0)
    alphabet = list("\"*-^():{}+ ,.ANDORNEARTtitle扩散🙂\\'%_") + ["AND", "OR", "NOT", "NEAR", " diffusion "]
    fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    for query in HOSTILE_QUERIES + fuzz:
        hits = index.search(query)
        assert hits.rows.dtype == np.int64 and (hits.rows < len(seed_papers)).all(), query
        assert not any("could not be run" in n for n in hits.notices), (query, hits.notices)
        highlight("diffusion and transport", hits.query)  # the paper view never fails either
    assert index.search("🙂🙂").notices == ("Left out '🙂🙂': it has no letters or digits to search for.",)
    assert "first 32 words" in " ".join(index.search(" ".join(f"w{i}" for i in range(40))).notices)
    assert "first 2,000 characters" in " ".join(index.search("diffusion " * 2_000).notices)
    # -word excludes: every other paper, in map order
    assert sorted(index.search("-diffusion").rows.tolist() + index.search("diffusion").rows.tolist()) == list(
        range(len(seed_papers))
    )


# --------------------------------------------------------------------------- the index in the map folder
def test_a_built_map_holds_its_search_index(seed_map):
    papers = read_map(seed_map).papers
    index = index_for(seed_map, papers)
    assert index.path == seed_map / SEARCH_INDEX  # written by `build`, used as it is
    text = (papers["title"] + " " + papers["abstract"]).str.lower()
    expected = np.flatnonzero(text.str.contains(r"\btransport(?:s|ed|ing)?\b")).tolist()
    assert sorted(index.search("transport").rows.tolist()) == expected and expected
    # the build stores the map's own yardstick of closeness: its pairs' similarity percentiles
    from pipeline.modelling.floors import PairSimilarities, pair_similarities

    atlas = read_map(seed_map)
    stored = PairSimilarities.from_manifest(atlas.manifest.similarity)
    measured = pair_similarities(atlas.embeddings)
    assert stored is not None and np.allclose(stored.values, measured.values, atol=1e-3)


def test_the_map_folder_holds_the_index_and_add_extends_it(tmp_path):
    from pipeline.commands.add import place_new_papers

    atlas = tiny_map()
    write_map(tmp_path / "map", atlas)
    folder = tmp_path / "map"
    assert read_meta(folder / SEARCH_INDEX)["papers"] == "60"
    new = pd.DataFrame(
        {
            "doc_id": ["new1"],
            "title": ["Sinkhorn barycentres"],
            "abstract": ["Entropic optimal transport with Sinkhorn iterations."],
            "source": ["new.csv"],
            "year": [2025],
        }
    )
    vector = np.zeros((1, 384), dtype=np.float32)
    vector[0, 3] = 1.0
    grown, _ = place_new_papers(read_map(folder), new, vector)
    before = (folder / SEARCH_INDEX).read_bytes()
    write_map(folder, grown)  # what `pipeline add` calls: the index is built whole, never copied
    assert (folder / SEARCH_INDEX).read_bytes() != before
    index = index_for(folder, read_map(folder).papers)
    assert index.path == folder / SEARCH_INDEX  # its own index, not a cached one
    assert index.search("sinkhorn").rows.tolist() == [60] and len(index.search("diffusion").rows) == 15


def _forge(path, sql: str) -> None:
    """Change an index behind its meta table's back (its meta still says it matches the papers)."""
    import contextlib
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute(sql)
        connection.commit()


def test_a_forged_index_is_not_trusted_and_no_writer_carries_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "map"
    write_map(folder, tiny_map())
    papers = read_map(folder).papers
    _forge(folder / SEARCH_INDEX, "INSERT INTO words (rowid, title, abstract) VALUES (60, 'zyzzyva', '')")
    assert verify_index(folder / SEARCH_INDEX, papers) is not None
    notes = []
    index = index_for(folder, papers, log=notes.append)
    assert index.path != folder / SEARCH_INDEX and index.search("zyzzyva").rows.tolist() == []
    assert any("search index is damaged" in n for n in notes), notes
    # a row forged over a paper's own row id: meta and counts still match; the next writer rebuilds it
    write_map(folder, tiny_map())
    _forge(folder / SEARCH_INDEX, "INSERT INTO words (rowid, title, abstract) VALUES (3, 'zyzzyva', '')")
    write_map(folder, read_map(folder, curated=False))  # what `add` and a rebuild do
    assert SearchIndex(folder / SEARCH_INDEX, 60).search("zyzzyva").rows.tolist() == []


@pytest.mark.parametrize(
    "damage",
    [
        "INSERT INTO words (rowid, title, abstract) VALUES (3, 'zzzqqq', '')",  # over a paper's own row id
        "INSERT INTO grams (rowid, text) VALUES (3, 'zzzqqq')",
        b"garbage" * 200,  # the file replaced by something that is no index
        b"",
    ],
    ids=["word row at an existing rowid", "substring row at an existing rowid", "garbage", "empty file"],
)
def test_damage_its_meta_cannot_show_is_caught_on_open_and_said(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "map"
    write_map(folder, tiny_map())
    papers = read_map(folder).papers
    if isinstance(damage, bytes):
        (folder / SEARCH_INDEX).write_bytes(damage)
    else:
        _forge(folder / SEARCH_INDEX, damage)
    assert verify_index(folder / SEARCH_INDEX, papers).startswith("damaged")
    notes = []
    index = index_for(folder, papers, log=notes.append)
    assert index.path != folder / SEARCH_INDEX and index.search("zzzqqq").rows.tolist() == []
    assert len(index.search("diffusion").rows) == 15
    assert any("the search index is damaged" in n for n in notes), notes


def test_a_dropped_index_table_is_a_notice_and_the_next_writer_rebuilds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "map"
    write_map(folder, tiny_map())
    papers = read_map(folder).papers
    _forge(folder / SEARCH_INDEX, "DROP TABLE words")
    notes = []
    assert len(index_for(folder, papers, log=notes.append).search("diffusion").rows) == 15
    assert any("search index is damaged" in n for n in notes), notes
    write_map(folder, read_map(folder, curated=False))
    assert verify_index(folder / SEARCH_INDEX, papers) is None


def test_an_older_map_gets_its_index_in_the_cache_never_in_its_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    write_map(tmp_path / "old", tiny_map())
    folder = tmp_path / "old"
    (folder / SEARCH_INDEX).unlink()  # as maps written before the index
    listing = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
    papers = read_map(folder).papers
    index = index_for(folder, papers)
    assert index.path.parent == tmp_path / "cache" / "search"
    assert len(index.search("diffusion").rows) == 15
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir()) == listing
    assert index_for(folder, papers).path == index.path  # built once, then reused
    # a stale index in the folder (other papers) is not trusted either
    write_index(folder / SEARCH_INDEX, tiny_map(titles=["x"] * 60).papers)
    assert index_for(folder, papers).path == index.path
    # nor one of index version 1 (Porter stems in its word table): its papers, an older schema
    (folder / SEARCH_INDEX).unlink()
    write_index(folder / SEARCH_INDEX, papers)
    assert index_for(folder, papers).path == folder / SEARCH_INDEX
    with sqlite3.connect(folder / SEARCH_INDEX) as connection:
        connection.execute("UPDATE meta SET value = '1' WHERE key = 'version'")
    connection.close()
    assert index_for(folder, papers).path == index.path


def test_the_committed_seed_map_holds_an_index_of_this_version():
    from pipeline.mapfolder.search_index import INDEX_VERSION

    folder = REPO / "assets" / "maps" / "seeds"
    papers = read_map(folder).papers
    assert read_meta(folder / SEARCH_INDEX)["version"] == str(INDEX_VERSION)
    assert index_for(folder, papers).path == folder / SEARCH_INDEX  # used as it is, not rebuilt in the cache


# --------------------------------------------------------------------------- search by meaning in the app
@pytest.fixture
def tiny_app(tmp_path, monkeypatch):
    write_map(tmp_path / "tiny", tiny_map())
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "tiny"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    monkeypatch.setattr("app.encoder.map_encoder", lambda manifest: FakeEncoder())
    from app.loaders import cached_meaning

    cached_meaning.clear()
    return tmp_path / "tiny"


def plain_text(at: AppTest) -> str:
    raw = "\n".join([m.value for m in at.markdown] + header_sentence(at) + [c.value for c in at.caption])
    return re.sub(r"\\(.)", r"\1", raw).replace("**", "")


def paper_frame(at: AppTest) -> pd.DataFrame:
    return papers_table(at)["page"]


def all_pairs(vectors: np.ndarray) -> np.ndarray:
    """Every distinct pair's similarity: the map's own distribution, measured in full."""
    similarity = vectors @ vectors.T
    return similarity[np.triu_indices(len(vectors), 1)]


def header_sentence_of(at: AppTest) -> str:
    return next(
        line for line in plain_text(at).splitlines() if " of the " in line and "papers of the map" in line
    )


def test_one_list_from_words_and_meaning_each_paper_with_its_evidence_and_an_old_link_opens_it(tiny_app):
    """An old link with kind=meaning opens the one list; every paper the header counts is listed (the
    whole table, paged), each says why (writes the words, close in meaning, both), and the counts are
    those of the Match column, in its words."""
    atlas = read_map(tiny_app)
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60))
    at.query_params.update({"q": "removing noise step by step", "kind": "meaning"})
    at.run()
    assert not at.exception and "Ignored" not in plain_text(at)
    table = papers_table(at)["rows"]
    vectors = atlas.embeddings.astype(np.float32)
    similarity = vectors[:, 1]  # the query's direction
    pairs = all_pairs(vectors)
    floor = np.percentile(pairs, CLOSE_PERCENTILE)  # the map's own: this share of its pairs are less similar
    close = {i for i in range(len(similarity)) if similarity[i] >= floor}
    written = (atlas.papers["title"] + " " + atlas.papers["abstract"]).str.lower()
    every_word = {
        i
        for i, t in enumerate(written)
        if all(w in re.findall(r"\w+", t) for w in ("removing", "noise", "step"))
    }
    titles = atlas.papers["title"].tolist()
    assert set(table["Title"]) == {titles[i] for i in close | every_word} and len(close) > 10
    for title, label in zip(table["Title"], table["Match"], strict=True):
        row = titles.index(title)
        assert ("close in meaning" in label) == (row in close), (title, label)
        assert ("writes" in label) == (row in every_word), (title, label)
    near = len(close)
    assert header_sentence_of(at).startswith(
        f"{len(table)} of the 60 papers of the map match “removing noise step by step”"
    )
    assert (
        f"{near} are close in meaning (closer than {CLOSE_PERCENTILE:g}% of pairs on this map)"
        in header_sentence_of(at)
    )
    shares = [100 * float((pairs < similarity[titles.index(t)]).mean()) for t in table["Title"]]
    assert np.allclose(table["Closer than"], shares, atol=0.6)
    first = atlas.papers["doc_id"].iloc[titles.index(table["Title"].iloc[0])]
    at.session_state["paper"] = first
    at.run()
    match = opened_paper(at)["match"]  # the panel's line under the paper's details
    assert match["kind"] in ("meaning", "both") and "close in meaning: closer than" in match["text"].lower()
    assert f"(#1 of {len(table)})" in match["text"]
    # a question nothing on the map is about lists nothing, and says so
    at.session_state["paper"] = None
    whole_page(at.text_input(key="w_search").input("a sourdough recipe").run())  # the table: as loaded
    assert (
        "None of the 60 papers of the map writes “a sourdough recipe” or is close in meaning to it: the nearest"
        in plain_text(at)
    )
    assert len(papers_table(at)["rows"]) == 0
    assert "kind" not in at.query_params and at.query_params["q"] == "a sourdough recipe"


def test_the_exports_of_a_search_list_its_papers_best_first_with_rank_and_evidence(tiny_app, downloads):
    """The view's CSV and reading list hold the table's papers in its order, each with its rank and
    the evidence the Match column shows; a search typed as a formula stays text in a spreadsheet."""
    import io

    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60))
    at.query_params.update({"q": "removing noise step by step"})
    at.run()
    table = papers_table(at)["rows"]
    label = next(k for k in downloads if k.startswith("Download these"))
    csv = pd.read_csv(io.BytesIO(downloads[label]()), encoding="utf-8-sig")
    assert csv["title"].tolist() == table["Title"].tolist()
    assert csv["search_rank"].tolist() == list(range(1, len(table) + 1))
    assert csv["search_evidence"].tolist() == table["Match"].tolist()
    markdown = downloads[next(k for k in downloads if k.startswith("Reading list"))]().decode()
    assert "## Best matches first" in markdown
    first = markdown.split("## Best matches first\n\n")[1].splitlines()[0]
    assert first.startswith(f"- #1 **{table['Title'].iloc[0]}** ({table['Match'].iloc[0]};")
    downloads.clear()
    whole_page(at).text_input(key="w_search").input(
        "=diffusion"
    ).run()  # a paper writes it: evidence quotes it
    csv = pd.read_csv(
        io.BytesIO(downloads[next(k for k in downloads if k.startswith("Download these"))]()),
        encoding="utf-8-sig",
    )
    assert len(csv) and not csv["search_evidence"].str.match(r"[=+\-@]").any()


def test_operators_stay_exact_filters_and_a_search_of_operators_alone_ranks_by_words(tiny_app):
    """-word leaves out every paper writing it, close in meaning or not; a quoted phrase alone is
    today's word search (its labels, its order)."""
    atlas = read_map(tiny_app)
    written = (atlas.papers["title"] + " " + atlas.papers["abstract"]).str.lower().tolist()
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60))
    at.query_params.update({"q": "removing noise step by step"})
    at.run()
    full = papers_table(at)["rows"]["Title"].tolist()
    titles = atlas.papers["title"].tolist()
    words = [set(re.findall(r"\w+", written[titles.index(t)])) for t in full]
    own = min(words[0] - set.union(*words[1:]))  # a word only the first paper listed writes
    whole_page(whole_page(at).text_input(key="w_search").input(f"removing noise step by step -{own}").run())
    kept = [t for t, held in zip(full, words, strict=True) if own not in held]
    assert papers_table(at)["rows"]["Title"].tolist() == kept and 0 < len(kept) < len(full)
    whole_page(whole_page(at).text_input(key="w_search").input('"diffusion"').run())
    table = papers_table(at)["rows"]
    assert len(table) == 15 and "Closer than" not in table.columns
    assert "15 of the 60 papers of the map match the words “diffusion”" in plain_text(at)


@pytest.mark.slow  # the map's own int8 model
def test_a_question_on_the_seed_map_lists_papers_on_it_and_an_off_domain_one_lists_nothing(monkeypatch):
    """On the committed seed map with its own encoder: a narrow question's list is on its subject,
    and an off-domain question lists nothing."""
    monkeypatch.setenv("ATLAS_MAP", str(REPO / "assets" / "maps" / "seeds"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(REPO / "no-other-maps"))
    from app.loaders import cached_meaning

    cached_meaning.clear()
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=120))
    at.query_params.update({"q": "multi-view clustering"})
    at.run()
    assert not at.exception
    table = papers_table(at)["rows"]
    assert len(table) >= 1 and header_sentence_of(at).startswith(f"{len(table)} of the 57 papers")
    papers = read_map(REPO / "assets" / "maps" / "seeds").papers
    written = (papers["title"] + " " + papers["abstract"]).str.lower().set_axis(papers["title"])
    assert written[table["Title"][:3]].str.contains(r"multi-?view").all()  # the first ones are on it
    whole_page(at.text_input(key="w_search").input("a sourdough recipe").run())  # the table: as loaded
    assert (
        "None of the 57 papers of the map writes “a sourdough recipe” or is close in meaning"
        in plain_text(at)
    )
    assert len(papers_table(at)["rows"]) == 0


@pytest.mark.slow  # the map's own int8 model
def test_the_page_loads_the_maps_model_before_the_first_search_asks_for_it(monkeypatch):
    """Loading the model takes about a second: the page starts it once drawn, so the first search by
    meaning finds it loaded (a search that had to load it here fails the test), once per server."""
    import threading

    from app import encoder
    from app.loaders import cached_meaning
    from pipeline.embedding import onnx_encoder

    monkeypatch.setenv("ATLAS_MAP", str(SEED_MAP))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(REPO / "no-other-maps"))
    monkeypatch.setattr(encoder, "_LOADED", {})  # this server has loaded no model yet
    monkeypatch.setattr(encoder, "_WARMED", set())
    cached_meaning.clear()
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=120)).run()
    assert not at.exception and "multi-view" not in header_sentence_of(at)
    warming = [t for t in threading.enumerate() if t.name == "atlas-encoder-warm"]
    assert len(warming) == 1  # started by the page, not by a search
    warming[0].join(timeout=120)
    assert len(encoder._LOADED) == 1

    def loads_again(*args, **kwargs):
        raise AssertionError("the search loaded the model")

    monkeypatch.setattr(onnx_encoder, "OnnxEncoder", loads_again)
    at.run()  # the page again: no second load started
    assert not [t for t in threading.enumerate() if t.name == "atlas-encoder-warm"]
    whole_page(whole_page(at).text_input(key="w_search").input("multi-view clustering").run())
    assert not at.exception and "searched by words alone" not in plain_text(at)
    assert header_sentence_of(at).startswith(f"{len(papers_table(at)['rows'])} of the 57 papers")


def test_a_map_whose_model_is_missing_opens_without_loading_one(tiny_app, monkeypatch):
    """The tiny map records no model: the page starts no load, and its search says it is by words."""
    import threading

    from app import encoder

    monkeypatch.setattr(encoder, "_WARMED", set())
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)).run()
    assert not at.exception and not encoder._WARMED
    assert not [t for t in threading.enumerate() if t.name == "atlas-encoder-warm"]


def test_search_without_a_model_ranks_by_words_with_a_notice(tiny_app, monkeypatch):
    def broken(manifest):
        raise OSError("model files missing")

    monkeypatch.setattr("app.encoder.map_encoder", broken)
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60))
    at.query_params.update({"q": "diffusion", "kind": "meaning"})
    at.run()
    assert not at.exception
    assert "searched by words alone" in plain_text(at) and len(paper_frame(at)) == 15


def test_hostile_searches_in_the_app_show_a_notice_not_an_error(tiny_app):
    at = keeping_facts(AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)).run()
    for query in ['NEAR( "open', "🙂", "*", "AND OR", "x" * 10_000, "扩散模型"]:
        whole_page(at).text_input(key="w_search").input(
            query
        ).run()  # the sidebar: a search does not rerun it
        assert not at.exception, query
        assert "Showing" in plain_text(at) or "of the 60 papers of the map" in plain_text(at), query
    for query, left_out in (("🙂", "Left out '🙂'"), ("*", "Left out '*'"), ("AND", "Left out AND")):
        whole_page(at).text_input(key="w_search").input(query).run()
        assert left_out in plain_text(at) and "Showing the 60 papers of the map" in plain_text(at), query


def test_the_paper_fingerprint_is_the_sha256_of_every_record_in_order():
    """The fingerprint (joined by Arrow for speed) is the documented digest, so indexes written before
    still match their maps: checked against the plain definition on hostile text and on the seed map."""
    import hashlib

    def by_definition(papers, rows=None):
        digest = hashlib.sha256()
        head = papers if rows is None else papers.iloc[:rows]
        for doc_id, title, abstract in zip(
            head["doc_id"].astype(str),
            head["title"].fillna("").astype(str),
            head["abstract"].fillna("").astype(str),
            strict=True,
        ):
            digest.update(f"{doc_id}\x1f{title}\x1f{abstract}\x1e".encode())
        return digest.hexdigest()

    hostile = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d"],
            "title": ["Du²Net 🚀", None, "日本語のタイトル", ""],
            "abstract": ["x\u202ey <b>", "", None, "\x1f\x1e"],
        }
    )
    seeds = read_map(REPO / "assets" / "maps" / "seeds").papers
    for papers in (hostile, hostile.astype(object), seeds):
        for rows in (None, 0, 2):
            assert paper_fingerprint(papers, rows) == by_definition(papers, rows)


def test_a_phrase_of_the_map_is_evidence_alone_and_close_in_meaning_needs_a_word_of_the_search(tmp_path):
    """Two words of a search written next to each other ("draft model"), a phrase of the map's own,
    list a paper far in meaning; a paper close in meaning that writes none of the search's words,
    where others do, is not listed."""
    from app.search import fused_search
    from pipeline.modelling.floors import PairSimilarities

    texts = [
        f"We study graph learning with nodes number {i}." + " Teaching helps. Language too." * (i < 10)
        for i in range(96)
    ]
    texts += [
        "We speed up decoding with a draft model that proposes tokens.",  # 96: the phrase, far in meaning
        "A first draft of the plan for teaching language.",  # 97: "draft" alone; a phrase met by chance
        "We study caching of attention states.",  # 98: close in meaning, none of the words
        "Faster inference for transformers.",  # 99: close in meaning, writes "inference"
    ]
    index = index_of(frame(texts), tmp_path)
    pairs = PairSimilarities(
        np.array([0.0, 50.0, 85.0, 97.0, 100.0]), np.array([0.0, 0.2, 0.4, 0.6, 1.0]), 100
    )
    similarity = np.full(100, 0.1)
    similarity[[98, 99]] = 0.8
    query = "speeding up inference with a small draft model"
    found = fused_search(index, index.search(query), similarity, pairs, query)
    assert dict(zip(found.rows.tolist(), found.labels, strict=True)) == {
        96: "writes “draft model”",
        99: "close in meaning",
    }
    # two words met by chance ("teaching language" in 1 of the 11 papers writing either) are no phrase of the map
    query = "teaching language to a draft model"
    found = fused_search(index, index.search(query), similarity, pairs, query)
    assert found.rows.tolist() == [96] and found.labels == ("writes “draft model”",)
    # no paper writes a word of the search: close in meaning is enough
    query = "removing noise step by step"
    found = fused_search(index, index.search(query), similarity, pairs, query)
    assert sorted(found.rows.tolist()) == [98, 99] and set(found.labels) == {"close in meaning"}


def test_words_written_in_a_title_count_more_than_in_an_abstract_alone(tmp_path):
    """Two of four rare words of a search, related in meaning: enough from a paper's title, not from
    its abstract alone."""
    from app.search import fused_search
    from pipeline.modelling.floors import PairSimilarities

    titles = [f"Graph study {i}" for i in range(98)] + ["Gait of a quadruped", "A study of motion"]
    texts = [f"We study graph learning with nodes number {i}." for i in range(98)]
    texts += ["We study it.", "We study the gait of a quadruped."]
    index = index_of(frame(texts, titles), tmp_path)
    pairs = PairSimilarities(
        np.array([0.0, 50.0, 85.0, 97.0, 100.0]), np.array([0.0, 0.2, 0.4, 0.6, 1.0]), 100
    )
    similarity = np.full(100, 0.1)
    similarity[[98, 99]] = 0.5  # related in meaning (closer than 85% of pairs), not close
    query = "quadruped robust gait terrain"
    found = fused_search(index, index.search(query), similarity, pairs, query)
    assert found.rows.tolist() == [98] and found.labels == ("writes “quadruped”, “gait”",)
