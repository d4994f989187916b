"""Rebuilds that keep what still holds: settings carried, old papers stay put, `--refit` for a clean
slate, and the topic count the build chose reported in the manifest."""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.commands.build import build_map
from pipeline.config import BuildConfig, topic_count_for
from pipeline.mapfolder.store import read_map, write_map
from pipeline.modelling.neighbours import neighbour_graph
from pipeline.modelling.topics import choose_topic_count, cluster_space, topic_stability
from tests.helpers import ROOT, SEEDS, FakeEncoder, quiet, synthetic_corpus

EXTRA = ROOT / "tests" / "fixtures" / "extra_abstracts.csv"


def moved(before, after) -> np.ndarray:
    """Displacement of each old paper as a share of the old map's bounding-box diagonal."""
    old = before.papers.set_index("doc_id")[["x", "y"]]
    new = after.papers.set_index("doc_id").loc[old.index, ["x", "y"]]
    extent = np.linalg.norm(old.max().to_numpy() - old.min().to_numpy())
    return np.linalg.norm(new.to_numpy() - old.to_numpy(), axis=1) / extent


@pytest.fixture(scope="module")
def rebuilds(seed_map, tmp_path_factory):
    """The seeds plus four abstracts, rebuilt on the seed map by default and with --refit."""
    folder = tmp_path_factory.mktemp("rebuilds")
    config = BuildConfig(min_topic_size=None, stability=False)
    carried = build_map(
        [SEEDS, EXTRA], folder / "carried", config, previous=seed_map, progress=False, log=quiet
    )
    refitted = build_map(
        [SEEDS, EXTRA], folder / "refit", config, previous=seed_map, refit=True, progress=False, log=quiet
    )
    return read_map(seed_map), carried, refitted


def test_a_rebuild_carries_the_previous_settings_and_refit_does_not(rebuilds):
    before, carried, refitted = rebuilds
    assert carried.manifest.lineage.refit is False
    settings = carried.manifest.lineage.carried_settings
    assert settings["min_topic_size"] == before.manifest.config.settings["min_topic_size"]
    assert (
        carried.manifest.config.settings["min_topic_size"]
        == before.manifest.config.settings["min_topic_size"]
    )
    assert refitted.manifest.lineage.refit is True and refitted.manifest.lineage.carried_settings == {}


def test_old_papers_stay_put_on_a_rebuild_and_move_on_a_refit(rebuilds):
    before, carried, refitted = rebuilds
    kept = moved(before, carried)
    assert np.median(kept) < 0.08
    assert np.median(kept) < np.median(moved(before, refitted)) / 2
    # old papers keep their topic ids at least as well as a fresh fit does
    old = before.papers.set_index("doc_id")["topic_id"]

    def same(after) -> float:
        return float((after.papers.set_index("doc_id").loc[old.index, "topic_id"] == old).mean())

    assert same(carried) >= max(0.8, same(refitted))


def test_the_manifest_reports_the_topic_count_the_build_cut(rebuilds):
    _, _, fresh = rebuilds
    quality = fresh.manifest.quality
    # 61 papers: too few to choose a count by re-clustering agreement; the aim is cut as it is.
    assert quality["agreement_at_nearby_topic_counts"] == {}
    assert quality["chosen_topic_count"] == fresh.manifest.config.settings["n_topics"] == topic_count_for(61)
    assert fresh.manifest.topics <= quality["chosen_topic_count"]  # small clusters are dissolved


