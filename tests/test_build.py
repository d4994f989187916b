"""End to end: real seeds, real packaged model, real UMAP/HDBSCAN/BERTopic."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid

import numpy as np
import pandas as pd
import pytest

from pipeline.cache import cache_dir
from pipeline.commands.build import build_map, is_current
from pipeline.config import BuildConfig
from pipeline.embedding.embed import embed_texts
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT, SEEDS, FakeEncoder

# The themes the owner named, how to recognise a paper about each, and words its topic's name may use
# (adversarial robustness is how LLM safety shows up in these 57 abstracts).
THEMES = {
    "diffusion models": (lambda a: "diffusion model" in a.lower(), ("diffusion",)),
    "LLM safety": (
        lambda a: (
            bool(re.search(r"safety|harmful|jailbreak|attack", a, re.I))
            and bool(re.search(r"\bLLMs?\b|language models?", a, re.I))
        ),
        ("safety", "llm", "attack", "adversarial"),
    ),
    "clustering": (lambda a: "clustering" in a.lower(), ("cluster",)),
    "optimal transport": (lambda a: "optimal transport" in a.lower(), ("transport", "ot")),
}


def test_seed_map_has_the_named_themes_each_mostly_in_one_named_topic(seed_map):
    atlas = read_map(seed_map)
    papers, topics = atlas.papers, atlas.topics
    names = dict(zip(topics["topic_id"], topics["label"]))
    report = []
    for theme, (is_about, words) in THEMES.items():
        members = papers[papers["abstract"].map(is_about)]
        assert len(members) >= 2, theme
        counts = members["topic_id"][members["topic_id"] != -1].value_counts()
        home = counts.index[0]
        report.append(f"{theme}: {counts.iloc[0]}/{len(members)} in {names[home]!r}")
        assert counts.iloc[0] / len(members) >= 0.5, report
        assert any(re.search(rf"\b{w}", names[home], re.I) for w in words), report
    assert (papers["topic_id"] == -1).mean() <= 0.10


def test_seed_map_artifacts_follow_the_contract(seed_map):
    atlas = read_map(seed_map)
    papers, topics, manifest = atlas.papers, atlas.topics, atlas.manifest
    assert len(papers) == 57 and papers["doc_id"].is_unique
    assert {"doc_id", "title", "abstract", "source", "topic_id", "x", "y", "collection"} <= set(
        papers.columns
    )
    assert papers["x"].notna().all() and papers["y"].notna().all()
    assert topics["size"].sum() == (papers["topic_id"] != -1).sum()
    assert set(topics["topic_id"]) == set(papers["topic_id"]) - {-1}
    for row in topics.itertuples():
        assert 0 < len(row.label) <= 60 and not re.match(r"^-?\d+_", row.label)  # not "3_clustering_view"
        assert len(row.keywords) >= 5 and len(row.keywords) == len(row.keyword_weights)
        assert set(row.representative_doc_ids) <= set(
            papers.loc[papers["topic_id"] == row.topic_id, "doc_id"]
        )
    assert atlas.embeddings.shape == (57, 384)
    norms = np.linalg.norm(atlas.embeddings.astype(np.float32), axis=1)
    assert np.allclose(norms, 1, atol=1e-2)
    assert manifest.name == "ICML 2025" and manifest.papers == 57 and manifest.topics == len(topics)
    assert {"embed", "topics", "layout", "total"} <= set(manifest.timings_seconds)
    assert {"bertopic", "umap-learn", "hdbscan", "onnxruntime"} <= set(manifest.versions)
    assert {"unassigned_share", "coherence_npmi", "diversity", "largest_topic_share"} <= set(manifest.quality)
    assert manifest.config.settings["min_topic_size"] >= 2


def test_seed_map_has_themes_stability_and_centroids(seed_map):
    atlas = read_map(seed_map)
    papers, topics, themes, manifest = atlas.papers, atlas.topics, atlas.themes, atlas.manifest
    assert manifest.schema_version == 2 and manifest.themes == len(themes)
    # A 57-paper map reads as a handful of themes, each holding whole topics.
    assert 2 <= len(themes) <= 5 < len(topics)
    assert sorted(sum(themes["topic_ids"], [])) == sorted(topics["topic_id"])
    assert set(topics["theme_id"]) == set(themes["theme_id"])
    for theme in themes.itertuples():
        assert theme.size == topics.loc[topics["topic_id"].isin(theme.topic_ids), "size"].sum()
        assert 0 < len(theme.label) <= 60 and " · " not in theme.label
        members = papers["topic_id"].isin(theme.topic_ids)
        assert members.any() and np.isfinite([theme.x, theme.y]).all()
    assert themes["label"].str.lower().is_unique and topics["label"].str.lower().is_unique
    assert not topics["label"].str.contains(" · ").any()
    assert topics["stability"].between(0, 1).all()
    # The reported seconds are the time the scoring took: within the build's own stability stage.
    assert manifest.stability["runs"] == 10
    assert 0 < manifest.stability["seconds"] <= manifest.timings_seconds["stability"]
    vectors = atlas.embeddings.astype(np.float32)
    for row in topics.itertuples():
        assert row.centroid.shape == (384,) and abs(np.linalg.norm(row.centroid) - 1) < 1e-4
        mean = vectors[papers["topic_id"].to_numpy() == row.topic_id].mean(axis=0)
        assert float(row.centroid @ mean / np.linalg.norm(mean)) > 0.999


def test_stability_can_be_switched_off(seed_map, tmp_path):
    atlas = build_map(
        [SEEDS], tmp_path / "fast", BuildConfig(stability=False), progress=False, log=lambda m: None
    )
    assert atlas.topics["stability"].isna().all() and atlas.manifest.stability["runs"] == 0
    assert "stability" not in atlas.manifest.timings_seconds
    # The flag changes nothing else: same topics and names as the default build.
    assert atlas.topics["label"].tolist() == read_map(seed_map).topics["label"].tolist()


def test_same_input_gives_the_same_map(seed_map, tmp_path, monkeypatch):
    # A fresh cache folder, so UMAP is fitted again rather than read back; it shares only the
    # exported model, embeddings and compiled kernels (no user's cache is touched).
    fresh = tmp_path / "cache"
    fresh.mkdir()
    for name in ("onnx", "embeddings.sqlite", "numba"):
        if (cache_dir() / name).exists():
            (fresh / name).symlink_to(cache_dir() / name)
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(fresh))
    again = build_map([SEEDS], tmp_path / "again", progress=False, log=lambda m: None)
    first = read_map(seed_map)
    assert again.papers["topic_id"].tolist() == first.papers["topic_id"].tolist()
    assert again.topics["label"].tolist() == first.topics["label"].tolist()
    assert np.array_equal(again.papers[["x", "y"]].to_numpy(), first.papers[["x", "y"]].to_numpy())
    assert is_current([SEEDS], tmp_path / "again", BuildConfig())
    assert list((fresh / "reductions").glob("umap10-*.npy"))  # UMAP really ran again, into the fresh cache


def test_a_build_with_one_more_file_embeds_only_the_new_abstract(seed_map, seed_copy, tmp_path):
    nonce = uuid.uuid4().hex[:8]  # a text no earlier run can have cached
    (seed_copy / "extra.csv").write_text(
        'title,abstract,year\nSinkhorn at scale,"We scale entropic optimal transport with low-rank Sinkhorn '
        f'iterations and prove convergence rates for Wasserstein barycenters (run {nonce}).",2025\n'
    )
    atlas = build_map([seed_copy], tmp_path / "grown", progress=False, log=lambda m: None)
    assert atlas.manifest.embedding["computed"] == 1
    assert atlas.manifest.embedding["cached"] == 57
    assert len(atlas.papers) == 58
    assert atlas.papers.loc[atlas.papers["title"] == "Sinkhorn at scale", "year"].item() == 2025


def test_embedding_cache_is_keyed_by_text(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    encoder = FakeEncoder()
    vectors, _ = embed_texts(["a", "b", "a"], encoder=encoder, progress=False)
    assert sorted(encoder.seen) == ["a", "b"]
    expected = dict(zip("abc", FakeEncoder().encode(list("abc")), strict=True))
    assert np.allclose(vectors, [expected[t] for t in "aba"], atol=1e-3)
    encoder.seen.clear()
    vectors, report = embed_texts(["b", "c", "a"], encoder=encoder, progress=False)
    assert encoder.seen == ["c"] and report["cached"] == 2 and vectors.shape == (3, 384)
    assert np.allclose(vectors, [expected[t] for t in "bca"], atol=1e-3)  # each row its own text's vector


def test_a_map_embedded_here_names_its_encoder_as_a_map_from_cached_vectors_does(seed_map, tmp_path):
    """A build that loads the model (no cache) records the name its vectors are cached under, as a
    build from cached vectors does, not the loaded model's own: a rebuild on another machine then
    reuses the vectors the map stores, and themes are named with the shipped research-area vectors,
    not vectors of this CPU."""
    from pipeline.mapfolder.manifest import read_manifest
    from pipeline.naming.areas import shipped_vectors

    cold = build_map([SEEDS], tmp_path / "cold", use_cache=False, progress=False, log=lambda m: None)
    assert cold.manifest.embedding["computed"] == 57
    assert cold.manifest.model.encoder == read_manifest(seed_map).model.encoder
    assert shipped_vectors(cold.manifest.model.encoder) is not None


def test_interrupted_build_leaves_the_previous_map_untouched(seed_map, tmp_path):
    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "build", str(SEEDS), "--out", str(out), "--no-cache", "--quiet"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    for line in process.stderr:  # kill it hard once it is past embedding, in the middle of the work
        if "finding topics" in line:
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=300)
    assert process.returncode == -signal.SIGKILL
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    read_map(out)  # still a valid map


def test_export_command_writes_the_seed_map_as_csv(seed_map, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "export", str(seed_map), "--out", str(tmp_path / "all.csv")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "all.csv", encoding="utf-8-sig")
    assert len(table) == 57 and table["topic"].notna().all()
    assert json.loads((seed_map / "manifest.json").read_text())["papers"] == 57


# ---- races and kills around the swap ----

KILL_AT_SWAP = """
import dataclasses, os, signal, sys
from pipeline.mapfolder import lock, store
from tests.helpers import hostile_map
mode, out = sys.argv[1], sys.argv[2]
real_replace, real_rmtree = os.replace, lock.shutil.rmtree
if mode == "rename":  # a system without an atomic exchange: die between the two renames
    lock._exchange = lambda a, b: False
    calls = []
    def replace(a, b):
        real_replace(a, b)
        calls.append(b)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGKILL)
    lock.os.replace = replace
