"""`build --ray`: the embedding stage on a real two-node local Ray cluster gives the local build's map."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.commands.build import build_map
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT, SEEDS, quiet

ray = pytest.importorskip("ray", reason="Ray is in requirements-ray.txt (part of the test requirements)")
pytestmark = [pytest.mark.slow, pytest.mark.ray]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head node and a second worker node on this machine, one CPU each; gone after the module."""
    from ray.cluster_utils import Cluster

    mp = pytest.MonkeyPatch()
    # Hermetic: the nodes (and so their workers) inherit this private cache; the local builds use
    # it too, so the int8 model is exported once.
    mp.setenv("ATLAS_CACHE_DIR", str(tmp_path_factory.mktemp("ray-cache")))
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 100 * 2**20},
    )
    nodes.add_node(num_cpus=1, object_store_memory=100 * 2**20)
    nodes.wait_for_nodes()
    try:
        yield nodes
    finally:
        nodes.shutdown()
        mp.undo()


def build_both(inputs, tmp_path, cluster):
    """The same inputs built locally (embedding cache off) and through Ray (into the empty cache)."""
    local = build_map(inputs, tmp_path / "local", use_cache=False, progress=False, log=quiet)
    remote = build_map(inputs, tmp_path / "ray", progress=False, log=quiet, ray_address=cluster.address)
    return local, remote


def assert_same_map(local, remote):
    np.testing.assert_array_equal(local.embeddings, remote.embeddings)  # bit-identical vectors
    assert local.papers["doc_id"].tolist() == remote.papers["doc_id"].tolist()
    assert local.papers["topic_id"].tolist() == remote.papers["topic_id"].tolist()
    assert local.topics["label"].tolist() == remote.topics["label"].tolist()
    assert local.topics["topic_id"].tolist() == remote.topics["topic_id"].tolist()


def test_seeds_on_a_two_node_ray_cluster_give_the_local_map(cluster, tmp_path):
    local, remote = build_both([SEEDS], tmp_path, cluster)
    assert_same_map(local, remote)
    report = remote.manifest.embedding
    assert report["computed"] == 57 and report["ray"]["nodes"] == 2 and report["ray"]["cpus"] == 2
    assert "ray" not in local.manifest.embedding
    # The vectors landed in the ordinary embedding cache: a second build computes nothing.
    again = build_map([SEEDS], tmp_path / "again", progress=False, log=quiet, ray_address=cluster.address)
    assert again.manifest.embedding["computed"] == 0
    assert_same_map(local, read_map(tmp_path / "again"))


def test_a_2000_abstract_sample_on_ray_gives_the_local_map(cluster, tmp_path):
    sample = pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet")
    path = tmp_path / "sample.parquet"
    sample.to_parquet(path, index=False)
    local, remote = build_both([path], tmp_path, cluster)
    assert len(local.papers) == 2000
    assert_same_map(local, remote)


def test_an_unreachable_cluster_is_a_user_error(tmp_path, capsys, monkeypatch):
    from pipeline.__main__ import main

    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    command = ["build", str(SEEDS), "--out", str(tmp_path / "m"), "--ray", "127.0.0.1:9", "--quiet"]
    code = main([*command, "--no-cache"])
    assert code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and err[0].startswith("error: --ray 127.0.0.1:9: cannot connect"), err
    assert not (tmp_path / "m").exists()
