"""Unit tests for the app's pure helpers: URL state, filters and search, placement, palette, text, map catalog."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from app.data import facet_columns, map_catalog, requested_map
from app.filters import chosen_topics, filter_mask
from app.palette import (
    HUE_BAND,
    THEME_COLOURS,
    UNASSIGNED_COLOUR,
    _srgb_to_lab,
    distinct_colours,
    lab_of,
    oklab_of,
    theme_topic_colours,
)
from app.state import ViewState, Vocabulary, normalise_params, parse_map, parse_view, to_params
from app.text import markdown_literal, plotly_escape
from pipeline.modelling.place import place
from tests.helpers import tiny_map, write_tiny_map

VOCAB = Vocabulary(
    topic_ids=frozenset({-1, 0, 1, 2, 3}),
    facets={"year": ("2023", "2024"), "source": ("a", "b")},
    doc_ids=frozenset({"doc1", "doc2"}),
)


# ------------------------------------------------------------------ URL state <-> view state
@pytest.mark.parametrize(
    "state",
    [
        ViewState(),
        ViewState(search="graph neural", topics=(2, 0), show_unassigned=False),
        ViewState(filters=(("source", ("b",)), ("year", ("2023", "2024"))), topic=-1, paper="doc2"),
        ViewState(search="ünïcode & <b>", topic=3, paper="doc1"),
        ViewState(search="robust to small input changes", topics=(-1, 2)),
    ],
)
def test_view_state_round_trips_through_the_query_string(state):
    params = normalise_params(to_params(state, "seeds"))
    parsed, notices = parse_view(params, VOCAB)
    assert parsed == state
    assert notices == []
    assert parse_map(params, ["seeds", "other"], "other") == ("seeds", [])


def test_default_view_writes_no_parameters():
    assert to_params(ViewState()) == {}


def test_malformed_values_are_dropped_with_one_notice_each():
    params = normalise_params(
        {
            "topics": "1,abc,99,-1",
            "unassigned": "perhaps",
            "topic": "x",
            "paper": "nope",
            "f.year": ["2024", "1999"],
            "f.colour": "red",
            "utm_source": "mail",
            "q": "  ok  ",
        }
    )
    state, notices = parse_view(params, VOCAB)
    assert state == ViewState(search="ok", topics=(1, -1), filters=(("year", ("2024",)),))
    text = "\n".join(notices)
    for fragment in (
        "'abc'",
        "'99'",
        "unassigned='perhaps'",
        "topic='x'",
        "paper='nope'",
        "'1999'",
        "'colour'",
        "'utm_source'",
    ):
        assert fragment in text
    assert len(notices) == 7


def test_overlong_values_are_cut_in_state_and_notice():
    state, notices = parse_view({"q": ["w " * 400], "paper": ["p" * 5000]}, VOCAB)
    assert len(state.search) <= 300 and state.paper is None
    assert all(len(n) < 200 for n in notices)


def test_unknown_map_falls_back_to_default_with_notice():
    name, notices = parse_map({"map": ["../../etc"]}, ["seeds"], "seeds")
    assert name == "seeds" and "'../../etc'" in notices[0]


# ------------------------------------------------------------------ filters and search
def test_an_old_search_kind_opens_the_one_list_and_topics_outside_the_chosen_themes_are_checked():
    vocabulary = Vocabulary(
        topic_ids=frozenset({-1, 0, 1, 2}), theme_ids=frozenset({0, 1}), topic_themes={0: 0, 1: 0, 2: 1}
    )
    state, notices = parse_view(
        {"q": ["x"], "kind": ["vibes"], "theme": ["0"], "topics": ["1,2,-1"]}, vocabulary
    )
    assert state.search == "x" and state.topics == (1, -1) and state.themes == (0,)
    assert notices == [
        "Ignored kind='vibes': a search finds papers by their words and meaning at once.",
        "Ignored topic 2: it is not in the chosen theme.",
    ]
    for kind in ("meaning", "words"):  # links from before the one list open it, without a notice
        old, notices = parse_view({"q": ["x"], "kind": [kind]}, vocabulary)
        assert old == ViewState(search="x") and notices == [] and to_params(old) == {"q": "x"}


def test_filter_mask_keeps_exactly_the_chosen_topics_and_unassigned_only_when_chosen():
    topic_ids = np.array([0, 1, 2, -1, 1])
    facet = {"year": pd.Series(["2023", "2024", "2024", "2024", "2023"])}
    assert filter_mask(topic_ids).tolist() == [True] * 5
    assert filter_mask(topic_ids, show_unassigned=False).tolist() == [True, True, True, False, True]
    assert filter_mask(topic_ids, topics=(1,)).tolist() == [False, True, False, False, True]
    assert filter_mask(topic_ids, topics=(1, -1)).tolist() == [False, True, False, True, True]
    assert filter_mask(topic_ids, filters={"year": ["2024"]}, facet_text=facet).tolist() == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert filter_mask(topic_ids, topics=(1,), filters={"year": ["2023"]}, facet_text=facet).tolist() == [
        False,
        False,
        False,
        False,
        True,
    ]
    # themes: their topics exactly; chosen topics narrow inside them; -1 only when chosen
    assert chosen_topics((), (0, 2)) == (0, 2) and chosen_topics((2, 1, -1), (0, 2)) == (2, -1)


def test_facets_are_low_cardinality_scalar_metadata_columns():
    papers = tiny_map().papers.assign(
        url=[f"https://x/{i}" for i in range(60)], tags=[["a"]] * 60, collection="ICML 2025"
    )
    assert facet_columns(papers) == {"year": ("2023", "2024")}  # one collection is no filter


def test_a_source_of_input_file_names_is_no_filter_a_real_source_and_two_collections_are():
    papers = tiny_map().papers  # source: "alpha.txt" or "beta.txt", input file names as ingest writes them
    assert facet_columns(papers) == {"year": ("2023", "2024")}
    files = papers.assign(source=["more/A.CSV", "b.jsonl", "c.parquet", "d.tsv", "e.json"] * 12)
    assert "source" not in facet_columns(files)
    two = papers.assign(collection=["ICML 2025", "NeurIPS 2024"] * 30)
    assert facet_columns(two) == {"collection": ("ICML 2025", "NeurIPS 2024"), "year": ("2023", "2024")}
    venues = papers.assign(source=["NeurIPS", "ICML"] * 30)  # e.g. a benchmark map: source = venue
    assert facet_columns(venues) == {"source": ("ICML", "NeurIPS"), "year": ("2023", "2024")}
    mixed = papers.assign(source=["arXiv", "alpha.txt"] * 30)  # not only file names: still a filter
    assert facet_columns(mixed)["source"] == ("alpha.txt", "arXiv")


# ------------------------------------------------------------------ placement
def test_place_puts_a_paper_among_its_topics_nearest_papers():
    # Placement rules changed in issue 13: the pin sits among the chosen topic's nearest papers
    # (tests/test_place.py has the rest).
    corpus = np.array([[1, 0], [1, 0], [0.8, 0.6], [0, 1], [-1, 0]], dtype=np.float32)
    xy = np.array([[0, 0], [2, 0], [1, 3], [10, 10], [-9, -9]], dtype=np.float32)
    spot = place(np.array([1, 0], np.float32), corpus, xy, np.array([5, 5, 6, 7, 8]), k=3)
    assert (spot.x, spot.y) == pytest.approx(
        (1.0, 0.0)
    )  # between its two equal neighbours, not pulled to (1, 3)
    assert spot.topic_id == 5
    assert sorted(spot.neighbour_rows.tolist()) == [0, 1, 2]
    assert spot.similarities[0] == pytest.approx(1.0)


def test_place_among_unassigned_papers_stays_unassigned_and_a_closer_paper_decides():
    corpus = np.array([[0.8, 0.6], [1, 0.05], [1, -0.05], [1, 0]], dtype=np.float32)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    spot = place(np.array([1, 0], np.float32), corpus, np.zeros((4, 2)), np.array([3, -1, -1, -1]), k=4)
    assert spot.topic_id == -1
    pair = np.array([[1, 0], [0.9, 0.1]], dtype=np.float32)
    pair /= np.linalg.norm(pair, axis=1, keepdims=True)
    assert place(np.array([1, 0], np.float32), pair, np.zeros((2, 2)), np.array([0, 1]), k=50).topic_id == 0


def test_place_on_the_tiny_map_lands_in_the_right_cluster():
    atlas = tiny_map()
    vector = np.eye(384, dtype=np.float32)[1]  # topic 1's direction
    spot = place(
        vector, atlas.embeddings, atlas.papers[["x", "y"]].to_numpy(), atlas.papers["topic_id"].to_numpy()
    )
    assert spot.topic_id == 1
    assert spot.x > 0.5 and spot.y > 0.5  # topic 1 sits around (2, 2)


# ------------------------------------------------------------------ palette and text
def test_palette_stays_distinct_for_sixty_topics_and_keeps_grey_for_unassigned():
    colours = distinct_colours(60)
    lab = _srgb_to_lab(np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours]))
    closest = min(np.linalg.norm(a - b) for a, b in itertools.combinations(lab, 2))
    assert len(set(colours)) == 60 and closest > 12
    assert min(np.hypot(lab[:, 1], lab[:, 2])) > 25  # no greys: grey means unassigned
    assert theme_topic_colours([4, 2], {})[0][-1] == UNASSIGNED_COLOUR


def test_a_theme_keeps_its_colour_by_its_id_whatever_other_themes_do():
    """Issue 35: a theme that keeps its papers keeps its colour through curation and rebuilds."""
    before, _ = theme_topic_colours([0, 1, 2, 3, 4], {0: 0, 1: 1, 2: 0, 3: 2, 4: 3})
    # A rebuild: theme 1 is gone (its topic merged into theme 3), theme 3 grew past theme 0, a new
    # theme 6 and a topic of no theme arrived; themes 0 and 2 kept their topics.
    after, _ = theme_topic_colours([4, 0, 2, 3, 7, 8], {4: 3, 0: 0, 2: 0, 3: 2, 7: 6})
    for topic in (0, 2, 3):
        assert after[topic] == before[topic]
    assert len({after[t] for t in (4, 0, 3, 7, 8)}) == 5  # every theme and the lone topic told apart
    assert after[-1] == UNASSIGNED_COLOUR


def test_untrusted_text_is_escaped_for_plotly_and_markdown():
    assert plotly_escape("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    literal = markdown_literal("$x^2$ **bold** [x](y) <b>")
    for raw in ("$", "*", "[", "(", "<"):
        assert "\\" + raw in literal


# ------------------------------------------------------------------ map catalog
def test_map_catalog_puts_the_requested_or_seeds_map_first(tmp_path):
    for name in ("zeta", "seeds"):
        write_tiny_map(tmp_path / name)
    (tmp_path / "not-a-map").mkdir()
    assert [m.name for m in map_catalog(None, tmp_path)] == ["seeds", "zeta"]
    assert [m.name for m in map_catalog(tmp_path / "zeta", tmp_path)] == ["zeta", "seeds"]
    assert [m.name for m in map_catalog(tmp_path / "other" / "seeds", tmp_path)] == [
        "other-seeds",
        "seeds",
        "zeta",
    ]
    assert requested_map(["--map", "x"], {"ATLAS_MAP": "y"}).name == "x"
    assert requested_map([], {}) is None


def hue_of(lab: np.ndarray) -> np.ndarray:
    return np.degrees(np.arctan2(lab[..., 2], lab[..., 1]))


def hue_gap(a, b):
    return np.abs((np.asarray(a) - np.asarray(b) + 180) % 360 - 180)


@pytest.mark.parametrize("themes", range(2, 13))
def test_themes_take_colours_far_apart_and_their_topics_stay_in_the_themes_hue_band(themes):
    """Issue 66: two themes' colours in the key read as the same blue, and a topic of a blue theme was
    purple. On maps of 2 to 12 themes (theme ids as rebuilds leave them: not 0..n-1), of 1 to 8
    topics each: any two themes' colours at least 25 apart in CIELAB (35.9 measured), each topic within
    `HUE_BAND` of its theme's OKLab hue and nearer it than any other theme's, not grey, and told apart
    from its siblings (at least 10 apart); a theme's first topic has the theme's own colour."""
    rng = np.random.default_rng(themes)
    theme_ids = sorted(rng.choice(40, size=themes, replace=False).tolist())
    theme_of, topic = {}, 0
    for theme in theme_ids:
        for _ in range(int(rng.integers(1, 9))):
            theme_of[topic] = theme
            topic += 1
    colours, theme_colours = theme_topic_colours(list(rng.permutation(topic)), theme_of)
    assert sorted(theme_colours) == theme_ids
    base = {theme: lab_of([c])[0] for theme, c in theme_colours.items()}
    hues = {theme: oklab_of([c])[0] for theme, c in theme_colours.items()}  # hue as read: OKLab's
    closest = min(np.linalg.norm(base[a] - base[b]) for a, b in itertools.combinations(theme_ids, 2))
    assert closest >= 25, closest
    for t, theme in theme_of.items():
        lab, ok = lab_of([colours[t]])[0], oklab_of([colours[t]])[0]
        own = hue_gap(hue_of(ok), hue_of(hues[theme]))
        assert own <= HUE_BAND, (t, theme, own)
        assert all(own < hue_gap(hue_of(ok), hue_of(hues[other])) for other in theme_ids if other != theme)
        assert np.hypot(lab[1], lab[2]) >= 20  # a colour, far from the unassigned grey (C* 4)
    for theme in theme_ids:
        siblings = lab_of([colours[t] for t, th in theme_of.items() if th == theme])
        if len(siblings) > 1:
            assert min(np.linalg.norm(a - b) for a, b in itertools.combinations(siblings, 2)) >= 10
        assert colours[min(t for t, th in theme_of.items() if th == theme)] == theme_colours[theme]


def test_past_twelve_themes_the_colours_follow_a_stated_rule():
    """Past twelve themes a theme takes a further colour, the farthest from those before it: every
    theme still has a colour of its own, though not 25 apart from all."""
    _, theme_colours = theme_topic_colours(list(range(16)), {t: t for t in range(16)})
    assert list(theme_colours.values())[:12] == list(THEME_COLOURS)
    assert len(set(theme_colours.values())) == 16


# Run apart, so a pattern gone quadratic is stopped by the timeout rather than holding the suite for hours.
LONG_WORD_TEXT = """
import time
from app import text
from app.search import quoted_inside
from pipeline.ingest import derive_title
from pipeline.mapfolder.query import parse_query
from pipeline.mapfolder.search_index import highlight
from pipeline.naming.sentences import first_sentence
from tests.helpers import long_words

