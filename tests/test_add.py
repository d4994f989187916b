"""`python -m pipeline add`: new abstracts placed on a real map, rewritten atomically; bad input leaves it alone."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import pytest

from pipeline.mapfolder.files import SEARCH_INDEX
from pipeline.mapfolder.search_index import index_for
from pipeline.mapfolder.store import added_mask, read_map
from tests.helpers import ROOT, SEEDS

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


@pytest.mark.slow  # the real model (add embeds with it)
def test_add_places_new_abstracts_marks_them_and_keeps_the_map_valid(map_copy):
    before = read_map(map_copy)
    seed_file = sorted(SEEDS.glob("*.txt"))[0]  # its abstracts are all in the map already
    result = run("add", str(map_copy), str(EXTRA), str(seed_file), "--quiet")
    assert result.returncode == 0, result.stderr
    after = read_map(map_copy)  # checksum verified: embeddings and papers still agree
    assert len(after.papers) == len(before.papers) + 4
    assert after.manifest.papers == len(after.papers)
    assert after.manifest.unassigned == int((after.papers["topic_id"] == -1).sum())
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
    record = after.manifest.added[-1]
    assert record.papers == 4 and record.skipped == len(
        read_map(SEED_MAP).papers[lambda p: p["source"] == seed_file.name]
    )
    assert "skipped" in result.stderr and "added 4 paper(s)" in result.stderr
    assert np.allclose(np.linalg.norm(after.embeddings[-4:].astype(np.float32), axis=1), 1, atol=1e-2)
    # the map's search index is in step: the new papers are found by their words
    index = index_for(map_copy, after.papers)
    assert index.path == map_copy / SEARCH_INDEX
    text = after.papers["title"] + " " + after.papers["abstract"]
    holding = set(np.flatnonzero(text.str.contains(r"\bsinkhorn\b", case=False)).tolist())
    assert set(index.search("Sinkhorn").rows.tolist()) == holding and len(before.papers) in holding

    # Adding the same file again changes nothing and says so.
    unchanged = snapshot(map_copy)
    again = run("add", str(map_copy), str(EXTRA), "--quiet")
    assert again.returncode == 0 and "skipped 4" in again.stderr and "unchanged" in again.stderr
    assert snapshot(map_copy) == unchanged


@pytest.mark.slow  # the real model (add embeds with it)
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


# ---- every writer of a map folder holds its lock from read to swap: real concurrent processes ----

WORDS = [
    "sparse",
    "kernel",
    "graph",
    "policy",
    "transport",
    "diffusion",
    "tensor",
    "manifold",
    "prior",
    "gradient",
    "sampler",
    "token",
]


def fresh_abstracts(path, n: int, tag: str) -> None:
    """`n` abstracts no cache has seen (a random number in each) as a CSV at `path`, titled "<tag> <i>"."""
    rng = np.random.default_rng()
    salt = rng.integers(1 << 62)
    texts = [
        f"We study {' '.join(rng.choice(WORDS, 6))} methods for problem {salt}-{i}. "
        f"Our {tag} approach improves {' '.join(rng.choice(WORDS, 4))} on {i % 9 + 2} benchmarks."
        for i in range(n)
    ]
    pd.DataFrame({"title": [f"{tag} {i}" for i in range(n)], "abstract": texts}).to_csv(path, index=False)


@contextlib.contextmanager
def paused(process):
    """`process` stopped (SIGSTOP) while the block runs: a writer that has taken the lock and is
    slow to finish, whatever the machine's speed; it carries on (SIGCONT) afterwards."""
    os.kill(process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(process.pid, signal.SIGCONT)


def start(*args: str):
    """A CLI process whose stderr goes to a file (a pipe nobody reads could stall a chatty add)."""
    err = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed with the process, in finish)
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True
    )
    process.err = err
    return process


def finish(process) -> tuple[int, str]:
    process.wait(timeout=600)
    with process.err:
        process.err.seek(0)
        return process.returncode, process.err.read()


def wait_for_lock(folder, command: str, process, timeout: float = 120) -> None:
    """Until `process` holds the folder's lock as `command` (its pid and command are in the lock file)."""
    from pipeline.mapfolder.lock import lock_path

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_path(folder).exists() and lock_path(folder).read_text().split() == [
            str(process.pid),
            command,
        ]:
            return
        assert process.poll() is None, finish(process)
        time.sleep(0.05)
    raise AssertionError(f"{command} never took the lock")


def titles_in(folder) -> set[str]:
    return set(read_map(folder).papers["title"])


@pytest.mark.slow  # the real model (add embeds with it)
def test_an_add_during_a_slow_add_is_refused_naming_add_and_no_paper_is_lost(map_copy, tmp_path):
    fresh_abstracts(tmp_path / "slow.csv", 400, "slow")
    slow = start("add", str(map_copy), str(tmp_path / "slow.csv"), "--quiet")
    wait_for_lock(map_copy, "add", slow)  # it has read the map (or is about to) and embeds
    with paused(slow):
        quick = run("add", str(map_copy), str(EXTRA), "--quiet")
    assert quick.returncode == 2, quick.stderr
    assert quick.stderr.strip().splitlines() == [
        f"error: {map_copy}: cannot add now: an add (pid {slow.pid}) is writing this map; "
        "run this add again when it has finished"
    ]
    code, err = finish(slow)
    assert code == 0, err
    again = run("add", str(map_copy), str(EXTRA), "--quiet")
    assert again.returncode == 0, again.stderr
    titles = titles_in(map_copy)
    assert {f"slow {i}" for i in range(400)} <= titles and set(pd.read_csv(EXTRA)["title"]) <= titles
    assert len(read_map(map_copy).papers) == 57 + 400 + 4


