"""Topic identity across rebuilds: match a new build's topics to the previous map's and record what changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError
from pipeline.mapfolder.files import EMBEDDINGS, LINEAGE_COLUMNS, MAX_TOPIC_ID, PAPERS, TOPICS, new_id
from pipeline.mapfolder.manifest import read_manifest
from pipeline.modelling.neighbours import topic_centroids
from pipeline.modelling.theme_lineage import gone_identities

STATUSES = ("kept", "grown", "shrunk", "split", "merged", "new", "gone")

# A previous and a new topic are "the same topic" when, over the papers both maps hold, their
# memberships overlap at least this much (Jaccard). A third keeps a topic through a split into two
# halves on the larger half, and a merge of two equal topics on one of them.
MIN_JACCARD = 1 / 3
# A topic whose shared papers are gone (or a map sharing no papers) can still be recognised by
# content: all-MiniLM topic centroids of the same subject from two builds sit far above this;
# neighbouring subjects of one corpus sit below it.
MIN_CENTROID_SIMILARITY = 0.85
# A topic keeps its name unless its content moved: its centroid turned further than this...
NAME_CENTROID_SIMILARITY = 0.9
# ...or fewer than half of its shared papers are still together.
NAME_JACCARD = 0.5
# A kept topic's content moved (its name is derived again) when fewer than this share of its previous
# keywords, or of its previous central papers, are still its own.
SAME_CONTENT = 0.5
# Part of a previous topic counts as having gone somewhere (split, merged) when it is at least
# MIN_PART papers and either this share of the topic's shared papers or most of the receiving topic's.
PART_SHARE = 0.25
MIN_PART = 2


@dataclass(frozen=True)
class PreviousMap:
    """What a rebuild needs of the previous map: memberships, topic names and centroids."""

    topic_of: dict[str, int]  # doc_id -> topic_id (-1 unassigned)
    topics: pd.DataFrame  # topic_id, label (and, where the map has them, keywords, representative_doc_ids)
    centroids: dict[int, np.ndarray]  # topic_id -> unit centroid
    next_topic_id: int  # the smallest id never used by this map or its ancestors
    name: str | None = None
    fingerprint: str | None = None
    config: dict | None = None  # the previous build's resolved settings (manifest "config")
    positions: dict[str, tuple[float, float]] | None = None  # doc_id -> (x, y) on the previous map
    theme_of: dict[int, int] | None = None  # topic_id -> theme_id on the previous map
    theme_labels: dict[int, str] | None = None  # theme_id -> name on the previous map
    next_theme_id: int = 0  # the smallest theme id never used by this map or its ancestors
    folder: Path | None = None  # where the previous map is (its stored vectors are read from there)
    gone_themes: dict[int, dict] | None = None  # theme_id -> {"label", "topic_ids"} of themes gone by then


@dataclass(frozen=True)
class Lineage:
    """How a new build's topics relate to the previous map's.

    Attributes:
        mapping: new build's provisional topic id -> final topic id (-1 -> -1).
        keep_label: final topic id -> previous label, for matched topics whose content did not move.
        table: the lineage table (`LINEAGE_COLUMNS`), one row per new topic and per gone topic.
        next_topic_id: the smallest id not used by this map or any map before it.
    """

    mapping: dict[int, int]
    keep_label: dict[int, str]
    table: pd.DataFrame
    next_topic_id: int
    # final topic id -> why its content moved (most keywords or central papers changed): its name is
    # derived again, and a curated rename of it is flagged for review (`content_moved`)
    moved: dict[int, str] = field(default_factory=dict)


def match_topics(
    previous: PreviousMap,
    doc_ids: list[str] | np.ndarray,
    labels: np.ndarray,
    labels_by_topic: dict[int, str],
    centroids: dict[int, np.ndarray],
) -> Lineage:
    """Give the new build's topics the ids (and, unless they moved, the names) of the previous map's.

    Matching runs in rounds that never give an id twice: a previous topic most of whose shared
    papers are in one new topic, where no other previous topic has as many, keeps its id there; the
    rest are matched one-to-one (Hungarian) by membership overlap on the papers both maps hold
    (Jaccard at least `MIN_JACCARD`), then,
    for topics still unmatched, by centroid similarity (at least `MIN_CENTROID_SIMILARITY`). Other
    new topics get fresh ids from `previous.next_topic_id` up, in their provisional order (by size),
    so an id is never reused.

    Args:
        previous: the previous map (see `read_previous`).
        doc_ids: the new build's doc_id per paper.
        labels: the new build's provisional topic per paper (-1 unassigned).
        labels_by_topic: provisional topic id -> the name the new build gave it.
        centroids: provisional topic id -> unit centroid in the new build.

    Examples:
        >>> before = PreviousMap(topic_of={"a": 7, "b": 7, "c": 9}, topics=pd.DataFrame(
        ...     {"topic_id": [7, 9], "label": ["Optimal transport", "Diffusion"]}), centroids={},
        ...     next_topic_id=12)
        >>> lineage = match_topics(before, ["a", "b", "c", "d"], np.array([1, 1, 0, 0]),
        ...     {0: "Diffusion models", 1: "OT"}, {})
        >>> lineage.mapping, lineage.next_topic_id
        ({-1: -1, 0: 9, 1: 7}, 12)
        >>> lineage.table[["topic_id", "status"]].values.tolist()
        [[7, 'kept'], [9, 'grown']]
    """
    ov = _overlaps(previous, doc_ids, labels, labels_by_topic)
    matched = _match_by_papers(ov)
    centroid_sim = _match_by_centroid(ov, matched, previous, centroids)
    next_topic_id = max([previous.next_topic_id, *[t + 1 for t in ov.old_ids]])
    mapping = {-1: -1}
    for new in ov.new_ids:
        if new in matched:
            mapping[new] = matched[new]
        else:
            mapping[new] = new_id(next_topic_id, "topic")
            next_topic_id += 1
    table = _lineage_table(ov, matched, mapping)
    keep_label = _kept_names(ov, matched, mapping, centroid_sim, previous, centroids)
    return Lineage(mapping=mapping, keep_label=keep_label, table=table, next_topic_id=next_topic_id)


@dataclass(frozen=True)
class _Overlap:
    """How the previous map's topics and the new build's share papers (what every matching step reads)."""

    new_ids: list[int]
    old_ids: list[int]
    old_labels: dict[int, str]
    old_of: np.ndarray  # per paper of the new build: its previous topic (-2: not on the previous map)
    labels: np.ndarray  # per paper: the new build's provisional topic
    overlap: np.ndarray  # [i, j]: papers in previous topic old_ids[i] and new topic new_ids[j]
    old_shared: np.ndarray  # per previous topic: its papers the new build holds
    new_shared: np.ndarray  # per new topic: its papers the previous map held
    jaccard: np.ndarray
    old_size: dict[int, int]  # each previous topic's size on the previous map
    old_index: dict[int, int]
    new_index: dict[int, int]


def _overlaps(
    previous: PreviousMap, doc_ids, labels: np.ndarray, labels_by_topic: dict[int, str]
) -> _Overlap:
    doc_ids = np.asarray(doc_ids, dtype=object)
    labels = np.asarray(labels)
    new_ids = sorted(int(t) for t in labels_by_topic)
    old_ids = [int(t) for t in previous.topics["topic_id"]]
    old_labels = dict(zip(old_ids, previous.topics["label"].astype(str), strict=True))
    old_of = np.array([previous.topic_of.get(d, -2) for d in doc_ids.tolist()])  # -2: not in previous
    shared = old_of != -2
    old_index = {t: i for i, t in enumerate(old_ids)}
    new_index = {t: j for j, t in enumerate(new_ids)}
    overlap = np.zeros((len(old_ids), len(new_ids)), dtype=np.int64)
    for old, new in zip(old_of[shared].tolist(), labels[shared].tolist(), strict=True):
        if old in old_index and new in new_index:
            overlap[old_index[old], new_index[new]] += 1
    old_shared = np.array([(old_of == t).sum() for t in old_ids], dtype=np.int64)
    old_size = pd.Series(list(previous.topic_of.values()), dtype=np.int64).value_counts().to_dict()
    new_shared = np.array([((labels == t) & shared).sum() for t in new_ids], dtype=np.int64)
    union = old_shared[:, None] + new_shared[None, :] - overlap
    jaccard = np.divide(overlap, union, out=np.zeros(overlap.shape), where=union > 0)
    return _Overlap(
        new_ids,
        old_ids,
        old_labels,
        old_of,
        labels,
        overlap,
        old_shared,
        new_shared,
        jaccard,
        old_size,
        old_index,
        new_index,
    )


def _match_by_papers(ov: _Overlap) -> dict[int, int]:
    """New provisional id -> previous id, by the papers they share.

    First the plain cases: most of a previous topic's papers are in one new topic, and no other
    previous topic has as many papers there. Each new topic has at most one such claimant, so this
    is one-to-one; a best-total assignment could otherwise trade such a topic's id away. Then the
    rest one-to-one (Hungarian) by Jaccard overlap of at least `MIN_JACCARD`.
    """
    from scipy.optimize import linear_sum_assignment

    overlap, old_ids, new_ids = ov.overlap, ov.old_ids, ov.new_ids
    matched: dict[int, int] = {}
    for i, old in enumerate(old_ids):
        if overlap.size and ov.old_shared[i]:
            j = int(overlap[i].argmax())
            rivals = np.delete(overlap[:, j], i)
            if 2 * overlap[i, j] > ov.old_shared[i] and (rivals.size == 0 or overlap[i, j] > rivals.max()):
                matched[new_ids[j]] = old
    rest_old = [i for i, old in enumerate(old_ids) if old not in matched.values()]
    rest_new = [j for j, new in enumerate(new_ids) if new not in matched]
    if rest_old and rest_new:
        # Only pairs that may match take part: a pair below the threshold would otherwise count
        # towards the best total, win it, and then be dropped.
        sub = ov.jaccard[np.ix_(rest_old, rest_new)]
        rows, cols = linear_sum_assignment(-np.where(sub >= MIN_JACCARD, sub, 0.0))
        for i, j in zip(rows, cols, strict=True):
            if sub[i, j] >= MIN_JACCARD:
                matched[new_ids[rest_new[j]]] = old_ids[rest_old[i]]
    return matched


def _match_by_centroid(
    ov: _Overlap, matched: dict[int, int], previous: PreviousMap, centroids: dict[int, np.ndarray]
) -> dict[int, float]:
    """Second round, by content (adds to `matched`): only topics with no overlap evidence elsewhere
    take part, so a topic whose papers visibly went to another topic is not "recognised" by its
    centroid. Returns the centroid similarity of each topic matched so."""
    from scipy.optimize import linear_sum_assignment

    centroid_sim: dict[int, float] = {}
    free_new = [t for t in ov.new_ids if t not in matched and t in centroids]
    free_old = [t for t in ov.old_ids if t not in matched.values() and t in previous.centroids]
    if free_new and free_old:
        similarity = np.array(
            [[float(previous.centroids[o] @ centroids[n]) for n in free_new] for o in free_old]
        )
        rows, cols = linear_sum_assignment(-np.where(similarity >= MIN_CENTROID_SIMILARITY, similarity, 0.0))
        for i, j in zip(rows, cols, strict=True):
            old, new = free_old[i], free_new[j]
            row = ov.overlap[ov.old_index[old]]
            went_elsewhere = row.sum() - row[ov.new_index[new]]
            if similarity[i, j] >= MIN_CENTROID_SIMILARITY and went_elsewhere < MIN_PART:
                matched[new] = old
                centroid_sim[new] = similarity[i, j]
    return centroid_sim


def _lineage_table(ov: _Overlap, matched: dict[int, int], mapping: dict[int, int]) -> pd.DataFrame:
    """One row a new topic (kept, grown, shrunk, split, merged, new) and one a previous topic gone."""
    overlap, old_ids, new_ids = ov.overlap, ov.old_ids, ov.new_ids

    def parts(i: int) -> list[int]:
        """New topics (final ids) holding a substantial part of previous topic row i, largest first."""
        order = np.argsort(-overlap[i], kind="stable")
        return [
            mapping[new_ids[j]] for j in order if _substantial(overlap, ov.old_shared, ov.new_shared, i, j)
        ]

    rows_out = []
    for new in new_ids:
        j = ov.new_index[new]
        sources = [
            old_ids[i]
            for i in np.argsort(-overlap[:, j], kind="stable")
            if _substantial(overlap, ov.old_shared, ov.new_shared, i, j)
        ]
        if new in matched:
            status, previous_ids, shared_papers = _kept_status(ov, matched[new], new, sources, parts)
        else:
            status = "merged" if len(sources) > 1 else ("split" if sources else "new")
            previous_ids = sources
            shared_papers = int(sum(overlap[ov.old_index[s], j] for s in sources))
        rows_out.append(
            {
                "topic_id": mapping[new],
                "status": status,
                "previous_topic_ids": previous_ids,
                "successor_topic_ids": [],
                # Every previous name involved, in the order of previous_topic_ids.
                "previous_label": "; ".join(ov.old_labels[t] for t in previous_ids),
                "shared_papers": shared_papers,
                "previous_sizes": [int(ov.old_size.get(t, 0)) for t in previous_ids],
            }
        )
    kept_old = set(matched.values())
    for old in old_ids:
        if old in kept_old:
            continue
        i = ov.old_index[old]
        successors = parts(i) or [
            mapping[new_ids[j]] for j in np.argsort(-overlap[i], kind="stable")[:1] if overlap[i, j]
        ]
        rows_out.append(
            {
                "topic_id": old,
                "status": "gone",
                "previous_topic_ids": [old],
                "successor_topic_ids": successors,
                "previous_label": ov.old_labels[old],
                "shared_papers": int(ov.old_shared[i]),
                "previous_sizes": [int(ov.old_size.get(old, 0))],
            }
        )
    table = pd.DataFrame(rows_out, columns=LINEAGE_COLUMNS)
    return table.sort_values(["status", "topic_id"], key=_status_order).reset_index(drop=True)


def _kept_status(ov: _Overlap, old: int, new: int, sources: list[int], parts) -> tuple[str, list[int], int]:
    """What happened to a previous topic whose id a new topic keeps: merged, split, kept, grown, shrunk."""
    i, j = ov.old_index[old], ov.new_index[new]
    others = [s for s in sources if s != old]
    members = ov.labels == new
    gained = int((members & (ov.old_of != old)).sum())
    lost = int(((ov.old_of == old) & ~members).sum())
    if others:
        status, previous_ids = "merged", [old, *others]
    elif len(parts(i)) > 1:
        status, previous_ids = "split", [old]
    elif gained == lost == 0:
        status, previous_ids = "kept", [old]
    else:
        status, previous_ids = ("grown" if gained > lost else "shrunk"), [old]
    return status, previous_ids, int(ov.overlap[i, j])


def _kept_names(
    ov: _Overlap,
    matched: dict[int, int],
    mapping: dict[int, int],
    centroid_sim: dict[int, float],
    previous: PreviousMap,
    centroids: dict[int, np.ndarray],
) -> dict[int, str]:
    """Final id -> previous name, for matched topics whose content did not move."""
    keep_label = {}
    for new, old in matched.items():
        i, j = ov.old_index[old], ov.new_index[new]
        content_stayed = (
            centroid_sim.get(new, 1.0) >= NAME_CENTROID_SIMILARITY
            and (new in centroid_sim or ov.jaccard[i, j] >= NAME_JACCARD)
            and (
                old not in previous.centroids
                or new not in centroids
                or float(previous.centroids[old] @ centroids[new]) >= NAME_CENTROID_SIMILARITY
            )
        )
        if content_stayed:
            keep_label[mapping[new]] = ov.old_labels[old]
    return keep_label


def content_moved(
    previous: PreviousMap, doc_ids, labels: np.ndarray, table: pd.DataFrame, mapping: dict[int, int]
) -> dict[int, str]:
    """Final topic id -> why, for topics that keep a previous id but whose content moved: fewer than
    `SAME_CONTENT` of the previous keywords are still among its keywords, or fewer than
    `SAME_CONTENT` of its previous central papers (those the new build holds) are still in it.

    `labels` and `table` (topic_id, keywords) are the new build's, under provisional ids; `mapping`
    is `Lineage.mapping`. A previous map without keywords or central papers says nothing moved.

    Examples:
        >>> before = PreviousMap(topic_of={"a": 7, "b": 7, "c": 7}, topics=pd.DataFrame({"topic_id": [7],
        ...     "label": ["Flow"], "keywords": [["flow", "optical", "motion", "frames"]],
        ...     "representative_doc_ids": [["a", "b"]]}), centroids={}, next_topic_id=8)
        >>> now = pd.DataFrame({"topic_id": [0], "keywords": [["relighting", "nerf", "flow", "rendering"]]})
        >>> content_moved(before, ["a", "b", "c"], np.array([0, 0, 0]), now, {-1: -1, 0: 7})
        {7: '1 of 4 keywords and 2 of 2 central papers still'}
    """
    columns = set(previous.topics.columns)
    if not columns & {"keywords", "representative_doc_ids"}:
        return {}
    doc_ids = np.asarray(doc_ids, dtype=object)
    row_of = {d: i for i, d in enumerate(doc_ids.tolist())}
    labels = np.asarray(labels)
    before = previous.topics.set_index(previous.topics["topic_id"].astype(int))
    keywords_now = dict(zip(table["topic_id"].astype(int), table["keywords"], strict=True))
    moved = {}
    for provisional, final in mapping.items():
        if final == -1 or final not in before.index or provisional not in keywords_now:
            continue
        reasons, parts = [], []
        old_words = [str(w) for w in _listed(before, final, "keywords")]
        if len(old_words):
            shared = len(set(old_words) & {str(w) for w in keywords_now[provisional]})
            parts.append(f"{shared} of {len(old_words)} keywords")
            reasons.append(shared < SAME_CONTENT * len(old_words))
        held = [row_of[d] for d in _listed(before, final, "representative_doc_ids") if d in row_of]
        if held:
            still = int((labels[held] == provisional).sum())
            parts.append(f"{still} of {len(held)} central papers")
            reasons.append(still < SAME_CONTENT * len(held))
        if any(reasons):
            moved[final] = " and ".join(parts) + " still"
    return moved


def _listed(table: pd.DataFrame, row: int, column: str) -> list:
    """A list cell of `table` (keywords, central papers) as a list; empty when missing or not a list."""
    value = table.at[row, column] if column in table.columns else None
    return list(value) if isinstance(value, list | tuple | np.ndarray) else []


def _substantial(overlap: np.ndarray, old_shared: np.ndarray, new_shared: np.ndarray, i: int, j: int) -> bool:
    """Whether previous topic i sent a real part of itself to new topic j: at least MIN_PART papers
    that are a PART_SHARE of topic i, or that make up most of topic j's shared papers."""
    count = overlap[i, j]
    return count >= MIN_PART and (count >= PART_SHARE * old_shared[i] or count > new_shared[j] / 2)


