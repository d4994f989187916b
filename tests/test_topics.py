"""Pure functions of the topic stage: defaults that scale, outlier reassignment, names, quality figures."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.config import BuildConfig
from pipeline.evaluate import map_quality, npmi_coherence, topic_diversity
from pipeline.topics import (
    _renumber_by_size,
    cosine_knn,
    distinct_labels,
    neighbour_graph,
    reassign_outliers,
    topic_label,
)


@pytest.mark.parametrize("papers", [57, 2_000, 10_000, 80_000])
def test_defaults_scale_with_corpus_size(papers):
    config = BuildConfig().resolve(papers)
    # Room for tens of topics at any size: not one giant topic, not thousands of crumbs.
    assert 10 <= papers / config.min_topic_size <= 1_000
    assert 2 <= config.min_samples <= config.min_topic_size
    assert 10 <= config.n_neighbors <= 30


def test_defaults_grow_monotonically():
    sizes = [BuildConfig().resolve(n).min_topic_size for n in (57, 500, 5_000, 50_000)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


def clustered_vectors(rng, centres, per_centre, spread):
    points = np.concatenate([c + spread * rng.standard_normal((per_centre, len(c))) for c in centres])
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def test_reassignment_follows_each_outliers_own_neighbourhood():
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:4] * 3
    vectors = clustered_vectors(rng, centres, 30, 0.3)
    truth = np.repeat(np.arange(4), 30)
    labels = truth.copy()
    left_out = rng.choice(len(labels), 30, replace=False)
    labels[left_out] = -1
    new = reassign_outliers(vectors, labels, k=8)
    assert (new[left_out] == truth[left_out]).mean() >= 0.95
    # Spread over all four topics, not dumped into one catch-all.
    assert len(set(new[left_out].tolist()) - {-1}) == 4


def test_reassignment_keeps_genuine_outliers_unassigned():
    rng = np.random.default_rng(1)
    topics = 8
    vectors = clustered_vectors(rng, np.eye(16)[:topics] * 3, 30, 0.2)
    # Equally near all eight topics and far from every centroid: no topic wins a third of its
    # neighbours' vote, and no centroid is as close as its topic's least typical members.
    stray = np.zeros((1, 16), dtype=np.float32)
    stray[0, :topics] = 1 / np.sqrt(topics)
    labels = np.concatenate([np.repeat(np.arange(topics), 30), [-1]])
    new = reassign_outliers(np.concatenate([vectors, stray]), labels, k=16)
    assert new[-1] == -1
    assert (new[:-1] == labels[:-1]).all()
    # The same paper moved next to topic 3 does join it: the rule can tell the two apart.
    near = vectors[labels[:-1] == 3].mean(axis=0, keepdims=True)
    near /= np.linalg.norm(near)
    assert reassign_outliers(np.concatenate([vectors, near]), labels, k=16)[-1] == 3


def test_topic_numbers_follow_size():
    assert _renumber_by_size(np.array([5, 5, 5, 2, -1, 2, 9])).tolist() == [0, 0, 0, 1, -1, 1, 2]


def test_topic_label_uses_the_papers_spelling_and_phrases():
    docs = [
        "Multi-view clustering with anchors.",
        "Incomplete multi-view clustering at scale.",
        "A study of multi-view clustering.",
    ]
    assert topic_label(["clustering", "multiview", "multiview clustering", "anchors"], docs) == (
        "Multi-view clustering"
    )
    llm = ["LLM safety matters.", "We test LLM safety filters.", "Jailbreaks break LLM safety."]
    assert topic_label(["safety", "llm", "jailbreaks"], llm) == "LLM safety"


def test_repeated_labels_are_made_distinct():
    labels = distinct_labels(
        ["Diffusion models", "Diffusion models", "Clustering"],
        [["diffusion", "guidance"], ["diffusion", "video"], ["clustering"]],
    )
    assert labels == ["Diffusion models · guidance", "Diffusion models · video", "Clustering"]


def test_quality_figures():
    docs = ["optimal transport maps", "optimal transport plans", "diffusion models", "diffusion sampling"]
    assert npmi_coherence([["optimal", "transport"]], docs) == pytest.approx(1.0)
    assert npmi_coherence([["optimal", "diffusion"]], docs) == -1.0
    assert topic_diversity([["a", "b"], ["a", "c"]]) == 0.75
    quality = map_quality(np.array([0, 0, 1, -1]), [["optimal", "transport"], ["diffusion", "models"]], docs)
    assert quality["unassigned_share"] == 0.25 and quality["largest_topic_share"] == 0.5
    assert quality["topics"] == 2


def test_neighbour_graph_is_exact_and_starts_with_the_paper_itself():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors[7] = vectors[3]  # an exact duplicate ties with the paper itself
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    indices, distances, index = neighbour_graph(vectors, 10)

    assert index is None and indices.shape == distances.shape == (300, 10)
    assert (indices[:, 0] == np.arange(300)).all() and (distances[:, 0] == 0).all()
    assert indices[3, 1] == 7 and indices[7, 1] == 3 and distances[3, 1] == pytest.approx(0, abs=1e-6)
    # Every distance belongs to its neighbour, nearest first, and matches brute force.
    recomputed = 1 - np.einsum("ij,ikj->ik", vectors, vectors[indices])
    assert np.allclose(distances, np.clip(recomputed, 0, 2), atol=1e-5)
    assert (np.diff(distances, axis=1) >= -1e-6).all()
    brute = np.sort(1 - vectors @ vectors.T, axis=1)[:, :10]
    assert np.allclose(np.sort(distances, axis=1)[:, 1:], np.clip(brute, 0, 2)[:, 1:], atol=1e-5)


def test_cosine_knn_blocks_give_the_same_answer():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(257, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    whole = cosine_knn(vectors, vectors, 5, chunk=1000)
    blocked = cosine_knn(vectors, vectors, 5, chunk=16)
    assert (whole[0] == blocked[0]).all() and np.allclose(whole[1], blocked[1])
