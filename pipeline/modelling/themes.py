"""Themes: a nested partition of the topics drawn from the papers' vectors, each named among its siblings.

Grouping comes first, from the data alone. Topics are merged by Ward's criterion on their centroids,
each topic weighing as many papers as it holds (`ward_merges`: the merge that least raises the
papers' spread around their theme's centre goes first), and the tree is cut at `theme_count` themes.
On a map of 6+ themes a theme holding more than `MAX_THEME_SHARE` of the papers is split along its
tree while its two halves are apart (their papers' silhouette is positive), and of the two trees
(topics weighing their papers, or one each) the cut whose themes hold together better is kept
(`group_topics`); docs/names.md has the rule and its measure. A name never joins or parts topics.

Names come after (`name_themes`). Candidates are the phrases the theme's papers write (theme-level
c-TF-IDF against the rest of the map) and the shipped research areas its papers write (the area's
name or a form `areas.tsv` lists; the papers' closeness to an area only decides which areas are
tried). Each is scored by how much more the theme's own papers write it than the papers of its
most similar sibling theme do (`contrast`), and must hold for every member topic (at least `HOLDS`
of each topic's papers write it). Where no single name holds for every member, two parts that
together do ("3D reconstruction & depth estimation"); where none does, the theme's largest lines,
two parts of its topics' names (`_lines`), never a broader name that does not hold. Never a phrase
more than a third of the map writes, nor one headed by it ("Large language models" on a
language-model conference), never the map's own field, never an area of a field few of the
theme's papers belong to, never generic, never a member topic's name; a theme of one topic takes a
name at least as broad as its topic's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from pipeline.naming.areas import AreaVotes
from pipeline.naming.names import (
    EVERYONE,
    OWN_WORDS,
    RANKED,
    Retrieval,
    _may_stand_alone,
    _shape_factor,
    as_in_text,
    common_keys,
    display_name,
    is_generic,
    name_groups,
    name_key,
    too_common,
)
from pipeline.naming.phrases import PhraseCounts, count_phrases, keywords_of
from pipeline.naming.support import uses_name

# name_source: "phrase" (a phrase its papers write), "area" (a research area of naming/areas.tsv its
# papers write), "phrase and area" (a name of two parts, one of each), "topics" (no umbrella holds:
# two parts of its member topics' names); name_share: the smallest share of a member topic's papers
# that write the name (see `name_themes`); the build adds name_written, the share of the theme's
# papers that do (`pipeline.commands.build.written_shares`).
THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids", "name_source", "name_share"]
# A name holds for a member topic when at least this share of its papers write a part of it.
HOLDS = 0.25
# A theme named by its lines takes the pair that holds furthest for its weakest member when this share
# of that member's papers write it; else its two largest topics' first parts (`_lines`).
LINES_FLOOR = 0.1
# On a map of at least `SPLIT_FROM` themes, a theme with more than this share of the papers is split
# along its tree while its halves are apart.
MAX_THEME_SHARE = 1 / 3
SPLIT_FROM = 6
# A candidate is used by at least this share of the theme's papers...
CANDIDATE_SHARE = 0.1
# ...at least this many times as often as by the papers of any sibling theme.
DISTINCT = 1.25
# An area more than half the map's papers are nearest to is the map's own field: it names no theme.
OWN_FIELD = 0.5
# A name of two parts counts this much of its contrast against a name of one part.
TWO_PARTS = 0.8
# Candidates per theme kept for pairing into two-part names.
SHORTLIST = 12
# A rebuild keeps the previous grouping while it is within this much of a fresh one's cohesion (the
# papers' silhouette by theme): new papers redraw the themes only when they call for it.
KEEP_SLACK = 0.005
# A rebuild's new topic joins its nearest theme when its cosine to the theme's centre is at least
# this share of the theme's least typical topic's.
JOIN_SPREAD = 0.9
# Papers whose silhouette decides whether a big theme's halves are apart (a seeded sample).
SPLIT_SAMPLE = 2_000


def theme_count(n_topics: int) -> int:
    """How many themes a map of `n_topics` topics aims at: about 1.5·√topics, at most 20.

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


# ---- grouping: from the papers' vectors only ----