def test_the_topic_count_is_the_one_whose_re_clusterings_agree_best():
    """Six clear groups: of the counts 5-8 tried, six is the one every seed draws alike."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 10)) * 10
    points = np.concatenate([c + rng.normal(size=(100, 10)) for c in centres])
    config = replace(BuildConfig().resolve(600), n_topics=6)
    count, agreement = choose_topic_count(points, config)
    assert count == 6 and agreement[6] == max(agreement.values()) > 0.99
    assert sorted(agreement) == [5, 6, 7, 8]


def test_refit_is_a_documented_build_option(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert "--refit" in result.stdout and "afresh" in result.stdout


def test_a_rebuild_into_the_same_folder_uses_the_map_there_and_is_a_fixed_point(seed_map, tmp_path):
    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    before = read_map(out)
    for _ in range(2):  # twice in a row: the same map each time
        lines: list[str] = []
        after = build_map([SEEDS], out, progress=False, log=lines.append)
        assert after.manifest.lineage.refit is False
        assert any("nothing changed in the papers or options" in line for line in lines)
        assert after.papers["topic_id"].tolist() == before.papers["topic_id"].tolist()
        assert moved(before, read_map(out)).max() <= 1e-4
        columns = ["topic_id", "label", "theme_id", "stability"]
        assert after.topics[columns].to_dict("list") == before.topics[columns].to_dict("list")
        assert (
            after.themes[["theme_id", "label"]].values.tolist()
            == before.themes[["theme_id", "label"]].values.tolist()
        )


def test_old_papers_outside_a_fit_sample_keep_their_previous_topic_where_the_sample_found_it():
    from pipeline.modelling.sample_fit import assign_rest

    # Two directions; papers 0-3 are the sample. Paper 4 (old, previously topic 7) points between
    # the two topics but leans towards topic 1's direction: a vote alone would put it in topic 1.
    vectors = np.array([[1, 0], [1, 0.05], [0, 1], [0.05, 1], [0.6, 0.8], [0.1, 1]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = np.array([0, 1, 2, 3])
    sample_labels = np.array([0, 0, 1, 1])
    targets = np.array([7, 7, 9, 9, 7, -1])  # paper 5 is new
    voted = assign_rest(vectors, rows, sample_labels, k=2)
    kept = assign_rest(vectors, rows, sample_labels, k=2, targets=targets)
    assert voted[4] == 1 and kept[4] == 0  # topic 0 is topic 7 again, so the old paper stays with it
    assert kept[5] == voted[5] == 1  # a new paper is voted in as always


def test_themes_keep_their_ids_across_a_rebuild_and_the_manifest_says_what_became_of_each(rebuilds):
    before, carried, _ = rebuilds
    old = before.papers.set_index("doc_id")["topic_id"].map(
        dict(zip(before.topics["topic_id"], before.topics["theme_id"]))
    )
    new = carried.papers.set_index("doc_id")["topic_id"].map(
        dict(zip(carried.topics["topic_id"], carried.topics["theme_id"]))
    )
    kept = float((new.loc[old.index] == old).mean())
    assert kept >= 0.8, kept
    records = carried.manifest.lineage.themes
    assert {r["theme_id"] for r in records if r["status"] != "gone"} == set(carried.themes["theme_id"])
    for record in records:
        if record["status"] == "kept":
            assert (
                carried.themes.set_index("theme_id").loc[record["theme_id"], "label"]
                == record["previous_label"]
            )
    previous_ids = set(before.themes["theme_id"])
    assert {r["theme_id"] for r in records if r["status"] in ("kept", "renamed", "gone")} <= previous_ids
    assert carried.manifest.lineage.next_theme_id > max(previous_ids | set(carried.themes["theme_id"])) - 1


# ---- a rebuild that changes nothing changes nothing (issue 35), on a synthetic corpus ----


@pytest.fixture(scope="module")
def synthetic_rebuilds(tmp_path_factory):
    """A 300-paper synthetic map built fresh, then rebuilt twice into its folder from the same file,
    then rebuilt with 30 more papers: (maps, build logs)."""
    folder = tmp_path_factory.mktemp("synthetic")
    table = synthetic_corpus(330, seed=11)
    base, grown = folder / "base.csv", folder / "grown.csv"
    table.iloc[:300].to_csv(base, index=False)
    table.to_csv(grown, index=False)
    encoder, maps, logs = FakeEncoder(), [], []
    for inputs, out in (([base], "map"), ([base], "map"), ([base], "map"), ([grown], "grown")):
        lines: list[str] = []
        previous = folder / "map" if out == "grown" else None
        maps.append(
            build_map(
                inputs, folder / out, encoder=encoder, previous=previous, progress=False, log=lines.append
            )
        )
        logs.append(lines)
    return maps, logs


def test_rebuilding_the_same_papers_keeps_the_map_as_it_was(synthetic_rebuilds):
    (first, second, third, _), logs = synthetic_rebuilds
    assert not any("nothing changed" in line for line in logs[0])
    for rebuilt, lines in ((second, logs[1]), (third, logs[2])):
        assert any(
            "nothing changed in the papers or options: topics and layout kept" in line for line in lines
        ), lines
        before = first.papers.set_index("doc_id")
        after = rebuilt.papers.set_index("doc_id").loc[before.index]
        assert after["topic_id"].tolist() == before["topic_id"].tolist()
        span = np.linalg.norm(before[["x", "y"]].max().to_numpy() - before[["x", "y"]].min().to_numpy())
        shift = np.linalg.norm(after[["x", "y"]].to_numpy() - before[["x", "y"]].to_numpy(), axis=1)
        assert shift.max() <= 1e-4 * span
        columns = ["topic_id", "label", "theme_id", "keywords", "size"]
        assert rebuilt.topics[columns].to_dict("list") == first.topics[columns].to_dict("list")
        np.testing.assert_allclose(rebuilt.topics["stability"], first.topics["stability"], atol=0.05)
        assert (
            rebuilt.themes[["theme_id", "label"]].values.tolist()
            == first.themes[["theme_id", "label"]].values.tolist()
        )
        assert rebuilt.manifest.lineage.refit is False
        assert set(rebuilt.lineage["status"]) == {"kept"}


EMBEDDINGS_DAMAGE = {
    "empty": lambda path: path.write_bytes(b""),
    "cut short": lambda path: path.write_bytes(path.read_bytes()[:200]),
    "a named pipe": lambda path: (path.unlink(), os.mkfifo(path)),
    "a link to a device": lambda path: (path.unlink(), path.symlink_to("/dev/zero")),
    "a folder": lambda path: (path.unlink(), path.mkdir()),
}


@pytest.mark.parametrize("damage", sorted(EMBEDDINGS_DAMAGE))
def test_a_rebuild_of_the_same_papers_over_damaged_vectors_notes_them_and_builds_afresh(
    damage, synthetic_rebuilds, tmp_path
):
    """The shortcut for an unchanged rebuild reads the previous vectors as a first read does: damaged
    ones are noted, the abstracts embedded again and the map fitted, never a traceback or a hang."""
    (first, *_), _ = synthetic_rebuilds
    base = tmp_path / "base.csv"
    synthetic_corpus(330, seed=11).iloc[:300].to_csv(base, index=False)
    out = tmp_path / "map"
    write_map(out, first)
    EMBEDDINGS_DAMAGE[damage](out / "embeddings.npy")
    lines: list[str] = []
    result: list = []
    worker = threading.Thread(
        target=lambda: result.append(
            build_map([base], out, encoder=FakeEncoder(), progress=False, log=lines.append)
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=300)
    if worker.is_alive():  # waiting on the pipe: give it an end so the thread can finish
        os.close(os.open(out / "embeddings.npy", os.O_WRONLY | os.O_NONBLOCK))
    assert result, f"the build hung or failed: {lines}"
    assert any("embeddings.npy" in line and "embedded again" in line for line in lines), lines
    assert not any("nothing changed" in line for line in lines), lines
    rebuilt = read_map(out)
    assert len(rebuilt.papers) == 300 and rebuilt.embeddings.shape == (300, 384)


def test_a_rebuild_with_new_papers_fits_again_and_scores_stability_on_the_unsupervised_reduction(
    synthetic_rebuilds,
):
    (first, _, _, grown), logs = synthetic_rebuilds
    assert not any("nothing changed" in line for line in logs[3])
    assert any("rebuilding on the previous map" in line for line in logs[3])
    # Stability compares like with like: re-clusterings of the unsupervised reduction, as on the
    # first build, not of one the previous topics supervised (where re-clusterings agree trivially
    # and every topic scores about 1.00).
    config = BuildConfig(**grown.manifest.config.settings)
    vectors = grown.embeddings.astype(np.float32)
    unsupervised = cluster_space(vectors, config, neighbour_graph(vectors, config.n_neighbors))
    scores, _ = topic_stability(unsupervised, vectors, grown.papers["topic_id"].to_numpy(), config)
    stored = grown.topics.set_index("topic_id")["stability"]
    assert stored.to_dict() == pytest.approx(scores, abs=1e-9)
    assert stored.median() < 0.99  # the rebuild scored most topics 1.00


def test_a_kept_topic_whose_content_moved_is_named_again_and_its_curated_name_flagged(
    synthetic_rebuilds, tmp_path
):
    """Issue 35 ("Flow" kept its name while its papers became relighting): the previous map says
    topic 0 was "Flow" about flow and motion; its papers now write other words, so the rebuild
    names it afresh, says so in the log, and flags a person's rename of it for review."""
    from pipeline.mapfolder.curation import Edit, read_curation, write_curation
    from pipeline.mapfolder.files import TOPICS

    (first, *_), _ = synthetic_rebuilds
    out = tmp_path / "map"
    base = Path(first.manifest.inputs[0])
    shutil.copytree(base.parent / "map", out)
    table = pd.read_parquet(out / TOPICS)
    table["label"] = table["label"].where(table["topic_id"] != 0, "Flow")
    # Topic 2's name came from a map before this one (its content stayed): an unchanged rebuild keeps it.
    table["label"] = table["label"].where(table["topic_id"] != 2, "A name from an earlier build")
    table["keywords"] = [
        ["flow", "optical", "motion", "frames"] if t == 0 else list(k)
        for t, k in zip(table["topic_id"], table["keywords"], strict=True)
    ]
    table.to_parquet(out / TOPICS, index=False)
    write_curation(
        out, [Edit(1, "rename", topic=0, name="Flow (curated)"), Edit(2, "rename", topic=1, name="Fine")]
    )
    lines: list[str] = []
    rebuilt = build_map(
        [base],
        out,
        encoder=FakeEncoder(),
        progress=False,
        log=lines.append,
    )
    names = dict(zip(rebuilt.topics["topic_id"], rebuilt.topics["label"], strict=True))
    assert names[0] == dict(zip(first.topics["topic_id"], first.topics["label"], strict=True))[0] != "Flow"
    assert names[2] == "A name from an earlier build"
    assert any("topic 0 “Flow” is now" in line and "content moved (0 of 4 keywords" in line for line in lines)
    review = {e.id: e.review for e in read_curation(out)}
    assert "content moved" in review[1] and review[2] is None
    assert (
        rebuilt.lineage.set_index("topic_id").loc[0, "previous_label"] == "Flow"
    )  # the change report's "Renamed from"


