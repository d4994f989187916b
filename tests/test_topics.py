"""Pure functions of the topic stage: defaults that scale, outlier reassignment, names, quality figures."""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest

from pipeline.config import BuildConfig
from pipeline.modelling.evaluate import map_quality, npmi_coherence, topic_diversity
from pipeline.modelling.neighbours import (
    cosine_knn,
    cosine_to,
    neighbour_graph,
    reassign_outliers,
    topic_centroids,
)
from pipeline.modelling.themes import fit_themes, theme_count
from pipeline.modelling.topics import _renumber_by_size, topic_stability
from pipeline.naming.areas import Area, AreaVotes
from pipeline.naming.names import name_groups
from pipeline.naming.phrases import acronym_definitions
from pipeline.naming.support import name_support


@pytest.mark.parametrize("papers", [57, 2_000, 10_000, 80_000])
def test_defaults_scale_with_corpus_size(papers):
    config = BuildConfig().resolve(papers)
    # Room for tens of topics at any size: not one giant topic, not thousands of crumbs.
    assert 10 <= papers / config.min_topic_size <= 1_000
    assert 1 <= config.min_samples <= config.min_topic_size
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


def test_names_are_phrases_the_papers_use_spelled_as_they_spell_them():
    docs = [
        "Incomplete multi-view clustering with anchors.",
        "Multi-view clustering at scale; we cluster views.",
        "A study of multi-view clustering and anchors.",
        "Jailbreak attacks break LLM safety.",
        "We test LLM safety filters against jailbreak attacks.",
        "Refusals and LLM safety under jailbreak prompts.",
    ]
    names = name_groups(docs, np.array([0, 0, 0, 1, 1, 1]))
    assert names == {0: "Multi-view clustering", 1: "LLM safety"}


def test_acronyms_are_spelled_out_when_the_papers_define_them():
    docs = [
        "Optimal transport (OT) compares distributions.",
        "We compute OT plans in low rank.",
        "Entropic OT maps and barycenters.",
        "Answer Set Programming (ASP) solves puzzles.",
        "ASP programs ground rules.",
        "Grounding in ASP is costly.",
        "Spiking neural networks (SNNs) fire sparsely.",
        "SNNs are trained with surrogate gradients.",
        "Event cameras feed SNNs.",
    ]
    assert acronym_definitions(docs) == {
        "asp": "answer set programming",
        "ot": "optimal transport",
        "snn": "spiking neural networks",
    }
    names = name_groups(docs, np.repeat([0, 1, 2], 3))
    # Title Case in a definition reads as the field writes it; the acronym's papers count too.
    assert names == {0: "Optimal transport", 1: "Answer set programming", 2: "Spiking neural networks"}


def test_names_are_distinct_and_never_keyword_pairs():
    docs = [
        f"Diffusion models for {w} generation with diffusion models." for w in ("image", "video", "audio")
    ] * 2
    names = name_groups(docs, np.array([0, 0, 0, 1, 1, 1]))
    assert len(set(names.values())) == 2
    assert not any(re.search(r"\s[·|/]\s", n) for n in names.values())  # not "Causal · latent"


def test_name_support_counts_papers_with_every_word_of_the_name():
    docs = ["Diffusion models sample.", "A diffusion model.", "Transformers."]
    assert name_support("Diffusion models", docs) == pytest.approx(2 / 3)


