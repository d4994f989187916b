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

from pipeline.naming.areas import AreaVotes, area_name, area_share, plurality_area
from pipeline.naming.names import _shape_factor, display_name, is_generic, name_groups, name_key
from pipeline.naming.phrases import PhraseCounts, count_phrases, keywords_of
from pipeline.naming.support import NAME_SUPPORT as NAME_SUPPORT_FLOOR
from pipeline.naming.support import name_support

# name_source: "phrase" (its papers write it), "area" (a research area of pipeline/areas.tsv most of
# its papers are closest to), "nearest area" (a third of them or more are), "topic" (its largest
# topic's); name_share: how far it holds (see `fit_themes`).
THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids", "name_source", "name_share"]
# A theme's name is written by at least this share of each member topic's papers...
NAME_SUPPORT = 0.3
# Only phrases at least this share of two topics write can join or name a group.
SHARED = 0.2
# Distinctive: a group's phrase is used by each member this many times as often as by other papers.
DISTINCT = 2.0
# ...and checked with `name_support` on each member topic's papers: at least this share use it.
HOLDS = NAME_SUPPORT_FLOOR


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
    keys = [name_key(p) for p in counts.phrases]
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
    area_holds: Callable[[list[int]], bool] | None = None,
) -> list[list[int]]:
    """Topic indices per theme: closest groups merged first, only while the merged group has a name.

    Groups merge closest first (by mean centroid similarity, average linkage) while there are more
    than `n_themes`, and only where a name holds for every member: a `nameable` phrase each member
    writes (`NAME_SUPPORT`, distinctive), or a research area of the vocabulary the papers confirm
    (`area_holds`, see `pipeline.areas.area_name`). Unrelated topics are never glued together to
    reach `n_themes`: merging stops when nothing more may merge.

    Args:
        coverage: topics x phrases, share of each topic's papers writing the phrase.
        inside: topics x phrases, how many of each topic's papers write it.
        sizes: papers per topic.
        centroids: unit topic centroids (rows).
        n_themes: stop merging at this many groups.
        nameable: per phrase, whether it may name a theme (all when None).
        area_holds: topic indices -> whether an area name holds for them (none when None).

    Examples:
        >>> coverage = np.array([[0.9, 0.0], [0.8, 0.0], [0.0, 0.7]])
        >>> group_topics(coverage, coverage * 10, np.array([10, 10, 10]), np.eye(3), 1)
        [[0, 1], [2]]
    """
    total_uses = inside.sum(axis=0)
    total = sizes.sum()
    nameable = np.ones(coverage.shape[1], dtype=bool) if nameable is None else nameable
    groups: list[list[int]] = [[t] for t in range(len(sizes))]

    def allowed(members: list[int]) -> bool:
        least = coverage[members].min(axis=0)
        outside = (total_uses - inside[members].sum(axis=0)) / max(1, total - sizes[members].sum())
        if bool(((least >= DISTINCT * outside) & nameable & (least >= NAME_SUPPORT)).any()):
            return True
        return area_holds is not None and area_holds(members)

    # Sums of centroid similarities between groups: merging i and j adds j's row to i's, so the
    # mean similarity (average linkage) of any two groups is one division away.
    sums = (centroids @ centroids.T).astype(np.float64)
    refused: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    while len(groups) > n_themes:
        counts = np.array([len(g) for g in groups], dtype=np.float64)
        mean = sums / np.outer(counts, counts)
        i_index, j_index = np.triu_indices(len(groups), k=1)
        order = np.lexsort((j_index, i_index, -mean[i_index, j_index]))
        merge = None
        for k in order:
            i, j = int(i_index[k]), int(j_index[k])
            pair = (tuple(groups[i]), tuple(groups[j]))
            if pair in refused:
                continue
            if allowed(groups[i] + groups[j]):
                merge = (i, j)
                break
            refused.add(pair)
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
    rows_of: Callable[[int], np.ndarray],
    votes: AreaVotes | None,
) -> tuple[list[str], list[str]]:
    """A distinct name of its own per group, never one of the map's topic names nor a generic word.

    First source, for a group of topics: the best phrase every member writes (`NAME_SUPPORT`,
    distinctive, checked with `support`: topic index and name -> share of the topic's papers using
    it). Second source, and the first for a theme of one topic: a research area of the shipped
    vocabulary the papers confirm (`pipeline.areas.area_name`). Last, the area most of the theme's
    papers are closest to (`rows_of`: topic index -> its papers' rows).

    Returns:
        The names, and where each came from: "phrase", "area", "nearest area" or "topic".
    """
    total_uses = inside.sum(axis=0)
    total = sizes.sum()
    topic_keys = {name_key(n) for n in topic_names}
    shape = np.array([_shape_factor(f) for f in forms])
    options: dict[int, list[tuple[float, int]]] = {}
    for g, members in enumerate(groups):
        least = coverage[members].min(axis=0)
        uses = inside[members].sum(axis=0)
        outside = (total_uses - uses) / max(1, total - sizes[members].sum())
        precision = uses / np.maximum(total_uses, 1)
        fits = np.flatnonzero(nameable & (least >= NAME_SUPPORT) & (least >= DISTINCT * outside))
        scored = [
            (least[k] * math.sqrt(precision[k]) * shape[k], int(k))
            for k in fits
            if name_key(forms[k]) not in topic_keys and not is_generic(forms[k])
        ]
        options[g] = sorted(scored, reverse=True)
    names: dict[int, str] = {}
    sources: dict[int, str] = {}
    taken: set[str] = set()

    def area(g: int) -> str | None:
        if votes is None:
            return None
        # A member topic named like the area is renamed afterwards (`rename_clashes`); another
        # topic's name is never taken.
        others = topic_keys - {name_key(topic_names[t]) for t in groups[g]}
        return area_name(votes, [rows_of(t) for t in groups[g]], taken | others)

    def take(g: int, name: str, source: str) -> None:
        names[g] = name
        sources[g] = source
        taken.add(name_key(name))

    # Groups of topics by a phrase they all write, the most confident first; then by an area.
    for g in sorted(options, key=lambda g: -(options[g][0][0] if options[g] else 0.0)):
        if len(groups[g]) == 1:
            continue
        for _, k in options[g]:
            name = display_name(forms[k], spelling)
            if name_key(forms[k]) not in taken and all(support(t, name) >= HOLDS for t in groups[g]):
                take(g, name, "phrase")
                break
    for g in sorted(range(len(groups)), key=lambda g: (-sizes[groups[g]].sum(), g)):
        if g in names:
            continue
        name, source = area(g), "area"
        if name is None and len(groups[g]) == 1:
            source = "phrase"
            for _, k in options[g]:
                phrase = display_name(forms[k], spelling)
                if name_key(forms[k]) not in taken and support(groups[g][0], phrase) >= HOLDS:
                    name = phrase
                    break
        if name is None and votes is not None:
            source = "nearest area"
            others = topic_keys - {name_key(topic_names[t]) for t in groups[g]}
            name = plurality_area(votes, np.concatenate([rows_of(t) for t in groups[g]]), taken | others)
        if name is None:
            # Nothing names the group but its largest topic: the first part of that topic's name
            # ("Regret bounds" for "Regret bounds & guarantees"), or the name itself.
            source = "topic"
            largest = topic_names[max(groups[g], key=lambda t: sizes[t])]
            first = largest.split(" & ")[0]
            name = first if name_key(first) not in taken else largest
        take(g, name, source)
    return [names[g] for g in range(len(groups))], [sources[g] for g in range(len(groups))]