def test_a_previous_setting_no_build_could_be_given_is_not_carried_and_is_noted():
    # a previous map's min_topic_size 1 (written by hand or an older version) is no reason to stop a
    # rebuild with an error about --min-topic-size, an option the user never gave
    from pipeline.commands.build import carry_previous
    from pipeline.modelling.lineage import PreviousMap

    papers = pd.DataFrame({"doc_id": [f"d{i}" for i in range(40)]})
    previous = PreviousMap(
        topic_of={f"d{i}": i % 2 for i in range(40)},
        topics=pd.DataFrame({"topic_id": [0, 1], "label": ["A", "B"]}),
        centroids={},
        next_topic_id=2,
        config={"min_topic_size": 1, "min_samples": 2, "n_neighbors": 9},
    )
    config = BuildConfig()
    said: list[str] = []
    resolved, carried = carry_previous(
        config, config.resolve(len(papers)), previous, papers, refit=False, log=said.append
    )
    assert carried.settings == {"min_samples": 2, "n_neighbors": 9}
    assert resolved.min_topic_size == config.resolve(len(papers)).min_topic_size
    assert any("min_topic_size 1 is not carried" in line for line in said), said


def test_the_change_line_adds_up_to_the_previous_map(synthetic_rebuilds):
    """Issue 66: "5 grown, 15 split, 3 merged, 3 gone" of a 15-topic map counted pieces, not topics."""
    (first, _, _, grown), logs = synthetic_rebuilds
    [line] = [line for line in logs[3] if line.startswith("topics matched to the previous map: ")]
    assert f"(of {len(first.topics)} topics)" in line, line
    counted = re.findall(r"(\d+) (?:kept|grown|shrunk|split|merged|gone)\b", line.split("(of")[0])
    assert sum(map(int, counted)) == len(first.topics), line