@pytest.mark.slow  # the real model (add embeds with it)
@pytest.mark.parametrize("trial", range(3))
def test_two_quick_adds_started_together_lose_nothing(map_copy, tmp_path, trial):
    files = []
    for tag in ("left", "right"):
        fresh_abstracts(tmp_path / f"{tag}.csv", 12, tag)
        files.append(tmp_path / f"{tag}.csv")
    processes = [start("add", str(map_copy), str(path), "--quiet") for path in files]
    results = [finish(p) for p in processes]
    titles = titles_in(map_copy)
    assert sorted(code for code, _ in results) in ([0, 0], [0, 2]), results
    for (code, err), tag in zip(results, ("left", "right"), strict=True):
        if code == 0:  # an add that said it added its papers did
            assert {f"{tag} {i}" for i in range(12)} <= titles, (tag, err)
        else:
            assert len(err.strip().splitlines()) == 1 and "cannot add now: an add (pid" in err, err
            assert not {f"{tag} {i}" for i in range(12)} & titles
    assert len(read_map(map_copy).papers) == 57 + 12 * sum(code == 0 for code, _ in results)


@pytest.mark.slow  # the real model (add embeds with it)
def test_a_build_during_an_add_and_an_add_during_a_build_each_refuse_naming_themselves(map_copy, tmp_path):
    fresh_abstracts(tmp_path / "slow.csv", 30, "slow")
    slow = start("add", str(map_copy), str(tmp_path / "slow.csv"), "--quiet")
    wait_for_lock(map_copy, "add", slow)
    with paused(slow):
        build = run("build", str(SEEDS), "--out", str(map_copy), "--quiet")
    assert build.returncode == 2
    assert build.stderr.strip().splitlines() == [
        f"error: {map_copy}: cannot build now: an add (pid {slow.pid}) is writing this map; "
        "run this build again when it has finished"
    ]
    assert finish(slow)[0] == 0
    assert {f"slow {i}" for i in range(30)} <= titles_in(map_copy)

    inputs = tmp_path / "inputs.csv"
    read_map(SEED_MAP).papers[["title", "abstract"]].to_csv(inputs, index=False)
    rebuild = start("build", str(inputs), "--out", str(map_copy), "--quiet", "--no-stability")
    wait_for_lock(map_copy, "build", rebuild)
    with paused(rebuild):
        add = run("add", str(map_copy), str(EXTRA), "--quiet")
    assert add.returncode == 2
    assert add.stderr.strip().splitlines() == [
        f"error: {map_copy}: cannot add now: a build (pid {rebuild.pid}) is writing this map; "
        "run this add again when it has finished"
    ]
    code, err = finish(rebuild)
    assert code == 0, err
    assert "kept 30 papers added since the last build" in err
    assert {f"slow {i}" for i in range(30)} <= titles_in(map_copy)  # the rebuild kept what was added
    assert len(read_map(map_copy).papers) == 57 + 30


@pytest.mark.slow  # the real model (add embeds with it)
def test_the_rebuild_add_recommends_keeps_the_added_papers(map_copy, tmp_path):
    off_topic = tmp_path / "off.csv"
    fresh_abstracts(off_topic, 30, "added")
    added = run("add", str(map_copy), str(off_topic), "--quiet")
    assert added.returncode == 0, added.stderr
    advice = re.search(r"recommendation: rebuild the map \(`([^`]+)`", added.stderr)
    assert advice, added.stderr
    command = shlex.split(advice.group(1))
    assert command[:4] == ["python", "-m", "pipeline", "build"] and "--drop-added" not in command
    assert command[-2:] == ["--out", str(map_copy)]
    rebuilt = run(
        *command[3:], "--quiet", "--no-stability"
    )  # the command as advised, run from the repository
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "kept 30 papers added since the last build" in rebuilt.stderr
    atlas = read_map(map_copy)
    assert {f"added {i}" for i in range(30)} <= set(atlas.papers["title"]) and len(atlas.papers) == 57 + 30
    assert atlas.papers["via_add"].sum() == 30 and not atlas.papers.get("added", pd.Series([False])).any()


def test_a_writer_that_meets_a_lock_just_taken_names_its_holder_or_says_it_cannot(tmp_path):
    """Two writers started together: the second may find the lock taken before the first has
    written its pid and command into the file. It waits for the name, and never guesses one."""
    import fcntl
    import threading

    from pipeline import UserError
    from pipeline.mapfolder.lock import lock_path, out_lock

    out = tmp_path / "map"
    out.mkdir()
    fd = os.open(lock_path(out), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, the file still empty
    try:
        writer = threading.Timer(0.3, lambda: os.pwrite(fd, b"4242 add\n", 0))
        writer.start()
        with pytest.raises(UserError) as named, out_lock(out, command="add"):
            pass
        writer.join()
        assert str(named.value) == (
            f"{out}: cannot add now: an add (pid 4242) is writing this map; run this add again when it has finished"
        )
        os.ftruncate(fd, 0)  # a holder that never says who it is
        with pytest.raises(UserError) as unnamed, out_lock(out, command="build"):
            pass
        assert "cannot build now: another build or add is writing this map" in str(unnamed.value)
    finally:
        os.close(fd)
