"""Theme ids that last: a rebuild's themes take the previous map's theme ids through their papers.

Themes are formed afresh on every build (`pipeline.modelling.themes`), numbered by size. A link such as
`?theme=5` and a theme's colour must keep their meaning across rebuilds, so each new theme takes the
id of the previous theme most of its old papers were in, when those papers are most of the new
theme's old papers or most of the previous theme's papers (largest overlaps first, each id once).
Other themes get ids never used before (`next_theme_id`). What became of every previous theme is
recorded in the manifest (`lineage.themes`): the app says it when a link names a theme that is gone,
and the change report names theme changes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

# A new theme takes a previous theme's id when their shared papers are at least this share of the
# new theme's old papers or of the previous theme's papers.
KEEP_SHARE = 0.5


def match_themes(
    doc_ids: list[str],
    labels: np.ndarray,
    themes: pd.DataFrame,
    theme_of: dict[int, int],
    previous_topic_of: dict[str, int],
    previous_theme_of: dict[int, int],
    previous_labels: dict[int, str],
    next_theme_id: int,
) -> tuple[dict[int, int], list[dict], int]:
    """Final theme id per provisional theme id, the theme lineage records, and the next free id.

    Examples:
        >>> themes = pd.DataFrame({"theme_id": [0, 1], "label": ["Vision", "Language"], "topic_ids": [[0], [1]]})
        >>> mapping, records, next_id = match_themes(["a", "b", "c"], np.array([0, 0, 1]), themes, {0: 0, 1: 1},
        ...     {"a": 7, "b": 7}, {7: 3, 8: 4}, {3: "Vision", 4: "Speech"}, 5)
        >>> mapping, next_id, [(r["theme_id"], r["status"]) for r in records]
        ({0: 3, 1: 5}, 6, [(3, 'kept'), (5, 'new'), (4, 'gone')])
    """
    new_of_doc = [theme_of.get(int(t), -1) for t in np.asarray(labels).tolist()]
    old_of_doc = [previous_theme_of.get(previous_topic_of.get(d, -1), -1) for d in doc_ids]
    shared = Counter((n, o) for n, o in zip(new_of_doc, old_of_doc, strict=True) if n >= 0 and o >= 0)
    old_in_new = Counter(n for n, o in zip(new_of_doc, old_of_doc, strict=True) if n >= 0 and o >= 0)
    previous_sizes = Counter(o for o in old_of_doc if o >= 0)
    mapping: dict[int, int] = {}
    used: set[int] = set()
    for (new, old), count in sorted(shared.items(), key=lambda item: (-item[1], item[0])):
        if new in mapping or old in used:
            continue
        if count >= KEEP_SHARE * old_in_new[new] or count >= KEEP_SHARE * previous_sizes[old]:
            mapping[new] = old
            used.add(old)
    next_id = max([next_theme_id, *[t + 1 for t in previous_labels]], default=0)
    for new in themes["theme_id"].astype(int).tolist():
        if new not in mapping:
            mapping[new] = next_id
            next_id += 1
    label_of = dict(zip(themes["theme_id"].astype(int), themes["label"].astype(str), strict=True))
    records = []
    for new in themes["theme_id"].astype(int).tolist():
        final = mapping[new]
        previous = previous_labels.get(final)
        status = "new" if previous is None else ("kept" if previous == label_of[new] else "renamed")
        records.append(
            {"theme_id": final, "status": status, "label": label_of[new], "previous_label": previous}
        )
    for old, label in sorted(previous_labels.items()):
        if old in used:
            continue
        went = Counter(mapping[n] for n, o in zip(new_of_doc, old_of_doc, strict=True) if o == old and n >= 0)
        records.append(
            {
                "theme_id": old,
                "status": "gone",
                "label": None,
                "previous_label": label,
                "successor_theme_ids": [t for t, _ in went.most_common(3)],
            }
        )
    return mapping, records, next_id


def apply_theme_ids(themes: pd.DataFrame, theme_of: dict[int, int], mapping: dict[int, int]):
    """The themes table and topic -> theme under the final ids (table sorted by size, as built)."""
    themes = themes.copy()
    themes["theme_id"] = themes["theme_id"].map(lambda t: mapping[int(t)]).astype(np.int64)
    return themes, {topic: mapping[theme] for topic, theme in theme_of.items()}
