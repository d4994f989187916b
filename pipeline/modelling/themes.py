"""Themes: a coarser level above topics, grouping topics that share vocabulary, named by what they share.

A theme is a group of topics a researcher would call one area, and its name must hold for every
one of its topics. Topics are merged closest first (by centroid), but only when the merged group
still has a phrase that at least `NAME_SUPPORT` of each member topic's papers write and that is
distinctive for it (written at least `DISTINCT` times as often inside as outside); a pair of close
topics that share some distinctive vocabulary without such a phrase may form a small theme named by
its members ("Pose estimation & body models"). A topic that shares nothing stands alone, under its
own name. See `pipeline.naming.name_support` for how a name's support is measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import sparse

from pipeline.naming.names import NAME_SUPPORT as NAME_SUPPORT_FLOOR
from pipeline.naming.names import (
    PhraseCounts,
    _normal,
    _shape_factor,
    as_in_text,
    count_phrases,
    display_name,
    keywords_of,
    name_support,
)

THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids"]
# A theme's name is written by at least this share of each member topic's papers...
NAME_SUPPORT = 0.3
# ...and a phrase is the vocabulary two topics share when this share of each writes it.
SHARED = 0.2
# Distinctive: a group's phrase is used by each member this many times as often as by other papers.
DISTINCT = 2.0
# ...and checked with `name_support` on each member topic's papers: at least this share use it.
HOLDS = NAME_SUPPORT_FLOOR
# A theme named by its members lists at most this many topics.
MAX_LISTED = 3


def theme_count(n_topics: int) -> int:
    """How many themes a map of `n_topics` topics aims at: about 1.5·√topics, at most 20.

    A reader takes in about seven names at a glance, and √ keeps the two levels balanced (as
    many themes as topics a theme). Every theme should hold two topics on average, so a tiny
    map gets few: 10 topics -> 5 themes, 30 -> 8, 55 -> 11, 100 -> 15, 180 and up -> 20. Topics
    that share no vocabulary are not merged to reach it (see `group_topics`).

    Examples:
        >>> [theme_count(n) for n in (1, 3, 8, 10, 30, 55, 100, 400)]
        [1, 1, 4, 5, 8, 11, 15, 20]
    """
    if n_topics <= 1:
        return n_topics
    return max(1, min(20, math.ceil(1.5 * math.sqrt(n_topics) - 0.5), n_topics // 2))


def _key_matrix(counts: PhraseCounts) -> tuple[sparse.csr_matrix, list[str]]:
    """Papers x phrase keys (plural and singular forms as one key), and each key's commonest form."""
    keys = [_normal(p) for p in counts.phrases]
    unique = sorted(set(keys))
    column = {k: i for i, k in enumerate(unique)}
    merge = sparse.csr_matrix(
        (np.ones(len(keys)), ([column[k] for k in keys], np.arange(len(keys)))),
        shape=(len(unique), len(keys)),
    )
    matrix = (counts.matrix @ merge.T).tocsr()
    matrix.data[:] = 1
    uses = np.asarray(counts.matrix.sum(axis=0)).ravel()
    form: dict[str, tuple[float, str]] = {}
    for phrase, key, n in zip(counts.phrases, keys, uses):
        if key not in form or n > form[key][0]:
            form[key] = (n, str(phrase))
    return matrix, [form[k][1] for k in unique]