else:  # die right after the atomic exchange, before the old map is deleted
    def rmtree(path, **kwargs):
        if ".tmp-" in str(path):
            os.kill(os.getpid(), signal.SIGKILL)
        real_rmtree(path, **kwargs)
    lock.shutil.rmtree = rmtree
new = hostile_map()
new.manifest = dataclasses.replace(new.manifest, name="new")
store.write_map(out, new)
"""


def hashes(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize("mode", ["rename", "exchange"])
def test_a_build_killed_at_the_swap_never_loses_the_map(mode, tmp_path, capsys):
    from pipeline.__main__ import main
    from pipeline.mapfolder.lock import recover
    from pipeline.mapfolder.store import write_map
    from tests.helpers import hostile_map

    out = tmp_path / "map"
    write_map(out, hostile_map())
    before = hashes(out)
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, mode, str(out)], cwd=ROOT, capture_output=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    if mode == "rename":
        assert not out.exists() and list(tmp_path.glob(".map.old-*"))  # the moment the swap could not avoid
        assert main(["export", str(out), "--out", str(tmp_path / "x.csv")]) == 2
        assert "puts it back" in capsys.readouterr().err
        # The next build puts the previous map back at its start, even if it then fails.
        assert main(["build", str(tmp_path / "nope.csv"), "--out", str(out)]) == 2
        assert capsys.readouterr().err.splitlines()[0] == (
            f"{out}: restored the previous map, which an interrupted build had left aside"
        )
        assert hashes(out) == before  # the previous map, whole
    else:
        assert read_map(out).manifest.name == "new"  # swapped in whole; the old one left aside
        assert list(tmp_path.glob(".map.tmp-*"))
        recover(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".map.lock",
        "map",
    ]  # the dead build's leftovers gone
    read_map(out)


def test_clean_up_removes_only_dead_builds_staging_folders(tmp_path):
    from pipeline.mapfolder.store import write_map
    from tests.helpers import hostile_map

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    try:
        live = tmp_path / f".map.tmp-{sleeper.pid}-abc"
        gone = tmp_path / f".map.tmp-{dead.stdout.strip()}-def"
        for folder in (live, gone):
            folder.mkdir()
            (folder / "papers.parquet").write_text("half written")
        write_map(tmp_path / "map", hostile_map())
        assert live.exists() and not gone.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_second_build_into_a_locked_map_fails_at_once_naming_the_first(seed_map, tmp_path):
    from pipeline.mapfolder.lock import out_lock

    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    before = hashes(out)
    with out_lock(out):
        result = subprocess.run(
            [sys.executable, "-m", "pipeline", "build", str(SEEDS), "--out", str(out), "--quiet"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {out}: cannot build now: a build (pid {os.getpid()}) is writing this map; "
        "run this build again when it has finished"
    ]
    assert hashes(out) == before


def test_two_builds_at_once_into_one_folder_leave_one_valid_map(seed_map, tmp_path):
    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    command = [sys.executable, "-m", "pipeline", "build", str(SEEDS), "--out", str(out), "--quiet"]
    first, second = (subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2))
    results = [(p.wait(timeout=600), p.stderr.read()) for p in (first, second)]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    for code, err in results:
        if code == 2:
            assert err.strip().splitlines()[-1].startswith(f"error: {out}: cannot build now: a build (pid ")
        assert "Traceback" not in err
    atlas = read_map(out)
    assert len(atlas.papers) == 57
    assert sorted(p.name for p in tmp_path.iterdir()) == [".map.lock", "map"]


def test_a_link_planted_as_a_set_aside_map_is_never_put_back_at_out(tmp_path):
    """A killed build's `.<name>.old-<pid>` is put back at `out`; a symlink planted under that name
    (a shared maps/ folder) must not be: `out` would then name another folder, and the next writer
    would write into it."""
    from pipeline.mapfolder.lock import recover
    from pipeline.mapfolder.store import write_map
    from tests.helpers import hostile_map

    other = tmp_path / "someone-else"
    write_map(other, hostile_map())
    before = hashes(other)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    planted = tmp_path / f".map.old-{int(dead.stdout)}"
    planted.symlink_to(other, target_is_directory=True)
    out = tmp_path / "map"
    assert recover(out) == []
    assert not out.exists() and not out.is_symlink()
    assert hashes(other) == before
