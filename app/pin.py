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
from pipeline.modelling.place import EDGE, FITS, OUTSIDE, verdict


def place_abstract(data: MapData, map_key: tuple) -> None:
    """Embed the pasted abstract with the map's model and pin it; nothing is written anywhere.

    Placement and its verdict are `pipeline.place.place` and `pipeline.place.verdict`, the same as
    `python -m pipeline add`, with the map's topic profile computed once per map.
    """
    from pipeline.modelling.place import fits_any_topic, place

    text = session.pasted_abstract()
    if len(text.split()) < 5:
        session.set_pin({"error": "Paste an abstract of at least a few sentences to place it."})
        return
    try:
        vector = encoding.encode_queries(data.manifest, [text])[0]
    except encoding.EncoderUnavailable as exc:
        session.set_pin({"error": str(exc)})
        return
    except Exception as exc:  # a broken model must not take the page down
        session.set_pin({"error": f"The embedding model could not be loaded ({str(exc)[:160]})."})
        return
    profile = load_topic_profile(*map_key)
    spot = place(vector, data.vectors, data.papers[["x", "y"]].to_numpy(), data.topic_ids, profile=profile)
    session.set_pin(
        {
            "x": spot.x,
            "y": spot.y,
            "topic": spot.topic_id,
            "encoder": (data.manifest.get("model") or {}).get("encoder", "the map's model"),
            "rows": spot.neighbour_rows.tolist(),
            "similarities": spot.similarities.tolist(),
            "verdict": verdict(spot.fits, bool(fits_any_topic(vector[None, :], profile)[0])),
            "evidence": topic_evidence(
                data.topic_ids[spot.neighbour_rows], spot.similarities, vector, profile
            ).to_dict("list"),
        }
    )


def topic_evidence(
    neighbour_topics: np.ndarray, similarities: np.ndarray, vector: np.ndarray, profile
) -> pd.DataFrame:
    """The topics a placed abstract is nearest to, and how close: the evidence behind the verdict.

    One row per topic among the nearest papers and the three nearest topic centres, nearest centre
    first: `topic_id`, `neighbours` (how many of the nearest papers are in it), `best` (the closest
    of them), `centre` (similarity to the topic's centroid) and `typical` (the centroid similarity
    that 95% of the topic's own papers reach: at or above it, a paper fits the topic).

    Examples:
        >>> from pipeline.modelling.place import TopicProfile
        >>> profile = TopicProfile(np.array([0, 1]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.8, 0.7]))
        >>> table = topic_evidence(np.array([1, 1, 0]), np.array([0.6, 0.5, 0.4]), np.array([0.6, 0.8]), profile)
        >>> table.to_dict("list")["topic_id"], table.to_dict("list")["neighbours"]
        ([1, 0], [2, 1])
    """
    centre = dict(zip(profile.topic_ids.tolist(), (profile.centroids @ vector).tolist(), strict=True))
    typical = dict(zip(profile.topic_ids.tolist(), profile.typical.tolist(), strict=True))
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
            }
        )
    table = pd.DataFrame(rows, columns=["topic_id", "neighbours", "best", "centre", "typical"])
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
    if pin["verdict"] == OUTSIDE:
        return "warning", (
            "**No topic of this map fits this abstract.** It is farther from every topic's centre than "
            f"almost all of that topic's own papers, and its nearest paper is only {best:.2f} similar. "
            "The ★ on the map sits by the papers it is least unlike; they are listed below."
        )
    if pin["topic"] == -1:
        return "info", (
            "Placed among **unassigned** papers (the ★ on the map): most of its nearest papers belong to "
            "no topic, so no topic is claimed for it."
        )
    if pin["verdict"] == EDGE:
        return "info", (
            f"At the edge of {name} (the ★ on the map): this is its nearest topic, but it sits farther "
            "from the topic's centre than 95% of the topic's own papers do, so it is not a close fit."
        )
    return "success", f"Placed in {name} (the ★ on the map), among the papers below."