drawers = {
    "plotly_wrap": text.plotly_wrap,
    "plotly_escape": text.plotly_escape,
    "visible": text.visible,
    "inert": text.inert,
    "markdown_literal": text.markdown_literal,
    "highlighted_markdown": lambda t: text.highlighted_markdown([(t[:10], True), (t[10:], False)]),
    "without_server_paths": text.without_server_paths,
    "quoted_inside": quoted_inside,
    "highlight (a word search's hits in an opened paper)": lambda t: highlight(t, parse_query("a")),
    "first_sentence": first_sentence,
    "derive_title": derive_title,
}
for word in long_words():
    for name, draw in drawers.items():
        start = time.perf_counter()
        draw(word)
        print(name, repr(word[:4]), round(time.perf_counter() - start, 1), flush=True)
"""


def test_every_way_the_app_draws_text_takes_seconds_on_a_one_megabyte_word():
    """Titles, abstracts, names and values are untrusted: each text helper the page draws them with
    (labels, hovers, Markdown, highlights, titles derived at ingest) is linear in a 1 MB word."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    result = subprocess.run(
        [sys.executable, "-c", LONG_WORD_TEXT], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-2000:]
    times = [line.rsplit(" ", 1) for line in result.stdout.splitlines()]
    assert len(times) == 11 * 12 and all(float(seconds) < 30 for _, seconds in times), times