def test_a_rebuild_after_edits_counts_the_map_as_read_and_one_that_changes_nothing_keeps_the_change_story(
    synthetic_rebuilds, tmp_path
):
    """Issue 66: after a merge and a hide the build's last line counted the topics as built; and an
    identical rebuild replaced the last real change report by "all kept"."""
    from app.loaders import MapKey, cached_changes
    from pipeline.__main__ import main
    from pipeline.mapfolder.store import read_lineage
    from pipeline.modelling.lineage import change_counts

    (_, _, _, grown), logs = synthetic_rebuilds
    assert set(grown.lineage["status"]) - {"kept"}, "the grown map's build changed topics"
    out = tmp_path / "map"
    shutil.copytree(Path(grown.manifest.inputs[0]).parent / "grown", out)
    first, second, third = grown.topics["topic_id"].astype(int).tolist()[:3]
    assert main(["curate", str(out), "merge", str(second), "--into", str(first)]) == 0
    assert main(["curate", str(out), "hide", str(third)]) == 0
    lines: list[str] = []
    rebuilt = build_map(grown.manifest.inputs, out, encoder=FakeEncoder(), progress=False, log=lines.append)
    assert any("nothing changed" in line for line in lines)
    shown = read_map(out)  # what the app and the export read: the edits applied
    unassigned = int((shown.papers["topic_id"] == -1).sum())
    assert len(shown.topics) == len(grown.topics) - 2 and unassigned > int(
        (grown.papers["topic_id"] == -1).sum()
    )
    assert lines[-2].startswith(
        f"{len(shown.topics)} topics in {len(shown.themes)} themes, {unassigned} of {len(shown.papers)} papers unassigned"
    ), lines[-2]
    # The change report is the grown build's still, in the map folder and on the page.
    kept = read_lineage(out)
    assert (
        kept[["topic_id", "status"]].values.tolist() == grown.lineage[["topic_id", "status"]].values.tolist()
    )
    assert rebuilt.manifest.lineage.previous == grown.manifest.lineage.previous
    _, _, summary = cached_changes(MapKey.of("map", out))
    assert summary == change_counts(grown.lineage) and summary != change_counts(rebuilt_kept(kept))