def group_topics(
    coverage: np.ndarray,
    inside: np.ndarray,
    sizes: np.ndarray,
    centroids: np.ndarray,
    n_themes: int,
    nameable: np.ndarray | None = None,
) -> list[list[int]]:
    """Topic indices per theme: closest groups merged first, only while they share vocabulary.

    First, groups merge (closest first, by mean centroid similarity) only where a `nameable`
    phrase holds for every member (`NAME_SUPPORT`, distinctive); then, while there are more than
    `n_themes` groups, two single topics that share distinctive vocabulary (`SHARED`) may pair
    up, to be named by both their names. Merging stops at `n_themes` groups or when nothing more
    may merge.

    Args:
        coverage: topics x phrases, share of each topic's papers writing the phrase.
        inside: topics x phrases, how many of each topic's papers write it.
        sizes: papers per topic.
        centroids: unit topic centroids (rows).
        n_themes: stop merging at this many groups.
        nameable: per phrase, whether it may name a theme (all when None).

    Examples:
        >>> coverage = np.array([[0.9, 0.0], [0.8, 0.0], [0.0, 0.7]])
        >>> group_topics(coverage, coverage * 10, np.array([10, 10, 10]), np.eye(3), 1)
        [[0, 1], [2]]
    """
    total_uses = inside.sum(axis=0)
    total = sizes.sum()
    nameable = np.ones(coverage.shape[1], dtype=bool) if nameable is None else nameable
    groups: list[list[int]] = [[t] for t in range(len(sizes))]

    def distinct(members: list[int], least: np.ndarray) -> np.ndarray:
        outside = (total_uses - inside[members].sum(axis=0)) / max(1, total - sizes[members].sum())
        return least >= DISTINCT * outside

    def named(members: list[int]) -> bool:
        least = coverage[members].min(axis=0)
        return bool((distinct(members, least) & nameable & (least >= NAME_SUPPORT)).any())

    def listed(members: list[int]) -> bool:
        least = coverage[members].min(axis=0)
        return bool((distinct(members, least) & (least >= SHARED)).any())

    # Sums of centroid similarities between groups: merging i and j adds j's row to i's, so the
    # mean similarity (average linkage) of any two groups is one division away.
    sums = (centroids @ centroids.T).astype(np.float64)
    for allowed, only_single in ((named, False), (listed, True)):
        while len(groups) > n_themes:
            counts = np.array([len(g) for g in groups], dtype=np.float64)
            mean = sums / np.outer(counts, counts)
            i_index, j_index = np.triu_indices(len(groups), k=1)
            if only_single:
                keep = (counts[i_index] == 1) & (counts[j_index] == 1)
                i_index, j_index = i_index[keep], j_index[keep]
            order = np.lexsort((j_index, i_index, -mean[i_index, j_index]))
            merge = next(
                (
                    (int(i_index[k]), int(j_index[k]))
                    for k in order
                    if allowed(groups[i_index[k]] + groups[j_index[k]])
                ),
                None,
            )
            if merge is None:
                break
            i, j = merge
            groups[i] = groups[i] + groups[j]
            del groups[j]
            sums[i, :] += sums[j, :]
            sums[:, i] += sums[:, j]
            sums = np.delete(np.delete(sums, j, axis=0), j, axis=1)
    return groups


def _nameable(forms: list[str]) -> np.ndarray:
    """Phrases that may name a theme: two or three words. A lone word that several topics share
    ("Object", "Neural", "Human") is a fragment of their names, not the name of an area.

    Examples:
        >>> _nameable(["neural", "point cloud", "video"]).tolist()
        [False, True, False]
    """
    return np.array([" " in f for f in forms], dtype=bool)


def _theme_names(
    groups: list[list[int]],
    coverage: np.ndarray,
    inside: np.ndarray,
    sizes: np.ndarray,
    forms: list[str],
    nameable: np.ndarray,
    topic_names: list[str],
    spelling: dict[str, str],
    support: Callable[[int, str], float],
) -> list[str]:
    """A distinct name per group: its topic's name when alone, else the best phrase every member
    writes (`NAME_SUPPORT`, distinctive; checked with `support`, topic index and name -> share of
    the topic's papers using the name), else its members' names ("A, B & C")."""
    total_uses = inside.sum(axis=0)
    total = sizes.sum()
    topic_keys = {_normal(n) for n in topic_names}
    shape = np.array([_shape_factor(f) for f in forms])
    options: dict[int, list[tuple[float, int]]] = {}
    for g, members in enumerate(groups):
        if len(members) == 1:
            continue
        least = coverage[members].min(axis=0)
        uses = inside[members].sum(axis=0)
        outside = (total_uses - uses) / max(1, total - sizes[members].sum())
        precision = uses / np.maximum(total_uses, 1)
        fits = np.flatnonzero(nameable & (least >= NAME_SUPPORT) & (least >= DISTINCT * outside))
        own = {_normal(topic_names[t]) for t in members}
        scored = []
        for k in fits:
            key = _normal(forms[k])
            if key in topic_keys and key not in own:
                continue  # another topic's name
            score = least[k] * math.sqrt(precision[k]) * shape[k] * (0.5 if key in own else 1.0)
            scored.append((score, int(k)))
        options[g] = sorted(scored, reverse=True)
    names: dict[int, str] = {}
    taken = {_normal(topic_names[groups[g][0]]) for g in range(len(groups)) if len(groups[g]) == 1}
    for g in sorted(options, key=lambda g: -(options[g][0][0] if options[g] else 0.0)):
        for _, k in options[g]:
            name = display_name(forms[k], spelling)
            if _normal(forms[k]) not in taken and all(support(t, name) >= HOLDS for t in groups[g]):
                taken.add(_normal(forms[k]))
                names[g] = name
                break
    result = []
    for g, members in enumerate(groups):
        if g in names:
            result.append(names[g])
        else:
            # Each member by the first part of its name where that holds ("Dialogue & question
            # answering", not "Dialogue & conversation & question answering"), else by its whole
            # name, and then the names are set apart by semicolons.
            listed = []
            for t in sorted(members, key=lambda t: -sizes[t]):
                first = topic_names[t].split(" & ")[0]
                listed.append(first if support(t, first) >= HOLDS else topic_names[t])
            later = [as_in_text(n, spelling) for n in listed[1:]]
            if any(" & " in n for n in listed):
                result.append("; ".join([listed[0], *later]))
            else:
                result.append(
                    listed[0] if not later else ", ".join([listed[0], *later[:-1]]) + " & " + later[-1]
                )
    return result


