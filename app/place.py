"""A placed abstract (the ★ on the map): placing it as `pipeline add` would, and saying where it landed.

What the placement panel (`app.placement`) and the map (`app.map_panel`) share; nothing here draws or
touches the session (the panel keeps the answer: `app.session.set_placement`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from app import encoder as encoding
from app.data import MapData
from app.loaders import MapKey, load_topic_profile
from app.text import markdown_literal
from pipeline.modelling.floors import closeness
from pipeline.modelling.place import EDGE, FITS, OUTSIDE


@dataclass(frozen=True)
class Placement:
    """Where a pasted abstract landed: `pipeline.modelling.place.place`'s answer as the app shows it."""

    x: float
    y: float
    topic_id: int  # -1: among the unassigned papers
    verdict: str  # FITS, EDGE or OUTSIDE (`pipeline.modelling.place.verdict`)
    encoder: str  # what embedded it
    rows: tuple[int, ...]  # its nearest papers, nearest first
    similarities: tuple[float, ...]  # theirs to it
    percentile: float | None  # the nearest paper is closer than this share of the map's pairs
    fit_floor: float
    evidence: pd.DataFrame = field(compare=False)  # `topic_evidence`: the numbers behind the verdict


@dataclass(frozen=True)
class PlacementError:
    """Why a pasted abstract was not placed (plain text): a text `add` refuses, or no model."""

    message: str


def place_abstract(data: MapData, map_key: MapKey, text: str) -> Placement | PlacementError:
    """Embed the pasted abstract with the map's model and place it; nothing is written anywhere.

    Placement and its verdict are `pipeline.modelling.place.place` and `Placement.verdict`, the same as
    `python -m pipeline add`, with the map's topic profile computed once per map; a text `add` would
    refuse (`pipeline.modelling.place.placement_problem`) is refused here in the same words.
    """
    from pipeline.modelling.place import place, placement_problem

    problem = placement_problem(text)
    if problem:
        return PlacementError(problem)
    try:
        vector = encoding.encode_queries(data.manifest, [text])[0]
    except encoding.EncoderUnavailable as exc:
        return PlacementError(str(exc))
    except Exception as exc:  # a broken model must not take the page down
        return PlacementError(f"The embedding model could not be loaded ({str(exc)[:160]}).")
    from pipeline.modelling.neighbours import cosine_to
    from pipeline.modelling.place import topic_reach

    profile = load_topic_profile(map_key)
    spot = place(vector, data.vectors, data.papers[["x", "y"]].to_numpy(), data.topic_ids, profile=profile)
    scores = cosine_to(data.vectors, vector)  # float32 chunks of the memory-mapped float16 rows
    nearest, _, _ = topic_reach(scores, data.topic_ids, profile.centroids @ vector, profile)
    percentile = data.pairs.percentile(float(spot.similarities[0])) if data.pairs is not None else None
    return Placement(
        x=spot.x,
        y=spot.y,
        topic_id=spot.topic_id,
        verdict=spot.verdict,
        encoder=data.manifest.model.encoder or "the map's model",
        rows=tuple(spot.neighbour_rows.tolist()),
        similarities=tuple(spot.similarities.tolist()),
        percentile=percentile,
        fit_floor=profile.fit_floor,
        evidence=topic_evidence(
            data.topic_ids[spot.neighbour_rows], spot.similarities, vector, profile, nearest
        ),
    )


