"""The placed abstract (the ★ on the map): placing it as `pipeline add` would, and saying where it landed.

What the placement panel (`app.placement`) and the map (`app.map_panel`) share; nothing here draws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from app import encoder as encoding
from app import session
from app.data import MapData
from app.loaders import load_topic_profile
from app.text import markdown_literal
from pipeline.modelling.floors import closeness
from pipeline.modelling.place import EDGE, FITS, OUTSIDE


def place_abstract(data: MapData, map_key: tuple) -> None:
    """Embed the pasted abstract with the map's model and pin it; nothing is written anywhere.

    Placement and its verdict are `pipeline.modelling.place.place` and `Placement.verdict`, the same as
    `python -m pipeline add`, with the map's topic profile computed once per map; a text `add` would
    refuse (`pipeline.modelling.place.placement_problem`) is refused here in the same words.
    """
    from pipeline.modelling.place import place, placement_problem

    text = session.pasted_abstract()
    problem = placement_problem(text)
    if problem:
        session.set_pin({"error": problem})
        return
    try:
        vector = encoding.encode_queries(data.manifest, [text])[0]
    except encoding.EncoderUnavailable as exc:
        session.set_pin({"error": str(exc)})
        return
    except Exception as exc:  # a broken model must not take the page down
        session.set_pin({"error": f"The embedding model could not be loaded ({str(exc)[:160]})."})
        return
    from pipeline.modelling.neighbours import cosine_to
    from pipeline.modelling.place import topic_reach

    profile = load_topic_profile(*map_key)
    spot = place(vector, data.vectors, data.papers[["x", "y"]].to_numpy(), data.topic_ids, profile=profile)
    scores = cosine_to(data.vectors, vector)  # float32 chunks of the memory-mapped float16 rows
    nearest, _, _ = topic_reach(scores, data.topic_ids, profile.centroids @ vector, profile)
    percentile = data.pairs.percentile(float(spot.similarities[0])) if data.pairs is not None else None
    session.set_pin(
        {
            "x": spot.x,
            "y": spot.y,
            "topic": spot.topic_id,
            "encoder": data.manifest.model.encoder or "the map's model",
            "rows": spot.neighbour_rows.tolist(),
            "similarities": spot.similarities.tolist(),
            "verdict": spot.verdict,
            "percentile": percentile,  # the nearest paper is closer than this share of the map's pairs
            "fit_floor": profile.fit_floor,
            "evidence": topic_evidence(
                data.topic_ids[spot.neighbour_rows], spot.similarities, vector, profile, nearest
            ).to_dict("list"),
        }
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


def pin_label(data: MapData, pin: dict) -> str:
    """What the ★ on the map says about the abstract: its topic only when it fits one."""
    name = data.label(pin["topic"])
    if pin["verdict"] == OUTSIDE:
        return "no topic fits it"
    if pin["topic"] == -1:
        return "among the unassigned papers"
    return name if pin["verdict"] == FITS else f"at the edge of {name}"


def verdict_message(data: MapData, pin: dict) -> tuple[str, str]:
    """(kind, Markdown) of the sentence that gives the verdict; kind is "success" only for FITS."""
    name = f"**{markdown_literal(data.label(pin['topic']))}**"
    best = max(pin["similarities"], default=0.0)
    percentile = pin.get("percentile")
    how_close = f" ({closeness(percentile)})" if percentile is not None else ""
    if pin["verdict"] == OUTSIDE:
        return "warning", (
            "**No topic of this map fits this abstract.** No topic has papers as close to it as the "
            f"topic's own papers are to each other: its nearest paper is only {best:.2f} similar{how_close}. "
            "It is not claimed for any topic; the ★ on the map sits by the papers it is least unlike, "
            "listed below."
        )
    if pin["topic"] == -1:
        return "info", (
            "Placed among **unassigned** papers (the ★ on the map): most of its nearest papers belong to "
            "no topic, so no topic is claimed for it."
        )
    if pin["verdict"] == EDGE:
        return "info", (
            f"At the edge of {name} (the ★ on the map): this is its nearest topic, but {edge_reason(pin)}, "
            "so it is not a close fit."
        )
    return "success", f"Placed in {name} (the ★ on the map), among the papers below."


def edge_reason(pin: dict) -> str:
    """Which condition of a fit the placed abstract misses in its topic, from the evidence table."""
    evidence = pd.DataFrame(pin.get("evidence") or {})
    row = evidence[evidence["topic_id"] == pin["topic"]] if "topic_id" in evidence else evidence
    if len(row) and "centre" in row and float(row["centre"].iloc[0]) < float(row["typical"].iloc[0]):
        return "it sits farther from the topic's centre than 95% of the topic's own papers do"
    if len(row) and "nearest" in row and np.isfinite(row["nearest"].iloc[0]):
        return (
            f"the topic's nearest paper is only {float(row['nearest'].iloc[0]):.2f} similar to it, while its "
            f"own papers have one at least {float(row['needed'].iloc[0]):.2f} similar"
        )
    return "the topic's papers are closer to each other than to it"
