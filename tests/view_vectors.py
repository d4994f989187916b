"""The view's rule as test vectors both languages pass: the papers a view shows, the link it writes,
and the view each reading step leads to.

Python's rule (`app.view.current_view`, `app.view.counted_in_view`, `app.state.to_params`,
`app.state.step`) writes them; `tests/test_view_rule.py` checks that Python still gives them and that
the browser's (js/view.js `inView`, `linkParams`, `linkText`, `step`, under Node) gives them too. After a deliberate change
of the rule, `python -m tests.view_vectors write` records them again (tests/fixtures/view_vectors.json).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from unittest import mock
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from app.search import SearchResult, search_evidence, search_facts, word_search
from app.state import VIEW_DEFAULTS, ViewState, step, to_params
from pipeline.mapfolder.query import parse_query
from pipeline.mapfolder.search_index import WordHits

VECTORS = Path(__file__).resolve().parent / "fixtures" / "view_vectors.json"
N = 40


def tables() -> dict[str, dict]:
    """Two small maps, as the browser holds them (js/view.js `ViewTables`): with themes and without."""
    rng = np.random.default_rng(63)
    topics = rng.choice([-1, 0, 1, 2, 3, 4], N).tolist()
    years = ["2022", "2023", "2024"]
    venues = ["ICML", "NeurIPS", "a&b / c+d ü"]  # a value the link must quote
    facets = {
        "year": {"values": years, "codes": rng.choice(4, N).tolist()},  # 3: missing
        "venue": {"values": venues, "codes": rng.choice(3, N).tolist()},
    }
    added = (rng.random(N) < 0.3).astype(int).tolist()
    names = {  # names the sentence quotes as they are (plain text: the page never reads them as HTML)
        "topics": {
            "0": "Pose",
            "1": "<b>Graph</b> nets & co",
            "2": "Diffusion “models”",
            "4": "RL",
        },  # 3: unnamed
        "themes": {"0": "Vision", "1": "Learning on structure", "2": "Control"},
    }
    themed = {
        "topics": topics,
        "themeOf": {"0": 0, "1": 0, "2": 1, "3": 1, "4": 2},
        "facets": facets,
        "added": added,
        "names": names,
    }
    return {
        "themed": themed,
        "plain": {**themed, "themeOf": {}, "added": None, "names": {**names, "themes": {}}},
    }


def hits(rng_seed: int, count: int) -> list[int]:
    """`count` rows of the map in a made-up best-first order."""
    return np.random.default_rng(rng_seed).permutation(N)[:count].tolist()


# (name, tables, view, hits): the view as ViewState's fields that differ from the defaults.
CASES = [
    ("every paper", "themed", {}, {}),
    ("unassigned hidden", "themed", {"show_unassigned": False}, {}),
    ("two topics", "themed", {"topics": [3, 1]}, {}),
    ("a topic and the unassigned", "themed", {"topics": [2, -1], "show_unassigned": False}, {}),
    ("a theme", "themed", {"themes": [0]}, {}),
    ("topics inside a theme", "themed", {"themes": [1], "topics": [0, 2, -1]}, {}),
    ("two themes, hidden unassigned", "themed", {"themes": [2, 0], "show_unassigned": False}, {}),
    ("themes on a map without them", "plain", {"themes": [1], "topics": [0, 2]}, {}),
    ("a column's value", "themed", {"filters": [["year", ["2023"]]]}, {}),
    ("values of two columns", "themed", {"filters": [["venue", ["ICML"]], ["year", ["2022", "2024"]]]}, {}),
    ("a value no paper has", "themed", {"filters": [["year", ["1999"]]]}, {}),
    ("a value that must be quoted", "themed", {"filters": [["venue", ["a&b / c+d ü"]]]}, {}),
    ("added only", "themed", {"added_only": True, "topics": [0, 1, 2]}, {}),
    ("added only, a full build", "plain", {"added_only": True}, {}),
    ("words", "themed", {"search": "graph"}, {"words": hits(1, 15)}),
    (
        "words among filters",
        "themed",
        {"search": "graph  nets", "topics": [1, 2], "filters": [["year", ["2024"]]]},
        {"words": hits(2, 25)},
    ),  # fmt: skip
    ("words, none in view", "themed", {"search": "rare", "topics": [4]}, {"words": hits(3, 2)}),
    ("blank search", "themed", {"search": "   ", "topics": [1]}, {}),
    ("an unnamed topic and a hidden unassigned", "themed", {"topics": [3], "show_unassigned": False}, {}),
    ("one topic inside themes", "themed", {"themes": [0, 1], "topics": [2]}, {}),
    ("a topic opened among filters", "themed", {"topic": 1, "filters": [["year", ["2022", "2023"]]]}, {}),
    ("the unassigned opened", "themed", {"topic": -1, "topics": [-1, 4]}, {}),
    (
        "words and meaning",
        "themed",
        {"search": "graph nets"},
        {"words": hits(12, 20), "meaning": [5, 1, 4, 2, 6, 4, 4, 1, 0, 5, 3, 4, 4, 2, 1, 4, 4, 6, 1, 4]},
    ),  # fmt: skip
    (
        "words and meaning in an opened topic, a box",
        "themed",
        {"search": "graph nets", "topic": 2, "selection": "box:0,1,0,1"},
        {
            "words": hits(12, 20),
            "meaning": [5, 1, 4, 2, 6, 4, 4, 1, 0, 5, 3, 4, 4, 2, 1, 4, 4, 6, 1, 4],
            "selected": sorted(hits(13, 22)),
        },
    ),  # fmt: skip
    (
        "one hit close in meaning",
        "plain",
        {"search": "bread", "filters": [["venue", ["ICML"]]]},
        {"words": hits(14, 1), "meaning": [4]},
    ),  # fmt: skip
    (
        "nothing close in meaning",
        "themed",
        {"search": "a recipe for bread", "themes": [2]},
        {"words": [], "meaning": [], "nearest": 9.5},
    ),  # fmt: skip
    (
        "a search of phrases",
        "plain",
        {"search": '"graph nets" -rare', "added_only": True},
        {"words": hits(15, 9)},
    ),  # fmt: skip
    (
        "a description: the one list",
        "themed",
        {"search": "graph neural networks"},
        {"words": hits(4, 12)},
    ),  # fmt: skip
    (
        "a description among themes",
        "themed",
        {"search": "diffusion models for images", "themes": [1]},
        {"words": hits(5, 9)},
    ),  # fmt: skip
    (
        "a description nothing is about",
        "themed",
        {"search": "a recipe for bread", "topics": [0, 3]},
        {"words": []},
    ),
    (
        "a description, its papers filtered out",
        "themed",
        {"search": "protein folding", "topics": [4]},
        {"words": hits(7, 3)},
    ),  # fmt: skip
    ("a selection", "themed", {"selection": "box:-1,1,-1,1"}, {"selected": sorted(hits(8, 14))}),
    (
        "a selection under filters",
        "themed",
        {"selection": "lasso:0,0,1,0,0.5,1", "themes": [0], "filters": [["venue", ["NeurIPS"]]]},
        {"selected": sorted(hits(9, 20))},
    ),  # fmt: skip
    (
        "a selection under a search",
        "themed",
        {"selection": "box:0,2,0,2", "search": "graph"},
        {"words": hits(10, 18), "selected": sorted(hits(11, 16))},
    ),  # fmt: skip
    (
        "an opened topic and paper, sorted, coloured",
        "themed",
        {"topic": 3, "paper": "doc 7/ü", "sort": "rising", "colour": "year", "topics": [3]},
        {},
    ),  # fmt: skip
]


# (name, tables, view before, action): each reading step (`app.state.Action`) and its branches.
STEPS = [
    ("open a topic", "themed", {"paper": "doc 1", "topics": [1]}, {"kind": "topic", "topic": 3}),
    ("back to the list", "themed", {"topic": 3, "search": "graph"}, {"kind": "topic", "topic": None}),
    ("open a paper from a topic", "themed", {"topic": 3}, {"kind": "paper", "paper": "doc 7/ü"}),
    ("close the paper", "themed", {"topic": 3, "paper": "doc 7/ü"}, {"kind": "paper", "paper": None}),
    ("tick topics", "plain", {"filters": [["year", ["2023"]]]}, {"kind": "topics", "topics": [4, 1, 4]}),
    ("untick every topic", "themed", {"topics": [1], "topic": 1}, {"kind": "topics", "topics": []}),
    ("tick inside the theme", "themed", {"themes": [0]}, {"kind": "topics", "topics": [1, 0, -1]}),
    ("tick outside the theme", "themed", {"themes": [0], "topics": [0]}, {"kind": "topics", "topics": [0, 3]}),
    ("press values", "themed", {"filters": [["year", ["2022"]]]}, {"kind": "values", "column": "venue",
                                                                   "values": ["a&b / c+d ü", "ICML"]}),
    ("unpress a column's values", "themed", {"filters": [["venue", ["ICML"]], ["year", ["2022"]]]},
     {"kind": "values", "column": "venue", "values": []}),
    ("a theme alone", "themed", {"topics": [1, 3], "topic": 3}, {"kind": "key", "theme": 1}),
    ("a theme alone, the open topic outside it", "themed", {"topic": 0}, {"kind": "key", "theme": 2}),
    ("the theme shown alone again", "themed", {"themes": [2], "topic": 4}, {"kind": "key", "theme": 2}),
    ("another theme", "themed", {"themes": [2]}, {"kind": "key", "theme": 0}),
    ("show all themes", "themed", {"themes": [0, 1]}, {"kind": "key", "theme": None}),
    ("a value alone", "themed", {"colour": "year", "filters": [["venue", ["ICML"]]]},
     {"kind": "key", "column": "year", "value": "2024"}),
    ("the value shown alone again", "themed", {"colour": "year", "filters": [["year", ["2024"]]]},
     {"kind": "key", "column": "year", "value": "2024"}),
    ("one value of two", "themed", {"colour": "year", "filters": [["year", ["2022", "2024"]]]},
     {"kind": "key", "column": "year", "value": "2024"}),
    ("show all values", "themed", {"colour": "year", "filters": [["year", ["2022"]]]},
     {"kind": "key", "column": "year", "value": None}),
    ("a box", "themed", {"topics": [1]}, {"kind": "select", "selection": "box:-1,1,-1,1"}),
    ("clear the selection", "themed", {"selection": "lasso:0,0,1,0,0.5,1"}, {"kind": "select", "selection": ""}),
    ("hide the unassigned", "themed", {}, {"kind": "unassigned", "show": False}),
    ("reset", "themed", {"search": "graph", "topics": [1], "themes": [0], "sort": "rising", "colour": "year",
                         "paper": "doc 1", "added_only": True, "show_unassigned": False,
                         "filters": [["year", ["2024"]]], "selection": "box:0,1,0,1"}, {"kind": "reset"}),
]  # fmt: skip


def python_step(table: dict, fields: dict, action: dict) -> dict:
    """The view after the step by Python's own rule (`app.state.step`), as the vectors' JSON fields."""
    theme_of = {int(t): th for t, th in table["themeOf"].items()}
    after = step(view_state(fields), action, theme_of)
    return json.loads(json.dumps({name: getattr(after, name) for name in VIEW_DEFAULTS}))


def view_state(fields: dict) -> ViewState:
    """A `ViewState` from the vectors' JSON fields (lists for tuples)."""
    made = {**fields}
    for name in ("topics", "themes"):
        if name in made:
            made[name] = tuple(made[name])
    if "filters" in made:
        made["filters"] = tuple((column, tuple(values)) for column, values in made["filters"])
    return ViewState(**made)


