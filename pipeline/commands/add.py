"""Add abstracts to an existing map without refitting: embed, place among their nearest papers, rewrite."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError
from pipeline.mapfolder.lock import out_lock, recover
from pipeline.mapfolder.manifest import AddedBlock, Manifest, read_manifest
from pipeline.mapfolder.store import (
    AtlasMap,
    added_mask,
    concat_papers,
    curated_view,
    read_map,
    via_add_mask,
    write_map,
)
from pipeline.modelling.floors import map_pair_similarities
from pipeline.modelling.place import TopicProfile, place, placement_problem, topic_profile, verdict
from pipeline.text import shorten

# Recommend a full rebuild when at least this share of the new papers fits no topic (and at least
# two do), or when papers added since the last full build reach this share of the map: past
# either, the topics no longer describe the corpus well and a rebuild would find new ones.
REBUILD_OUTSIDE_SHARE = 0.25
REBUILD_ADDED_SHARE = 0.25


@dataclasses.dataclass(frozen=True)
class AddReport:
    """What `add_papers` did: counts, each new paper's fit, and whether a rebuild is advisable."""

    added: int
    skipped: int
    outside: (
        int  # new papers within no topic's reach (`pipeline.modelling.place.topic_reach`): stored unassigned
    )
    unassigned: int  # new papers placed among unassigned papers
    added_since_build: int  # all papers marked added in the map, these included
    rebuild_advised: bool
    placements: (
        pd.DataFrame
    )  # doc_id, title, topic_id, nearest_similarity, centroid_similarity, fits_topic, fits_any
    refused: int = 0  # abstracts too short to place (`pipeline.modelling.place.placement_problem`): not added


def place_new_papers(
    atlas: AtlasMap, new: pd.DataFrame, vectors: np.ndarray, *, profile: TopicProfile | None = None
) -> tuple[AtlasMap, pd.DataFrame]:
    """The map with `new` papers (rows of `vectors`) placed on it and marked `added`; pure.

    Each paper is placed on the map as it was before this call (order does not matter), with the
    same `pipeline.modelling.place.place` and the same topic profile the app uses (its floors from the map's own
    pair similarities, `pipeline.modelling.floors.map_pair_similarities`), on the map as the app
    shows it (`curated_view`: hidden topics, merges): the verdict is the app's, and the topic stored
    is one the curated map shows. A paper outside every topic is stored unassigned (-1). Topic sizes
    and the manifest's counts follow. `atlas` is the map as built (`read_map(curated=False)`).
    Returns the new map and one row a new paper describing its placement.
    """
    papers, topics = atlas.papers, atlas.topics
    corpus = atlas.embeddings.astype(np.float32)
    xy = papers[["x", "y"]].to_numpy(dtype=np.float64)
    labels = curated_view(atlas).papers["topic_id"].to_numpy(dtype=np.int64)
    profile = profile or topic_profile(corpus, labels, map_pair_similarities(atlas.manifest, corpus))
    spots = [place(vector, corpus, xy, labels, profile=profile) for vector in vectors]
    placed = new.copy()
    placed["topic_id"] = np.array([s.topic_id for s in spots], dtype=np.int64)
    placed["x"] = np.array([s.x for s in spots], dtype=papers["x"].dtype)
    placed["y"] = np.array([s.y for s in spots], dtype=papers["y"].dtype)
    placed["added"] = True  # since the last full build: the app highlights these
    placed["via_add"] = True  # for good: a rebuild into this map keeps these
    before = papers.copy()
    before["added"], before["via_add"] = added_mask(before), via_add_mask(before)
    combined = concat_papers(before, placed)
    sizes = combined.loc[combined["topic_id"] != -1, "topic_id"].value_counts()
    topics = topics.copy()
    topics["size"] = topics["topic_id"].map(sizes).fillna(0).astype(topics["size"].dtype)
    themes = atlas.themes
    if themes is not None and len(themes):  # a theme's size counts its topics' papers, as the build's does
        size_of = dict(zip(topics["topic_id"].astype(int), topics["size"].astype(int), strict=True))
        themes = themes.copy()
        themes["size"] = (
            themes["topic_ids"]
            .map(lambda ids: sum(size_of.get(int(t), 0) for t in ids))
            .astype(themes["size"].dtype)
        )
    embeddings = np.concatenate([atlas.embeddings, vectors.astype(atlas.embeddings.dtype)])
    manifest = dataclasses.replace(
        atlas.manifest, papers=len(combined), unassigned=int((combined["topic_id"] == -1).sum())
    )
    report = pd.DataFrame(
        {
            "doc_id": placed["doc_id"].to_numpy(),
            "title": placed["title"].to_numpy(),
            "topic_id": placed["topic_id"].to_numpy(),
            "nearest_similarity": [float(s.similarities[0]) for s in spots],
            "centroid_similarity": [s.centroid_similarity for s in spots],
            "fits_topic": [bool(s.fits) for s in spots],
            "fits_any": [bool(s.fits_any) for s in spots],
        }
    )
    return dataclasses.replace(
        atlas, papers=combined, topics=topics, themes=themes, embeddings=embeddings, manifest=manifest
    ), report


