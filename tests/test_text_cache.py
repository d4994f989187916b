"""Each abstract's text read once (`pipeline.naming.text_cache`): the same map with a cold or a warm
cache, a damaged entry read again from the text, and the build's stage table."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading

import pytest

from pipeline._fastimport import import_topic_libraries
from pipeline.commands.build import build_map
from pipeline.ingest import ingest
from pipeline.naming import phrases, text_cache
from pipeline.naming.phrases import count_phrases, read_text
from pipeline.naming.text_cache import CACHE_FILE, paper_texts
from tests.helpers import SEEDS, FakeEncoder, replace_packaged_model

MAP_FILES = ("topics.parquet", "themes.parquet")


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache folder of this test's own: the text cache starts cold."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def reads(monkeypatch):
    """The texts `read_text` reads, in order."""
    seen: list[str] = []

    def counting(text: str):
        seen.append(text)
        return read_text(text)

    monkeypatch.setattr(text_cache, "read_text", counting)
    return seen


def entries(cache) -> dict[bytes, bytes]:
    with sqlite3.connect(cache / CACHE_FILE) as connection:
        return dict(connection.execute("SELECT key, entry FROM texts"))


def damage(cache, how) -> None:
    """Replace every stored entry by `how(entry)`."""
    with sqlite3.connect(cache / CACHE_FILE) as connection:
        rows = list(connection.execute("SELECT rowid, entry FROM texts"))
        connection.executemany("UPDATE texts SET entry = ? WHERE rowid = ?", [(how(e), r) for r, e in rows])


def build(out, log=lambda message: None):
    return build_map([SEEDS], out, encoder=FakeEncoder(), progress=False, log=log)


def test_a_warm_text_cache_reads_no_text_again_and_gives_the_same_map_byte_for_byte(
    own_cache, reads, tmp_path
):
    documents = ingest([SEEDS]).papers["abstract"].tolist()
    build(tmp_path / "cold")
    assert sorted(reads) == sorted(documents)  # the cold build read each text once
    assert len(entries(own_cache)) == len(documents)
    reads.clear()
    build(tmp_path / "warm")
    assert reads == []  # the warm build read none again
    for name in MAP_FILES:
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name


def test_a_damaged_entry_is_read_again_from_the_text_never_trusted(own_cache, reads, tmp_path):
    build(tmp_path / "cold")
    stored = entries(own_cache)
    damage(own_cache, lambda entry: entry[: len(entry) // 2])  # truncated
    reads.clear()
    build(tmp_path / "again")
    assert len(reads) == len(stored)  # every damaged entry was read again from its text
    assert entries(own_cache) == stored  # and replaced by a good one
    for name in MAP_FILES:
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name


@pytest.mark.parametrize(
    "how",
    [
        lambda entry: entry[:-1],
        lambda entry: b"",
        lambda entry: b"\x00garbage",
        lambda entry: entry[:30] + bytes([entry[30] ^ 0xFF]) + entry[31:],
        lambda entry: text_cache.zlib.compress(b'[["a"], [], [], [["w", "many"]]]'),
        lambda entry: text_cache.zlib.compress(b'{"phrases": []}'),
        lambda entry: text_cache.zlib.compress(b'[["a"], "ot", [], []]'),
    ],
    ids=[
        "last byte cut",
        "empty",
        "garbage",
        "a byte flipped",
        "mistyped count",
        "not a list",
        "acronyms not a list",
    ],
)
def test_an_entry_that_does_not_read_back_whole_is_read_again(own_cache, reads, how):
    documents = ingest([SEEDS]).papers["abstract"].tolist()[:5]
    first = paper_texts(documents)
    damage(own_cache, how)
    reads.clear()
    assert paper_texts(documents) == first and len(reads) == len(documents)
    reads.clear()
    assert paper_texts(documents) == first and reads == []  # the good entries were stored again


def test_cached_counts_are_the_counts_of_the_texts(own_cache):
    documents = ingest([SEEDS]).papers["abstract"].tolist()
    paper_texts(documents)  # the cache is warm
    cached, direct = count_phrases(documents, texts=paper_texts(documents)), count_phrases(documents)
    assert cached.phrases.tolist() == direct.phrases.tolist()
    assert (cached.matrix != direct.matrix).nnz == 0
    assert cached.acronyms == direct.acronyms and cached.spelling == direct.spelling


def test_changed_reading_rules_read_every_text_again(own_cache, reads, monkeypatch):
    documents = ingest([SEEDS]).papers["abstract"].tolist()[:5]
    paper_texts(documents)
    reads.clear()
    monkeypatch.setattr(text_cache, "rules_digest", lambda: "other rules")
    paper_texts(documents)
    assert len(reads) == len(documents)
    assert phrases.__file__  # the rules digest covers phrases.py (see `rules_digest`)


def test_a_build_prints_and_records_its_seconds_by_stage(own_cache, tmp_path):
    said: list[str] = []
    atlas = build(tmp_path / "map", said.append)
    table = said[-3]  # then the summary and how to open the map
    stages = ["ingest", "embed", "topics", "phrases", "topic names", "stability", "themes", "sibling names"]
    stages += ["layout", "evaluate"]
    assert table.startswith("seconds by stage: ")
    shown = dict(part.rsplit(" ", 1) for part in table.removeprefix("seconds by stage: ").split(" · "))
    assert list(shown) == [*stages, "write", "total"]
    recorded = atlas.manifest.timings_seconds
    assert list(recorded) == [*stages, "total"]
    assert all(seconds >= 0 for seconds in recorded.values())
    assert recorded["total"] == pytest.approx(sum(v for k, v in recorded.items() if k != "total"), abs=0.01)
    assert {stage: float(shown[stage]) for stage in stages} == pytest.approx(
        {stage: recorded[stage] for stage in stages}, abs=0.051
    )


def test_a_neighbour_search_is_kept_in_the_cache_and_a_damaged_one_is_searched_again(own_cache):
    import numpy as np

    from pipeline.modelling import neighbours

    rng = np.random.default_rng(67)
    vectors = rng.normal(size=(2100, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    searched = neighbours._cosine_knn(vectors, vectors, 15, 2**25 // len(vectors))
    first = neighbours.cosine_knn(vectors, vectors, 15)
    [kept] = (own_cache / "reductions").glob("knn-*.npy")
    again = neighbours.cosine_knn(vectors, vectors, 15)
    kept.write_bytes(kept.read_bytes()[:-100])  # truncated
    damaged = neighbours.cosine_knn(vectors, vectors, 15)
    for found in (first, again, damaged):
        assert found[0].dtype == searched[0].dtype and found[1].dtype == searched[1].dtype
        assert found[0].tobytes() == searched[0].tobytes() and found[1].tobytes() == searched[1].tobytes()


def test_a_partition_is_kept_in_the_cache_and_a_damaged_one_is_made_again(own_cache):
    import numpy as np

    from pipeline.modelling import topics

    points = np.random.default_rng(67).normal(size=(1200, 10))
    made = topics._partition(points, 12, 20, 3, True)
    first = topics.partition(points, 12, 20, 3)
    [kept] = (own_cache / "reductions").glob("kmeans-*.npy")
    again = topics.partition(points, 12, 20, 3)
    kept.write_bytes(b"not an array")
    damaged = topics.partition(points, 12, 20, 3)
    assert topics.partition(points, 12, 20, 4).tolist() != made.tolist()  # another seed is not read from it
    for found in (first, again, damaged):
        assert found.dtype == made.dtype and found.tolist() == made.tolist()


def test_a_warm_rebuild_of_a_thousand_papers_cuts_no_stability_partition_again(own_cache, monkeypatch):
    """Stability re-clusters 90% subsamples (900 of a 1,000-paper map's papers): kept in the cache
    like the build's own partition, a rebuild reads them, the same scores."""
    import numpy as np

    from pipeline.config import BuildConfig
    from pipeline.modelling import topics

    points = np.random.default_rng(67).normal(size=(1000, 10))
    labels = topics.partition(points, 12, 20, 3)
    config = BuildConfig().resolve(1000)
    first, _ = topics.topic_stability(points, points, labels, config)
    cut, made = [], topics._partition
    monkeypatch.setattr(topics, "_partition", lambda *args: cut.append(args) or made(*args))
    again, _ = topics.topic_stability(points, points, labels, config)
    assert cut == [] and again == first


def pools_started(monkeypatch) -> list[tuple]:
    """The arguments of each process pool the build starts from now on (as it starts them)."""
    from pipeline import workers

    pools = []

    class CountedPool(workers.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", CountedPool)
    return pools


def test_texts_read_by_worker_processes_give_the_same_entries_and_map_byte_for_byte(tmp_path, monkeypatch):
    pools = pools_started(monkeypatch)
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "here"))
    build(tmp_path / "read-here")
    assert pools == []  # a few hundred new texts: read in this process
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "workers"))
    as_a_large_corpus(monkeypatch)
    build(tmp_path / "read-by-workers")
    assert pools == [(2,)]
    assert entries(tmp_path / "workers") == entries(tmp_path / "here")
    for name in MAP_FILES:
        assert (tmp_path / "read-by-workers" / name).read_bytes() == (
            tmp_path / "read-here" / name
        ).read_bytes(), name


