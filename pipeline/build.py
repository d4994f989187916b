"""Run the stages in order (ingest -> embed -> topics -> layout -> evaluate) and write the map."""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from pipeline import UserError, __version__
from pipeline.artifacts import SCHEMA_VERSION, AtlasMap, read_manifest, validate_out, write_map
from pipeline.config import BuildConfig
from pipeline.embed import MODEL_NAME, embed_texts
from pipeline.evaluate import map_quality
from pipeline.ingest import expand_inputs, ingest
from pipeline.layout import label_positions, map_coordinates
from pipeline.topics import fit_topics

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
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
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
    log: Callable[[str], None] = _stderr,
    encoder=None,
    ray_address: str | None = None,
) -> AtlasMap:
    """Build a topic map of the abstracts in `inputs` and write it to the folder `out`.

    `encoder` (anything with `.name` and `.encode(list[str])`, e.g. a test's fake) replaces the
    packaged model; `ray_address` runs the embedding stage as a Ray Data job on that cluster.

    Examples:
        >>> build_map(["seeds"], "maps/icml")  # doctest: +SKIP
    """
    out = Path(out)
    config = config or BuildConfig()
    validate_out(out)
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = round(now - clock, 3)
        clock = now

    fingerprint = input_fingerprint(inputs, config)
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
    embeddings, embedding_report = embed_texts(
        documents,
        embedder=resolved.embedder,
        max_tokens=resolved.max_tokens,
        use_cache=use_cache,
        progress=progress,
        encoder=encoder,
        compute=compute,
    )
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

    log(f"finding topics (UMAP + HDBSCAN, min topic size {resolved.min_topic_size})...")
    if resolved.fit_sample:
        from pipeline.sample_fit import fit_on_sample, place_rest

        log(f"fitting on a sample of {resolved.fit_sample:,} papers, assigning the rest...")
        fit = fit_on_sample(documents, embeddings, resolved)
        topics = fit.topics
        lap("topics")
        log("laying out the 2-D map...")
        sample_xy = map_coordinates(
            embeddings[fit.sample_rows],
            n_neighbors=min(resolved.n_neighbors, len(fit.sample_rows) - 1),
            random_state=resolved.random_state,
            knn=topics.knn,
        )
        coordinates = place_rest(fit, sample_xy)
    else:
        topics = fit_topics(documents, embeddings, resolved)
        lap("topics")
        log("laying out the 2-D map...")
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
    doc_ids = papers["doc_id"].to_numpy()
    table["representative_doc_ids"] = table.pop("representative_rows").map(
        lambda rows: doc_ids[rows].tolist()
    )
    table = table[
        ["topic_id", "label", "keywords", "keyword_weights", "size", "x", "y", "representative_doc_ids"]
    ]
    quality = map_quality(topics.labels, table["keywords"].tolist(), documents)
    quality["hdbscan_unassigned_share"] = round(topics.hdbscan_unassigned / len(papers), 4)
    lap("evaluate")

    total = round(sum(timings.values()), 3)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "name": name or corpus_name(papers, inputs),
        "papers": len(papers),
        "topics": len(table),
        "unassigned": int((topics.labels == -1).sum()),
        "inputs": [str(p) for p in expand_inputs(inputs)],
        "notes": corpus.notes,
        "config": resolved.to_dict(),
        "model": {
            "name": MODEL_NAME,
            "encoder": embedding_report["encoder"],
            "max_tokens": resolved.max_tokens,
        },
        "embedding": embedding_report,
        "versions": library_versions(),
        "timings_seconds": dict(timings, total=total),
        "abstracts_per_second": round(len(papers) / total, 1) if total else None,
        "quality": quality,
        "input_fingerprint": fingerprint,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    atlas = AtlasMap(papers=papers, topics=table, embeddings=embeddings.astype(np.float16), manifest=manifest)
    write_map(out, atlas)
    log(
        f"{len(table)} topics, {manifest['unassigned']} of {len(papers)} papers unassigned "
        f"({quality['unassigned_share']:.1%}); map written to {out} in {total:.1f} s"
    )
    return atlas