def add_papers(
    folder: str | Path,
    inputs: list[str | Path],
    *,
    use_cache: bool = True,
    progress: bool = True,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True),
) -> AddReport:
    """Place the abstracts in `inputs` on the map in `folder` and rewrite it atomically.

    Abstracts already in the map (same doc_id) are skipped. Nothing is written when there is
    nothing new; a bad input or map raises `UserError` before anything is written.

    Examples:
        >>> add_papers("assets/maps/seeds", ["new_papers.csv"])  # doctest: +SKIP
    """
    from pipeline.embedding.embed import embed_texts
    from pipeline.ingest import ingest

    folder = Path(folder)
    read_manifest(
        folder, check=False
    )  # a folder that is not a map is refused before any lock file is made beside it
    # The lock is held from reading the map to the swap: a build or another add cannot slip in between.
    with out_lock(folder, command="add"):
        for note in recover(folder):
            log(note)
        atlas = read_map(folder, curated=False)  # rewritten as built; its edits are written back with it
        corpus = ingest(inputs)
        incoming = corpus.papers
        known = set(atlas.papers["doc_id"])
        fresh = ~incoming["doc_id"].isin(known)
        new, skipped = incoming[fresh].reset_index(drop=True), int((~fresh).sum())
        previously_added = int(added_mask(atlas.papers).sum())
        if skipped:
            log(f"skipped {skipped:,} abstract(s) already in the map")
        # What the app refuses to place, `add` refuses too, in the same words (pipeline.modelling.place).
        problems = [placement_problem(text) for text in new["abstract"].astype(str)]
        for title, problem in zip(new["title"].astype(str), problems, strict=True):
            if problem:
                log(f"  {shorten(' '.join(str(title).split()), 70)} -> not placed: {problem}")
        refused = sum(p is not None for p in problems)
        new = new[[p is None for p in problems]].reset_index(drop=True)
        if new.empty:
            log(f"nothing new to add; {folder} is unchanged")
            empty = pd.DataFrame(columns=["doc_id", "title", "topic_id", "nearest_similarity"])
            return AddReport(0, skipped, 0, 0, previously_added, False, empty, refused)

        manifest = atlas.manifest
        vectors, _ = embed_texts(
            new["abstract"].tolist(),
            embedder=manifest.config.embedder,
            max_tokens=manifest.max_tokens,  # the map's own token budget
            use_cache=use_cache,
            progress=progress,
        )
        if vectors.shape[1] != atlas.embeddings.shape[1]:
            raise UserError(
                f"{folder}: the map's embeddings have {atlas.embeddings.shape[1]} dimensions, "
                f"its model gives {vectors.shape[1]}; rebuild the map"
            )
        grown, placements = place_new_papers(atlas, new, vectors)

        outside = int((~placements["fits_any"]).sum())
        unassigned = int((placements["topic_id"] == -1).sum())
        added_since_build = previously_added + len(new)
        rebuild = (outside >= 2 and outside / len(new) >= REBUILD_OUTSIDE_SHARE) or (
            added_since_build / len(grown.papers) >= REBUILD_ADDED_SHARE
        )
        record = AddedBlock(
            at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            inputs=[str(p) for p in inputs],
            input_folder=os.getcwd(),
            papers=len(new),
            skipped=skipped,
            refused=refused,
            outside_topics=outside,
            unassigned=unassigned,
        )
        grown.manifest = dataclasses.replace(grown.manifest, added=[*manifest.added, record])
        write_map(folder, grown)

    after = curated_view(grown)  # the map as the app and `export` read it now (a curator's edits applied)
    names = dict(zip(after.topics["topic_id"].astype(int), after.topics["label"], strict=True))
    for row in placements.itertuples():
        where = names.get(int(row.topic_id), "Unassigned")
        fit = verdict(row.fits_topic, row.fits_any)
        log(
            f"  {shorten(' '.join(str(row.title).split()), 70)} -> {where} (nearest paper {row.nearest_similarity:.2f}; {fit})"
        )
    log(added_summary(len(new), outside, unassigned, refused, folder, after.manifest))
    if rebuild:
        log(
            f"recommendation: rebuild the map (`{rebuild_command(folder, atlas.manifest)}`, which keeps "
            f"the {added_since_build:,} added papers): "
            + (
                f"{outside:,} of {len(new):,} new papers fit no existing topic"
                if outside >= 2 and outside / len(new) >= REBUILD_OUTSIDE_SHARE
                else f"{added_since_build:,} of {len(grown.papers):,} papers were added since the last full build"
            )
        )
    return AddReport(len(new), skipped, outside, unassigned, added_since_build, rebuild, placements, refused)


def added_summary(new: int, outside: int, unassigned: int, refused: int, folder: Path, now: Manifest) -> str:
    """`add`'s summary line: where the new papers went, then the map as the app reads it afterwards
    (`now`: its curated manifest), so each number can be checked against the map.

    Examples:
        >>> added_summary(2, 1, 1, 0, Path("m"), Manifest(papers=718, topics=21, unassigned=3))
        'added 2 paper(s) to m: 1 in a topic, 1 unassigned (1 outside every topic); the map now holds 718 papers in 21 topics, 3 of them unassigned'
    """
    placed = f"{new - unassigned:,} in a topic, {unassigned:,} unassigned ({outside:,} outside every topic)"
    return (
        f"added {new:,} paper(s) to {folder}: {placed}"
        + (f"; {refused:,} too short to place, not added" if refused else "")
        + f"; the map now holds {now.papers:,} papers in {now.topics:,} topics, {now.unassigned:,} of them unassigned"
    )


def rebuild_command(folder: Path, manifest: Manifest) -> str:
    """The command that rebuilds the map in `folder` from its own inputs (kept papers added to it too).

    Examples:
        >>> rebuild_command(Path("maps/m"), Manifest(inputs=["seeds"]))
        'python -m pipeline build seeds --out maps/m'
        >>> rebuild_command(Path("maps/m"), Manifest(inputs=["gone.csv"]))
        'python -m pipeline build INPUT... --out maps/m'
    """
    inputs = manifest.inputs
    shown = "INPUT..."
    if 0 < len(inputs) <= 3 and all(Path(p).exists() for p in inputs):  # as named from here
        shown = " ".join(shlex.quote(p) for p in inputs)
    return f"python -m pipeline build {shown} --out {shlex.quote(str(folder))}"