def fit_themes(
    documents: list[str],
    embeddings: np.ndarray,
    labels: np.ndarray,
    topics: pd.DataFrame,
    *,
    phrases: PhraseCounts | None = None,
    n_themes: int | None = None,
    votes: AreaVotes | None = None,
) -> tuple[pd.DataFrame, dict[int, int]]:
    """Group the final topics into themes and name each one.

    `votes` (`pipeline.areas.area_votes` of these papers) lets the shipped research-area names
    join and name themes where the papers confirm them; without it only shared phrases do.

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
    topic_rows = [np.flatnonzero(rows == t) for t in range(len(topic_ids))]
    holds: dict[tuple[int, ...], bool] = {}

    def area_holds(members: list[int]) -> bool:
        key = tuple(sorted(members))
        if key not in holds:
            holds[key] = area_name(votes, [topic_rows[t] for t in key]) is not None
        return holds[key]

    groups = group_topics(
        coverage,
        inside,
        sizes,
        centroids,
        n_themes or theme_count(len(topic_ids)),
        nameable,
        area_holds if votes is not None else None,
    )
    names, sources = _theme_names(
        groups,
        coverage,
        inside,
        sizes,
        [forms[k] for k in useful],
        nameable,
        topic_names,
        phrases.spelling or {},
        lambda t, name: name_support(name, [documents[i] for i in topic_rows[t]], phrases.acronyms),
        lambda t: topic_rows[t],
        votes,
    )

    def share(g: int) -> float:
        """How far the name holds: the share of the theme's papers closest to its area, or the
        smallest share of a member topic's papers writing it."""
        if sources[g] in ("area", "nearest area"):
            return round(area_share(votes, np.concatenate([topic_rows[t] for t in groups[g]]), names[g]), 4)
        return round(
            min(
                name_support(names[g], [documents[i] for i in topic_rows[t]], phrases.acronyms)
                for t in groups[g]
            ),
            4,
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
            "name_source": sources[g],
            "name_share": share(g),
        }
        for theme, g in enumerate(order)
    ]
    return pd.DataFrame(table, columns=THEME_COLUMNS), theme_of


def rename_topics_named_like_themes(
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    documents: list[str],
    labels: np.ndarray,
    embeddings: np.ndarray,
    phrases: PhraseCounts | None = None,
) -> pd.Series:
    """The topics' names, where a theme took a topic's name (an area a topic is also called by) that
    topic's best name no theme and no other topic has: a topic and a theme never share a name.

    `documents`, `labels` and `embeddings` are the papers the names were chosen on, row for row.
    """
    theme_keys = {name_key(n) for n in themes["label"]}
    names = topics["label"].astype(str)
    clashing = names.map(name_key).isin(theme_keys)
    if not clashing.any():
        return names
    centroids = dict(zip(topics["topic_id"].astype(int), topics["centroid"], strict=True))
    fresh = name_groups(
        documents,
        labels,
        centroids,
        embeddings=embeddings,
        counts=phrases,
        forbid=set(themes["label"]) | set(names[~clashing]),
    )
    return names.where(~clashing, topics["topic_id"].map(lambda t: fresh.get(int(t), f"Topic {t}")))
