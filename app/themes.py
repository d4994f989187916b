"""Themes in the app: which topics a theme holds, the topic list grouped by theme, and the `theme` link setting.

Query string key (declared in `app.state.SETTINGS`):
    theme=0,2           themes shown (all when absent); a topic is shown when its theme is
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.mapfolder.manifest import Manifest
from pipeline.text import shorten

THEME_KEY = "theme"
UNGROUPED = "Other topics"  # heading for topics without a theme (maps built before themes)


@dataclass(frozen=True)
class ThemeGroup:
    """One heading of the topic list: a theme and its topics, in the list's order."""

    theme_id: int  # -1 for topics without a theme
    label: str
    size: int  # papers
    topic_ids: tuple[int, ...]


def theme_of_topic(topics: pd.DataFrame) -> dict[int, int]:
    """Topic id -> theme id (-1 when the map has no themes or the topic has none).

    Examples:
        >>> theme_of_topic(pd.DataFrame({"topic_id": [0, 1], "theme_id": [1, 0]}))
        {0: 1, 1: 0}
        >>> theme_of_topic(pd.DataFrame({"topic_id": [0]}))
        {0: -1}
    """
    if "theme_id" not in topics.columns:
        return dict.fromkeys(topics["topic_id"].astype(int).tolist(), -1)
    return {int(t): int(th) for t, th in zip(topics["topic_id"], topics["theme_id"].fillna(-1))}


