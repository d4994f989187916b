"""Build → add → export → read, every stage of the real pipeline together, in the fast tier: a
synthetic corpus of 120 abstracts in six word-themes, embedded by the test's fake encoder instead of
the packaged model (the real model's builds are the slow tier's, on `seeds/`)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd

from pipeline.__main__ import main
from pipeline.commands.build import build_map
from pipeline.mapfolder.store import read_map
from tests.helpers import WORD_THEMES, FakeEncoder, quiet, replace_packaged_model, synthetic_corpus

PAPERS = 120
# Added later: one abstract of each word-theme, written with all its words, and one of no theme.
NEW = {
    **{
        theme: f"We study {words} and show that it works well in practice."
        for theme, words in WORD_THEMES.items()
    },
    None: "Medieval manuscripts copied by monastic scribes travelled along parchment trade routes of Flanders.",
}


def test_build_add_export_read_gives_what_a_user_sees(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached by an earlier run
    replace_packaged_model(monkeypatch, FakeEncoder())  # `add` embeds with the map's model: the fake
    corpus = synthetic_corpus(PAPERS).assign(year=[2020 + i % 5 for i in range(PAPERS)])
    corpus[["title", "abstract", "year"]].to_csv(tmp_path / "papers.csv", index=False)
    new = pd.DataFrame({"title": [f"New {theme}" for theme in NEW], "abstract": list(NEW.values())})
    new.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "map"

    # build: ingest, embed, topics, names, themes, layout, write
    built = build_map([tmp_path / "papers.csv"], out, encoder=FakeEncoder(), progress=False, log=quiet)
    theme_of = dict(zip(corpus["abstract"], corpus["theme"], strict=True))
    themes = built.papers["abstract"].map(theme_of)
    theme_of_topic = {}  # each topic is (almost) all one word-theme, and every word-theme has a topic
    for topic_id in built.topics["topic_id"]:
        members = themes[built.papers["topic_id"] == topic_id].value_counts(normalize=True)
        assert members.iloc[0] >= 0.9, (topic_id, members)
        theme_of_topic[int(topic_id)] = members.index[0]
    assert set(theme_of_topic.values()) == set(corpus["theme"])

    # add: placed without refitting, each in a topic of its word-theme; the one of no theme outside all
    assert main(["add", str(out), str(tmp_path / "new.csv"), "--quiet"]) == 0
    said = capsys.readouterr().err
    assert (
        f"added {len(NEW)} paper(s) to {out}: {len(NEW) - 1} in a topic, 1 unassigned (1 outside every topic)"
        in said
    )

    # export the CSV a user downloads, then read the map as the app does
    assert main(["export", str(out), "--out", str(tmp_path / "export.csv")]) == 0
    atlas = read_map(out)
    papers = atlas.papers
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(papers) == manifest["papers"] == PAPERS + len(NEW)
    assert len(atlas.topics) == manifest["topics"] == len(built.topics)
    assert manifest["unassigned"] == int((papers["topic_id"] == -1).sum())
    # the summary's last clause is the map as read afterwards (issue 66: "1 unassigned in all" of 3)
    assert (
        f"the map now holds {len(papers)} papers in {len(atlas.topics)} topics, "
        f"{int((papers['topic_id'] == -1).sum())} of them unassigned" in said
    )
    assert atlas.topics["size"].sum() == (papers["topic_id"] != -1).sum()
    assert manifest["model"]["encoder"] == FakeEncoder.name
    added = papers[papers["added"]]
    assert added["title"].tolist() == [f"New {theme}" for theme in NEW]
    assert [theme_of_topic.get(int(t)) for t in added["topic_id"]] == list(NEW)  # None: unassigned, -1
    assert papers.loc[~papers["added"], "topic_id"].tolist() == built.papers["topic_id"].tolist()

    with open(tmp_path / "export.csv", encoding="utf-8-sig", newline="") as file:
        rows = list(csv.DictReader(file))
    names = dict(zip(atlas.topics["topic_id"], atlas.topics["label"], strict=True))
    assert [r["doc_id"] for r in rows] == papers["doc_id"].tolist()
    assert [r["title"] for r in rows] == papers["title"].tolist()
    assert [int(r["topic_id"]) for r in rows] == papers["topic_id"].tolist()
    assert [r["topic"] for r in rows] == [names.get(t, "Unassigned") for t in papers["topic_id"]]
    for axis in ("x", "y"):  # where each paper is on the map, as stored
        assert np.array_equal(np.array([r[axis] for r in rows], dtype=papers[axis].dtype), papers[axis])

    # every topic and theme has a name, no two topics the same
    assert all(label.strip() for label in atlas.topics["label"])
    assert atlas.topics["label"].is_unique
    assert atlas.themes is not None and all(label.strip() for label in atlas.themes["label"])
    assert all(row["theme"] for row in rows if row["topic_id"] != "-1")