def _stop(*args, **kwargs):
    """What a worker killed mid-work (out of memory, say) gives back: nothing."""
    os._exit(9)


def as_a_large_corpus(monkeypatch) -> None:
    """New texts read in two worker processes, as a first build of tens of thousands of texts."""
    monkeypatch.setattr(text_cache, "PARALLEL_ABOVE", 0)
    two_cores(monkeypatch)


def test_texts_are_read_and_umap_imported_while_the_abstracts_are_embedded(own_cache, tmp_path, monkeypatch):
    """On a cold build the embedding runs in ONNX Runtime's threads, outside Python's lock: the texts'
    reading and the topic libraries' import start before it and overlap it (here the embedding waits until both have
    started, which reading the texts when they are counted never would), and the map is the one a
    build that reads them when counting makes, byte for byte."""
    from pipeline.commands import build as build_module

    read, imported = threading.Event(), threading.Event()

    def reading(text: str):
        read.set()
        return read_text(text)

    def importing(cache_root: str):
        imported.set()
        return import_topic_libraries(cache_root)

    class Waiting(FakeEncoder):
        def encode(self, texts):
            if not self.calls:  # the abstracts, first
                assert read.wait(timeout=20), "no text was being read while the abstracts were embedded"
                assert imported.wait(timeout=20), (
                    "the topic libraries were not being imported while the abstracts were embedded"
                )
            return super().encode(texts)

    monkeypatch.setattr(text_cache, "read_text", reading)
    monkeypatch.setattr(build_module, "import_topic_libraries", importing)
    build_map([SEEDS], tmp_path / "ahead", encoder=Waiting(), progress=False, log=lambda message: None)
    monkeypatch.undo()
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "read-when-counted"))
    monkeypatch.setattr(build_module, "reading_ahead", lambda documents: contextlib.nullcontext())
    build(tmp_path / "when-counted")
    for name in [*MAP_FILES, "papers.parquet"]:
        assert (tmp_path / "ahead" / name).read_bytes() == (tmp_path / "when-counted" / name).read_bytes(), (
            name
        )