def _status_order(column: pd.Series) -> pd.Series:
    if column.name == "status":
        return column.map({s: n for n, s in enumerate(STATUSES)})
    return column


def final_labels(
    provisional: dict[int, str], lineage: Lineage, holds: Callable[[int, str], bool] | None = None
) -> dict[int, str]:
    """Final topic id -> name: a matched topic keeps its previous name unless that name is now
    taken by another topic (two topics must never share a name), or the new name extends it with a
    second part, or, with `holds` (final id, name -> whether the topic's papers now use the name
    enough), it no longer holds for its papers; others keep their new name.

    Examples:
        >>> lineage = Lineage(mapping={-1: -1, 0: 4, 1: 9}, keep_label={4: "Optimal transport"},
        ...     table=pd.DataFrame(), next_topic_id=10)
        >>> final_labels({0: "OT · Sinkhorn", 1: "Diffusion"}, lineage)
        {4: 'Optimal transport', 9: 'Diffusion'}
    """
    names = {lineage.mapping[t]: label for t, label in provisional.items()}
    for final, old_label in lineage.keep_label.items():
        taken = {label for other, label in names.items() if other != final}
        extended = names.get(final, "").startswith(old_label + " & ")  # "Adversarial examples & safety"
        if old_label not in taken and not extended and (holds is None or holds(final, old_label)):
            names[final] = old_label
    return names