def fit_themes(
    documents: list[str],
    embeddings: np.ndarray,
    labels: np.ndarray,
    topics: pd.DataFrame,
    *,
    phrases: PhraseCounts | None = None,
    n_themes: int | None = None,
) -> tuple[pd.DataFrame, dict[int, int]]:
    """Group the final topics into themes and name each one.

    Runs after topic ids are final (renumbered, or matched to a previous map), so it reads only
    `labels` and the topics table (`topic_id`, `label`, `centroid`).

    Returns:
        The themes table (theme_id, label, keywords, size, topic_ids; theme 0 the largest) and
        topic id -> theme id.
    """
    labels = np.asarray(labels)
    if topics.empty:
        return pd.DataFrame(columns=THEME_COLUMNS), {}
    topic_ids = topics["topic_id"].astype(int).tolist()
    topic_names = topics["label"].astype(str).tolist()
    centroids = np.stack([np.asarray(c, dtype=np.float32) for c in topics["centroid"]])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    phrases = phrases or count_phrases(documents)
    matrix, forms = _key_matrix(phrases)
    index_of = {t: i for i, t in enumerate(topic_ids)}
    rows = np.array([index_of.get(int(t), -1) for t in labels.tolist()])
    assigned = np.flatnonzero(rows != -1)
    indicator = sparse.csr_matrix(
        (np.ones(len(assigned)), (rows[assigned], assigned)), shape=(len(topic_ids), len(labels))
    )
    sizes = np.bincount(rows[assigned], minlength=len(topic_ids)).astype(np.float64)
    # Only phrases two topics share can join or name a group: the rest is dropped before the
    # topics x phrases table is made dense (a big corpus has hundreds of thousands of phrases).
    counts = (indicator @ matrix).tocsc().astype(np.float64)
    shares = sparse.diags(1 / np.maximum(sizes, 1)) @ counts
    useful = np.flatnonzero(np.asarray((shares >= SHARED).sum(axis=0)).ravel() >= 2)
    inside = np.asarray(counts[:, useful].todense())
    coverage = inside / np.maximum(sizes, 1)[:, None]
    nameable = _nameable([forms[k] for k in useful])
    groups = group_topics(
        coverage,
        inside,
        sizes,
        centroids,
        n_themes or theme_count(len(topic_ids)),
        nameable,
    )
    names = _theme_names(
        groups,
        coverage,
        inside,
        sizes,
        [forms[k] for k in useful],
        nameable,
        topic_names,
        phrases.spelling or {},
        lambda t, name: name_support(
            name, [documents[i] for i in np.flatnonzero(rows == t)], phrases.acronyms
        ),
    )
    # Theme 0 is the one with the most papers, as with topics.
    order = sorted(range(len(groups)), key=lambda g: (-sizes[groups[g]].sum(), min(groups[g])))
    theme_of = {topic_ids[t]: theme for theme, g in enumerate(order) for t in groups[g]}
    paper_themes = np.array([theme_of.get(int(t), -1) for t in labels.tolist()])
    keywords = keywords_of(phrases, paper_themes)
    table = [
        {
            "theme_id": theme,
            "label": names[g],
            "keywords": keywords.get(theme, []),
            "size": int((paper_themes == theme).sum()),
            "topic_ids": sorted(topic_ids[t] for t in groups[g]),
        }
        for theme, g in enumerate(order)
    ]
    return pd.DataFrame(table, columns=THEME_COLUMNS), theme_of