def test_umap_is_not_imported_while_torch_is(own_cache, tmp_path, monkeypatch):
    """With --embedder torch-fp32 the embedding imports torch: the topic libraries' import waits for the topic stage
    (two threads importing packages that import each other can stop on Python's import locks)."""
    from pipeline.commands import build as build_module
    from pipeline.config import BuildConfig

    started: list[str] = []
    monkeypatch.setattr(build_module, "import_topic_libraries", started.append)
    build_map(
        [SEEDS],
        tmp_path / "torch",
        BuildConfig(embedder="torch-fp32"),
        encoder=FakeEncoder(),
        progress=False,
        log=lambda message: None,
    )
    assert started == []


def test_an_import_that_fails_while_the_abstracts_are_embedded_fails_the_build_with_nothing_written(
    own_cache, tmp_path, monkeypatch
):
    """the topic libraries' import runs in a thread during the embedding: its failure (a broken install) is the
    build's, raised as it would be in the topic stage (a bug: exit 1), not lost; nothing is written."""
    from pipeline.__main__ import main
    from pipeline.commands import build as build_module

    def broken(cache_root: str):
        raise ImportError("umap is broken here")

    replace_packaged_model(monkeypatch, FakeEncoder())
    monkeypatch.setattr(build_module, "import_topic_libraries", broken)
    with pytest.raises(ImportError, match="umap is broken here"):
        main(["build", str(SEEDS), "--out", str(tmp_path / "map"), "--quiet"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # no map, no staging folder


def test_a_large_corpus_is_read_while_the_topics_umap_runs(own_cache, tmp_path, monkeypatch):
    """The texts' reading starts before the topics' UMAP fit and overlaps it (UMAP leaves a core
    free): here the fit waits until it has started, which reading after the fit never would."""
    from pipeline.modelling import topics

    started = threading.Event()
    read_packed, cluster_space = text_cache.read_packed, topics.cluster_space

    def reading(documents):
        started.set()
        return read_packed(documents)

    def fitting(*args, **kwargs):
        assert started.wait(timeout=30), "the texts were not being read while UMAP ran"
        return cluster_space(*args, **kwargs)

    as_a_large_corpus(monkeypatch)
    monkeypatch.setattr(text_cache, "read_packed", reading)
    monkeypatch.setattr(topics, "cluster_space", fitting)
    build(tmp_path / "ahead")
    monkeypatch.undo()
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "read-after"))
    build(tmp_path / "after")  # read when the phrases are counted, in this process
    for name in MAP_FILES:
        assert (tmp_path / "ahead" / name).read_bytes() == (tmp_path / "after" / name).read_bytes(), name