def map_data(table: dict) -> SimpleNamespace:
    """What `current_view` reads of a map, for a vectors' table."""
    topic_ids = sorted({t for t in table["topics"] if t != -1})
    theme_of = {int(t): th for t, th in table["themeOf"].items()}
    facet_text = {
        column: pd.Series([facet["values"][c] if c < len(facet["values"]) else None for c in facet["codes"]])
        for column, facet in table["facets"].items()
    }
    return SimpleNamespace(
        n=len(table["topics"]),
        topic_ids=np.array(table["topics"]),
        topics=pd.DataFrame(
            {"topic_id": topic_ids, **({"theme_id": [theme_of[t] for t in topic_ids]} if theme_of else {})}
        ),
        themes=pd.DataFrame(
            {
                "theme_id": [int(t) for t in table["names"]["themes"]],
                "label": list(table["names"]["themes"].values()),
            }
        )
        if theme_of
        else None,  # fmt: skip
        facet_text=facet_text,
        added=None if table["added"] is None else np.array(table["added"], dtype=bool),
        labels={int(t): name for t, name in table["names"]["topics"].items()} | {-1: "Unassigned"},
        pairs=None,
    )


def python_rule(table: dict, fields: dict, found: dict) -> dict:
    """The papers in view, and those of them the selection holds, by Python's own rule: `current_view`
    with the search's answer given (`found`), and `counted_in_view`."""
    from app import view

    data = map_data(table)
    state = view_state(fields)
    found_search = searched(fields, found)
    with (  # the server's one list of the search (words and meaning, `app.search`): the case's hits
        mock.patch.object(view, "cached_word_search", lambda key, text: found_search),
        mock.patch.object(view, "cached_fused_search", lambda key, text: found_search),
        mock.patch.object(view, "word_search", lambda hits, text: hits),
    ):
        shown = view.current_view(data, ("vectors", 0), state)
    selected = found.get("selected")
    picked = None if selected is None else np.array(selected, dtype=np.int64)
    counted = None if picked is None else view.counted_in_view(shown, picked)
    said = view.header_sentence(data, view.opened_topic_view(data, state, shown), picked)
    return {
        "rows": shown.rows.tolist(),
        "selected": None if counted is None else np.flatnonzero(counted).tolist(),
        "sentence": list(said),
    }