def read_previous(folder: str | Path) -> PreviousMap:
    """The parts of a map folder lineage needs, read tolerantly (any schema version with
    papers.parquet and topics.parquet); a folder that is not a readable map is a `UserError`."""
    folder = Path(folder)
    manifest = read_manifest(folder)  # refused when damaged, e.g. a text lineage.next_topic_id
    try:
        papers = pd.read_parquet(folder / PAPERS, columns=["doc_id", "topic_id", "x", "y"])
        topics = pd.read_parquet(folder / TOPICS)
    except FileNotFoundError as exc:
        raise UserError(f"{exc.filename}: missing; the previous map must be a map folder") from None
    except Exception as exc:
        raise UserError(f"{folder}: unreadable previous map ({str(exc)[:120]})") from None
    if not {"topic_id", "label"} <= set(topics.columns):
        raise UserError(f"{folder / TOPICS}: missing topic_id or label")
    from pipeline.mapfolder.table_checks import check_previous, read_embeddings

    check_previous(papers, topics, folder)  # null ids, text coordinates, huge or negative topic ids
    try:
        labels = papers["topic_id"].to_numpy(dtype=np.int64)
        ids = topics["topic_id"].astype(np.int64).tolist()
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{folder}: topic ids that are not whole numbers; rebuild the map") from None
    centroids: dict[int, np.ndarray] = {}
    if "centroid" in topics.columns:
        for topic, vector in zip(topics["topic_id"], topics["centroid"], strict=True):
            vector = np.asarray(vector, dtype=np.float32)
            centroids[int(topic)] = vector / (np.linalg.norm(vector) or 1.0)
    else:
        try:
            embeddings = read_embeddings(folder / EMBEDDINGS, len(papers))
            centroids = dict(zip(*topic_centroids(embeddings, labels)))
        except (OSError, ValueError, UserError):
            pass  # without vectors, matching falls back on shared papers alone
    next_topic_id = max([manifest.lineage.next_topic_id, *[t + 1 for t in ids], 0])
    theme_of, theme_labels = previous_themes(folder, topics)
    gone_themes = gone_identities(manifest.lineage.themes)
    next_theme_id = max([manifest.lineage.next_theme_id, *[t + 1 for t in [*theme_labels, *gone_themes]], 0])
    if max(next_topic_id, next_theme_id) > MAX_TOPIC_ID + 1:  # theme ids of lineage records, unchecked above
        raise UserError(
            f"{folder / 'manifest.json'}: damaged manifest (a theme id of lineage.themes beyond {MAX_TOPIC_ID:,}); "
            "rebuild the map"
        )
    return PreviousMap(
        theme_of=theme_of,
        theme_labels=theme_labels,
        next_theme_id=next_theme_id,
        gone_themes=gone_themes,
        topic_of=dict(zip(papers["doc_id"].astype(str), labels.tolist(), strict=True)),
        topics=topics[
            [c for c in ("topic_id", "label", "keywords", "representative_doc_ids") if c in topics.columns]
        ].astype({"topic_id": int}),
        centroids=centroids,
        next_topic_id=next_topic_id,
        folder=folder,
        name=manifest.name or None,
        fingerprint=manifest.input_fingerprint,
        config=manifest.config.settings or None,
        positions=dict(
            zip(
                papers["doc_id"].astype(str),
                zip(papers["x"].astype(float), papers["y"].astype(float)),
                strict=True,
            )
        ),
    )