def two_cores(monkeypatch) -> None:
    from pipeline import workers

    cores = {0, 1}  # however many this machine has
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: cores)


def test_a_large_layout_made_in_a_worker_process_is_the_same_map_byte_for_byte(tmp_path, monkeypatch):
    from pipeline.modelling import layout

    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache-here"))
    build(tmp_path / "here")
    pools = pools_started(monkeypatch)
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache-worker"))
    monkeypatch.setattr(layout, "WORKER_FROM", 0)  # as a large map's
    two_cores(monkeypatch)
    build(tmp_path / "worker")
    assert pools == [(1,)]
    for name in [*MAP_FILES, "papers.parquet"]:
        assert (tmp_path / "worker" / name).read_bytes() == (tmp_path / "here" / name).read_bytes(), name
    pools.clear()
    build(tmp_path / "again")  # the layout is in the cache: no worker started to read it
    assert pools == []


def stop_reading(monkeypatch) -> None:
    as_a_large_corpus(monkeypatch)
    monkeypatch.setattr(text_cache, "packed", _stop)


def stop_layout(monkeypatch) -> None:
    from pipeline.modelling import layout

    monkeypatch.setattr(layout, "WORKER_FROM", 0)  # as a large map's
    two_cores(monkeypatch)
    monkeypatch.setattr(layout, "map_coordinates", _stop)


@pytest.mark.parametrize(
    "stop, said",
    [(stop_reading, "reading the abstracts' phrases"), (stop_layout, "laying out the map")],
    ids=["reading texts", "laying out"],
)
def test_a_worker_that_stops_is_one_error_line_and_nothing_is_written(
    stop, said, own_cache, tmp_path, capsys, monkeypatch
):
    from pipeline.__main__ import main

    replace_packaged_model(monkeypatch, FakeEncoder())
    stop(monkeypatch)
    code = main(["build", str(SEEDS), "--out", str(tmp_path / "map"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and [line for line in err if line.startswith(("error: ", "Traceback"))] == err[-1:], err
    assert err[-1].startswith(f"error: a worker process {said} stopped"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # no map, no staging folder
    if stop is stop_reading:
        assert entries(own_cache) == {}  # and nothing half-read was stored


def test_importing_umap_into_an_empty_jit_cache_compiles_no_neighbour_search_kernel(tmp_path):
    """A first build's UMAP import compiled PyNNDescent's typed kernels (12 CPU s), though the build
    gives UMAP its neighbours: they compile only when called, and none is."""
    import subprocess
    import sys

    probe = (
        "from numba.core.registry import CPUDispatcher\n"
        "from pipeline._fastimport import import_topic_libraries\n"
        f"import_topic_libraries({str(tmp_path)!r})\n"
        "import pynndescent.rp_trees as trees\n"
        "kernels = [v for v in vars(trees).values() if isinstance(v, CPUDispatcher)]\n"
        "print(len(kernels), sum(1 for v in kernels if v.signatures))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    found = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    kernels, compiled = map(int, found.stdout.split())
    assert kernels > 10 and compiled == 0
