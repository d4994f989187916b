"""The map and its searches, loaded through Streamlit's caches (shared by sessions)."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from app.data import MapData, build_map_data, map_signature
from app.encoder import encode_queries
from app.trends import rising_scores
from pipeline.mapfolder.search_index import WordHits


@dataclass(frozen=True)
class MapKey:
    """Which map the page shows, as every loader below caches it: its name, its folder, and its
    files' signature (`app.data.map_signature`: mtimes and sizes, so a rebuilt map loads afresh)."""

    name: str
    path: str
    signature: tuple

    @classmethod
    def of(cls, name: str, folder: Path) -> MapKey:
        """The key of the map folder `folder` as it is on disk now."""
        return cls(name, str(folder), map_signature(folder))


@st.cache_resource(show_spinner="Loading the map…", max_entries=4)
def load_map(key: MapKey) -> MapData:
    """The map and its precomputations; the key's signature makes a rebuilt map load afresh.

    The loaded map lives as long as the server: it is moved out of the garbage collector's view
    (`gc.freeze`), since Streamlit runs a full collection after every rerun and walking a large map's
    objects each time cost 80 ms a rerun at 81,646 papers (memory is still freed by reference counts).
    """
    data = build_map_data(key.name, Path(key.path))
    gc.collect()
    gc.freeze()
    return data


@st.cache_data(show_spinner=False, max_entries=128)
def cached_word_search(key: MapKey, query: str) -> WordHits:
    """Papers holding every word of `query`, best first (`pipeline.mapfolder.search_index`)."""
    return load_map(key).search_index.search(query)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_fused_search(key: MapKey, query: str):
    """The search's hits over the whole map, words and meaning fused (`app.search.fused_search`).

    Raises when the encoder cannot be loaded (nothing is cached then).
    """
    from app.search import fused_search, meaning_text

    data = load_map(key)
    hits = data.search_index.search(query, labels=False)  # the list labels its papers itself
    similarity = cached_meaning(key, meaning_text(hits.query))
    return fused_search(data.search_index, hits, similarity, data.pairs, query)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_meaning(key: MapKey, query: str) -> np.ndarray:
    """Every paper's cosine similarity to `query`, embedded with the map's own encoder.

    Raises when the encoder cannot be loaded (nothing is cached then).
    """
    from pipeline.modelling.neighbours import cosine_to

    data = load_map(key)
    return cosine_to(data.vectors, encode_queries(data.manifest, [query])[0])


@st.cache_resource(show_spinner=False, max_entries=4)
def load_topic_profile(key: MapKey):
    """The map's `pipeline.modelling.place.topic_profile`, computed once per map (a pass over its embeddings)
    on the first placement and shared by every later one, in every session."""
    from pipeline.modelling.place import topic_profile

    data = load_map(key)
    return topic_profile(data.vectors, data.topic_ids, data.pairs)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_rising(key: MapKey) -> pd.Series:
    """Each topic's growth over the most recent years (`app.trends.rising_scores`), once per map;
    all NaN when the map has no years to measure it by."""
    return rising_scores(load_map(key).papers)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_changes(key: MapKey) -> tuple[pd.DataFrame, list[int], str]:
    """The map's changes since its previous build (`app.changes.change_rows`), the topic each row opens
    (a gone topic: where most of its papers went) and the count of each kind of change, once per map."""
    from app.changes import change_rows, resolve_shared_topic
    from pipeline.modelling.lineage import change_counts

    data = load_map(key)
    topics = data.topics.reset_index(drop=True)
    rows = change_rows(data.lineage, topics, data.topic_edits)
    edits = data.topic_edits
    targets = [  # a topic an edit merged or hid opens the topic holding its papers now (none: unassigned)
        resolve_shared_topic(int(t), data.lineage, topics).topic_id
        if (home := edits.home(int(t))) is None
        else (home if home != -1 else None)
        for t in rows["topic_id"].tolist()
    ]
    return rows, targets, change_counts(data.lineage)
