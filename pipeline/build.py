"""Run the stages in order (ingest -> embed -> topics -> layout -> evaluate) and write the map."""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path

import numpy as np

from pipeline import UserError, __version__
from pipeline.artifacts import SCHEMA_VERSION, TOPIC_COLUMNS, AtlasMap, check_out, read_manifest, write_map
from pipeline.config import BuildConfig
from pipeline.embed import MODEL_NAME, embed_texts
from pipeline.evaluate import map_quality
from pipeline.ingest import expand_inputs, ingest, read_bytes
from pipeline.layout import label_positions, map_coordinates, theme_label_positions
from pipeline.lineage import PreviousMap, apply_lineage, match_topics, read_previous
from pipeline.themes import fit_themes
from pipeline.topics import fit_topics, topic_stability

MIN_PAPERS = 10
LIBRARIES = (
    "bertopic",
    "umap-learn",
    "hdbscan",
    "sentence-transformers",
    "onnxruntime",
    "torch",
    "scikit-learn",
    "numpy",
    "pandas",
    "pyarrow",
)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "abstract-atlas": __version__}
    for name in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def input_fingerprint(inputs: list[str | Path], config: BuildConfig) -> str:
    """Hash of the input files' bytes and the requested config: equal means the map is current."""
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode())
    digest.update(f"schema {SCHEMA_VERSION} pipeline {__version__}".encode())
    for path in sorted(expand_inputs(inputs), key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0" + read_bytes(path))
    return digest.hexdigest()


def is_current(inputs: list[str | Path], out: Path, config: BuildConfig) -> bool:
    """True when `out` holds a map of exactly these inputs and this config."""
    if not (Path(out) / "manifest.json").is_file():
        return False
    try:
        manifest = read_manifest(out)
    except UserError:
        return False
    return manifest.get("schema_version") == SCHEMA_VERSION and manifest.get(
        "input_fingerprint"
    ) == input_fingerprint(inputs, config)


def corpus_name(papers, inputs: list[str | Path]) -> str:
    if "collection" in papers.columns and papers["collection"].nunique() == 1:
        return str(papers["collection"].iloc[0])
    return ", ".join(Path(p).resolve().name for p in inputs)


def build_map(
    inputs: list[str | Path],
    out: str | Path,
    config: BuildConfig | None = None,
    *,
    name: str | None = None,
    use_cache: bool = True,
    progress: bool = True,
    previous: str | Path | bool | None = None,
    log: Callable[[str], None] = _stderr,
    encoder=None,
    ray_address: str | None = None,
) -> AtlasMap:
    """Build a topic map of the abstracts in `inputs` and write it to the folder `out`.

    `previous` is the map whose topic ids (and names) the new topics keep where they match: by
    default the map already in `out`, if any; a folder; or False to number topics afresh.
    `encoder` (anything with `.name` and `.encode(list[str])`, e.g. a test's fake) replaces the
    packaged model; `ray_address` runs the embedding stage as a Ray Data job on that cluster.

    Examples:
        >>> build_map(["seeds"], "maps/icml")  # doctest: +SKIP
    """
    out = Path(out)
    config = config or BuildConfig()
    check_out(out, inputs)  # never replace an input, a folder of inputs, or a folder that is not a map
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = round(now - clock, 3)
        clock = now

    fingerprint = input_fingerprint(inputs, config)
    deferred: list[str] = []  # said once the input is known good: a bad input gets one error line only
    previous_map = previous_for(out, previous, deferred.append)
    corpus = ingest(inputs)
    papers = corpus.papers
    if len(papers) < MIN_PAPERS:
        raise UserError(
            f"{', '.join(map(str, inputs))}: {len(papers)} distinct abstract(s); a map needs at least {MIN_PAPERS}"
        )
    resolved = config.resolve(len(papers))
    for note in corpus.notes:
        log(note)
    lap("ingest")

    documents = papers["abstract"].tolist()
    compute = None
    if ray_address and encoder is None:
        from pipeline.ray_embed import ray_compute

        compute = ray_compute(ray_address, resolved, log=log)
    # Abstracts and, later, candidate topic names go through the same encoder and cache.
    embed = partial(
        embed_texts,
        embedder=resolved.embedder,
        max_tokens=resolved.max_tokens,
        use_cache=use_cache,
        encoder=encoder,
    )
    embeddings, embedding_report = embed(documents, progress=progress, compute=compute)
    if compute is not None:
        embedding_report["ray"] = compute.report
    lap("embed")
    if embedding_report["computed"]:
        log(
            f"embedded {embedding_report['computed']:,} abstracts "
            f"({embedding_report['abstracts_per_second']} abstracts/s), {embedding_report['cached']:,} from cache"
        )
    else:
        log(f"all {embedding_report['cached']:,} embeddings from cache")

    def encode_phrases(texts: list[str]) -> np.ndarray:
        return embed(texts, progress=False)[0]

    # The int8 model the vectors came from, so the app places abstracts with the very same file.
    bundle = {}
    if encoder is None and resolved.embedder == "onnx-int8":
        from pipeline.onnx_build import map_bundle

        bundle = map_bundle(out, log)

    log(f"finding topics (UMAP + HDBSCAN, min topic size {resolved.min_topic_size})...")
    if resolved.fit_sample:
        from pipeline.sample_fit import fit_on_sample, place_rest

        log(f"fitting on a sample of {resolved.fit_sample:,} papers, assigning the rest...")
        fit = fit_on_sample(documents, embeddings, resolved, encode=encode_phrases)
        topics = fit.topics
    else:
        topics = fit_topics(documents, embeddings, resolved, encode=encode_phrases)
    # Stability and theme names are worked out on the papers UMAP and HDBSCAN saw.
    fitted = fit.sample_rows if resolved.fit_sample else np.arange(len(documents))
    lineage = None
    for note in topics.notes:  # e.g. how topics were named when the abstracts are not in English
        log(note)
        corpus.notes.append(note)
    for note in deferred:
        log(note)
    if previous_map is not None:
        # Ids and names are settled here, before anything else reads a topic id.
        lineage = match_topics(
            previous_map,
            papers["doc_id"].tolist(),
            topics.labels,
            dict(zip(topics.table["topic_id"].astype(int), topics.table["label"], strict=True)),
            dict(zip(topics.table["topic_id"].astype(int), topics.table["centroid"], strict=True)),
        )
        topics.labels, topics.table = apply_lineage(topics.labels, topics.table, lineage)
        log(lineage_summary(lineage.table))
    lap("topics")
    stability_report = {"runs": 0, "method": "switched off (--no-stability)", "seconds": 0.0}
    stability: dict[int, float] = {}
    if resolved.stability:
        log("scoring topic stability (re-clustering 90% subsamples)...")
        stability, stability_report = topic_stability(
            topics.reduced, embeddings[fitted], topics.labels[fitted], resolved
        )
        lap("stability")
    # Themes come last, from the final topic ids and names.
    themes, theme_of = fit_themes(
        [documents[i] for i in fitted],
        embeddings[fitted],
        topics.labels[fitted],
        topics.table,
        encode=encode_phrases,
        phrases=topics.phrases,
    )
    if resolved.fit_sample:  # theme sizes count every paper, as topic sizes do
        size_of = dict(zip(topics.table["topic_id"], topics.table["size"], strict=True))
        themes["size"] = themes["topic_ids"].map(lambda ids: int(sum(size_of[t] for t in ids)))
    lap("themes")

    log("laying out the 2-D map...")
    if resolved.fit_sample:
        sample_xy = map_coordinates(
            embeddings[fit.sample_rows],
            n_neighbors=min(resolved.n_neighbors, len(fit.sample_rows) - 1),
            random_state=resolved.random_state,
            knn=topics.knn,
        )
        coordinates = place_rest(fit, sample_xy)
    else:
        coordinates = map_coordinates(
            embeddings, n_neighbors=resolved.n_neighbors, random_state=resolved.random_state, knn=topics.knn
        )
    lap("layout")

    papers = papers.copy()
    papers["topic_id"] = topics.labels
    papers["x"] = coordinates[:, 0]
    papers["y"] = coordinates[:, 1]
    positions = label_positions(coordinates, topics.labels)
    table = topics.table.merge(positions, on="topic_id")
    table["theme_id"] = table["topic_id"].map(theme_of).fillna(-1).astype("int64")
    table["stability"] = table["topic_id"].map(stability).astype("float64")  # NaN when switched off
    themes = themes.merge(theme_label_positions(coordinates, topics.labels, theme_of), on="theme_id")
    doc_ids = papers["doc_id"].to_numpy()
    table["representative_doc_ids"] = table.pop("representative_rows").map(
        lambda rows: doc_ids[rows].tolist()
    )
    table = table[[*TOPIC_COLUMNS, "theme_id", "stability", "centroid"]]
    quality = map_quality(topics.labels, table["keywords"].tolist(), documents)
    quality["hdbscan_unassigned_share"] = round(topics.hdbscan_unassigned / len(papers), 4)
    lap("evaluate")

    total = round(sum(timings.values()), 3)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "name": name or corpus_name(papers, inputs),
        "papers": len(papers),
        "topics": len(table),
        "themes": len(themes),
        "stability": stability_report,
        "unassigned": int((topics.labels == -1).sum()),
        "inputs": [str(p) for p in expand_inputs(inputs)],
        "notes": corpus.notes,
        "config": resolved.to_dict(),
        "model": {
            "name": MODEL_NAME,
            "encoder": embedding_report["encoder"],
            "max_tokens": resolved.max_tokens,
            **bundle,
        },
        "embedding": embedding_report,
        "versions": library_versions(),
        "timings_seconds": dict(timings, total=total),
        "abstracts_per_second": round(len(papers) / total, 1) if total else None,
        "quality": quality,
        "input_fingerprint": fingerprint,
        "lineage": {
            "previous": None
            if previous_map is None
            else {"name": previous_map.name, "fingerprint": previous_map.fingerprint},
            # Ids are never reused: the next new topic gets this id or higher.
            "next_topic_id": lineage.next_topic_id
            if lineage
            else (int(table["topic_id"].max()) + 1 if len(table) else 0),
        },
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    atlas = AtlasMap(
        papers=papers,
        topics=table,
        embeddings=embeddings.astype(np.float16),
        manifest=manifest,
        lineage=None if lineage is None else lineage.table,
        themes=themes,
    )
    write_map(out, atlas, log=log)
    log(
        f"{len(table)} topics in {len(themes)} themes, {manifest['unassigned']} of {len(papers)} papers unassigned "
        f"({quality['unassigned_share']:.1%}); map written to {out} in {total:.1f} s"
    )
    return atlas


def previous_for(
    out: Path, previous: str | Path | bool | None, log: Callable[[str], None]
) -> PreviousMap | None:
    """The map whose topic ids a build keeps: `previous` if a folder, else the map in `out` if any.

    A named previous map that cannot be read is a user error; an unreadable map in `out` is only
    noted (it is about to be replaced anyway) and topics are numbered afresh.
    """
    if previous is False:
        return None
    if previous not in (None, True):
        return read_previous(Path(previous))
    if not (Path(out) / "manifest.json").is_file():
        return None
    try:
        return read_previous(out)
    except UserError as exc:
        log(f"note: the map in {out} cannot be read for topic lineage ({exc}); topic ids start afresh")
        return None


def lineage_summary(table) -> str:
    """One line on what became of the previous map's topics ("12 kept, 2 grown, 1 new, 1 gone")."""
    counts = table["status"].value_counts()
    parts = [
        f"{counts[s]} {s}"
        for s in ("kept", "grown", "shrunk", "split", "merged", "new", "gone")
        if s in counts
    ]
    return "topics matched to the previous map: " + ", ".join(parts)
