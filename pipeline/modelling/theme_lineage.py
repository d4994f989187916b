"""Theme ids that last: a rebuild's themes take the previous map's theme ids through their papers.

Themes are formed afresh on every build (`pipeline.modelling.themes`), numbered by size. A link such as
`?theme=5` and a theme's colour must keep their meaning across rebuilds, so each new theme takes the
id of the previous theme most of its old papers were in, when those papers are most of the new
theme's old papers or most of the previous theme's papers (largest overlaps first, each id once).
A theme that is gone keeps its identity (its topic ids) in the records, rebuild after rebuild;
a new theme no previous theme claims takes a gone theme's id back when they share most of their
topics (topic ids last through rebuilds, `pipeline.modelling.lineage`), so a `?theme=5` link
works again when theme 5 comes back. Other themes get ids never used before (`next_theme_id`).
What became of every previous theme is recorded in the manifest (`lineage.themes`: kept, renamed,
new, back, gone, and "gone earlier" for themes gone before the previous map): the app says it when
a link names a theme that is gone, and the change report names theme changes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from pipeline.mapfolder.files import new_id

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
    gone_themes: dict[int, dict] | None = None,
) -> tuple[dict[int, int], list[dict], int]:
    """Final theme id per provisional theme id, the theme lineage records, and the next free id.

    `gone_themes` (theme id -> {"label", "topic_ids"}) are the themes gone before the previous map
    (`gone_identities`); `themes["topic_ids"]` hold final topic ids.

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
    gone_themes = {t: g for t, g in (gone_themes or {}).items() if t not in previous_labels}
    back = _bring_back(themes, mapping, gone_themes)
    mapping.update(back)
    next_id = max([next_theme_id, *[t + 1 for t in [*previous_labels, *gone_themes]]], default=0)
    for new in themes["theme_id"].astype(int).tolist():
        if new not in mapping:
            mapping[new] = new_id(next_id, "theme")
            next_id += 1
    label_of = dict(zip(themes["theme_id"].astype(int), themes["label"].astype(str), strict=True))
    records = []
    for new in themes["theme_id"].astype(int).tolist():
        final = mapping[new]
        previous = previous_labels.get(final)
        status = "new" if previous is None else ("kept" if previous == label_of[new] else "renamed")
        if new in back:
            status, previous = "back", str(gone_themes[final].get("label") or "")
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
                "topic_ids": sorted(t for t, h in previous_theme_of.items() if h == old),
            }
        )
    for old, identity in sorted(gone_themes.items()):
        if old not in back.values():
            records.append(
                {
                    "theme_id": old,
                    "status": "gone earlier",
                    "label": None,
                    "previous_label": identity.get("label"),
                    "successor_theme_ids": [],
                    "topic_ids": sorted(int(t) for t in identity.get("topic_ids") or []),
                }
            )
    return mapping, records, next_id


def _bring_back(
    themes: pd.DataFrame, mapping: dict[int, int], gone_themes: dict[int, dict]
) -> dict[int, int]:
    """Provisional theme id -> gone theme id, for themes no previous theme claimed that share at least
    `KEEP_SHARE` of their topics, or of the gone theme's, with a gone theme (most shared first)."""
    pairs = []
    for new, ids in zip(themes["theme_id"].astype(int), themes["topic_ids"], strict=True):
        if new in mapping:
            continue
        ids = {int(t) for t in ids}
        for old, identity in gone_themes.items():
            before = {int(t) for t in identity.get("topic_ids") or []}
            shared = len(ids & before)
            if shared and (shared >= KEEP_SHARE * len(ids) or shared >= KEEP_SHARE * len(before)):
                pairs.append((-shared, new, old))
    back: dict[int, int] = {}
    for _, new, old in sorted(pairs):
        if new not in back and old not in back.values():
            back[new] = old
    return back


def gone_identities(records: list[dict]) -> dict[int, dict]:
    """Theme id -> {"label", "topic_ids"} of the themes a map's records say are gone (now or earlier):
    what the next rebuild matches returning themes against.

    Examples:
        >>> gone_identities([{"theme_id": 5, "status": "gone", "previous_label": "Video", "topic_ids": [3, 4]},
        ...     {"theme_id": 1, "status": "kept", "label": "Vision"}])
        {5: {'label': 'Video', 'topic_ids': [3, 4]}}
    """
    found = {}
    for record in records if isinstance(records, list) else []:
        try:
            if record.get("status") in ("gone", "gone earlier") and record.get("topic_ids"):
                found[int(record["theme_id"])] = {
                    "label": record.get("previous_label"),
                    "topic_ids": [int(t) for t in record["topic_ids"]],
                }
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # a damaged record only costs that theme its way back
    return found


def apply_theme_ids(themes: pd.DataFrame, theme_of: dict[int, int], mapping: dict[int, int]):
    """The themes table and topic -> theme under the final ids (table sorted by size, as built)."""
    themes = themes.copy()
    themes["theme_id"] = themes["theme_id"].map(lambda t: mapping[int(t)]).astype(np.int64)
    return themes, {topic: mapping[theme] for topic, theme in theme_of.items()}
