"""Quality figures of a topic map: those that need no labels (for every map) and NMI/ARI (for benchmarks)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
from scipy import sparse


def npmi_coherence(topic_words: list[list[str]], documents: list[str], *, top_n: int = 10) -> float:
    """Mean NPMI of word pairs in each topic's top words, by document co-occurrence in the corpus.

    Keywords may be 1- or 2-grams; a pair never seen together scores -1. Ranges over [-1, 1].

    Examples:
        >>> docs = ["optimal transport maps", "optimal transport costs", "diffusion models"]
        >>> round(npmi_coherence([["optimal", "transport"]], docs), 3)
        1.0
    """
    vocabulary = sorted({w for words in topic_words for w in words[:top_n]})
    if not vocabulary:
        return float("nan")
    presence = _presence(vocabulary, documents)
    n_docs = presence.shape[0]
    together = (presence.T @ presence).toarray()  # papers writing both terms (each alone on the diagonal)
    column = {w: i for i, w in enumerate(vocabulary)}
    scores = []
    for words in topic_words:
        pairs = []
        for a, b in itertools.combinations(words[:top_n], 2):
            i, j = column[a], column[b]
            p_i = together[i, i] / n_docs
            p_j = together[j, j] / n_docs
            p_ij = together[i, j] / n_docs
            if p_ij == 0:
                pairs.append(-1.0)
            elif p_ij == 1:
                pairs.append(1.0)
            else:
                pairs.append(float(np.log(p_ij / (p_i * p_j)) / -np.log(p_ij)))
        if pairs:
            scores.append(np.mean(pairs))
    return float(np.mean(scores)) if scores else float("nan")


_WORD = re.compile(r"(?u)\b[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\b")


def _presence(vocabulary: list[str], documents: list[str]) -> sparse.csc_matrix:
    """Documents x `vocabulary` (words and two-word terms), 1.0 where the lower-cased document
    writes the term: what scikit-learn's binary 1-2-gram `CountVectorizer` with `_WORD` counts,
    looking up only the vocabulary's terms (a map's keywords) instead of making every pair.

    Examples:
        >>> _presence(["optimal transport", "transport"], ["Optimal transport plans", "a transport"]).toarray()
        array([[1., 1.],
               [0., 1.]], dtype=float32)
    """
    column = {w: i for i, w in enumerate(vocabulary)}
    firsts = {w.split(" ")[0] for w in vocabulary if " " in w}
    rows: list[int] = []
    columns: list[int] = []
    for row, doc in enumerate(documents):
        words = _WORD.findall(doc.lower())
        found = {column[w] for w in words if w in column}
        found.update(
            column[pair]
            for k in range(len(words) - 1)
            if words[k] in firsts and (pair := f"{words[k]} {words[k + 1]}") in column
        )
        rows += [row] * len(found)
        columns += found
    shape = (len(documents), len(vocabulary))
    return sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, columns)), shape=shape).tocsc()


def topic_diversity(topic_words: list[list[str]], *, top_n: int = 10) -> float:
    """Share of unique words among all topics' top words (1 = no topic repeats another's words).

    Examples:
        >>> topic_diversity([["a", "b"], ["b", "c"]])
        0.75
    """
    words = [w for ws in topic_words for w in ws[:top_n]]
    return len(set(words)) / len(words) if words else float("nan")


def map_quality(labels: np.ndarray, topic_words: list[list[str]], documents: list[str]) -> dict:
    """The figures every manifest carries: no ground truth needed."""
    n = len(labels)
    assigned = labels[labels != -1]
    largest = np.bincount(assigned).max() if len(assigned) else 0
    return {
        "topics": len(topic_words),
        "unassigned_share": round(float((labels == -1).sum() / n), 4) if n else 0.0,
        "largest_topic_share": round(float(largest / n), 4) if n else 0.0,
        "coherence_npmi": round(npmi_coherence(topic_words, documents), 4),
        "diversity": round(topic_diversity(topic_words), 4),
    }


def agreement(labels: np.ndarray, truth: list) -> dict:
    """NMI and ARI against reference labels; unassigned papers count as one group of their own."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return {
        "nmi": round(float(normalized_mutual_info_score(truth, labels)), 4),
        "ari": round(float(adjusted_rand_score(truth, labels)), 4),
    }


def name_figures(papers: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame | None) -> dict:
    """How far a map's names hold, by `pipeline.naming.support.name_support` on each topic's papers
    (title and abstract; acronyms the map's abstracts define count as their expansion).

    Topics: each name's support on its own papers, and the share of topics whose name fewer than
    a quarter of their papers use (target: at most 15%). Themes: for each theme, the support of
    its name on its weakest member topic; their median (target: at least 25%) and least (at
    least 5%).
    """
    from pipeline.naming.phrases import acronym_definitions
    from pipeline.naming.support import name_support

    acronyms = acronym_definitions(papers["abstract"].astype(str).tolist())
    titles = papers["title"].fillna("").astype(str) if "title" in papers.columns else ""
    texts = (titles + ". " + papers["abstract"].astype(str)).to_numpy()
    ids = papers["topic_id"].astype(int).to_numpy()
    docs = {int(t): texts[ids == int(t)].tolist() for t in topics["topic_id"]}
    names = dict(zip(topics["topic_id"].astype(int), topics["label"].astype(str), strict=True))
    topic_rows = [
        {
            "topic_id": t,
            "name": names[t],
            "size": len(docs[t]),
            "support": round(name_support(names[t], docs[t], acronyms), 3),
        }
        for t in names
    ]
    theme_rows = []
    for row in (themes if themes is not None else pd.DataFrame()).itertuples():
        members = [(name_support(row.label, docs[int(t)], acronyms), int(t)) for t in row.topic_ids]
        weakest, topic = min(members)
        theme_rows.append(
            {
                "theme_id": int(row.theme_id),
                "name": row.label,
                "topics": [names[int(t)] for t in row.topic_ids],
                "weakest_support": round(weakest, 3),
                "weakest_topic": names[topic],
            }
        )
    supports = [r["support"] for r in topic_rows]
    weakest = [r["weakest_support"] for r in theme_rows]
    return {
        "topics": len(topic_rows),
        "topic_names_under_25": sum(s < 0.25 for s in supports),
        "topic_names_under_25_share": round(sum(s < 0.25 for s in supports) / max(1, len(supports)), 3),
        "topic_support_median": round(float(np.median(supports)), 3) if supports else None,
        "themes": len(theme_rows),
        "theme_weakest_median": round(float(np.median(weakest)), 3) if weakest else None,
        "theme_weakest_min": round(float(min(weakest)), 3) if weakest else None,
        "themes_under_5": sum(w < 0.05 for w in weakest),
        "topic_rows": topic_rows,
        "theme_rows": theme_rows,
    }