def topics_in_themes(topics: pd.DataFrame, theme_ids: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """The topics of the chosen themes, in topic order; every topic when no theme is chosen.

    Examples:
        >>> table = pd.DataFrame({"topic_id": [0, 1, 2], "theme_id": [1, 0, 1]})
        >>> topics_in_themes(table, [1]), topics_in_themes(table, [])
        ((0, 2), (0, 1, 2))
    """
    mapping = theme_of_topic(topics)
    if not theme_ids:
        return tuple(sorted(mapping))
    wanted = set(theme_ids)
    return tuple(sorted(t for t, th in mapping.items() if th in wanted))


def group_topic_list(
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    *,
    rising: pd.Series | None = None,
) -> list[ThemeGroup]:
    """The topic list grouped under themes: largest theme first, its topics largest first.

    With `rising` (from `app.trends.rising_scores`) topics within a theme, and themes by their
    best topic, are ordered by growth instead, NaN last. Topics whose theme is unknown (a map
    built before themes) come last under `UNGROUPED`.

    Examples:
        >>> topics = pd.DataFrame({"topic_id": [0, 1, 2], "size": [9, 5, 7], "theme_id": [1, 0, 1]})
        >>> themes = pd.DataFrame({"theme_id": [0, 1], "label": ["B", "A"], "size": [5, 16]})
        >>> [(g.label, g.topic_ids) for g in group_topic_list(topics, themes)]
        [('A', (0, 2)), ('B', (1,))]
    """
    mapping = theme_of_topic(topics)
    sizes = dict(zip(topics["topic_id"].astype(int), topics["size"].astype(int)))

    def topic_key(t: int) -> tuple:
        if rising is not None:
            score = rising.get(t, np.nan)
            return (np.isnan(score), -(0.0 if np.isnan(score) else score), t)
        return (-sizes[t], t)

    known = {} if themes is None else {int(r.theme_id): r for r in themes.itertuples()}
    groups: list[ThemeGroup] = []
    for theme_id in set(mapping.values()):
        members = tuple(sorted((t for t, th in mapping.items() if th == theme_id), key=topic_key))
        row = known.get(theme_id)
        label = str(row.label) if row is not None else UNGROUPED
        size = int(row.size) if row is not None else sum(sizes[t] for t in members)
        groups.append(ThemeGroup(theme_id if row is not None else -1, label, size, members))

    def group_key(group: ThemeGroup) -> tuple:
        if group.theme_id == -1:
            return (1, 0, 0)
        if rising is not None:
            return (0, *topic_key(group.topic_ids[0])[:2])
        return (0, -group.size, group.theme_id)

    merged: dict[int, ThemeGroup] = {}
    for group in groups:  # topics whose theme id the themes table lacks all go under one heading
        if group.theme_id in merged:
            old = merged[group.theme_id]
            group = ThemeGroup(-1, UNGROUPED, old.size + group.size, old.topic_ids + group.topic_ids)
        merged[group.theme_id] = group
    return sorted(merged.values(), key=group_key)


def _theme_records(manifest: Manifest) -> list[dict]:
    """The manifest's `lineage.themes` records (`pipeline.modelling.theme_lineage`) that can be read."""
    readable = []
    for record in manifest.lineage.themes:
        try:
            readable.append(dict(record, theme_id=int(record["theme_id"])))
        except (KeyError, TypeError, ValueError):
            continue
    return readable


def _where_it_went(record: dict, names: dict[int, str]) -> str:
    """What a gone theme's record says became of it, in the words the page shows."""
    successors = [names[t] for t in record.get("successor_theme_ids") or [] if t in names]
    where = "; most of its papers are now in " + ", ".join(f"“{n}”" for n in successors) if successors else ""
    since = "an earlier rebuild" if record.get("status") == "gone earlier" else "the last rebuild"
    return f"gone since {since}{where}"


def gone_themes(manifest: Manifest, themes) -> dict[int, str]:
    """Theme id -> what became of it, for themes a rebuild of this map no longer has.

    Examples:
        >>> import pandas as pd
        >>> manifest = Manifest.from_dict({"lineage": {"themes": [{"theme_id": 5, "status": "gone",
        ...     "previous_label": "Point cloud", "successor_theme_ids": [2]}]}})
        >>> gone_themes(manifest, pd.DataFrame({"theme_id": [2], "label": ["3D vision"]}))
        {5: 'theme 5 (“Point cloud”) is gone since the last rebuild; most of its papers are now in “3D vision”'}
    """
    names = {} if themes is None else dict(zip(themes["theme_id"].astype(int), themes["label"].astype(str)))
    return {
        r["theme_id"]: f"theme {r['theme_id']} (“{str(r.get('previous_label') or '')[:60]}”) is "
        + _where_it_went(r, names)
        for r in _theme_records(manifest)
        if r.get("status") in ("gone", "gone earlier")
    }


def theme_change_rows(manifest: Manifest, themes):
    """One row per theme a rebuild kept, renamed, made or dissolved (the manifest's `lineage.themes`),
    with the words the change report shows; empty for a map built without a previous one.

    Examples:
        >>> import pandas as pd
        >>> manifest = Manifest.from_dict({"lineage": {"themes": [{"theme_id": 1, "status": "renamed",
        ...     "label": "3D vision", "previous_label": "Point cloud"}, {"theme_id": 4, "status": "new",
        ...     "label": "Robotics"}]}})
        >>> theme_change_rows(manifest, pd.DataFrame({"theme_id": [1, 4], "label": ["3D vision", "Robotics"]}))["What became of it"].tolist()
        ['renamed (was “Point cloud”)', 'new']
    """
    import pandas as pd

    names = {} if themes is None else dict(zip(themes["theme_id"].astype(int), themes["label"].astype(str)))
    rows = []
    for record in _theme_records(manifest):
        status = record.get("status")
        if status == "renamed":
            change = f"renamed (was “{str(record.get('previous_label') or '')[:60]}”)"
        elif status == "gone":
            change = _where_it_went(record, names)
        elif status in ("kept", "new"):
            change = status
        elif status == "back":
            change = (
                f"back (gone before the last rebuild, as “{str(record.get('previous_label') or '')[:60]}”)"
            )
        else:
            continue
        name = record.get("previous_label") if status == "gone" else record.get("label")
        rows.append({"Theme": str(name or ""), "What became of it": change})
    return pd.DataFrame(rows, columns=["Theme", "What became of it"])


def parse_themes(
    params: Mapping[str, list[str]],
    theme_ids: set[int] | frozenset[int],
    gone: Mapping[int, str] | None = None,
) -> tuple[tuple[int, ...], list[str]]:
    """The themes a link chooses (`theme=0,2`), and one notice for values that are not themes of this map
    (a theme a rebuild dissolved says what became of it, from `gone`).

    Examples:
        >>> parse_themes({"theme": ["2,x,9"]}, {0, 1, 2})
        ((2,), ["Ignored themes '9', 'x': not themes of this map."])
        >>> parse_themes({}, {0})
        ((), [])
    """
    chosen: list[int] = []
    bad: list[str] = []
    notices_gone: list[str] = []
    for chunk in params.get(THEME_KEY, []):
        for piece in str(chunk).split(","):
            piece = piece.strip()
            if not piece:
                continue
            try:
                number = int(piece)
            except ValueError:
                number = None
            if number is not None and gone and number in gone and number not in theme_ids:
                notices_gone.append(f"Ignored {gone[number]}.")
            elif number is None or number not in theme_ids:
                bad.append(piece)
            elif number not in chosen:
                chosen.append(number)
    notices = list(dict.fromkeys(notices_gone))
    if bad:
        shown = ", ".join(repr(shorten(b, 40)) for b in sorted(set(bad))[:10])
        what = "theme {}: not a theme" if len(set(bad)) == 1 else "themes {}: not themes"
        notices.append(f"Ignored {what.format(shown)} of this map.")
    return tuple(chosen), notices


def theme_params(theme_ids: tuple[int, ...] | list[int]) -> dict[str, str]:
    """The query parameter for chosen themes; none when all are shown, so links stay short.

    Examples:
        >>> theme_params((2, 0)), theme_params(())
        ({'theme': '2,0'}, {})
    """
    return {THEME_KEY: ",".join(str(t) for t in theme_ids)} if theme_ids else {}


def usable_themes(topics: pd.DataFrame, themes: pd.DataFrame | None) -> pd.DataFrame | None:
    """The themes table when the app can use it (both tables carry `theme_id` and there is a theme), else None.

    Maps built before themes, or with a themes file the topics do not point into, get no theme UI.

    Examples:
        >>> topics = pd.DataFrame({"topic_id": [0], "theme_id": [0]})
        >>> usable_themes(topics, pd.DataFrame({"theme_id": [0], "label": ["A"]})) is not None
        True
        >>> usable_themes(pd.DataFrame({"topic_id": [0]}), pd.DataFrame({"theme_id": [0], "label": ["A"]}))
    """
    if themes is None or not len(themes) or "theme_id" not in themes.columns:
        return None
    if "theme_id" not in topics.columns or not topics["theme_id"].isin(themes["theme_id"]).any():
        return None
    return themes


def theme_places(themes: pd.DataFrame | None) -> list[dict]:
    """A map's themes (themes.parquet), largest first, each with its name and place on the map."""
    if themes is None or not len(themes):
        return []
    rows = themes.sort_values("size", ascending=False).itertuples(index=False)
    return [
        {"id": int(r.theme_id), "text": str(r.label), "x": round(float(r.x), 5), "y": round(float(r.y), 5)}
        for r in rows
    ]