def test_closeness_to_the_centroid_breaks_ties_between_equally_used_phrases():
    """Both phrases are written by two of the topic's papers; the papers writing "message passing" sit
    at the topic's centre, those writing "graph neural networks" at its edge: the centre names it."""
    docs = [
        "Graph neural networks on citation data.",
        "Graph neural networks for molecules.",
        "Message passing between nodes.",
        "Message passing with attention.",
        "Other text about proteins folding.",
        "Other text about proteins folding.",
    ]
    vectors = np.array(
        [[0.6, 0.8], [0.6, 0.8], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32
    )
    centroids = {0: np.array([0.0, 1.0], dtype=np.float32), 1: np.array([1.0, 0.0], dtype=np.float32)}
    names = name_groups(docs, np.array([0, 0, 0, 0, 1, 1]), centroids, embeddings=vectors)
    assert names[0].startswith("Message passing"), names


def test_theme_count_scales_with_topics():
    assert [theme_count(n) for n in (1, 8, 10, 30, 55, 100, 400)] == [1, 4, 5, 8, 11, 15, 20]


def votes_for(areas: list[str], per_topic: int = 20) -> AreaVotes:
    """Research-area votes where every paper of topic t is closest to `areas[t]` (specific grain)."""
    vocabulary = [Area(name, "", "specific") for name in dict.fromkeys(areas)]
    index = {a.name: i for i, a in enumerate(vocabulary)}
    return AreaVotes(vocabulary, {"specific": np.repeat([index[a] for a in areas], per_topic)})


def themes_of(
    words: list, names: list[str], n_themes: int, per_topic: int = 20, votes: AreaVotes | None = None
):
    """Themes of four topics with these texts and names; topics 0-1 and 2-3 sit close together."""
    rng = np.random.default_rng(3)
    directions = np.eye(16)[[0, 0, 1, 1]] + 0.3 * np.eye(16)[[2, 3, 4, 5]]  # two pairs of close topics
    vectors = clustered_vectors(rng, directions * 3, per_topic, 0.05)
    labels = np.repeat(np.arange(len(words)), per_topic)
    texts = [[w] if isinstance(w, str) else w for w in words]  # a topic's papers cycle through its texts
    documents = [texts[t][i % len(texts[t])] for i, t in enumerate(labels)]
    ids, centroids = topic_centroids(vectors, labels)
    topics = pd.DataFrame({"topic_id": ids, "label": names, "centroid": list(centroids)})
    themes, theme_of = fit_themes(documents, vectors, labels, topics, n_themes=n_themes, votes=votes)
    support = {
        (row.label, t): name_support(row.label, [d for d, topic in zip(documents, labels) if topic == t])
        for row in themes.itertuples()
        for t in row.topic_ids
    }
    return themes, theme_of, support


def test_themes_merge_topics_that_share_a_phrase_and_are_named_by_it():
    themes, theme_of, support = themes_of(
        [
            "We study optimal transport plans here.",
            "We study optimal transport maps here.",
            "We study diffusion models that sample.",
            "We study diffusion models that denoise.",
        ],
        ["Transport plans", "Transport maps", "Sampling", "Denoising"],
        n_themes=2,
    )
    assert theme_of[0] == theme_of[1] != theme_of[2] == theme_of[3]
    assert sorted(themes["label"]) == ["Diffusion models", "Optimal transport"]
    assert themes["size"].sum() == 80 and sorted(sum(themes["topic_ids"], [])) == [0, 1, 2, 3]
    assert min(support.values()) == 1.0  # each theme's name holds for every paper of its topics


def votes_at(grains: dict[str, list], per_topic: int = 20) -> AreaVotes:
    """Area votes where the papers of topic t are nearest (and close) to `grains[grain][t]` at each
    grain: one area, or a list the topic's papers cycle through."""
    cycles = {g: [[a] if isinstance(a, str) else a for a in areas] for g, areas in grains.items()}
    vocabulary = [Area(n, "", g) for g, areas in cycles.items() for n in dict.fromkeys(sum(areas, []))]
    index = {(a.grain, a.name): i for i, a in enumerate(vocabulary)}
    nearest = {
        g: np.array(
            [index[g, areas[t][i % len(areas[t])]] for t in range(len(areas)) for i in range(per_topic)]
        )
        for g, areas in cycles.items()
    }
    return AreaVotes(vocabulary, nearest, close={g: v[:, None] for g, v in nearest.items()})


def test_grouping_follows_the_vectors_whatever_the_words():
    """Issue 39: themes are a partition of the topics drawn from their vectors, never merged or kept
    apart to suit a name: two pairs of close topics that share no word form two themes."""
    themes, theme_of, _ = themes_of(
        [
            "Sinkhorn barycenters converge fast.",
            "Spiking neurons fire in cortex.",
            "Robot grasping with soft fingers.",
            "Protein folding energy landscapes.",
        ],
        ["Sinkhorn barycenters", "Spiking neurons", "Robot grasping", "Protein folding"],
        n_themes=2,
    )
    assert theme_of[0] == theme_of[1] != theme_of[2] == theme_of[3]
    assert sorted(sum(themes["topic_ids"], [])) == [0, 1, 2, 3]  # each topic in exactly one theme


def test_an_area_names_a_theme_only_where_its_papers_write_it_however_near_they_are():
    """Issue 62: every paper is nearest to "Computer vision" and each pair of topics to its own broad
    area, but only the second pair's papers write theirs ("video understanding"). The first pair,
    near "3D vision" in embedding space, never takes it (the old rule counted closeness as
    evidence): no umbrella holds, so it is named by its two lines, its topics' names."""
    spread = ["Robot learning", "Optimization", "Speech processing"]
    votes = votes_at(
        {
            "field": ["Computer vision"] * 4,
            "broad": [["3D vision"] * 2 + spread] * 2 + [["Video understanding"] * 2 + spread] * 2,
        }
    )
    themes, theme_of, _ = themes_of(
        [
            "Depth maps here.",
            "Point sets here.",
            "Action clips in video understanding.",
            "Tracking clips for video understanding.",
        ],
        ["Depth maps", "Point sets", "Action clips", "Tracking clips"],
        n_themes=2,
        votes=votes,
    )
    labels = dict(zip(themes["topic_ids"].map(tuple), themes["label"]))
    assert labels[(2, 3)] == "Video understanding"
    assert labels[(0, 1)] == "Depth maps & point sets"
    assert not {"3D vision", "Computer vision"} & set(themes["label"])
    sources = dict(zip(themes["label"], themes["name_source"]))
    assert sources["Depth maps & point sets"] == "topics"
    assert themes["name_share"].tolist() == [1.0, 1.0]


def test_a_field_names_a_theme_only_on_a_map_of_several_fields():
    """On a map of two fields, the theme of each field's papers may take the field's name, where
    they write it or a form the vocabulary lists ("robot" for Robotics, "NLP")."""
    votes = votes_at(
        {"field": ["Robotics", "Robotics", "Natural language processing", "Natural language processing"]}
    )
    themes, _, _ = themes_of(
        ["Robot arms here.", "Robot legs here.", "Parsing text in NLP.", "Translating text for NLP."],
        ["Robot arms", "Robot legs", "Parsing text", "Translating text"],
        n_themes=2,
        votes=votes,
    )
    assert sorted(themes["label"]) == ["Natural language processing", "Robotics"]


def test_a_theme_of_more_than_a_third_of_a_map_is_split_while_its_halves_are_apart():
    """Twelve topics: six of them (60% of the papers) in one tight region made of two sub-regions,
    six scattered. Cut at six themes, the region would be one theme; it is split along its tree."""
    from pipeline.modelling.themes import MAX_THEME_SHARE, group_topics

    rng = np.random.default_rng(7)
    base = np.eye(32)
    region = [4 * base[0] + 1.2 * base[1 + (t % 2)] + 0.2 * base[10 + t] for t in range(6)]
    others = [4 * base[20 + t] for t in range(6)]
    sizes = np.array([30] * 6 + [20] * 6)
    vectors = np.concatenate(
        [c / np.linalg.norm(c) + 0.02 * rng.normal(size=(n, 32)) for c, n in zip(region + others, sizes)]
    ).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = np.repeat(np.arange(12), sizes)
    rows = [np.flatnonzero(labels == t) for t in range(12)]
    _, centroids = topic_centroids(vectors, labels)
    groups = group_topics(centroids, sizes, 6, vectors, rows)
    assert sorted(sum(groups, [])) == list(range(12))
    assert max(sizes[g].sum() for g in groups) <= MAX_THEME_SHARE * sizes.sum()
    # Without the papers (no measure of apart) the same tree cut at six keeps the region whole.
    whole = group_topics(centroids, sizes, 6)
    assert max(sizes[g].sum() for g in whole) > MAX_THEME_SHARE * sizes.sum()


def test_a_topic_name_that_misses_most_papers_takes_a_second_part():
    """Half the topic writes about adversarial examples and half about safety: the name says both."""
    docs = ["Adversarial examples fool classifiers."] * 4
    docs += [
        "Safety moderation of chat systems.",
        "Safety of agents.",
        "Safety filters block text.",
        "Safety.",
    ]
    docs += ["Regret bounds for bandits hold."] * 8
    names = name_groups(docs, np.repeat([0, 1], 8))
    assert names[0] in ("Adversarial examples & safety", "Safety & adversarial examples")
    assert name_support(names[0], docs[:8]) == 1.0


def test_stability_is_high_for_clear_clusters_and_low_for_noise():
    from pipeline.config import BuildConfig

    rng = np.random.default_rng(0)
    clear = np.concatenate([rng.normal(c, 0.05, size=(40, 5)) for c in (0.0, 5.0, 10.0)]).astype(np.float32)
    config = BuildConfig(min_topic_size=20).resolve(120)  # leaf clusters the size of the blobs
    labels = np.repeat(np.arange(3), 40)
    embeddings = clustered_vectors(rng, np.eye(8)[:3] * 3, 40, 0.1)
    started = time.perf_counter()
    scores, report = topic_stability(clear, embeddings, labels, config, runs=3)
    elapsed = time.perf_counter() - started
    assert all(s >= 0.9 for s in scores.values()) and report["runs"] == 3
    assert 0 < report["seconds"] <= round(elapsed, 3)  # the time the scoring took, not a made-up figure
    # The same labels drawn on a shapeless cloud come back only in pieces.
    cloud = rng.normal(size=(120, 5)).astype(np.float32)
    random_labels = rng.permutation(labels)
    noisy, _ = topic_stability(cloud, embeddings, random_labels, config, runs=3)
    assert max(noisy.values()) < 0.6


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


def test_scores_over_float16_rows_are_those_of_numpy_s_own_cast(tmp_path):
    """Every finite float16 value (subnormals, both zeros, the largest) widens to the same float32,
    so a nearest-papers scan scores a memory-mapped map exactly as a float32 copy of it would."""
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    finite = every[np.isfinite(every)]
    rows = finite[: len(finite) // 64 * 64].reshape(-1, 64)  # 992 rows, across blocks of 100
    query = np.random.default_rng(2).normal(size=64).astype(np.float32)
    stored = np.lib.format.open_memmap(tmp_path / "v.npy", mode="w+", dtype=np.float16, shape=rows.shape)
    stored[:] = rows
    cast = np.concatenate(
        [rows[start : start + 100].astype(np.float32) @ query for start in range(0, len(rows), 100)]
    )
    for corpus in (rows, stored):
        assert cosine_to(corpus, query, chunk=100).tobytes() == cast.tobytes()


def test_unassigned_papers_in_a_dense_group_become_a_topic_and_scattered_ones_stay_unassigned():
    """Issue 35: unassigned means "fits no topic", not "small". A synthetic corpus: three topics of
    60 papers, 8 papers of a line of work of their own (each other's nearest neighbours) and 6
    papers scattered at random, all unassigned as HDBSCAN might leave them."""
    from pipeline.modelling.neighbours import neighbour_graph
    from pipeline.modelling.topics import adopt_dense_groups, dense_group_size

    rng = np.random.default_rng(5)
    directions = rng.normal(size=(5, 64))
    topics = [d + 0.35 * rng.normal(size=(60, 64)) for d in directions[:3]]
    group = directions[3] + 0.2 * rng.normal(size=(8, 64))
    scattered = rng.normal(size=(6, 64))
    # A tight group left out next to topic 0's centre, within its spread: it joins topic 0.
    near_topic = directions[0] + 0.3 * rng.normal(size=64) + 0.05 * rng.normal(size=(8, 64))
    vectors = np.concatenate([*topics, group, scattered, near_topic]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = np.concatenate([np.repeat([0, 1, 2], 60), np.full(8 + 6 + 8, -1)])
    size = dense_group_size(22)
    after = adopt_dense_groups(labels, neighbour_graph(vectors, 15)[0], vectors, size)
    assert after[:180].tolist() == labels[:180].tolist()  # topics untouched
    assert set(after[180:188].tolist()) == {3}  # the group: a topic of its own
    assert (after[188:194] == -1).all()  # scattered papers fit no topic and stay unassigned
    assert set(after[194:].tolist()) == {0}  # the left-out part of topic 0 joins it


def test_a_small_line_of_work_is_a_topic_not_dissolved_into_an_unrelated_one():
    """Issue 35: eight papers of their own line of work (crowd counting on ECCV) form a KMeans cluster
    smaller than the smallest topic size. They are each other's nearest neighbours and apart from
    every topic, so they are a topic of their own: never dissolved into the nearest unrelated topic
    nor left unassigned."""
    from pipeline.modelling.topics import fit_topics

    rng = np.random.default_rng(11)
    directions = np.eye(48)[:5] * 3
    vectors = clustered_vectors(rng, directions, 50, 0.35)[: 4 * 50]
    group = clustered_vectors(rng, directions[4:], 8, 0.15)
    vectors = np.concatenate([vectors, group]).astype(np.float32)
    words = [
        "optimal transport plans",
        "spiking neurons fire",
        "robot grasping fingers",
        "protein folding energy",
    ]
    documents = [f"We study {words[i // 50]} in paper {i}." for i in range(200)]
    documents += [f"Crowd counting with density maps, paper {i}." for i in range(8)]
    config = BuildConfig(n_topics=5, min_topic_size=15, stability=False).resolve(len(vectors))
    topics = fit_topics(documents, vectors, config)
    labels = topics.labels
    group_topic = set(labels[200:].tolist())
    assert len(group_topic) == 1 and -1 not in group_topic, labels[200:]
    (topic,) = group_topic
    assert (labels[:200] != topic).all()  # no other paper was put with them: a topic of their own
    name = topics.table.set_index("topic_id").loc[topic, "label"]
    assert "crowd counting" in name.lower() or "density maps" in name.lower(), name


def test_a_rebuild_keeps_the_previous_themes_unless_the_papers_call_for_new_ones():
    """Issue 35: four topics at the corners of a square (two groupings into pairs of neighbours hold
    together about as well) and a new fifth topic. A rebuild keeps the previous pairs and puts the
    new topic with its nearest theme; a previous grouping of opposite corners, which holds together
    far worse, is drawn afresh."""
    rng = np.random.default_rng(2)
    corners = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    directions = np.zeros((5, 8))
    directions[:4, :2] = corners
    directions[:4, 2] = 2.0
    directions[4] = directions[0] + [0, 0, 0, 0.08, 0, 0, 0, 0]  # a new topic beside topic 0
    vectors = clustered_vectors(rng, directions * 2, 20, 0.05)
    labels = np.repeat(np.arange(5), 20)
    documents = [f"paper {i} on subject {t}" for i, t in enumerate(labels)]
    ids, centroids = topic_centroids(vectors, labels)
    topics = pd.DataFrame(
        {"topic_id": ids, "label": [f"Subject {t}" for t in ids], "centroid": list(centroids)}
    )

    def grouping(previous):
        _, theme_of = fit_themes(documents, vectors, labels, topics, n_themes=2, previous_theme_of=previous)
        return sorted(sorted(t for t in theme_of if theme_of[t] == h) for h in set(theme_of.values()))

    fresh = grouping(None)
    assert fresh in ([[0, 1, 4], [2, 3]], [[0, 3, 4], [1, 2]])  # neighbours, whichever Ward cuts
    other = [[0, 3], [1, 2]] if fresh[0][:2] == [0, 1] else [[0, 1], [2, 3]]
    previous = {t: h for h, members in enumerate(other) for t in members}
    kept = grouping(previous)
    assert sorted(kept) == sorted([sorted([*g, 4]) if 0 in g else g for g in other])
    assert grouping({0: 0, 2: 0, 1: 1, 3: 1}) == fresh  # opposite corners: drawn afresh


def test_a_kept_theme_whose_content_moved_is_named_for_what_it_holds_now():
    """Issue 62: a rebuild keeps the previous grouping (`previous_theme_of`), but a kept theme whose
    papers now write about something else is named afresh from them: "Optimal transport" before,
    "Diffusion models" once its topics' papers are about diffusion (the theme keeps its topics)."""
    rng = np.random.default_rng(3)
    directions = np.eye(16)[[0, 0, 1, 1]] + 0.3 * np.eye(16)[[2, 3, 4, 5]]
    vectors = clustered_vectors(rng, directions * 3, 20, 0.05)
    labels = np.repeat(np.arange(4), 20)
    ids, centroids = topic_centroids(vectors, labels)
    topics = pd.DataFrame({"topic_id": ids, "label": ["A", "B", "C", "D"], "centroid": list(centroids)})
    before = ["Optimal transport plans."] * 40 + ["Spiking neurons fire."] * 40
    after = ["Diffusion models sample."] * 40 + ["Spiking neurons fire."] * 40
    first, theme_of = fit_themes(before, vectors, labels, topics, n_themes=2)
    again, theme_again = fit_themes(after, vectors, labels, topics, n_themes=2, previous_theme_of=theme_of)
    assert theme_again == theme_of  # the same themes...
    named = {tuple(r.topic_ids): r.label for r in first.itertuples()}
    renamed = {tuple(r.topic_ids): r.label for r in again.itertuples()}
    assert named[(0, 1)] == "Optimal transport" and renamed[(0, 1)] == "Diffusion models"  # ...named anew


def test_a_name_never_joins_its_own_acronym_or_a_form_of_its_words():
    """Half the papers write "optimal transport", half only "OT": still one thing, one part."""
    from pipeline.naming.names import Candidate, _line_pairs, _second_part

    written = {"Optimal transport": 0.5, "OT": 0.5, "Sinkhorn": 0.3, "Transports": 0.5}
    written |= {f"{a} & {b}": 1.0 for a in written for b in written}
    candidates = [Candidate(p, 1.0, 0.5) for p in written if "&" not in p]
    assert _second_part(0, "Optimal transport", candidates, lambda g, name: written[name]) == "Sinkhorn"
    pairs = {
        (first.phrase, second)
        for _, first, second in _line_pairs(0, candidates, lambda g, n: written[n], set())
    }
    assert pairs == {
        ("Optimal transport", "Sinkhorn"),
        ("OT", "Sinkhorn"),
        ("Sinkhorn", "Transports"),
        ("OT", "Transports"),
    }