def rebuilt_kept(lineage: pd.DataFrame) -> pd.DataFrame:
    """The lineage an identical rebuild finds: every current topic kept."""
    current = lineage[lineage["status"] != "gone"]
    return current.assign(status="kept", previous_topic_ids=[[t] for t in current["topic_id"]])


def test_a_rebuild_says_when_the_name_given_earlier_no_longer_fits_its_years(tmp_path):
    """Issue 66: a map named "COLM 2024" kept the name on 2024 and 2025 papers without saying so."""
    table = synthetic_corpus(160, seed=5).assign(year=[2024] * 100 + [2025] * 60)
    table.iloc[:100].to_csv(tmp_path / "y2024.csv", index=False)
    table.to_csv(tmp_path / "both.csv", index=False)
    out, encoder = tmp_path / "map", FakeEncoder()
    build_map([tmp_path / "y2024.csv"], out, encoder=encoder, name="COLM 2024", progress=False, log=quiet)
    lines: list[str] = []
    rebuilt = build_map([tmp_path / "both.csv"], out, encoder=encoder, progress=False, log=lines.append)
    assert rebuilt.manifest.name == "COLM 2024"  # a given name stays...
    note = "note: the map keeps the name “COLM 2024” given earlier, but its papers are from 2024–2025"
    assert any(line.startswith(note) for line in lines), lines  # ...and the build says it no longer fits
    assert any(n.startswith(note) for n in read_map(out).manifest.notes)
    lines.clear()
    build_map(
        [tmp_path / "y2024.csv"],
        tmp_path / "again",
        encoder=encoder,
        name="COLM 2024",
        progress=False,
        log=lines.append,
    )
    assert not any("given earlier" in line for line in lines)
