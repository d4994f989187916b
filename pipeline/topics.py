"""Topics: UMAP (5-D, cosine) + HDBSCAN through BERTopic, outlier reassignment, human topic names."""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from pipeline.config import BuildConfig

# Words every abstract uses; as keywords they say nothing about a topic. "models" stays:
# it carries "diffusion models" and "language models".
ABSTRACT_STOP_WORDS = sorted(
    ENGLISH_STOP_WORDS
    | {
        "paper",
        "propose",
        "proposed",
        "proposes",
        "approach",
        "approaches",
        "method",
        "methods",
        "result",
        "results",
        "show",
        "shows",
        "showed",
        "novel",
        "existing",
        "work",
        "works",
        "study",
        "demonstrate",
        "demonstrates",
        "experiments",
        "experimental",
        "extensive",
        "state",
        "art",
        "based",
        "using",
        "use",
        "used",
        "new",
        "significantly",
        "significant",
        "performance",
        "achieve",
        "achieves",
        "address",
        "introduce",
        "present",
        "provide",
        "furthermore",
        "moreover",
        "however",
        "code",
        "available",
        "github",
        "com",
        "https",
        "http",
        "al",
        "et",
        "task",
        "tasks",
        "problem",
        "problems",
        "key",
        "recent",
        "model",
        "framework",
        "effective",
        "effectiveness",
        "various",
        "improve",
        "improves",
        "improved",
        "outperforms",
        "superior",
        "challenging",
        "challenge",
        "challenges",
        "large",
        "algorithm",
        "algorithms",
        "technique",
        "techniques",
        "application",
        "applications",
        "setting",
        "settings",
        "fundamental",
        "function",
        "functions",
        "efficient",
        "efficiently",
    }
)


@dataclass
class Topics:
    """What the topic stage learned: one label per paper and one row per topic."""

    labels: np.ndarray  # topic_id per paper, -1 = unassigned
    table: pd.DataFrame  # topic_id, label, keywords, keyword_weights, size, representative_doc_ids
    knn: tuple  # the exact neighbour graph both UMAP runs use (see `neighbour_graph`)
    hdbscan_unassigned: int  # papers HDBSCAN left out before reassignment


def vectorizer_for(n_papers: int) -> CountVectorizer:
    """1-2-gram counts without stop words; rare terms dropped in big corpora to bound memory."""
    return CountVectorizer(
        stop_words=ABSTRACT_STOP_WORDS,
        ngram_range=(1, 2),
        min_df=max(1, min(10, round(n_papers / 2000))),
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\b",
    )


