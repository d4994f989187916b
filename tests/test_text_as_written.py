"""Text as written: titles kept byte for byte through build, app and every export; keywords keep hyphens;
summaries are not cut at "e.g."; only duplicate keys are Unicode-normalised."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from pipeline.commands.build import build_map
from pipeline.exports.reading_list import summary
from pipeline.ingest import doc_id_for, ingest
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT, SEEDS, opened_paper

TITLES = [
    "Du²Net: Learning Depth Estimation from Dual-Cameras and Dual-Pixels",
    "UFO²: A Unified Framework towards Omni-supervised Object Detection",
    "PL₁P – Point-line Minimal Problems under Partial Visibility",
    "S³Net: Semantic-Aware Self-supervised Depth Estimation",
]
ABSTRACTS = [
    "Computational stereo has reached a high accuracy level (e.g. on public benchmarks), but it "
    "degrades near occlusions and thin structures. We present Du²Net, a few-shot depth network that "
    "combines a dual-camera stereo pair with dual-pixel images. Experiments show sharper depth edges.",
    "Existing work on object detection (i.e. Faster R-CNN and its variants) relies on full boxes. "
    "We propose UFO², a unified framework that learns from boxes, points, scribbles and tags. "
    "It uses self-attention over proposals and a low-rank head.",
    "We present a complete classification of minimal problems for generic arrangements of points and "
    "lines, as studied by Kileel et al. In earlier work, observed partially by three calibrated "
    "cameras. PL₁P is the simplest such problem with a vision-language style of notation.",
    "Self-supervised depth estimation (cf. Godard et al. 2019) struggles with thin objects. S³Net "
    "adds semantic guidance to a self-supervised depth network. It improves accuracy on KITTI.",
]


@pytest.fixture(scope="module")
def written_map(tmp_path_factory) -> Path:
    """The real seeds plus four papers whose titles use superscripts and subscripts, built for real."""
    folder = tmp_path_factory.mktemp("written")
    shutil.copytree(SEEDS, folder / "seeds")
    pd.DataFrame({"title": TITLES, "abstract": ABSTRACTS}).to_csv(folder / "seeds" / "eccv.csv", index=False)
    build_map([folder / "seeds"], folder / "map", progress=False, log=lambda message: None)
    return folder / "map"


def test_titles_and_abstracts_are_stored_byte_for_byte(written_map):
    papers = read_map(written_map).papers
    for title, abstract in zip(TITLES, ABSTRACTS):
        row = papers[papers["doc_id"] == doc_id_for(abstract)].iloc[0]
        assert row["title"].encode() == title.encode()
        assert row["abstract"].encode() == abstract.encode()


def test_only_the_duplicate_key_is_normalised(tmp_path):
    """ "Du²Net" and "Du2Net" are one paper for de-duplication, and the first is kept as written."""
    text = "Du²Net learns depth from dual cameras and dual pixels in one network."
    assert doc_id_for(text) == doc_id_for(text.replace("²", "2"))
    (tmp_path / "a.csv").write_text(
        f'title,abstract\nDu²Net,"{text}"\nDu2Net,"{text.replace("²", "2")}"\n', encoding="utf-8"
    )
    corpus = ingest([tmp_path / "a.csv"])
    assert corpus.papers["title"].tolist() == ["Du²Net"]
    assert corpus.papers["abstract"].tolist() == [text]


@pytest.mark.parametrize("fmt", ["csv", "md", "bib"])
def test_exports_keep_the_titles_as_written(written_map, tmp_path, fmt):
    out = tmp_path / f"list.{fmt}"
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "export", str(written_map), "--out", str(out), "--format", fmt],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert set(TITLES) <= {r["title"] for r in rows}
        assert set(ABSTRACTS) <= {r["abstract"] for r in rows}
    elif fmt == "md":
        for title in TITLES:  # Markdown escapes no letters, digits or these marks
            assert f"- **{title}**: " in text
        # the summary runs past "e.g." and "i.e." to the real end of the first sentence
        assert "(e.g. on public benchmarks), but it degrades near occlusions and thin structures." in text
    else:
        titles = re.findall(r"^  title = \{\{(.*)\}\},$", text, re.M)
        assert set(TITLES) <= set(titles)


def test_the_app_shows_the_titles_as_written(written_map, monkeypatch, tmp_path):
    monkeypatch.setenv("ATLAS_MAP", str(written_map))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params.update({"paper": doc_id_for(ABSTRACTS[0])})
    at.run()
    assert not at.exception
    paper = opened_paper(at)  # js/panel.js sets every piece as text
    assert "Du²Net" in "".join(p for p, _ in paper["title"]), paper["title"]
    assert paper["abstract"] == [[ABSTRACTS[0], False]]
    shown = {t for df in at.dataframe if "Title" in df.value.columns for t in df.value["Title"]}
    assert not any("Du2Net" in str(t) or "UFO2" in str(t) for t in shown)


def test_keywords_and_names_are_words_the_papers_write(written_map):
    """Every keyword occurs, as written (hyphens included), in the text of its topic's papers."""
    atlas = read_map(written_map)
    text_of = {
        t: " ".join(atlas.papers.loc[atlas.papers["topic_id"] == t, "abstract"]).lower()
        for t in atlas.topics["topic_id"]
    }
    hyphenated = [k for ks in atlas.topics["keywords"] for k in ks if "-" in k]
    assert hyphenated, "the seeds write multi-view, few-shot, ...: some keyword keeps its hyphen"
    for row in atlas.topics.itertuples():
        for keyword in row.keywords:
            assert written_as_a_word(keyword, text_of[row.topic_id]), (row.label, keyword)


def written_as_a_word(keyword: str, text: str) -> bool:
    """Whether `text` writes `keyword` whole: not as the end of a hyphenated word ("gram" of "n-gram")."""
    return re.search(rf"(?<![\w-]){re.escape(keyword)}(?![\w-])", text) is not None


def test_keywords_are_words_the_papers_write_never_the_part_after_a_hyphen(tmp_path):
    """ "n-gram", "2-gram" and "3-dim" are keywords as written; "gram" and "dim" (which no paper writes as
    a word) are not."""
    from tests.helpers import FakeEncoder, synthetic_corpus

    corpus = synthetic_corpus(120)
    speech, graphs = corpus["theme"] == "speech", corpus["theme"] == "graphs"
    corpus.loc[speech, "abstract"] += " A 2-gram and n-gram model beats 3-gram counts."
    corpus.loc[graphs, "abstract"] += " Each vertex has 3-dim and 2-dim coordinates."
    corpus[["title", "abstract"]].to_csv(tmp_path / "papers.csv", index=False)
    build_map(
        [tmp_path / "papers.csv"], tmp_path / "map", encoder=FakeEncoder(), progress=False, log=lambda m: None
    )
    atlas = read_map(tmp_path / "map")
    keywords = {k for ks in atlas.topics["keywords"] for k in ks for k in k.split()}
    assert {"n-gram", "3-dim"} <= keywords and not {"gram", "dim"} & keywords, sorted(keywords)
    for row in atlas.topics.itertuples():
        text = " ".join(atlas.papers.loc[atlas.papers["topic_id"] == row.topic_id, "abstract"]).lower()
        assert all(written_as_a_word(keyword, text) for keyword in row.keywords), (row.label, row.keywords)


def test_summaries_do_not_cut_at_abbreviations():
    abstract = (
        "Priors (e.g. Gaussian ones, i.e. Smooth Ones) help, as Lee et al. Showed, vs. Older Work. Then more."
    )
    assert summary(abstract, limit=500) == abstract.split(" Then")[0]