def searched(fields: dict, found: dict) -> SearchResult:
    """The search's one list over the whole map as the server finds it: the case's hits, each with its
    evidence where meaning was searched too (`meaning`: 1 every word, 2 several, 4 close), else a
    word search's."""
    text = " ".join(fields.get("search", "").split())
    words = WordHits(rows=np.array(found.get("words", []), dtype=np.int64), query=parse_query(text))
    result = word_search(words, text)
    if found.get("meaning") is None:
        return result
    marks = np.array(found["meaning"], dtype=np.int64)
    return replace(
        result,
        every_word=(marks & 1).astype(bool),
        some=tuple("graph, nets" if m & 2 else "" for m in marks),
        close=(marks & 4).astype(bool),
        nearest=found.get("nearest"),
    )


def browser_hits(fields: dict, found: dict) -> dict:
    """The case's hits as the server sends them to the browser (`app.view.sentence_hits`; `nearest`, the
    percentile the facts quote, and `meaning`, each hit's evidence as the case gives it: kept for Python's
    own rule)."""
    hits = {"words": None, "selected": None, "evidence": None, "search": None, **found}
    if hits["words"] is not None:
        result = searched(fields, found)
        hits["evidence"] = search_evidence(result)
        hits["search"] = search_facts(result)
    return hits


def python_link(fields: dict) -> str:
    """The view's link as the server writes it (`to_params`, then urlencode, as Streamlit does)."""
    return urlencode(to_params(view_state(fields)), doseq=True)


def vectors() -> dict:
    maps = tables()
    cases = []
    for name, table, fields, found in CASES:
        view = json_view(fields)
        hits_ = browser_hits(fields, found)
        cases.append({"name": name, "tables": table, "view": view, "hits": hits_,
                      **python_rule(maps[table], fields, found), "link": python_link(fields)})  # fmt: skip
    steps = [{"name": name, "tables": table, "view": json_view(fields), "action": action,
              "after": (after := python_step(maps[table], fields, action)),
              "link": python_link(after)} for name, table, fields, action in STEPS]  # fmt: skip
    return {"tables": maps, "cases": cases, "steps": steps}


def json_view(fields: dict) -> dict:
    """A view as the vectors hold it: every field, lists for tuples."""
    return json.loads(json.dumps({**VIEW_DEFAULTS, **fields}))


def write() -> None:
    VECTORS.write_text(json.dumps(vectors(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["write"]:
        sys.exit("usage: python -m tests.view_vectors write")
    write()