def topic_evidence(
    neighbour_topics: np.ndarray,
    similarities: np.ndarray,
    vector: np.ndarray,
    profile,
    nearest: np.ndarray | None = None,
) -> pd.DataFrame:
    """The topics a placed abstract is nearest to, and how close: the evidence behind the verdict.

    One row per topic among the nearest papers and the three nearest topic centres, nearest centre
    first: `topic_id`, `neighbours` (how many of the nearest papers are in it), `best` (the closest
    of them), `centre` (similarity to the topic's centroid), `typical` (the centroid similarity
    that 95% of the topic's own papers reach), `nearest` (similarity to the topic's nearest paper,
    `pipeline.modelling.place.topic_reach`, aligned with `profile.topic_ids`) and `needed` (what that must reach:
    as close as 95% of the topic's papers are to their nearest fellow member, and the map's absolute
    floor). A paper fits a topic when `centre` >= `typical` and `nearest` >= `needed`.

    Examples:
        >>> from pipeline.modelling.place import TopicProfile
        >>> profile = TopicProfile(np.array([0, 1]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.8, 0.7]))
        >>> table = topic_evidence(np.array([1, 1, 0]), np.array([0.6, 0.5, 0.4]), np.array([0.6, 0.8]), profile)
        >>> table.to_dict("list")["topic_id"], table.to_dict("list")["neighbours"]
        ([1, 0], [2, 1])
    """
    centre = dict(zip(profile.topic_ids.tolist(), (profile.centroids @ vector).tolist(), strict=True))
    typical = dict(zip(profile.topic_ids.tolist(), profile.typical.tolist(), strict=True))
    close = profile.close if profile.close is not None else np.zeros(len(profile.topic_ids))
    needed = dict(zip(profile.topic_ids.tolist(), np.maximum(close, profile.fit_floor).tolist(), strict=True))
    reach = dict(zip(profile.topic_ids.tolist(), (nearest if nearest is not None else [np.nan] * len(close))))
    nearest_centres = sorted(centre, key=centre.get, reverse=True)[:3]
    ids = list(dict.fromkeys([*nearest_centres, *(int(t) for t in neighbour_topics if t != -1)]))
    rows = []
    for topic in ids:
        near = similarities[neighbour_topics == topic]
        rows.append(
            {
                "topic_id": int(topic),
                "neighbours": int(len(near)),
                "best": float(near.max()) if len(near) else float("nan"),
                "centre": float(centre.get(topic, float("nan"))),
                "typical": float(typical.get(topic, float("nan"))),
                "nearest": float(reach.get(topic, float("nan"))),
                "needed": float(needed.get(topic, float("nan"))),
            }
        )
    columns = ["topic_id", "neighbours", "best", "centre", "typical", "nearest", "needed"]
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values("centre", ascending=False, kind="stable").reset_index(drop=True)


def placement_label(data: MapData, placement: Placement) -> str:
    """What the ★ on the map says about the abstract: its topic only when it fits one."""
    name = data.label(placement.topic_id)
    if placement.verdict == OUTSIDE:
        return "no topic fits it"
    if placement.topic_id == -1:
        return "among the unassigned papers"
    return name if placement.verdict == FITS else f"at the edge of {name}"


def verdict_message(data: MapData, placement: Placement) -> tuple[str, str]:
    """(kind, Markdown) of the sentence that gives the verdict; kind is "success" only for FITS."""
    name = f"**{markdown_literal(data.label(placement.topic_id))}**"
    best = max(placement.similarities, default=0.0)
    percentile = placement.percentile
    how_close = f" ({closeness(percentile)})" if percentile is not None else ""
    if placement.verdict == OUTSIDE:
        return "warning", (
            "**No topic of this map fits this abstract.** No topic has papers as close to it as the "
            f"topic's own papers are to each other: its nearest paper is only {best:.2f} similar{how_close}. "
            "It is not claimed for any topic; the ★ on the map sits by the papers it is least unlike, "
            "listed below."
        )
    if placement.topic_id == -1:
        return "info", (
            "Placed among **unassigned** papers (the ★ on the map): most of its nearest papers belong to "
            "no topic, so no topic is claimed for it."
        )
    if placement.verdict == EDGE:
        return "info", (
            f"At the edge of {name} (the ★ on the map): this is its nearest topic, but "
            f"{edge_reason(placement)}, so it is not a close fit."
        )
    return "success", f"Placed in {name} (the ★ on the map), among the papers below."


def edge_reason(placement: Placement) -> str:
    """Which condition of a fit the placed abstract misses in its topic, from the evidence table."""
    evidence = placement.evidence
    row = evidence[evidence["topic_id"] == placement.topic_id] if "topic_id" in evidence else evidence
    if len(row) and "centre" in row and float(row["centre"].iloc[0]) < float(row["typical"].iloc[0]):
        return "it sits farther from the topic's centre than 95% of the topic's own papers do"
    if len(row) and "nearest" in row and np.isfinite(row["nearest"].iloc[0]):
        return (
            f"the topic's nearest paper is only {float(row['nearest'].iloc[0]):.2f} similar to it, while its "
            f"own papers have one at least {float(row['needed'].iloc[0]):.2f} similar"
        )
    return "the topic's papers are closer to each other than to it"
