"""`python -m pipeline add`: new abstracts placed on a real map, rewritten atomically; bad input leaves it alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pipeline.artifacts import added_mask, read_map
from tests.conftest import ROOT, SEEDS

EXTRA = ROOT / "tests" / "fixtures" / "extra_abstracts.csv"
SEED_MAP = ROOT / "assets" / "maps" / "seeds"


def run(*args: str):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture
def map_copy(tmp_path):
    target = tmp_path / "map"
    shutil.copytree(SEED_MAP, target)
    return target


def test_add_places_new_abstracts_marks_them_and_keeps_the_map_valid(map_copy):
    before = read_map(map_copy)
    seed_file = sorted(SEEDS.glob("*.txt"))[0]  # its abstracts are all in the map already
    result = run("add", str(map_copy), str(EXTRA), str(seed_file), "--quiet")
    assert result.returncode == 0, result.stderr
    after = read_map(map_copy)  # checksum verified: embeddings and papers still agree
    assert len(after.papers) == len(before.papers) + 4
    assert after.manifest["papers"] == len(after.papers)
    assert after.manifest["unassigned"] == int((after.papers["topic_id"] == -1).sum())
    assert after.papers.iloc[: len(before.papers)]["doc_id"].tolist() == before.papers["doc_id"].tolist()
    mask = added_mask(after.papers)
    assert mask.sum() == 4 and mask[-4:].all()
    new = after.papers[mask]
    assert set(new["title"]) == set(pd.read_csv(EXTRA)["title"])
    assert new["url"].str.startswith("https://").all() and (new["year"] == 2025).all()
    # topics: same ids and names; sizes count the new members
    assert after.topics["topic_id"].tolist() == before.topics["topic_id"].tolist()
    assert after.topics["label"].tolist() == before.topics["label"].tolist()
    counts = after.papers["topic_id"].value_counts()
    assert after.topics["size"].tolist() == [int(counts.get(t, 0)) for t in after.topics["topic_id"]]
    # the OT paper joins the OT topic; each new paper sits on the map near its topic's papers
    ot = new[new["title"].str.contains("Sinkhorn")].iloc[0]
    seed_ot = before.papers[before.papers["abstract"].str.contains("optimal transport", case=False)]
    assert ot["topic_id"] == seed_ot["topic_id"].value_counts().index[0]
    record = after.manifest["added"][-1]
    assert record["papers"] == 4 and record["skipped"] == len(
        read_map(SEED_MAP).papers[lambda p: p["source"] == seed_file.name]
    )
    assert "skipped" in result.stderr and "added 4 paper(s)" in result.stderr
    assert np.allclose(np.linalg.norm(after.embeddings[-4:].astype(np.float32), axis=1), 1, atol=1e-2)

    # Adding the same file again changes nothing and says so.
    unchanged = snapshot(map_copy)
    again = run("add", str(map_copy), str(EXTRA), "--quiet")
    assert again.returncode == 0 and "skipped 4" in again.stderr and "unchanged" in again.stderr
    assert snapshot(map_copy) == unchanged


def test_add_recommends_a_rebuild_when_the_new_papers_fit_no_topic(map_copy, tmp_path):
    off_topic = tmp_path / "off_topic.jsonl"
    texts = [
        "Sourdough bread rises because wild yeast and lactic acid bacteria ferment the flour; we compare "
        "hydration levels and proofing times across twelve bakeries and report crumb structure.",
        "The medieval wool trade linked English monasteries to Flemish weavers; archival tax rolls show how "
        "export duties shaped the prices paid to shepherds over two centuries.",
        "Migratory songbirds refuel at coastal stopover sites; radio tracking of warblers shows that wind "
        "direction, not food supply, decides how long they stay before crossing the sea.",
    ]
    off_topic.write_text("".join(json.dumps({"abstract": t}) + "\n" for t in texts))
    result = run("add", str(map_copy), str(off_topic), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "3 outside every topic" in result.stderr and "recommendation: rebuild" in result.stderr


@pytest.mark.parametrize(
    "make_input, expected",
    [
        (lambda d: d / "missing.csv", "missing.csv"),
        (lambda d: (d / "bad.csv").write_text("title,summary\nx,y\n") and d / "bad.csv", "bad.csv"),
        (
            lambda d: (
                (d / "broken.jsonl").write_text('{"abstract": "ok text here"}\n{oops\n')
                and d / "broken.jsonl"
            ),
            "broken.jsonl",
        ),
    ],
)
def test_add_with_bad_input_is_one_error_line_and_leaves_the_map_untouched(
    map_copy, tmp_path, make_input, expected
):
    before = snapshot(map_copy)
    path = make_input(tmp_path)
    result = run("add", str(map_copy), str(path), "--quiet")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], result.stderr
    assert snapshot(map_copy) == before


def test_add_to_a_folder_that_is_not_a_map_is_one_error_line(tmp_path):
    result = run("add", str(tmp_path), str(EXTRA), "--quiet")
    assert result.returncode == 2 and result.stderr.startswith("error:") and str(tmp_path) in result.stderr
    assert list(tmp_path.iterdir()) == []