def ward_merges(centroids: np.ndarray, sizes: np.ndarray) -> list[tuple[int, int]]:
    """Ward's agglomerative merges of the topics, each topic weighing its papers: the pair whose
    merge least raises the papers' within-group sum of squares first (Lance-Williams on the
    weighted centroids). Clusters are numbered as scipy numbers them: topics 0..n-1, and the cluster
    made by merge s is n + s.

    Examples:
        >>> ward_merges(np.array([[0.0, 0], [0, 0.1], [5, 5]]), np.array([10, 10, 10]))
        [(0, 1), (2, 3)]
    """
    n = len(centroids)
    means = np.asarray(centroids, dtype=np.float64).copy()
    weight = np.maximum(np.asarray(sizes, dtype=np.float64), 1.0)
    squared = ((means[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    cost = np.outer(weight, weight) / (weight[:, None] + weight[None, :]) * squared
    np.fill_diagonal(cost, np.inf)
    node = list(range(n))  # the cluster each slot holds
    alive = np.ones(n, dtype=bool)
    merges = []
    for step in range(n - 1):
        masked = np.where(alive[:, None] & alive[None, :], cost, np.inf)
        a, b = sorted(divmod(int(np.argmin(masked)), n))  # ties: the lowest slots, as np.argmin finds them
        merges.append((min(node[a], node[b]), max(node[a], node[b])))
        total = weight[a] + weight[b]
        means[a] = (weight[a] * means[a] + weight[b] * means[b]) / total
        weight[a] = total
        node[a] = n + step
        alive[b] = False
        others = np.flatnonzero(alive & (np.arange(n) != a))
        spread = ((means[others] - means[a]) ** 2).sum(axis=1)
        cost[a, others] = cost[others, a] = weight[others] * total / (weight[others] + total) * spread
    return merges


def _members(merges: list[tuple[int, int]], n: int) -> dict[int, list[int]]:
    """Topic indices under every cluster of the tree."""
    members = {t: [t] for t in range(n)}
    for step, (a, b) in enumerate(merges):
        members[n + step] = members[a] + members[b]
    return members


def cut_tree(
    merges: list[tuple[int, int]],
    n: int,
    n_themes: int,
    sizes: np.ndarray,
    apart: Callable[[list[int], list[int]], bool] | None = None,
) -> list[list[int]]:
    """The tree cut at `n_themes` clusters (the last merges undone first), then, on a cut of
    `SPLIT_FROM` or more, any cluster over `MAX_THEME_SHARE` of the papers split into its two
    halves while `apart` says they are apart: a nested partition, each topic in one cluster.

    Examples:
        >>> merges = ward_merges(np.array([[0.0, 0], [0, 0.1], [5, 5], [5, 5.2]]), np.ones(4))
        >>> cut_tree(merges, 4, 2, np.ones(4))
        [[0, 1], [2, 3]]
    """
    members = _members(merges, n)
    children = {n + step: pair for step, pair in enumerate(merges)}
    clusters = {2 * n - 2} if n > 1 else {0}
    for step in range(len(merges) - 1, -1, -1):
        if len(clusters) >= max(1, n_themes):
            break
        clusters.remove(n + step)
        clusters.update(merges[step])
    total = float(np.sum(sizes))
    refused: set[int] = set()
    while len(clusters) >= SPLIT_FROM and apart is not None:
        big = [
            c
            for c in clusters
            if c in children and c not in refused and sizes[members[c]].sum() > MAX_THEME_SHARE * total
        ]
        if not big:
            break
        cluster = max(big, key=lambda c: sizes[members[c]].sum())
        left, right = children[cluster]
        if apart(members[left], members[right]):
            clusters.remove(cluster)
            clusters.update((left, right))
        else:
            refused.add(cluster)
    return sorted((sorted(members[c]) for c in clusters), key=lambda m: m[0])


def _silhouette(embeddings: np.ndarray, rows: list[np.ndarray], seed: int) -> float:
    """The papers' mean cosine silhouette, grouped as `rows` says (a seeded sample of at most
    `SPLIT_SAMPLE` papers); 1.0 when there are fewer than two groups to compare."""
    from sklearn.metrics import silhouette_score

    rows = [r for r in rows if len(r)]
    if len(rows) < 2:
        return 1.0
    everyone = np.concatenate(rows)
    labels = np.concatenate([np.full(len(r), i) for i, r in enumerate(rows)])
    if len(everyone) > SPLIT_SAMPLE:
        keep = np.sort(np.random.default_rng(seed).choice(len(everyone), SPLIT_SAMPLE, replace=False))
        everyone, labels = everyone[keep], labels[keep]
    if len(set(labels.tolist())) < 2 or len(everyone) <= len(set(labels.tolist())):
        return 1.0
    return float(silhouette_score(embeddings[everyone], labels, metric="cosine"))


def group_topics(
    centroids: np.ndarray,
    sizes: np.ndarray,
    n_themes: int,
    embeddings: np.ndarray | None = None,
    topic_rows: list[np.ndarray] | None = None,
    seed: int = 0,
    previous: list[list[int]] | None = None,
) -> list[list[int]]:
    """Topic indices per theme, from the vectors alone (names play no part).

    Two Ward trees of the topic centroids are cut at `n_themes` (`cut_tree`): one where each topic
    weighs its papers, one where each weighs one (scipy's Ward on the centroids). With the papers'
    `embeddings` and each topic's `topic_rows`, a big theme is split while its halves are apart (their
    papers' silhouette is positive), and the cut whose themes hold together better (the papers'
    cosine silhouette by theme) is kept: big topics do not decide alone, nor do small ones. A
    rebuild's `previous` grouping (`keep_previous_groups`) is kept instead while it holds together
    within `KEEP_SLACK` of the better cut.

    Examples:
        >>> group_topics(np.eye(3)[[0, 0, 1]] + [[0, 0.1, 0], [0, 0, 0], [0, 0, 0]], np.array([10, 10, 10]), 2)
        [[0, 1], [2]]
    """
    if len(centroids) <= 1:
        return [list(range(len(centroids)))] if len(centroids) else []
    sizes = np.asarray(sizes, dtype=np.float64)
    if embeddings is None or topic_rows is None:
        return cut_tree(ward_merges(centroids, sizes), len(centroids), n_themes, sizes)

    def rows_of(topics: list[int]) -> np.ndarray:
        return np.concatenate([topic_rows[t] for t in topics])

    def apart(left: list[int], right: list[int]) -> bool:
        return _silhouette(embeddings, [rows_of(left), rows_of(right)], seed) > 0.0

    def cohesion(cut: list[list[int]]) -> float:
        return _silhouette(embeddings, [rows_of(g) for g in cut], seed)

    cuts = [
        cut_tree(ward_merges(centroids, weights), len(centroids), n_themes, sizes, apart)
        for weights in (sizes, np.ones(len(sizes)))
    ]
    scores = [cohesion(cut) for cut in cuts]
    best = cuts[int(np.argmax(scores))]
    if previous is not None and previous != best and cohesion(previous) >= max(scores) - KEEP_SLACK:
        return previous  # a rebuild: the papers do not call for new themes
    return best


def keep_previous_groups(
    topic_ids: list[int],
    centroids: np.ndarray,
    sizes: np.ndarray,
    previous_theme_of: dict[int, int],
) -> list[list[int]] | None:
    """A rebuild's themes: each topic that kept its id stays with the topics it was grouped with,
    and a new topic joins the theme whose centre is nearest when it is nearly as close to it as that
    theme's own least typical topic (`JOIN_SPREAD` of its cosine); the new topics that join none are
    a new area, grouped among themselves (Ward, as many topics a theme as the map has). New papers change only the
    themes they join; None when no topic kept its id (the themes are drawn afresh).

    Examples:
        >>> keep_previous_groups([3, 4, 9], np.eye(2)[[0, 1, 0]], np.array([10, 10, 5]), {3: 0, 4: 1})
        [[0, 2], [1]]
    """
    index = {t: i for i, t in enumerate(topic_ids)}
    kept: dict[int, list[int]] = {}
    for topic, theme in previous_theme_of.items():
        if topic in index:
            kept.setdefault(int(theme), []).append(index[topic])
    if not kept:
        return None
    groups = [sorted(members) for _, members in sorted(kept.items())]
    weights = np.asarray(sizes, dtype=np.float64)
    centres = np.stack([(weights[g, None] * centroids[g]).sum(axis=0) for g in groups])
    centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    spread = [float((centroids[g] @ centres[i]).min()) for i, g in enumerate(groups)]
    apart = []
    for topic in [i for i, t in enumerate(topic_ids) if t not in previous_theme_of]:
        nearest = int(np.argmax(centres @ centroids[topic]))
        if float(centroids[topic] @ centres[nearest]) >= JOIN_SPREAD * spread[nearest]:
            groups[nearest] = sorted([*groups[nearest], topic])
        else:
            apart.append(topic)
    if apart:  # a new area: its topics grouped among themselves, as many a theme as the map has
        per_theme = sum(len(g) for g in groups) / len(groups)
        count = max(1, round(len(apart) / per_theme))
        cut = group_topics(centroids[apart], weights[apart], count)
        groups += [[apart[i] for i in g] for g in cut]
    return sorted(groups, key=lambda g: g[0])


# ---- naming: among the siblings ----


@dataclass(frozen=True)
class Part:
    """One candidate part of a theme's name, and which papers it speaks for."""

    name: str  # as displayed
    key: str  # `name_key`, for distinctness
    source: str  # "phrase" or "area"
    used: np.ndarray  # bool per paper: writes the phrase, or the area's name or one of its forms
    shape: float = 1.0  # `_shape_factor`: two- and three-word phrases name an area best


def contrast(used: np.ndarray, theme_of_paper: np.ndarray, n_themes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per theme, the share of its papers `used` speaks for, and the largest such share among the
    other themes (its most similar sibling on this name).

    Examples:
        >>> inside, sibling = contrast(np.array([1, 1, 0, 1, 0, 0], bool), np.array([0, 0, 1, 1, 2, 2]), 3)
        >>> inside.tolist(), sibling.tolist()
        ([1.0, 0.5, 0.0], [0.5, 1.0, 1.0])
    """
    assigned = theme_of_paper >= 0
    sizes = np.maximum(np.bincount(theme_of_paper[assigned], minlength=n_themes), 1)
    inside = np.bincount(theme_of_paper[assigned & used], minlength=n_themes) / sizes
    return inside, _sibling_share(inside)


def _sibling_share(inside: np.ndarray) -> np.ndarray:
    """Per theme, the largest of the other themes' shares in `inside`."""
    order = np.argsort(-inside, kind="stable")
    second = inside[order[1]] if len(inside) > 1 else 0.0
    return np.where(np.arange(len(inside)) == order[0], second, inside[order[0]])


def _phrase_parts(
    phrases: PhraseCounts,
    keyed: tuple[sparse.csr_matrix, list[str]],
    theme_of_paper: np.ndarray,
    n_themes: int,
    allowed: Callable[[str], bool],
) -> dict[int, list[tuple[float, float, Part]]]:
    """Per theme, its phrases that may name it: (contrast, inside / sibling share, part), for every
    phrase a theme's papers write at least `CANDIDATE_SHARE` of the time and more than any sibling's.
    `keyed` is `_key_matrix(phrases)`."""
    matrix, forms = keyed
    assigned = np.flatnonzero(theme_of_paper >= 0)
    indicator = sparse.csr_matrix(
        (np.ones(len(assigned)), (theme_of_paper[assigned], assigned)), shape=(n_themes, len(theme_of_paper))
    )
    sizes = np.maximum(np.bincount(theme_of_paper[assigned], minlength=n_themes), 1).astype(np.float64)
    shares = sparse.diags(1 / sizes) @ (indicator @ matrix).tocsc()
    # Only phrases some theme writes enough are candidates: the rest never become dense.
    useful = np.flatnonzero(np.asarray((shares >= CANDIDATE_SHARE).sum(axis=0)).ravel() >= 1)
    inside_all = np.asarray(shares[:, useful].todense())
    columns = matrix.tocsc()
    found: dict[int, list[tuple[float, float, Part]]] = {g: [] for g in range(n_themes)}
    for j, k in enumerate(useful.tolist()):
        form = forms[k]
        inside = inside_all[:, j]
        sibling = _sibling_share(inside)
        fits = np.flatnonzero((inside >= CANDIDATE_SHARE) & (inside > sibling))
        if not len(fits) or not allowed(form):
            continue
        used = np.zeros(len(theme_of_paper), dtype=bool)
        used[columns[:, k].indices] = True
        part = Part(
            display_name(form, phrases.spelling or {}), name_key(form), "phrase", used, _shape_factor(form)
        )
        for g in fits.tolist():
            found[g].append(((inside[g] - sibling[g]) * part.shape, inside[g] / max(sibling[g], 1e-9), part))
    return found


def _area_parts(
    votes: AreaVotes,
    theme_of_paper: np.ndarray,
    n_themes: int,
    rows_of_theme: list[np.ndarray],
    documents: list[str],
    acronyms: dict[str, str],
) -> dict[int, list[tuple[float, float, Part]]]:
    """Per theme, the research areas that may name it, scored by `contrast` on the papers that
    write the area (its name or a form `areas.tsv` lists: `uses_name`).

    Closeness only chooses which areas are tried: those among the `CLOSE` nearest of their grain
    for `CANDIDATE_SHARE` of a theme's papers (its nearest field, for a field). An area that no
    paper writes is never a name, however near. Never an area more than `EVERYONE` of the map's
    papers write, nor the map's own field (the area most of the map is nearest to, `OWN_FIELD`);
    a field's name only for a theme most of whose papers are nearest to that field."""
    found: dict[int, list[tuple[float, float, Part]]] = {g: [] for g in range(n_themes)}
    assigned = theme_of_paper >= 0
    fields = votes.nearest.get("field")
    theme_field = [
        None if fields is None else Counter(fields[r].tolist()).most_common(1)[0][0] for r in rows_of_theme
    ]
    for grain, nearest in votes.nearest.items():
        # A field is one of a dozen: a paper is in the field it is nearest to, not in its three nearest.
        close = votes.close[grain] if votes.close and grain != "field" else nearest[:, None]
        tried = set()
        for rows in rows_of_theme:
            near, counts = np.unique(close[rows], return_counts=True)
            tried.update(near[counts >= CANDIDATE_SHARE * len(rows)].tolist())
        for area in sorted(tried):
            if (nearest[assigned] == area).mean() > OWN_FIELD:
                continue
            name = votes.areas[area].name
            used = uses_name(name, documents, acronyms)
            inside, sibling = contrast(used, theme_of_paper, n_themes)
            by_theme = inside * np.bincount(theme_of_paper[assigned], minlength=n_themes)
            if used[assigned].mean() > EVERYONE and by_theme.max() <= 0.5 * by_theme.sum():
                continue  # everyone writes it: the map's own field
            part = Part(name, name_key(name), "area", used)
            for g in np.flatnonzero((inside >= CANDIDATE_SHARE) & (inside > sibling)).tolist():
                if grain == "field" and theme_field[g] != area:
                    continue
                found[g].append((inside[g] - sibling[g], inside[g] / max(sibling[g], 1e-9), part))
    return found


def _key_matrix(counts: PhraseCounts) -> tuple[sparse.csr_matrix, list[str]]:
    """Papers x phrase keys (plural and singular forms as one key, 1 where the paper writes it), and
    each key's commonest form."""
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


@dataclass(frozen=True)
class Option:
    """A theme's candidate name: one or two parts, how far it holds, how well it tells the theme apart."""

    parts: tuple[Part, ...]
    score: float  # contrast, two parts discounted by `TWO_PARTS`
    least: float  # the smallest share of a member topic's papers it speaks for

    @property
    def name(self) -> str:
        first, *rest = self.parts
        return " & ".join([first.name, *(as_in_text(p.name, {}) for p in rest)])

    @property
    def source(self) -> str:
        sources = {p.source for p in self.parts}
        return "phrase and area" if len(sources) == 2 else sources.pop()


def _options(
    parts: list[tuple[float, float, Part]],
    members: list[np.ndarray],
    theme_of_paper: np.ndarray,
    g: int,
    n_themes: int,
    floor: float,
) -> list[Option]:
    """A theme's candidate names, best first: one part that holds for every member (`HOLDS`) and
    tells the theme apart (`DISTINCT`); else two such parts that together hold; else one part that
    holds and is used more inside than by any sibling; else none. A theme of one
    topic asks each name to speak for at least `floor` of its papers (its topic's name's share).

    `parts` are (contrast, inside / sibling share, part), every one used more inside than outside."""
    theme_rows = np.concatenate(members) if members else np.array([], dtype=np.int64)

    def least(used: np.ndarray) -> float:
        return min(float(used[rows].mean()) for rows in members if len(rows))

    def holds(option: Option, used: np.ndarray) -> bool:
        return option.least >= HOLDS and float(used[theme_rows].mean()) >= floor

    ranked = sorted(parts, key=lambda c: -c[0])
    singles = [(Option((p,), s, least(p.used)), ratio) for s, ratio, p in ranked]
    best = [o for o, ratio in singles if ratio >= DISTINCT and holds(o, o.parts[0].used)]
    if best:
        return best
    shortlist = [p for _, ratio, p in ranked if ratio >= DISTINCT][:SHORTLIST]
    pairs = []
    for i, p in enumerate(shortlist):
        for q in shortlist[i + 1 :]:
            pair = _pair(p, q, members, theme_of_paper, g, n_themes)
            if pair is not None and pair[1] >= DISTINCT * pair[2] and holds(pair[0], p.used | q.used):
                pairs.append(pair[0])
    if pairs:
        return sorted(pairs, key=lambda o: -o.score)
    # Nothing that tells the theme apart holds for every member: one part that holds, else nothing
    # (the theme is then named by its largest lines, `_lines`), never a broader name that does not hold.
    return [o for o, _ in singles if holds(o, o.parts[0].used)]


# A phrase a member topic's papers write at least this share of the time may be half of a theme's
# pair (`_member_pairs`); the pairs tried are those of the `POOL` phrases most written in the theme.
MEMBER_SHARE = 0.1
POOL = 40


def _member_parts(
    keyed: tuple[sparse.csr_matrix, list[str]],
    phrases: PhraseCounts,
    members: list[int],
    topic_rows: list[np.ndarray],
    may_name: Callable[[str], bool],
    member_keys: set[str],
) -> list[tuple[float, float, Part]]:
    """The phrases at least `MEMBER_SHARE` of a member topic's papers write (that may name, and are
    no member's whole name), as parts of a theme's pair: (share of the theme's papers, 1, part)."""
    matrix, forms = keyed
    rows = np.concatenate([topic_rows[t] for t in members])
    written = np.zeros(matrix.shape[1], dtype=bool)
    for t in members:
        if len(topic_rows[t]):
            written |= np.asarray(matrix[topic_rows[t]].mean(axis=0)).ravel() >= MEMBER_SHARE
    columns = matrix.tocsc()
    theme_share = np.asarray(matrix[rows].mean(axis=0)).ravel()
    found = []
    for k in np.flatnonzero(written)[np.argsort(-theme_share[written], kind="stable")].tolist():
        key = name_key(forms[k])
        if key in member_keys or not may_name(forms[k]):
            continue
        used = np.zeros(matrix.shape[0], dtype=bool)
        used[columns[:, k].indices] = True
        name = display_name(forms[k], phrases.spelling or {})
        found.append((float(theme_share[k]), 1.0, Part(name, key, "phrase", used, _shape_factor(forms[k]))))
        if len(found) >= POOL:
            break
    return found


def _member_pairs(
    pool: list[tuple[float, float, Part]],
    members: list[np.ndarray],
    theme_of_paper: np.ndarray,
    g: int,
    n_themes: int,
) -> list[Option]:
    """A theme's names of two parts from `pool` (phrases and areas its papers write) such that at
    least `HOLDS` of each member topic's papers write one of the two, and the theme writes them more
    than any sibling theme: the pairs that tell it apart most first."""
    parts = list({p.key: p for _, _, p in pool}.values())
    if len(parts) < 2:
        return []
    used = np.stack([p.used for p in parts], axis=1)  # papers x parts
    holds = np.ones((len(parts), len(parts)), dtype=bool)
    for rows in members:
        if not len(rows):
            continue
        block = used[rows].astype(np.float64)
        together = block.T @ block
        alone = np.diag(together)
        holds &= (alone[:, None] + alone[None, :] - together) >= HOLDS * len(rows)
    options = []
    for i, j in zip(*np.nonzero(np.triu(holds, k=1))):
        pair = _pair(parts[i], parts[j], members, theme_of_paper, g, n_themes)
        if pair is not None and pair[1] > pair[2]:
            options.append(pair[0])
    return sorted(options, key=lambda o: (-o.score, o.name))


def _pair(
    p: Part, q: Part, members: list[np.ndarray], theme_of_paper: np.ndarray, g: int, n_themes: int
) -> tuple[Option, float, float] | None:
    """Two parts as one name (the one more of the theme writes first; None when they share a word),
    with the share of theme `g`'s papers writing either and of its most-writing sibling's."""
    if set(p.key.split()) & set(q.key.split()):
        return None
    union = p.used | q.used
    inside, sibling = contrast(union, theme_of_paper, n_themes)
    theme_rows = np.concatenate(members)
    first, second = (p, q) if p.used[theme_rows].mean() >= q.used[theme_rows].mean() else (q, p)
    least = min(float(union[rows].mean()) for rows in members if len(rows))
    score = (inside[g] - sibling[g]) * TWO_PARTS * min(p.shape, q.shape)
    return Option((first, second), score, least), inside[g], sibling[g]


def _pointing(g: int, options: list[Option], ranker: Retrieval) -> list[Option]:
    """The `RANKED` of a theme's `options` whose parts' cosines to the themes, averaged, point at
    theme `g` by the largest margin (`names._pointing_pairs` for topics), encoded for the ranker."""
    if not options:
        return []
    ranker.prepare(sorted({p.name for o in options for p in o.parts}))
    predicted = ranker.margins(g, [[p.name for p in o.parts] for o in options])
    chosen = [options[i] for i in np.argsort(-predicted, kind="stable")[:RANKED].tolist()]
    ranker.prepare([o.name for o in chosen])
    return chosen


def _lines(
    members: list[int],
    topic_rows: list[np.ndarray],
    topic_names: list[str],
    documents: list[str],
    acronyms: dict[str, str],
    spelling: dict[str, str],
    taken: set[str] = frozenset(),
    pick: Callable[[list[str]], int] = lambda names: 0,
) -> str:
    """A theme no umbrella holds for, named by what is there: two short parts of its member topics'
    names, from two members, none a part another theme's name has taken: the pairs that hold
    furthest for its weakest member (up to `HOLDS`, then the ones most of the theme's papers write),
    where that is at least `LINES_FLOOR`, the first `RANKED` of them offered to `pick` (the
    encoder's choice, `Retrieval.best`); else its largest lines, the first parts of its two largest
    topics' names ("Code generation & theorem proving")."""
    order = sorted(members, key=lambda t: (-len(topic_rows[t]), t))
    if len(order) == 1:
        return topic_names[order[0]].split(" & ")[0]
    parts = [(t, part) for t in order for part in topic_names[t].split(" & ")[:2]]
    texts = {t: [documents[i] for i in topic_rows[t]] for t in order}
    written = {(t, part): {u: uses_name(part, texts[u], acronyms) for u in order} for t, part in parts}
    pairs = []
    for i, (t, p) in enumerate(parts):
        for u, q in parts[i + 1 :]:
            if u == t or name_key(p) == name_key(q) or {name_key(p), name_key(q)} & taken:
                continue
            shares = [float((written[t, p][m] | written[u, q][m]).mean()) for m in order]
            key = (
                min(round(min(shares), 2), HOLDS),
                sum(s * len(topic_rows[m]) for s, m in zip(shares, order)),
            )
            if key > (LINES_FLOOR, -1.0):
                pairs.append((key, p, q))
    pairs.sort(key=lambda pair: pair[0], reverse=True)
    names = [f"{p[:1].upper() + p[1:]} & {as_in_text(q, spelling)}" for _, p, q in pairs[:RANKED]]
    if names:
        return names[pick(names)]
    first, second = (topic_names[t].split(" & ")[0] for t in order[:2])
    return f"{first[:1].upper() + first[1:]} & {as_in_text(second, spelling)}"


def name_themes(
    groups: list[list[int]],
    topic_rows: list[np.ndarray],
    topic_names: list[str],
    n_papers: int,
    phrases: PhraseCounts,
    votes: AreaVotes | None,
    documents: list[str],
    may_name: Callable[[str], bool],
    ranker: Retrieval | None = None,
) -> list[tuple[str, str, float]]:
    """Per group of topics, a name that tells it apart from its siblings: (name, source, share).

    The most confident theme chooses first; no two themes share a part of a name. `share` is the
    smallest share of a member topic's papers the name speaks for (papers using its words, by
    `uses_name`), so a name that holds says so and one that does not, too. With `ranker` (the
    themes' mean vectors, `names.Retrieval`), of a theme's first `RANKED` free names the one that
    points at it first, by the largest margin. A theme no umbrella holds for is named by a pair of
    its members' phrases that holds for each (`_member_pairs`), else by its largest lines (`_lines`).
    """
    n_themes = len(groups)
    theme_of_paper = np.full(n_papers, -1, dtype=np.int64)
    for g, members in enumerate(groups):
        for t in members:
            theme_of_paper[topic_rows[t]] = g
    rows_of_theme = [np.concatenate([topic_rows[t] for t in members]) for members in groups]
    keyed = _key_matrix(phrases)
    found = _phrase_parts(phrases, keyed, theme_of_paper, n_themes, may_name)
    if votes is not None:
        for g, parts in _area_parts(
            votes, theme_of_paper, n_themes, rows_of_theme, documents, phrases.acronyms
        ).items():
            found[g].extend(parts)
    choices, pools = {}, {}
    for g, members in enumerate(groups):
        # A theme of one topic takes a name at least as broad as its topic's.
        floor = 0.0
        if len(members) == 1:
            floor = float(
                uses_name(
                    topic_names[members[0]], [documents[i] for i in topic_rows[members[0]]], phrases.acronyms
                ).mean()
            )
        member_keys = {name_key(topic_names[t]) for t in members}
        parts = [c for c in found[g] if c[2].key not in member_keys]
        choices[g] = _options(parts, [topic_rows[t] for t in members], theme_of_paper, g, n_themes, floor)

        def pairs(g=g, members=members, parts=parts, member_keys=member_keys) -> list[Option]:
            pool = parts + _member_parts(keyed, phrases, members, topic_rows, may_name, member_keys)
            return _member_pairs(pool, [topic_rows[t] for t in members], theme_of_paper, g, n_themes)

        def lines(g=g, members=members) -> list[Option]:
            """Pairs that hold, a member topic's whole name now a part too ("Retrieval-augmented
            generation & uncertainty", as `_lines` names a theme), for the encoder to rank."""
            pool = found[g] + _member_parts(keyed, phrases, members, topic_rows, may_name, set())
            return _member_pairs(pool, [topic_rows[t] for t in members], theme_of_paper, g, n_themes)

        pools[g] = lines if len(members) > 1 else list
        if not choices[g] and len(members) > 1:
            choices[g] = pairs()
    if ranker is not None:
        ranker.prepare([o.name for g in range(n_themes) for o in choices[g][:RANKED]])
    taken: set[str] = set()
    named: dict[int, Option | None] = {}
    order = sorted(range(n_themes), key=lambda g: (-(choices[g][0].score if choices[g] else -1.0), g))
    for g in order:
        free = [o for o in choices[g] if not {p.key for p in o.parts} & taken][: RANKED if ranker else 1]
        if ranker is not None and free and not any(ranker.rank(g, o.name)[0] for o in free):
            # None points at the theme first: the pairs that hold for every member are offered too.
            offered = {o.name for o in free}
            more = [o for o in pools[g]() if o.name not in offered and not {p.key for p in o.parts} & taken]
            free += _pointing(g, more, ranker)
        named[g] = (free[ranker.best(g, [o.name for o in free]) if ranker else 0]) if free else None
        if named[g] is not None:
            taken.update(p.key for p in named[g].parts)
    result = []
    for g, members in enumerate(groups):
        option = named[g]
        if option is None:  # no umbrella holds: its largest lines, from its topics' names
            name = _lines(
                members,
                topic_rows,
                topic_names,
                documents,
                phrases.acronyms,
                phrases.spelling or {},
                taken,
                (lambda names, g=g: ranker.best(g, names)) if ranker else (lambda names: 0),
            )
            taken.update(name_key(part) for part in name.split(" & "))
            result.append((name, "topics", round(_share(name, members, topic_rows, documents, phrases), 4)))
            continue
        result.append(
            (
                option.name,
                option.source,
                round(_share(option.name, members, topic_rows, documents, phrases), 4),
            )
        )
    return result


def _share(
    name: str,
    members: list[int],
    topic_rows: list[np.ndarray],
    documents: list[str],
    phrases: PhraseCounts,
) -> float:
    """The smallest share of a member topic's papers that write the name (`uses_name`)."""
    return min(
        (
            float(uses_name(name, [documents[i] for i in topic_rows[t]], phrases.acronyms).mean())
            for t in members
            if len(topic_rows[t])
        ),
        default=0.0,
    )


def fit_themes(
    documents: list[str],
    embeddings: np.ndarray,
    labels: np.ndarray,
    topics: pd.DataFrame,
    *,
    phrases: PhraseCounts | None = None,
    n_themes: int | None = None,
    votes: AreaVotes | None = None,
    previous_theme_of: dict[int, int] | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> tuple[pd.DataFrame, dict[int, int]]:
    """Group the final topics into themes (`group_topics`) and name each among its siblings (`name_themes`).

    On a rebuild, `previous_theme_of` (topic id -> theme id of the previous map) keeps the previous
    grouping for the topics that kept their ids (`keep_previous_groups`) unless a fresh grouping
    holds together better by more than `KEEP_SLACK` (`group_topics`: a map whose themes were drawn
    by older rules is regrouped; one drawn by these is kept).

    `votes` (`pipeline.naming.areas.area_votes` of these papers) adds the shipped research-area names
    to the candidates; without it only the phrases the papers write can name a theme. `encode` (the
    map's encoder) ranks the names the words back by how well they point at their theme.

    Runs after topic ids are final (renumbered, or matched to a previous map), so it reads only
    `labels` and the topics table (`topic_id`, `label`, `centroid`).

    Returns:
        The themes table (theme_id, label, keywords, size, topic_ids, name_source, name_share;
        theme 0 the largest) and topic id -> theme id.
    """
    labels = np.asarray(labels)
    if topics.empty:
        return pd.DataFrame(columns=THEME_COLUMNS), {}
    topic_ids = topics["topic_id"].astype(int).tolist()
    topic_names = topics["label"].astype(str).tolist()
    centroids = np.stack([np.asarray(c, dtype=np.float32) for c in topics["centroid"]])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    phrases = phrases or count_phrases(documents)
    index_of = {t: i for i, t in enumerate(topic_ids)}
    rows = np.array([index_of.get(int(t), -1) for t in labels.tolist()], dtype=np.int64)
    topic_rows = [np.flatnonzero(rows == t) for t in range(len(topic_ids))]
    sizes = np.array([len(r) for r in topic_rows], dtype=np.float64)
    vectors = np.asarray(embeddings, dtype=np.float32)
    groups = group_topics(
        centroids,
        sizes,
        n_themes or theme_count(len(topic_ids)),
        vectors,
        topic_rows,
        previous=keep_previous_groups(topic_ids, centroids, sizes, previous_theme_of or {}),
    )
    spelling = phrases.spelling or {}
    theme_rows = np.full(len(rows), -1)
    for g, members in enumerate(groups):
        theme_rows[np.isin(rows, members)] = g
    common = common_keys(phrases, theme_rows)
    names = name_themes(
        groups,
        topic_rows,
        topic_names,
        len(labels),
        phrases,
        votes,
        documents,
        lambda form: (
            _may_stand_alone(form, spelling) and not is_generic(form) and not too_common(form, common)
        ),
        None
        if encode is None
        else Retrieval(
            encode,
            list(range(len(groups))),
            np.stack([vectors[np.isin(rows, members)].mean(axis=0) for members in groups]),
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
            "label": names[g][0],
            "keywords": keywords.get(theme, []),
            "size": int((paper_themes == theme).sum()),
            "topic_ids": sorted(topic_ids[t] for t in groups[g]),
            "name_source": names[g][1],
            "name_share": names[g][2],
        }
        for theme, g in enumerate(order)
    ]
    return pd.DataFrame(table, columns=THEME_COLUMNS), theme_of


def name_topics_among_siblings(
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    documents: list[str],
    labels: np.ndarray,
    embeddings: np.ndarray,
    phrases: PhraseCounts | None = None,
    kept: dict[int, str] | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> pd.Series:
    """The topics' names, each telling its topic apart from the other topics of its theme.

    Topics are named again on the whole map (`name_groups`), each name written at least
    `names.SIBLING_LIFT` times as often by its topic's papers as by any sibling topic's; no topic
    takes a theme's name or another topic's. `kept` (topic id -> name) are names a rebuild carries
    from the previous map: they stay where no theme has taken them. `documents`, `labels` and
    `embeddings` are the papers the names were chosen on, row for row. With the map's `encode`,
    names the words back are ranked by how well they point at their own topic (`names.Retrieval`).
    """
    kept = {
        t: n for t, n in (kept or {}).items() if name_key(n) not in {name_key(x) for x in themes["label"]}
    }
    centroids = dict(zip(topics["topic_id"].astype(int), topics["centroid"], strict=True))
    siblings = {
        int(t): [int(s) for s in members if s != t] for members in themes["topic_ids"] for t in members
    }
    fresh = name_groups(
        documents,
        labels,
        centroids,
        embeddings=embeddings,
        counts=phrases,
        forbid=set(themes["label"].astype(str)) | set(kept.values()),
        siblings=siblings,
        encode=encode,
        distinct=OWN_WORDS,
    )
    return topics["topic_id"].map(lambda t: kept.get(int(t)) or fresh.get(int(t), f"Topic {t}"))
