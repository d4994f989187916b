"""What the topic panel beside the map reads, made once per loaded map: every topic's name, size,
colour, keywords, central papers, nearest topics, stability, years and venues, and the topic list's
orders (grouped under themes where the map has them).

The browser draws the topic list and an opened topic from it alone (js/panel.js): opening a topic,
going back to the list and the browser's Back and Forward between them ask the server nothing. It is typed in
`app.map_component.payload` (`Summary`) and shipped as one fingerprinted file
(`app.map_component.summary_file`), as the point table is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.data import MapData
from app.themes import group_topic_list, theme_places, usable_themes
from app.trends import has_venues, has_years, venue_counts, venue_names, year_shares

CENTRAL = 10  # papers listed for an opened topic
NEAREST = 5  # nearest topics listed for an opened topic
STABILITY_HELP = (
    "how reliably the topic comes back when the clustering is redone on 90% of the papers "
    "(1 = always the same papers, 0 = never)"
)


def central_papers(data: MapData, topic: int, k: int = CENTRAL) -> np.ndarray:
    """Rows of the topic's `k` papers nearest its centre: the build's representative papers first, then
    the papers whose vectors are most like the mean of the topic's vectors (cosine), most like first."""
    rows = np.flatnonzero(data.topic_ids == topic)
    chosen = [data.row_of[d] for d in data.topics.loc[topic, "representative_doc_ids"] if d in data.row_of]
    if len(rows) > len(chosen):
        vectors = np.asarray(data.vectors[rows], dtype=np.float32)
        centre = vectors.mean(axis=0)
        order = rows[np.argsort(-(vectors @ centre), kind="stable")]
        listed = set(chosen)
        chosen += [int(r) for r in order[: k + len(listed)] if r not in listed]
    return np.array(chosen[:k], dtype=np.int64)


def nearest_topics(data: MapData, topic: int, k: int = NEAREST) -> list[dict]:
    """The `k` topics whose centres are most like this one's (cosine), most like first."""
    position = data.topic_order.index(topic)
    similarity = data.topic_similarity[position]
    nearest = [int(i) for i in np.argsort(-similarity, kind="stable") if i != position][:k]
    return [{"id": int(data.topic_order[i]), "similarity": round(float(similarity[i]), 4)} for i in nearest]


def _stability(row: pd.Series) -> float | None:
    value = pd.to_numeric(pd.Series([row.get("stability")]), errors="coerce").iat[0]
    return None if pd.isna(value) else round(float(value), 4)


def _share(value: object) -> float | None:
    """A stored share (`name_share`), or None where the map has none (built before issue 62, or
    the name was given by hand)."""
    value = pd.to_numeric(pd.Series([value]), errors="coerce").iat[0]
    return None if pd.isna(value) else round(float(value), 4)


def _growth(rising: pd.Series | None, topic: int) -> float | None:
    if rising is None or topic == -1:
        return None
    score = float(rising.get(topic, np.nan))
    return None if np.isnan(score) else round(score, 4)


def _records(table: pd.DataFrame) -> list[dict]:
    return [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        for row in table.to_dict("records")
    ]


def _sections(data: MapData, rising: pd.Series | None) -> list[dict]:
    """The topic list in one order (by size, or by growth with `rising`): under themes where the map
    has them (the unassigned papers last, a section of their own), else one section without a name."""
    themes = usable_themes(data.topics, data.themes)
    unassigned = data.sizes.get(-1, 0)
    if themes is None:
        ids = list(data.topic_order)
        if rising is not None:
            score = {t: float(rising.get(t, np.nan)) for t in ids}
            ids.sort(key=lambda t: (np.isnan(score[t]), -(0.0 if np.isnan(score[t]) else score[t])))
        return [
            {
                "theme": None,
                "name": None,
                "size": data.n,
                "topics": ids + ([-1] if unassigned else []),
                "colour": None,
            }
        ]
    sections = [
        {
            "theme": int(g.theme_id),
            "name": g.label,
            "size": int(g.size),
            "topics": [int(t) for t in g.topic_ids],
            "colour": data.theme_colours.get(int(g.theme_id)),
        }
        for g in group_topic_list(data.topics, themes, rising=rising)
    ]
    if unassigned:
        sections.append(
            {"theme": None, "name": "Unassigned", "size": int(unassigned), "topics": [-1], "colour": None}
        )
    return sections


def topic_summary(data: MapData, rising: pd.Series | None) -> dict:
    """The panel's whole reading of the map (`payload.Summary`); `rising`: each topic's growth score
    (`app.trends.rising_scores`), None or all NaN where the map has no years to measure it by."""
    if rising is not None and not rising.notna().any():
        rising = None
    years = has_years(data.papers)
    venues = has_venues(data.papers) and data.papers["venue"].nunique() >= 2
    names = venue_names(data.papers) if venues else None
    note = "note" in data.topics.columns
    themes = data.topic_themes()
    rank = {t: r for r, t in enumerate(data.topic_order)}
    topics = []
    for topic in [*data.topic_order, *([-1] if data.sizes.get(-1) else [])]:
        entry = {
            "id": int(topic),
            "rank": rank.get(topic, len(data.palette) - 1),  # the topic's colour in the point table
            "name": data.label(topic),
            "size": int(data.sizes.get(topic, 0)),
            "colour": data.colours[topic],
            "theme": themes.get(topic),
            "x": None,
            "y": None,
            "keywords": [],
            "weights": [],
            "central": [],
            "nearest": [],
            "stability": None,
            "growth": _growth(rising, topic),
            "written": None,
            "note": "",
            "years": [],
            "venues": [],
        }
        if topic != -1:
            row = data.topics.loc[topic]
            entry.update(
                x=round(float(row["x"]), 5),
                y=round(float(row["y"]), 5),
                keywords=[str(k) for k in row["keywords"]],
                weights=[round(float(w), 5) for w in row["keyword_weights"]],
                central=[
                    {"row": int(r), "title": str(data.papers["title"].iat[r] or "")}
                    for r in central_papers(data, topic)
                ],
                nearest=nearest_topics(data, topic),
                stability=_stability(row),
                written=_share(row.get("name_share")),
                note=str(row.get("note") or "") if note else "",
                years=_records(year_shares(data.papers, topic)) if years else [],
                venues=_records(venue_counts(data.papers, topic, names=names)) if venues else [],
            )
        topics.append(entry)
    return {
        "n": data.n,
        "topics": topics,
        "themes": theme_places(data.themes),
        "lists": {
            "size": _sections(data, None),
            **({"rising": _sections(data, rising)} if rising is not None else {}),
        },
        "stability_help": STABILITY_HELP,
    }