def cosine_knn(queries: np.ndarray, corpus: np.ndarray, k: int, chunk: int | None = None):
    """Indices and cosine similarities of the k most similar corpus rows (rows are unit vectors).

    Exact, by matrix products in blocks of `chunk` query rows (default: blocks of about 32 million
    scores, 128 MB), most similar first.
    """
    k = min(k, len(corpus))
    chunk = chunk or max(1, 2**25 // max(1, len(corpus)))
    indices = np.empty((len(queries), k), dtype=np.int64)
    similarities = np.empty((len(queries), k), dtype=np.float32)
    for start in range(0, len(queries), chunk):
        scores = queries[start : start + chunk] @ corpus.T
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        indices[start : start + chunk] = np.take_along_axis(top, order, axis=1)
        similarities[start : start + chunk] = np.take_along_axis(top_scores, order, axis=1)
    return indices, similarities


def neighbour_graph(embeddings: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, None]:
    """Exact k-nearest-neighbour graph in UMAP's `precomputed_knn` form (cosine distances).

    Each paper is its own first neighbour at distance 0, as UMAP expects. Below 4,096 points
    UMAP would compute all pairwise distances through a per-pair Python call (about 8 s for 2,000
    papers); above, an approximate NN-descent. Blocked matrix products are exact and take about
    a second for 10,000 papers. No search index: nothing here calls `UMAP.transform`.

    Examples:
        >>> indices, distances, _ = neighbour_graph(np.eye(3, dtype=np.float32), 2)
        >>> indices[:, 0].tolist(), distances[:, 0].tolist()
        ([0, 1, 2], [0.0, 0.0, 0.0])
    """
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    indices, similarities = cosine_knn(vectors, vectors, k)
    rows = np.arange(len(vectors))
    # Exact duplicates can tie with the paper itself: put the paper first.
    misplaced = indices[:, 0] != rows
    for row in np.flatnonzero(misplaced):
        others = indices[row] != row
        indices[row] = np.concatenate([[row], indices[row][others][: k - 1]])
        similarities[row] = np.concatenate([[1.0], similarities[row][others][: k - 1]])
    distances = np.clip(1.0 - similarities, 0.0, 2.0)
    distances[:, 0] = 0.0
    return indices, distances.astype(np.float32), None


def reassign_outliers(embeddings: np.ndarray, labels: np.ndarray, *, k: int = 15) -> np.ndarray:
    """Give papers HDBSCAN left out (-1) the topic their nearest assigned papers point to.

    A paper moves to the topic that wins the similarity-weighted vote of its k nearest assigned
    neighbours (cosine) when that topic holds at least a third of the vote, or when the paper is
    closer to the topic's centroid than the topic's least typical 5% of members. Papers with
    neither kind of evidence stay unassigned. Votes come from each paper's own neighbourhood,
    so reassignment spreads papers over the topics around them instead of filling one catch-all.

    Examples:
        >>> vectors = np.eye(3, dtype=np.float32)[[0, 0, 1, 1, 0]]
        >>> reassign_outliers(vectors, np.array([0, 0, 1, 1, -1]), k=2).tolist()
        [0, 0, 1, 1, 0]
    """
    labels = labels.copy()
    outliers = np.flatnonzero(labels == -1)
    assigned = np.flatnonzero(labels != -1)
    if not len(outliers) or not len(assigned):
        return labels
    topic_ids = np.unique(labels[assigned])
    centroids = np.stack([embeddings[labels == t].mean(axis=0) for t in topic_ids])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    position = {t: i for i, t in enumerate(topic_ids)}
    member_similarity = np.einsum(
        "ij,ij->i", embeddings[assigned], centroids[[position[t] for t in labels[assigned]]]
    )
    typical = {t: np.quantile(member_similarity[labels[assigned] == t], 0.05) for t in topic_ids}
    neighbours, similarity = cosine_knn(embeddings[outliers], embeddings[assigned], k)
    neighbour_topics = labels[assigned][neighbours]
    weights = np.clip(similarity, 1e-6, None)
    for row, paper in enumerate(outliers):
        votes: Counter = Counter()
        for topic, weight in zip(neighbour_topics[row], weights[row]):
            votes[topic] += weight
        topic, vote = votes.most_common(1)[0]
        share = vote / weights[row].sum()
        centroid_similarity = float(embeddings[paper] @ centroids[position[topic]])
        if share >= 1 / 3 or centroid_similarity >= typical[topic]:
            labels[paper] = topic
    return labels


def _phrase_pattern(phrase: str) -> re.Pattern:
    """Matches a keyword as written in text: BERTopic strips hyphens ("multiview" is "multi-view")."""
    words = ["-?".join(re.escape(c) for c in word) for word in phrase.split()]
    return re.compile(r"\b" + r"[\s-]+".join(words) + r"\b", re.IGNORECASE)


def _surface_form(phrase: str, documents: list[str]) -> str:
    """The most common spelling of a lower-cased keyword in the documents ("llm safety" -> "LLM safety")."""
    pattern = _phrase_pattern(phrase)
    forms = Counter(" ".join(m.group(0).split()) for doc in documents for m in pattern.finditer(doc))
    return forms.most_common(1)[0][0] if forms else phrase


def _share_containing(phrase: str, documents: list[str]) -> float:
    pattern = _phrase_pattern(phrase)
    return sum(1 for doc in documents if pattern.search(doc)) / max(1, len(documents))


def topic_label(keywords: list[str], documents: list[str]) -> str:
    """A short name a person would write, from a topic's ranked keywords and its documents.

    The best-ranked two-word keyword if it is near the top, else the top word; extended by the
    top word when the topic's papers commonly write them together ("multi view" + "clustering"
    -> "Multi-view clustering"); spelled as the papers spell it.

    Examples:
        >>> topic_label(["transport", "optimal transport", "wasserstein"],
        ...             ["Optimal transport (OT) maps.", "We study optimal transport."])
        'Optimal transport'
    """
    if not keywords:
        return "Unnamed topic"
    top = keywords[0]
    head = keywords[:6]
    phrases = [
        k
        for k in keywords
        if " " in k
        and (
            k in keywords[:4]  # ranked near the top itself
            or all(word in head for word in k.split())  # both its words are top keywords
            or "".join(word[0] for word in k.split()) == top  # spells out a top acronym ("ot")
        )
    ]
    # A phrase that spells out the top acronym names the topic best ("ot" -> "optimal transport").
    phrases.sort(key=lambda k: "".join(word[0] for word in k.split()) != top)
    phrase = phrases[0] if phrases else top
    if top not in phrase.split() and _share_containing(f"{phrase} {top}", documents) >= 0.25:
        phrase = f"{phrase} {top}"  # "multiview" + "clustering" -> "multiview clustering"
    if phrase == top:
        # A lone word reads better with the word the papers most often put next to it.
        pairs = [(o, p) for o in keywords[1:4] if " " not in o for p in (f"{o} {top}", f"{top} {o}")]
        phrase = next((p for _, p in pairs if _share_containing(p, documents) >= 0.3), top)
    label = _surface_form(phrase, documents)
    if " " not in phrase:
        # One word ("Causal", "Adversarial") says too little: add the next keyword that is not
        # a variant of it ("LLM" and "LLMs") -> "Causal · latent".
        other = next((k for k in keywords[1:5] if not _variant(k, phrase)), None)
        if other:
            label = f"{label} · {_surface_form(other, documents)}"
    return label[0].upper() + label[1:] if label[0].islower() else label


def _variant(word: str, other: str) -> bool:
    """Whether two keywords are forms of each other ("llm"/"llms", "anchor"/"multiview anchor")."""
    a, b = word.lower(), other.lower()
    return a.startswith(b[:4]) or b.startswith(a[:4]) or a in b or b in a


def distinct_labels(labels: list[str], keywords: list[list[str]]) -> list[str]:
    """Make repeated names distinct with each topic's next keyword not already in its name."""
    counts = Counter(labels)
    result = []
    for label, words in zip(labels, keywords):
        if counts[label] > 1:
            extra = next((w for w in words if w.lower() not in label.lower()), None)
            label = f"{label} · {extra}" if extra else label
        result.append(label)
    return result


def fit_topics(documents: list[str], embeddings: np.ndarray, config: BuildConfig) -> Topics:
    """Cluster papers into topics and describe each one; `config` must be resolved."""
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir, cached_reduction

    BERTopic, ClassTfidfTransformer, UMAP, HDBSCAN = import_topic_libraries(str(cache_dir()))
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    from pipeline.layout import umap_cache_key, umap_settings

    knn = neighbour_graph(embeddings, config.n_neighbors)
    settings = umap_settings(5, n_neighbors=config.n_neighbors, random_state=config.random_state)
    umap_model = UMAP(**settings, precomputed_knn=knn)
    key = umap_cache_key(settings, knn="exact")
    reduced, _ = cached_reduction("umap5", embeddings, key, lambda: umap_model.fit_transform(embeddings))
    hdbscan_model = HDBSCAN(
        min_cluster_size=config.min_topic_size,
        min_samples=config.min_samples,
        metric="euclidean",
        cluster_selection_method="leaf",
        prediction_data=False,
    )
    first_labels = np.asarray(hdbscan_model.fit(reduced).labels_)
    if (first_labels == -1).all():
        # Too few or too uniform papers for any cluster: one topic is the honest map.
        first_labels = np.zeros(len(documents), dtype=int)
    labels = _renumber_by_size(reassign_outliers(embeddings, first_labels, k=config.reassign_neighbors))

    # BERTopic names the final topics: its c-TF-IDF runs once, on the labels after reassignment.
    model = BERTopic(
        umap_model=BaseDimensionalityReduction(),  # the reduction above is UMAP's, done (or cached) once
        hdbscan_model=BaseCluster(),  # the clusters above, passed in as `y`
        vectorizer_model=vectorizer_for(len(documents)),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        top_n_words=config.top_n_words,
        calculate_probabilities=False,
    )
    logging.getLogger("BERTopic").setLevel(logging.ERROR)  # BERTopic (re)sets its logger in __init__
    bertopic_ids, _ = model.fit_transform(documents, embeddings=reduced, y=labels)
    # BERTopic renumbers topics by frequency; map its ids back to ours (ties may order differently).
    ours_of = dict(zip(bertopic_ids, labels.tolist(), strict=True))
    words = {ours_of[t]: pairs for t, pairs in model.get_topics().items() if t in ours_of}
    table = describe_topics(labels, words, documents, embeddings)
    return Topics(labels=labels, table=table, knn=knn, hdbscan_unassigned=int((first_labels == -1).sum()))


def _renumber_by_size(labels: np.ndarray) -> np.ndarray:
    """Topic 0 is the largest; -1 stays -1; ties broken by old id for determinism."""
    sizes = Counter(labels[labels != -1].tolist())
    order = sorted(sizes, key=lambda t: (-sizes[t], t))
    mapping = {old: new for new, old in enumerate(order)}
    mapping[-1] = -1
    return np.array([mapping[t] for t in labels.tolist()], dtype=np.int64)


def describe_topics(
    labels: np.ndarray,
    words: dict,
    documents: list[str],
    embeddings: np.ndarray,
    *,
    n_representatives: int = 3,
) -> pd.DataFrame:
    """One row a topic: keywords with weights, a name, size and its most central papers (row indices)."""
    rows = []
    for topic_id in sorted(t for t in set(labels.tolist()) if t != -1):
        members = np.flatnonzero(labels == topic_id)
        pairs = [(w, float(s)) for w, s in words.get(topic_id, []) if w]
        keywords = [w for w, _ in pairs]
        centroid = embeddings[members].mean(axis=0)
        closeness = embeddings[members] @ (centroid / np.linalg.norm(centroid))
        central = members[np.argsort(-closeness, kind="stable")[:n_representatives]]
        member_docs = [documents[i] for i in members]
        rows.append(
            {
                "topic_id": topic_id,
                "label": topic_label(keywords, member_docs),
                "keywords": keywords,
                "keyword_weights": [round(s, 5) for _, s in pairs],
                "size": len(members),
                "representative_rows": central.tolist(),
            }
        )
    table = pd.DataFrame(
        rows, columns=["topic_id", "label", "keywords", "keyword_weights", "size", "representative_rows"]
    )
    table["label"] = distinct_labels(table["label"].tolist(), table["keywords"].tolist())
    return table
