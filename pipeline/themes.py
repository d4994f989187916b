"""Themes: a coarser level above topics, by merging topic centroids, each named like a topic."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.naming import PhraseCounts, count_phrases, keywords_of, name_groups
from pipeline.neighbours import topic_centroids

THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids"]


def theme_count(n_topics: int) -> int:
    """How many themes a map of `n_topics` topics gets: about 1.5·√topics, at most 20.

    A reader takes in about seven names at a glance, and √ keeps the two levels balanced (as
    many themes as topics a theme). Every theme should hold two topics on average, so a tiny
    map gets few: 10 topics -> 5 themes, 30 -> 8, 55 -> 11, 100 -> 15, 180 and up -> 20.

    Examples:
        >>> [theme_count(n) for n in (1, 3, 8, 10, 30, 55, 100, 400)]
        [1, 1, 4, 5, 8, 11, 15, 20]
    """
    if n_topics <= 1:
        return n_topics
    return max(1, min(20, math.ceil(1.5 * math.sqrt(n_topics) - 0.5), n_topics // 2))


def group_topics(centroids: np.ndarray, n_themes: int) -> np.ndarray:
    """Theme index (0..n_themes-1) per topic: Ward merging of the topics' unit centroids.

    Ward on unit vectors merges by cosine closeness and keeps groups of similar spread, where
    average or single linkage would chain most topics into one theme.

    Examples:
        >>> group_topics(np.array([[1, 0], [0.99, 0.14], [0, 1], [0.14, 0.99]]), 2).tolist()
        [0, 0, 1, 1]
    """
    from scipy.cluster.hierarchy import fcluster, linkage

    n = len(centroids)
    if n_themes >= n:
        return np.arange(n)
    if n_themes <= 1:
        return np.zeros(n, dtype=int)
    tree = linkage(np.asarray(centroids, dtype=np.float64), method="ward")
    groups = fcluster(tree, t=n_themes, criterion="maxclust")
    # fcluster numbers arbitrarily; number themes by their first topic so the result is stable.
    first_seen = {g: i for i, g in reversed(list(enumerate(groups.tolist())))}
    order = sorted(first_seen, key=first_seen.get)
    return np.array([order.index(g) for g in groups.tolist()])


def fit_themes(
    documents: list[str],
    embeddings: np.ndarray,
    labels: np.ndarray,
    topics: pd.DataFrame,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    phrases: PhraseCounts | None = None,
    n_themes: int | None = None,
) -> tuple[pd.DataFrame, dict[int, int]]:
    """Group the final topics into themes and name each one.

    Runs after topic ids are final (renumbered, or matched to a previous map), so it reads only
    `labels` and the topics table (`topic_id`, `label`, `centroid`). A theme's name comes from
    the same machinery as a topic's, on the theme's papers, and avoids its topics' own names
    when it holds more than one topic (a theme should say what its topics share).

    Returns:
        The themes table (theme_id, label, keywords, size, topic_ids; theme 0 the largest) and
        topic id -> theme id.
    """
    labels = np.asarray(labels)
    if topics.empty:
        return pd.DataFrame(columns=THEME_COLUMNS), {}
    topic_ids = topics["topic_id"].astype(int).tolist()
    centroids = np.stack([np.asarray(c, dtype=np.float32) for c in topics["centroid"]])
    groups = group_topics(centroids, n_themes or theme_count(len(topic_ids)))
    theme_by_topic = dict(zip(topic_ids, groups.tolist()))
    paper_groups = np.array([theme_by_topic.get(int(t), -1) for t in labels.tolist()])
    # Theme 0 is the one with the most papers, as with topics.
    sizes = pd.Series(paper_groups[paper_groups != -1]).value_counts()
    ranked = sorted(sizes.index, key=lambda g: (-sizes[g], g))
    renumber = {g: i for i, g in enumerate(ranked)}
    theme_of = {t: renumber[g] for t, g in theme_by_topic.items()}
    paper_themes = np.array([theme_of.get(int(t), -1) for t in labels.tolist()])

    names_of_topics = dict(zip(topic_ids, topics["label"].str.lower()))
    members = {th: [t for t in topic_ids if theme_of[t] == th] for th in renumber.values()}
    avoid = {th: {names_of_topics[t] for t in ts} for th, ts in members.items() if len(ts) > 1}
    ids, theme_centroids = topic_centroids(embeddings, paper_themes)
    phrases = phrases or count_phrases(documents)
    names = name_groups(
        documents,
        paper_themes,
        dict(zip(ids.tolist(), theme_centroids)),
        encode=encode,
        counts=phrases,
        avoid=avoid,
    )
    keywords = keywords_of(phrases, paper_themes)
    rows = [
        {
            "theme_id": th,
            "label": names.get(th, f"Theme {th}"),
            "keywords": keywords.get(th, []),
            "size": int((paper_themes == th).sum()),
            "topic_ids": members[th],
        }
        for th in sorted(members)
    ]
    return pd.DataFrame(rows, columns=THEME_COLUMNS), theme_of