def previous_themes(folder: Path, topics: pd.DataFrame) -> tuple[dict[int, int], dict[int, str]]:
    """A previous map's topic -> theme and theme -> name (empty for a map without themes)."""
    path = Path(folder) / "themes.parquet"
    if "theme_id" not in topics.columns or not path.is_file():
        return {}, {}
    try:
        themes = pd.read_parquet(path, columns=["theme_id", "label"])
        theme_of = {
            int(t): int(h) for t, h in zip(topics["topic_id"], topics["theme_id"], strict=True) if int(h) >= 0
        }
        labels = {int(h): str(label) for h, label in zip(themes["theme_id"], themes["label"], strict=True)}
    except (OSError, ValueError, TypeError, OverflowError, KeyError):
        return {}, {}  # themes are matched only where the previous map's are readable
    return theme_of, labels


def apply_lineage(
    labels: np.ndarray, table: pd.DataFrame, lineage: Lineage, holds: Callable[[int, str], bool] | None = None
) -> tuple[np.ndarray, pd.DataFrame]:
    """The build's labels and topic table under their final ids and names (table sorted by id);
    `holds` as in `final_labels`.

    Examples:
        >>> lineage = Lineage(mapping={-1: -1, 0: 4, 1: 9}, keep_label={4: "Optimal transport"},
        ...     table=pd.DataFrame(), next_topic_id=10)
        >>> labels, table = apply_lineage(np.array([0, 1, -1]),
        ...     pd.DataFrame({"topic_id": [0, 1], "label": ["OT", "Diffusion"]}), lineage)
        >>> labels.tolist(), table.values.tolist()
        ([4, 9, -1], [[4, 'Optimal transport'], [9, 'Diffusion']])
    """
    provisional = dict(zip(table["topic_id"].astype(int), table["label"].astype(str), strict=True))
    names = final_labels(provisional, lineage, holds)
    remapped = np.array([lineage.mapping[int(t)] for t in np.asarray(labels).tolist()], dtype=np.int64)
    table = table.copy()
    table["topic_id"] = table["topic_id"].map(lambda t: lineage.mapping[int(t)]).astype(np.int64)
    table["label"] = table["topic_id"].map(names)
    return remapped, table.sort_values("topic_id").reset_index(drop=True)


def change_counts(table: pd.DataFrame) -> str:
    """What became of the previous map's topics, each counted once so the terms add up to the previous
    map, then the topics that are new: "5 grown, 6 split into 15, 3 merged into 1, 1 gone (of 15
    topics); 2 new". A previous topic split (into pieces counted among this map's topics) or merged
    (with others, into the topics counted) is counted there, not also as gone.

    Examples:
        >>> table = pd.DataFrame({"topic_id": [1, 7, 8, 4, 2, 3, 9],
        ...     "status": ["split", "split", "split", "merged", "gone", "gone", "new"],
        ...     "previous_topic_ids": [[1], [1], [1], [4, 2], [2], [3], []]})
        >>> change_counts(table)
        '1 split into 3, 2 merged into 1, 1 gone (of 4 topics); 1 new'
    """
    split: dict[int, int] = {}
    merged: dict[int, set[int]] = {}
    own: dict[int, str] = {}
    new = 0
    for row in table.itertuples(index=False):
        previous = [int(t) for t in row.previous_topic_ids]
        if row.status == "new":
            new += 1
        elif row.status == "split":
            for t in previous:
                split[t] = split.get(t, 0) + 1
        elif row.status == "merged":
            for t in previous:
                merged.setdefault(t, set()).add(int(row.topic_id))
        if row.status in ("kept", "grown", "shrunk", "gone"):
            own[int(row.topic_id)] = row.status
    fate: dict[str, list[int]] = {}
    for topic in sorted(set(own) | set(split) | set(merged)):
        kind = "split" if topic in split else "merged" if topic in merged else own[topic]
        fate.setdefault(kind, []).append(topic)
    parts = []
    for kind in ("kept", "grown", "shrunk", "split", "merged", "gone"):
        topics = fate.get(kind, [])
        if not topics:
            continue
        if kind == "split":
            parts.append(f"{len(topics):,} split into {sum(split[t] for t in topics):,}")
        elif kind == "merged":
            parts.append(f"{len(topics):,} merged into {len(set().union(*(merged[t] for t in topics))):,}")
        else:
            parts.append(f"{len(topics):,} {kind}")
    before = sum(len(t) for t in fate.values())
    said = ", ".join(parts) + f" (of {before:,} topic{'s' if before != 1 else ''})"
    return said + (f"; {new:,} new" if new else "")
