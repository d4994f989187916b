"""Run the stages in order (ingest -> embed -> topics -> layout -> evaluate) and write the map."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import shlex
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError, __version__, numeric_target
from pipeline._fastimport import import_topic_libraries
from pipeline.cache import cache_dir
from pipeline.config import BuildConfig
from pipeline.embedding.embed import cache_name_for, embed_texts, text_key
from pipeline.embedding.model import MODEL_NAME
from pipeline.ingest import expand_inputs, ingest, unreadable
from pipeline.mapfolder.curation import Edit, carry_edits, read_curation
from pipeline.mapfolder.files import EMBEDDINGS, MANIFEST, PAPERS, SCHEMA_VERSION, TOPIC_COLUMNS
from pipeline.mapfolder.lock import out_lock
from pipeline.mapfolder.manifest import (
    NAME_DERIVED,
    NAME_GIVEN,
    ConfigBlock,
    LineageBlock,
    Manifest,
    ModelBlock,
    PreviousBlock,
    read_manifest,
)
from pipeline.mapfolder.store import (
    AtlasMap,
    check_edits,
    check_out,
    concat_papers,
    curated_view,
    file_digest,
    read_added_papers,
    read_lineage,
    write_map,
)
from pipeline.mapfolder.table_checks import read_embeddings
from pipeline.modelling.evaluate import map_quality
from pipeline.modelling.floors import pair_similarities
from pipeline.modelling.layout import (
    align_to,
    initial_positions,
    label_positions,
    map_coordinates_ahead,
    theme_label_positions,
)
from pipeline.modelling.lineage import (
    Lineage,
    PreviousMap,
    apply_lineage,
    change_counts,
    content_moved,
    match_topics,
    read_previous,
)
from pipeline.modelling.sample_fit import SampleFit, fit_on_sample, place_rest, sample_rows
from pipeline.modelling.theme_lineage import apply_theme_ids, match_themes
from pipeline.modelling.themes import fit_themes, name_topics_among_siblings
from pipeline.modelling.topics import WAS_UNASSIGNED, Topics, fit_topics, topic_stability
from pipeline.naming.areas import area_votes
from pipeline.naming.names import common_keys, too_common
from pipeline.naming.support import NAME_SUPPORT, name_support, written_index
from pipeline.naming.text_cache import reading_ahead

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
    """Hash of the input files' bytes and the requested config: equal means the map is current.
    Each file is hashed in chunks (`file_digest`): a 3 GB input is never held whole for it."""
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode())
    digest.update(f"schema {SCHEMA_VERSION} pipeline {__version__}".encode())
    for path in sorted(expand_inputs(inputs), key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0")
        try:
            file_digest(path, digest)
        except OSError as exc:
            raise unreadable(path, exc) from None
    return digest.hexdigest()


def is_current(inputs: list[str | Path], out: Path, config: BuildConfig) -> bool:
    """True when `out` holds a map of exactly these inputs and this config."""
    if not (Path(out) / MANIFEST).is_file():
        return False
    try:
        manifest = read_manifest(out, check=False)  # a mistyped field reads as its default
    except UserError:
        return False
    return manifest.schema_version == SCHEMA_VERSION and manifest.input_fingerprint == input_fingerprint(
        inputs, config
    )


def corpus_name(papers, inputs: list[str | Path]) -> str:
    """A map's default name: the seed files' one collection; else a table's one venue (and year), e.g.
    "ECCV 2020" (or "ECCV 2020–2022"); else the one input folder's name; else the input files' stems ("eccv2020", not
    "eccv2020.csv").

    Examples:
        >>> corpus_name(pd.DataFrame({"venue": ["ECCV", "ECCV"], "year": [2020, 2020]}), ["eccv2020.csv"])
        'ECCV 2020'
        >>> corpus_name(pd.DataFrame({"venue": ["ECCV", "ECCV"], "year": [2020, 2022]}), ["a.csv", "b.csv"])
        'ECCV 2020–2022'
        >>> corpus_name(pd.DataFrame({"venue": ["ECCV", "ICCV"]}), ["eccv2020.csv", "iccv.parquet"])
        'eccv2020, iccv'
    """
    if "collection" in papers.columns and papers["collection"].nunique() == 1:
        return str(papers["collection"].iloc[0])
    venue = _only_value(papers, "venue")
    if venue:
        return f"{venue} {_years(papers)}".strip()
    if len(inputs) == 1 and Path(inputs[0]).is_dir():
        return Path(inputs[0]).resolve().name
    return ", ".join(dict.fromkeys(Path(p).resolve().stem for p in inputs))


def _only_value(papers, column: str) -> str | None:
    """The one value every paper has in `column` (a whole-number year without ".0"), else None."""
    if column not in papers.columns:
        return None
    values = papers[column].dropna()
    if len(values) != len(papers) or values.nunique() != 1:
        return None
    value = values.iloc[0]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split()) or None


def _years(papers) -> str:
    """'2020', or '2020–2022' over several years; '' when not every paper has a whole-number year."""
    if "year" not in papers.columns:
        return ""
    years = pd.to_numeric(papers["year"], errors="coerce")
    if years.isna().any() or not (years % 1 == 0).all():
        return ""
    first, last = int(years.min()), int(years.max())
    return str(first) if first == last else f"{first}–{last}"


def name_years_note(name: str, papers) -> str | None:
    """A note when a name given earlier names years its papers are not all from (a map named "COLM
    2024" rebuilt with the 2025 papers too), so the build says so instead of keeping it silently.

    Examples:
        >>> name_years_note("COLM 2024", pd.DataFrame({"year": [2024, 2025]}))
        'note: the map keeps the name “COLM 2024” given earlier, but its papers are from 2024–2025; give it another with --name'
        >>> name_years_note("COLM 2024–2025", pd.DataFrame({"year": [2024, 2025]})) is None
        True
    """
    named = {int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", name)}
    span = _years(papers)
    if not named or not span:
        return None
    years = pd.to_numeric(papers["year"], errors="coerce").astype(int)
    if set(years) <= set(range(min(named), max(named) + 1)):
        return None
    return f"note: the map keeps the name “{name}” given earlier, but its papers are from {span}; give it another with --name"


def given_name_in(out: Path) -> str | None:
    """The name given (`--name`) to the map already in `out`, which a rebuild keeps; None when the
    map's name was derived from its inputs (a rebuild derives it again) or there is no map to read.

    A map written before `name_source` was recorded: its name was derived when it is what its own
    inputs derive (`corpus_name` of its papers and the files it was built from).
    """
    folder = Path(out)
    if not (folder / MANIFEST).is_file():
        return None
    try:
        manifest = read_manifest(folder, check=False)
        if not manifest.name or manifest.name_source == NAME_DERIVED:
            return None
        if manifest.name_source is None and manifest.name in derived_names_of(folder, manifest):
            return None
        return manifest.name
    except (UserError, OSError, ValueError):
        return None


def derived_names_of(folder: Path, manifest: Manifest) -> set[str]:
    """The names the inputs of the map in `folder` derive: from its files, or their one folder."""
    import pyarrow.parquet as pq

    wanted = {"collection", "venue", "year"}
    columns = [c for c in pq.read_schema(folder / PAPERS).names if c in wanted]
    papers = pd.read_parquet(folder / PAPERS, columns=columns or ["doc_id"])
    base = Path(manifest.input_folder or ".")
    files = [base / p for p in manifest.inputs]
    parents = {f.parent for f in files}
    candidates = [files] + ([[parents.pop()]] if len(parents) == 1 else [])
    return {corpus_name(papers, inputs) for inputs in candidates if inputs}


def build_summary(
    topics: int,
    themes: int,
    unassigned: int,
    papers: int,
    out: Path,
    seconds: float,
    whole_out: Path | None = None,
    built: tuple[int, int] | None = None,
) -> list[str]:
    """The build's last lines: what the map holds as the app and exports read it (a curator's edits
    applied; `built`: the topics and unassigned papers before them, where there are edits), then how
    to open it (`open_command`, from the current folder; with whole paths when that folder is gone,
    e.g. `--out .` inside the map it replaced, whose whole path `whole_out` is).

    Examples:
        >>> for line in build_summary(31, 12, 139, 1357, Path("maps/eccv"), 80.2):
        ...     print(line)  # doctest: +ELLIPSIS
        31 topics in 12 themes, 139 of 1,357 papers unassigned (10.2%); map written to maps/eccv in 80.2 s
        open it with: ... -m streamlit run ...streamlit_app.py -- --map maps/eccv
        >>> build_summary(21, 12, 25, 716, Path("colm"), 9.0, built=(23, 2))[0]
        '21 topics in 12 themes, 25 of 716 papers unassigned (3.5%) with your edits applied (23 topics and 2 unassigned as built); map written to colm in 9.0 s'
    """
    try:
        command = open_command(out, here=Path(os.getcwd()))
    except FileNotFoundError:  # the current folder was replaced: relative paths would name the old one
        command = open_command(whole_out or out, here=None)
    edited = (
        ""
        if built is None
        else f" with your edits applied ({built[0]:,} topics and {built[1]:,} unassigned as built)"
    )
    return [
        f"{topics:,} topics in {themes:,} themes, {unassigned:,} of {papers:,} papers unassigned "
        f"({unassigned / max(papers, 1):.1%}){edited}; map written to {out} in {seconds:.1f} s",
        f"open it with: {command}",
    ]


APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"


def open_command(out: Path, *, here: Path | None, python: str | None = None) -> str:
    """The command that opens the map `out`, working as printed in the folder `here` (None: whole paths):
    this interpreter (`python`, by default the one running, so no virtual environment need be active
    and `streamlit` need not be on PATH) runs Streamlit on this repository's app.

    Examples:
        >>> open_command(Path("maps/eccv"), python="/work/.venv/bin/python", here=APP.parent)
        '/work/.venv/bin/python -m streamlit run streamlit_app.py -- --map maps/eccv'
        >>> open_command(Path("my map"), python=str(APP.parent / ".venv/bin/python"), here=APP.parent)
        ".venv/bin/python -m streamlit run streamlit_app.py -- --map 'my map'"
    """

    def shown(path: str | Path) -> str:  # relative to `here` when inside it; never resolved (a venv's
        full = Path(os.path.abspath(path))  # python is a link to the base interpreter)
        inside = here is not None and full.is_relative_to(here)
        return str(full.relative_to(here)) if inside else str(full)

    interpreter = shown(python or sys.executable)
    if "/" not in interpreter:  # a bare name is looked up on PATH: ./python is the one here
        interpreter = f"./{interpreter}"
    command = [interpreter, "-m", "streamlit", "run", shown(APP), "--", "--map", str(out)]
    return " ".join(shlex.quote(part) for part in command)


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
    ray_option: str = "--ray",
    drop_added: bool = False,
    refit: bool = False,
) -> AtlasMap:
    """Build a topic map of the abstracts in `inputs` and write it to the folder `out`.

    `previous` is the map whose topic ids (and names) the new topics keep where they match: by
    default the map already in `out`, if any; a folder; or False to number topics afresh.
    `encoder` (anything with `.name` and `.encode(list[str])`, e.g. a test's fake) replaces the
    packaged model; `ray_address` runs the embedding stage as a Ray Data job on that cluster.
    A rebuild keeps what still holds (see `carry_previous`); `refit` fits afresh instead (ids are
    still matched to the previous map's). Papers placed with `add` on the map in `out` are kept
    (embedded and fitted with the inputs) unless `drop_added`. The folder's lock is held from
    reading the map in `out` to the swap, so no other writer's work is lost in between.

    Examples:
        >>> build_map(["seeds"], "maps/icml")  # doctest: +SKIP
    """
    out = Path(out)
    whole_out = Path(os.path.abspath(out))  # while the current folder exists (it may be the map replaced)
    config = config or BuildConfig()
    check_out(out, inputs)  # never replace an input, a folder of inputs, or a folder that is not a map
    with out_lock(out, command="build"), contextlib.ExitStack() as stack:
        timer = StageTimer()
        if ray_address and encoder is None:  # checked before any work, also when every vector is cached
            from pipeline.embedding.ray_embed import check_ray

            check_ray(ray_address, ray_option)
        fingerprint = input_fingerprint(inputs, config)
        given_name = name or given_name_in(out)  # a given name stays; a derived one is derived again
        deferred: list[str] = []  # said once the input is known good: a bad input gets one error line only
        previous_map = previous_for(out, previous, deferred.append)
        edits = edits_for(out, previous)  # a damaged edit file stops the build before any work

        added = papers_added_to(out, deferred.append)
        corpus, resolved, kept_added = read_corpus(inputs, config, log, added=added, drop_added=drop_added)
        timer.lap("ingest")
        documents = corpus.papers["abstract"].tolist()
        texts = naming_texts(corpus.papers)  # what names are drawn from and checked on
        # Names are checked on the papers the topics are fitted on (`fit_on_sample`'s): their words read once.
        named = np.arange(len(texts))
        if resolved.fit_sample:
            named = sample_rows(len(texts), resolved.fit_sample, resolved.random_state)
        fitted_texts = [texts[i] for i in named]
        # While the abstracts are embedded (in ONNX Runtime's threads, outside Python's lock), a thread
        # reads their texts (`reading_ahead`) and another imports UMAP, HDBSCAN and BERTopic: only beside
        # the local int8 encoder, which imports no torch meanwhile (BERTopic's import hides torch from
        # every thread for a moment, and two threads importing packages that import each other can stop
        # on Python's import locks).
        stack.enter_context(reading_ahead(fitted_texts))
        imported = None
        if resolved.embedder == "onnx-int8" and not ray_address:
            importing = stack.enter_context(ThreadPoolExecutor(1))
            imported = importing.submit(import_topic_libraries, str(cache_dir()))
        embeddings, embedding_report, encode_phrases = embed_corpus(
            documents,
            resolved,
            known=stored_vectors(
                [out] if previous in (None, True, False) else [Path(previous), out], resolved, encoder, log
            ),
            use_cache=use_cache,
            progress=progress,
            encoder=encoder,
            ray_address=ray_address,
            ray_option=ray_option,
            log=log,
        )
        if imported:
            imported.result()  # an import that failed fails here, as it would have in the topic stage
        # The map is fitted on the vectors it stores (float16): a rebuild from the stored vectors, or
        # an encoder whose last bits differ on another CPU, finds the same topics.
        embeddings = embeddings.astype(np.float16).astype(np.float32)
        bundle = model_bundle(out, resolved, encoder, log)
        numeric = numeric_target()
        if not numeric["same_on_every_cpu"]:
            log(
                "note: NumPy or Numba was loaded before the pipeline set its CPU-independent code paths; "
                "this map may differ from a build on another kind of CPU"
            )
        timer.lap("embed")
        resolved, carried = carry_previous(
            config, resolved, previous_map, corpus.papers, refit=refit, log=log, embeddings=embeddings
        )
        stack.enter_context(written_index(fitted_texts))
        fit = fit_topic_model(texts, embeddings, resolved, log, targets=carried.targets, given=carried.labels)
        for note in fit.topics.notes:  # e.g. how topics were named when the abstracts are not in English
            log(note)
            corpus.notes.append(note)
        for note in deferred:
            log(note)
        lineage = keep_topic_ids(previous_map, corpus.papers, texts, fit.topics, log)
        layout = lay_out(fit, embeddings, resolved, carried)  # meanwhile, on a large map
        timer.lap("topics", fit.topics.timings)
        stability, stability_report = score_stability(fit, embeddings, resolved, log)
        if resolved.stability:
            timer.lap("stability")
        themes, theme_of = group_into_themes(
            fit,
            texts,
            embeddings,
            encode_phrases,
            embedding_report["encoder"],
            kept_names(lineage, fit.topics),
            previous_theme_of=None if previous_map is None or refit else previous_map.theme_of,
            timer=timer,
        )
        themes, theme_of, theme_records, next_theme_id = keep_theme_ids(
            previous_map, corpus.papers, fit.topics.labels, themes, theme_of
        )
        if carried.labels is not None:  # nothing changed: every name as it was
            themes, theme_records = names_as_they_were(
                previous_map, fit.topics, themes, theme_records, moved=lineage.moved
            )
        if theme_records:
            statuses = pd.Series([r["status"] for r in theme_records]).value_counts()
            log(
                "themes matched to the previous map: "
                + ", ".join(
                    f"{statuses[s]} {s}" for s in ("kept", "renamed", "back", "new", "gone") if s in statuses
                )
            )
        themes = written_shares(fit, texts, themes)
        edits = carry_curation(edits, previous_map, lineage, corpus.papers, fit.topics, themes, log)
        timer.lap("themes")
        log("laying out the 2-D map...")
        coordinates = layout()
        timer.lap("layout")
        papers, table, themes = assemble_tables(
            corpus.papers, fit.topics, coordinates, themes, theme_of, stability
        )
        quality = map_quality(fit.topics.labels, table["keywords"].tolist(), texts)
        quality["hdbscan_unassigned_share"] = round(fit.topics.hdbscan_unassigned / len(papers), 4)
        # How well KMeans runs with other seeds agree at the topic counts the build chose among.
        quality["agreement_at_nearby_topic_counts"] = {
            str(k): v for k, v in fit.topics.count_agreement.items()
        }
        quality["chosen_topic_count"] = fit.topics.chosen_count
        timer.lap("evaluate")

        story, previous_block = change_story(previous_map, lineage, carried, log)
        if given_name and not name and (note := name_years_note(given_name, papers)):
            log(note)
            corpus.notes.append(note)
        manifest = describe_build(
            name=given_name or corpus_name(papers, inputs),
            name_source=NAME_GIVEN if given_name else NAME_DERIVED,
            inputs=inputs,
            papers=papers,
            topics=table,
            themes=themes,
            unassigned=int((fit.topics.labels == -1).sum()),
            notes=corpus.notes,
            resolved=resolved,
            embeddings=embeddings,
            embedding_report=embedding_report,
            bundle=bundle,
            numeric=numeric,
            timer=timer,
            quality=quality,
            stability=stability_report,
            fingerprint=fingerprint,
            kept_added=kept_added,
            previous_map=previous_map,
            previous_block=previous_block,
            lineage=lineage,
            theme_records=theme_records,
            next_theme_id=next_theme_id,
            refit=refit,
            carried=carried,
            edits=edits,
        )
        atlas = AtlasMap(
            papers=papers,
            topics=table,
            embeddings=embeddings.astype(np.float16),
            manifest=manifest,
            lineage=story,
            themes=themes,
            edits=edits,
        )
        shown = curated_view(atlas, out)  # what the app and exports read: the count the last line gives
        write_map(out, atlas, log=log)
        timer.lap("write")  # printed, not in the manifest: written by this stage
        log(timer.line())
        for line in build_summary(
            shown.manifest.topics,
            shown.manifest.themes,
            shown.manifest.unassigned,
            len(papers),
            out,
            timer.total(),
            whole_out,
            built=None if shown is atlas else (manifest.topics, manifest.unassigned),
        ):
            log(line)
        return atlas


def describe_build(
    *,
    name: str,
    name_source: str,
    inputs: list[str | Path],
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    unassigned: int,
    notes: list[str],
    resolved: BuildConfig,
    embeddings: np.ndarray,
    embedding_report: dict,
    bundle: dict,
    numeric: dict,
    timer: StageTimer,
    quality: dict,
    stability: dict,
    fingerprint: str,
    kept_added: int,
    previous_map: PreviousMap | None,
    previous_block: PreviousBlock | None,
    lineage: Lineage | None,
    theme_records: list[dict],
    next_theme_id: int,
    refit: bool,
    carried: Carried,
    edits: list[Edit],
) -> Manifest:
    """How the map was made, as its manifest.json records it (`write_map` adds the checksum)."""
    total = timer.total()
    return Manifest(
        schema_version=SCHEMA_VERSION,
        name=name,
        name_source=name_source,
        papers=len(papers),
        topics=len(topics),
        themes=len(themes),
        stability=stability,
        unassigned=unassigned,
        inputs=[str(p) for p in expand_inputs(inputs)],
        input_folder=os.getcwd(),  # where relative `inputs` are: exports never write over one
        notes=notes,
        config=ConfigBlock.from_dict(resolved.to_dict()),
        model=ModelBlock(
            name=MODEL_NAME, encoder=embedding_report["encoder"], max_tokens=resolved.max_tokens, **bundle
        ),
        embedding=embedding_report,
        versions=library_versions(),
        numeric=numeric,
        timings_seconds=dict(timer.timings, total=total),
        abstracts_per_second=round(len(papers) / total, 1) if total else None,
        quality=quality,
        # the map's own yardstick of closeness (pipeline.modelling.floors): the floors of search and placement
        similarity=pair_similarities(embeddings.astype(np.float16)).to_manifest(),
        input_fingerprint=fingerprint,
        kept_added=kept_added,
        lineage=LineageBlock(
            previous=previous_block,
            # Ids are never reused: the next new topic gets this id or higher.
            next_topic_id=lineage.next_topic_id
            if lineage
            else (int(topics["topic_id"].max()) + 1 if len(topics) else 0),
            next_theme_id=next_theme_id,
            themes=theme_records,
            refit=bool(refit) or previous_map is None,
            carried_settings=carried.settings,
            edits={
                "applied": [e.id for e in edits if not e.review],
                "review": [{"id": e.id, "reason": e.review} for e in edits if e.review],
            },
        ),
        built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


# ---- the stages, in the order build_map calls them ----


class StageTimer:
    """Seconds per stage, each measured from the end of the previous one.

    Examples:
        >>> timer = StageTimer()
        >>> timer.timings = {"ingest": 0.52, "embed": 61.0, "topics": 8.04}
        >>> timer.line()
        'seconds by stage: ingest 0.5 · embed 61.0 · topics 8.0 · total 69.6'
    """

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._clock = time.perf_counter()

    def lap(self, stage: str, parts: dict[str, float] | None = None) -> None:
        """The seconds since the last lap go to `stage` (added to what it has), but for `parts`:
        seconds of named parts measured within it, recorded apart after it."""
        now = time.perf_counter()
        seconds = now - self._clock - sum((parts or {}).values())
        self.timings[stage] = round(self.timings.get(stage, 0.0) + seconds, 3)
        for part, part_seconds in (parts or {}).items():
            self.timings[part] = round(self.timings.get(part, 0.0) + part_seconds, 3)
        self._clock = now

    def total(self) -> float:
        return round(sum(self.timings.values()), 3)

    def line(self) -> str:
        """The stage table a build prints last but for its summary: where its time went."""
        shown = [f"{stage} {seconds:.1f}" for stage, seconds in self.timings.items()]
        return "seconds by stage: " + " · ".join([*shown, f"total {self.total():.1f}"])


def read_corpus(
    inputs: list[str | Path],
    config: BuildConfig,
    log: Callable[[str], None],
    *,
    added: pd.DataFrame,
    drop_added: bool,
):
    """Ingest the inputs plus the papers `add` placed on the map being replaced (`added`, unless
    `drop_added`): at least MIN_PAPERS distinct abstracts. Returns the corpus, the config resolved
    for its size, and how many added papers were kept."""
    corpus = ingest(inputs)
    added = added[~added["doc_id"].isin(corpus.papers["doc_id"])]
    kept_added = 0 if drop_added else len(added)
    if len(added) and drop_added:
        corpus.notes.append(f"left out {len(added):,} papers added to this map with `add` (--drop-added)")
    elif len(added):
        corpus.papers = concat_papers(corpus.papers, added.assign(via_add=True))
        corpus.papers["via_add"] = corpus.papers["via_add"].astype(bool)
        corpus.notes.append(
            f"kept {len(added):,} papers added since the last build (placed with `add`; --drop-added leaves them out)"
        )
    if len(corpus.papers) < MIN_PAPERS:
        raise UserError(
            f"{', '.join(map(str, inputs))}: {len(corpus.papers)} distinct abstract(s); a map needs at least {MIN_PAPERS}"
        )
    resolved = config.resolve(len(corpus.papers))
    for note in corpus.notes:
        log(note)
    return corpus, resolved, kept_added


def embed_corpus(
    documents: list[str],
    resolved: BuildConfig,
    *,
    use_cache: bool,
    progress: bool,
    encoder,
    ray_address: str | None,
    ray_option: str,
    log: Callable[[str], None],
    known: dict[bytes, np.ndarray] | None = None,
) -> tuple[np.ndarray, dict, Callable[[list[str]], np.ndarray]]:
    """Embeddings of the abstracts, the embedding report, and the same encoder for phrases.

    Abstracts and, later, candidate topic names go through the same encoder and cache.
    """
    compute = None
    if ray_address and encoder is None:
        from pipeline.embedding.ray_embed import ray_compute

        compute = ray_compute(ray_address, resolved, log=log, option=ray_option)
    embed = partial(
        embed_texts,
        embedder=resolved.embedder,
        max_tokens=resolved.max_tokens,
        use_cache=use_cache,
        encoder=encoder,
    )
    embeddings, report = embed(documents, progress=progress, compute=compute, known=known)
    if compute is not None:
        report["ray"] = compute.report
    if report["computed"]:
        log(
            f"embedded {report['computed']:,} abstracts "
            f"({report['abstracts_per_second']} abstracts/s of embedding"
            + (
                f", after {report['model_seconds']:.1f} s loading the model"
                if report.get("model_seconds")
                else ""
            )
            + f"), {report['cached']:,} from cache"
        )
    else:
        log(f"all {report['cached']:,} embeddings from cache")
    if report["from_map"]:
        log(f"{report['from_map']:,} of them are the vectors the map being rebuilt stores")

    def encode_phrases(texts: list[str]) -> np.ndarray:
        return embed(texts, progress=False)[0]

    return embeddings, report, encode_phrases


def stored_vectors(
    folders: list[Path], resolved: BuildConfig, encoder, log: Callable[[str], None] = lambda message: None
) -> dict[bytes, np.ndarray]:
    """Text key -> vector of every abstract the maps in `folders` store, when they were embedded by
    the encoder this build uses (same name, so same model, variant and token budget); else nothing.

    A rebuild of the same abstracts on a machine of another CPU kind then starts from the very
    vectors the map was built with (int8 kernels differ in the last bits between AVX2 and AVX-512
    VNNI machines), so `make map` reproduces the committed seed map everywhere. Vectors that are
    not the model's finite vectors, one a paper (`check_embeddings`), are noted and not used.
    """
    wanted = encoder.name if encoder is not None else cache_name_for(resolved.embedder, resolved.max_tokens)
    known: dict[bytes, np.ndarray] = {}
    for folder in folders:
        try:
            if read_manifest(folder, check=False).model.encoder != wanted:
                continue
            abstracts = pd.read_parquet(folder / PAPERS, columns=["abstract"])["abstract"].tolist()
        except (UserError, OSError, ValueError, KeyError, TypeError):
            continue  # no map there, or not one this build can use: embed as usual
        try:
            vectors = read_embeddings(folder / EMBEDDINGS, len(abstracts))
        except FileNotFoundError:
            continue
        except UserError as exc:
            log(
                f"note: {str(exc).removesuffix('; rebuild the map')}: not used, its abstracts are embedded again"
            )
            continue
        for text, vector in zip(abstracts, vectors, strict=True):
            known.setdefault(text_key(str(text)), np.asarray(vector, dtype=np.float32))
    return known


def model_bundle(out: Path, resolved: BuildConfig, encoder, log: Callable[[str], None]) -> dict:
    """The int8 model the vectors came from, kept with the map so the app places abstracts with the
    very same file (manifest "model" fields); nothing for a caller's encoder or torch-fp32."""
    if encoder is not None or resolved.embedder != "onnx-int8":
        return {}
    from pipeline.embedding.onnx_build import map_bundle

    return map_bundle(out, log)


def fit_topic_model(
    documents: list[str],
    embeddings: np.ndarray,
    resolved: BuildConfig,
    log: Callable[[str], None],
    *,
    targets: np.ndarray | None = None,
    given: np.ndarray | None = None,
) -> SampleFit:
    """Topics for every paper: fitted on all papers, or on a sample with the rest assigned (or,
    with `given`, the previous map's topics described again: see `fit_topics`).

    Either way the result says which rows UMAP and HDBSCAN saw (`sample_rows`); the later
    stages read that instead of asking again whether the build fitted on a sample.
    """
    log(f"finding topics (KMeans in a 10-D UMAP, smallest topic {resolved.min_topic_size} papers)...")
    if resolved.fit_sample:
        log(f"fitting on a sample of {resolved.fit_sample:,} papers, assigning the rest...")
        fit = fit_on_sample(documents, embeddings, resolved, targets=targets, given=given)
    else:
        fit = SampleFit.of_all(fit_topics(documents, embeddings, resolved, targets=targets, given=given))
    if fit.topics.count_agreement:
        log(
            "agreement of re-clusterings at nearby topic counts: "
            + ", ".join(
                f"{count} -> {agreement:.2f}" for count, agreement in fit.topics.count_agreement.items()
            )
        )
    return fit


def keep_topic_ids(
    previous_map: PreviousMap | None, papers, documents: list[str], topics: Topics, log: Callable[[str], None]
) -> Lineage | None:
    """Give matching topics the previous map's ids and names (in place); the lineage, if any.

    Ids and names are settled here, before anything else reads a topic id. A previous name is kept
    only while it still holds for the topic's papers (`pipeline.naming.support.name_support`) and its content
    did not move (`pipeline.modelling.lineage.content_moved`: most of its keywords or central papers
    changed); else the topic takes the name the build derived for it (`name_groups`), and the log
    says so.
    """
    if previous_map is None:
        return None
    lineage = match_topics(
        previous_map,
        papers["doc_id"].tolist(),
        topics.labels,
        dict(zip(topics.table["topic_id"].astype(int), topics.table["label"], strict=True)),
        dict(zip(topics.table["topic_id"].astype(int), topics.table["centroid"], strict=True)),
    )
    provisional_of = {final: provisional for provisional, final in lineage.mapping.items()}
    acronyms = topics.phrases.acronyms if topics.phrases is not None else {}
    moved = content_moved(
        previous_map, papers["doc_id"].tolist(), topics.labels, topics.table, lineage.mapping
    )
    lineage = replace(lineage, moved=moved)

    common: frozenset[str] = frozenset()
    if topics.phrases is not None:  # counted on the fitted papers: the topics only where row for row
        same_rows = topics.phrases.matrix.shape[0] == len(topics.labels)
        common = common_keys(topics.phrases, topics.labels if same_rows else None)

    def holds(final: int, name: str) -> bool:
        if final in moved:  # most of its keywords or central papers changed: the fresh name stands
            return False
        if any(too_common(part, common) for part in name.split(" & ")):
            return False  # the new map's own field now ("Language models" once most papers write it)
        rows = np.flatnonzero(topics.labels == provisional_of[final])
        return name_support(name, [documents[i] for i in rows], acronyms) >= NAME_SUPPORT

    topics.labels, topics.table = apply_lineage(topics.labels, topics.table, lineage, holds)
    log(lineage_summary(lineage.table))
    names = dict(zip(topics.table["topic_id"].astype(int), topics.table["label"].astype(str), strict=True))
    old_names = dict(
        zip(previous_map.topics["topic_id"].astype(int), previous_map.topics["label"].astype(str))
    )
    for final, why in sorted(moved.items()):
        if names.get(final) == old_names.get(final):
            continue
        log(
            f"topic {final} “{old_names.get(final, '')}” is now “{names.get(final, '')}”: its content moved ({why})"
        )
    return lineage


@dataclass(frozen=True)
class Carried:
    """What a rebuild takes over from the previous map, per paper of the new corpus."""

    targets: np.ndarray | None = None  # previous topic id; -1 new paper, WAS_UNASSIGNED left out before
    positions: np.ndarray | None = None  # previous (x, y), NaN for new papers
    settings: dict = field(default_factory=dict)  # settings carried over, for the manifest
    # previous topic id per paper when nothing changed (same papers, vectors, options): kept as they are
    labels: np.ndarray | None = None


# A rebuild keeps the previous map's topic size while the corpus stays within this factor of the
# previous one's size; past it the size-scaled defaults fit the corpus better than continuity does.
CARRY_SETTINGS_WITHIN = 2.0
CARRIED_SETTINGS = ("min_topic_size", "min_samples", "n_neighbors")


def carry_previous(
    config: BuildConfig,
    resolved: BuildConfig,
    previous_map: PreviousMap | None,
    papers,
    *,
    refit: bool,
    log: Callable[[str], None],
    embeddings: np.ndarray | None = None,
) -> tuple[BuildConfig, Carried]:
    """Keep what still holds from the previous map: its topic size settings (those the user did not
    set), its topics as partial targets of the 10-D UMAP, and its positions as the 2-D map's start.

    When nothing changed (the previous map's very papers and stored `embeddings`, the same
    resolved options) there is no evidence to change anything: its topics and positions are kept
    as they are (`Carried.labels`), so a rebuild is a fixed point. Without a previous map, or
    with `refit`, the build fits afresh.
    """
    if previous_map is None or refit:
        return resolved, Carried()
    doc_ids = papers["doc_id"].astype(str).tolist()
    kept = sum(1 for d in doc_ids if d in previous_map.topic_of)
    if not kept:  # a previous map sharing no papers only lends its topic ids (matched by content)
        return resolved, Carried()
    settings = {}
    before = previous_map.config or {}
    old_papers = len(previous_map.topic_of)
    if old_papers and 1 / CARRY_SETTINGS_WITHIN <= len(doc_ids) / old_papers <= CARRY_SETTINGS_WITHIN:
        for name in CARRIED_SETTINGS:
            value = before.get(name)
            chosen_by_user = getattr(config, name) is not None or (
                name == "min_samples"
                and config.min_topic_size is not None  # derived from the size the user set
            )
            if not chosen_by_user and isinstance(value, int) and value > 0:
                value = min(value, len(doc_ids) - 1)
                try:  # only a setting this build could have been given: never an error about an option not given
                    replace(resolved, **settings, **{name: value}).validate(len(doc_ids))
                except UserError as exc:
                    log(f"note: the previous map's {name} {value} is not carried ({exc})")
                    continue
                settings[name] = value
        resolved = replace(resolved, **settings)
    # Previous topic per paper; new papers -1, old papers the previous map left unassigned WAS_UNASSIGNED.
    targets = np.array([previous_map.topic_of.get(d, -1) for d in doc_ids], dtype=np.int64)
    targets[np.array([previous_map.topic_of.get(d) == -1 for d in doc_ids], dtype=bool)] = WAS_UNASSIGNED
    positions = previous_map.positions or {}
    xy = np.array([positions.get(d, (np.nan, np.nan)) for d in doc_ids], dtype=np.float64)
    carried_settings = (
        f", settings carried: {', '.join(f'{k} {v}' for k, v in settings.items())}" if settings else ""
    )
    if nothing_changed(previous_map, doc_ids, embeddings, resolved):
        log(
            "nothing changed in the papers or options: topics and layout kept"
            + carried_settings
            + "; --refit fits afresh"
        )
        labels = np.array([previous_map.topic_of[d] for d in doc_ids], dtype=np.int64)
        return resolved, Carried(targets=targets, positions=xy, settings=settings, labels=labels)
    log(
        f"rebuilding on the previous map: {kept:,} of {len(doc_ids):,} papers keep their topic as a target"
        + carried_settings
        + " (--refit fits afresh)"
    )
    return resolved, Carried(targets=targets, positions=xy, settings=settings)


def nothing_changed(
    previous_map: PreviousMap, doc_ids: list[str], embeddings: np.ndarray | None, resolved: BuildConfig
) -> bool:
    """Whether this build has exactly the previous map's papers (doc ids), their stored vectors
    and its resolved options: then a fit could only tell what the previous one told."""
    if embeddings is None or previous_map.folder is None or not previous_map.positions:
        return False
    if len(doc_ids) != len(previous_map.topic_of) or set(doc_ids) != set(previous_map.topic_of):
        return False
    if (previous_map.config or {}) != resolved.to_dict():
        return False
    try:  # read as a first read would: a damaged file (empty, cut, a pipe) means a full build
        order = pd.read_parquet(previous_map.folder / PAPERS, columns=["doc_id"])["doc_id"].astype(str)
        stored = read_embeddings(previous_map.folder / EMBEDDINGS, len(order))
    except (OSError, ValueError, KeyError, UserError):
        return False
    if stored.shape != embeddings.shape:
        return False
    row_of = {d: i for i, d in enumerate(order)}
    ours = np.asarray(embeddings, dtype=np.float32).astype(np.float16)
    return bool(np.array_equal(stored[[row_of[d] for d in doc_ids]].astype(np.float16), ours))


def change_story(
    previous_map: PreviousMap | None, lineage: Lineage | None, carried: Carried, log: Callable[[str], None]
) -> tuple[pd.DataFrame | None, PreviousBlock | None]:
    """The change report a map keeps (its lineage table, and the map it compares with): this build's,
    except when nothing changed (`Carried.labels`: every topic kept as it was) after a build that did
    change topics; then that build's report stays, so a rebuild that changes nothing does not wipe the
    story of the last one that did."""
    if previous_map is None or lineage is None:
        return None, None
    ours = lineage.table, PreviousBlock(name=previous_map.name, fingerprint=previous_map.fingerprint)
    if carried.labels is None or set(lineage.table["status"]) != {"kept"} or previous_map.folder is None:
        return ours
    try:
        before = read_lineage(previous_map.folder)
        compared = read_manifest(previous_map.folder, check=False).lineage.previous
    except UserError:
        return ours
    if before is None or compared is None or set(before["status"]) <= {"kept"}:
        return ours
    log(f"the change report since {compared.name or 'the map before'} is kept: this build changed no topic")
    return before, compared


def edits_for(out: Path, previous: str | Path | bool | None) -> list[Edit]:
    """The edits a rebuild carries: those of the `--previous` map, else of the map in `out`; refused
    (`check_edits`) where that map's readers refuse them."""
    folder = out if previous in (None, True, False) else Path(previous)
    edits = read_curation(folder) if folder.is_dir() else []
    check_edits(folder, edits)
    return edits


def carry_curation(
    edits: list[Edit],
    previous_map: PreviousMap | None,
    lineage: Lineage | None,
    papers,
    topics: Topics,
    themes,
    log: Callable[[str], None],
) -> list[Edit]:
    """The previous map's edits, each applied again or flagged for review where its topic moved."""
    if not edits:
        return []
    carried = carry_edits(
        edits,
        lineage=None if lineage is None else lineage.table,
        previous_topic_of={} if previous_map is None else previous_map.topic_of,
        doc_ids=papers["doc_id"].tolist(),
        labels=topics.labels,
        themes=themes,
        names=dict(zip(topics.table["topic_id"].astype(int), topics.table["label"].astype(str), strict=True)),
        content_moved=None if lineage is None else lineage.moved,
    )
    flagged = [e for e in carried if e.review]
    log(
        f"edits: {len(carried) - len(flagged)} applied again, {len(flagged)} flagged for review"
        + (" (see `python -m pipeline curate DIR list`)" if flagged else "")
    )
    return carried


def score_stability(
    fit: SampleFit, embeddings: np.ndarray, resolved: BuildConfig, log: Callable[[str], None]
) -> tuple[dict[int, float], dict]:
    """Each topic's stability over re-clustered subsamples of the fitted papers (or a note it was off)."""
    if not resolved.stability:
        return {}, {"runs": 0, "method": "switched off (--no-stability)", "seconds": 0.0}
    log("scoring topic stability (re-clustering 90% subsamples of the unsupervised 10-D reduction)...")
    rows = fit.sample_rows
    return topic_stability(fit.topics.unsupervised, embeddings[rows], fit.topics.labels[rows], resolved)


def naming_texts(papers: pd.DataFrame) -> list[str]:
    """What names are drawn from and checked on: each abstract, and after it the paper's author
    keywords where the input has a `keywords` column ("diffusion models; image editing"): the
    authors' own words are candidates like the phrases they write, under the same rules. The
    vectors are of the abstracts alone."""
    abstracts = papers["abstract"].astype(str)
    if "keywords" not in papers.columns:
        return abstracts.tolist()
    keywords = papers["keywords"].map(lambda v: "" if v is None or v != v else str(v).strip())
    return [a if not k else f"{a}\nKeywords: {k}." for a, k in zip(abstracts, keywords)]


def written_shares(fit: SampleFit, documents: list[str], themes: pd.DataFrame) -> pd.DataFrame:
    """Each name's evidence, as the map shows it: a topic's `name_share` (the share of its papers
    that write its name, `uses_name`), a theme's `name_written` (of its papers) and `name_share` (of
    its weakest member topic's), on the papers the names were chosen on."""
    from pipeline.naming.support import uses_name

    rows = fit.sample_rows
    labels = fit.topics.labels[rows]
    fitted = np.asarray([documents[i] for i in rows], dtype=object)
    acronyms = fit.topics.phrases.acronyms if fit.topics.phrases is not None else {}

    def used(name: str, topic_ids) -> list[np.ndarray]:  # per member topic, its papers writing `name`
        return [uses_name(name, fitted[labels == t].tolist(), acronyms) for t in topic_ids]

    def share(parts: list[np.ndarray]) -> float:
        both = np.concatenate(parts) if parts else np.zeros(0, bool)
        return round(float(both.mean()), 4) if len(both) else 0.0

    table = fit.topics.table
    table["name_share"] = [share(used(str(n), [int(t)])) for n, t in zip(table["label"], table["topic_id"])]
    # A theme's name is checked on each member's papers once: its share of them all, and its weakest member's.
    members = [used(str(n), [int(t) for t in ids]) for n, ids in zip(themes["label"], themes["topic_ids"])]
    return themes.assign(
        name_written=[share(parts) for parts in members],
        name_share=[min((share([p]) for p in parts), default=0.0) for parts in members],
    )


def kept_names(lineage: Lineage | None, topics: Topics) -> dict[int, str]:
    """The topic names `keep_topic_ids` carried from the previous map (those that still hold)."""
    if lineage is None:
        return {}
    labels = dict(zip(topics.table["topic_id"].astype(int), topics.table["label"].astype(str), strict=True))
    return {t: name for t, name in lineage.keep_label.items() if labels.get(t) == name}


def group_into_themes(
    fit: SampleFit,
    documents: list[str],
    embeddings: np.ndarray,
    encode: Callable[[list[str]], np.ndarray],
    encoder_name: str,
    kept: dict[int, str] | None = None,
    previous_theme_of: dict[int, int] | None = None,
    timer: StageTimer | None = None,
):
    """Themes from the final topic ids, named on the fitted papers; sizes count every paper.
    `previous_theme_of` (a rebuild's previous topic -> theme) keeps the previous grouping where the
    papers do not call for a new one (`fit_themes`).

    Then each theme's topics are named among themselves (`name_topics_among_siblings`): a topic's
    name tells it apart from its siblings, and a topic and a theme never share a name. `kept` are
    the names a rebuild keeps from the previous map (`keep_topic_ids`), which stay where free.
    """
    rows = fit.sample_rows
    fitted = [documents[i] for i in rows]
    themes, theme_of = fit_themes(
        fitted,
        embeddings[rows],
        fit.topics.labels[rows],
        fit.topics.table,
        phrases=fit.topics.phrases,
        votes=area_votes(embeddings[rows], encode, encoder_name=encoder_name),
        previous_theme_of=previous_theme_of,
        encode=encode,
    )
    if timer:
        timer.lap("themes")
    fit.topics.table["label"] = name_topics_among_siblings(
        fit.topics.table,
        themes,
        fitted,
        fit.topics.labels[rows],
        embeddings[rows],
        fit.topics.phrases,
        kept,
        encode,
    )
    if timer:
        timer.lap("sibling names")
    size_of = dict(zip(fit.topics.table["topic_id"], fit.topics.table["size"], strict=True))
    themes["size"] = themes["topic_ids"].map(lambda ids: int(sum(size_of[t] for t in ids)))
    return themes, theme_of


def keep_theme_ids(previous_map: PreviousMap | None, papers, labels: np.ndarray, themes, theme_of):
    """Themes under the previous map's theme ids where their papers say they are the same theme
    (`pipeline.modelling.theme_lineage`); the records of what became of each theme (none without a
    previous map) and the next free id."""
    previous = previous_map or PreviousMap(topic_of={}, topics=pd.DataFrame(), centroids={}, next_topic_id=0)
    mapping, records, next_id = match_themes(
        papers["doc_id"].astype(str).tolist(),
        labels,
        themes,
        theme_of,
        previous.topic_of,
        previous.theme_of or {},
        previous.theme_labels or {},
        previous.next_theme_id,
        previous.gone_themes,
    )
    themes, theme_of = apply_theme_ids(themes, theme_of, mapping)
    return themes, theme_of, records if previous_map is not None else [], next_id


def names_as_they_were(
    previous_map: PreviousMap, topics: Topics, themes, records: list[dict], *, moved: dict[int, str]
):
    """The previous map's topic and theme names (in place for `topics`; the themes table and theme
    records returned), for a rebuild that changed nothing (`carry_previous`).

    Names derived again from the same topics can still differ: the previous names may have been
    kept from maps before it, and which topic a theme's name displaces depends on the names the
    themes were grouped with. Its topics and their ids being the previous map's, so are its names,
    but for a topic whose keywords the naming code now finds other than the map says (`moved`).
    """
    topic_names = {
        int(t): str(label)
        for t, label in zip(previous_map.topics["topic_id"], previous_map.topics["label"], strict=True)
        if int(t) not in moved
    }
    topics.table["label"] = [
        topic_names.get(int(t), label) for t, label in zip(topics.table["topic_id"], topics.table["label"])
    ]
    theme_names = previous_map.theme_labels or {}
    themes = themes.assign(
        label=[theme_names.get(int(t), label) for t, label in zip(themes["theme_id"], themes["label"])]
    )
    records = [
        dict(r, label=theme_names[r["theme_id"]], status="kept")
        if r["status"] == "renamed" and r["theme_id"] in theme_names
        else r
        for r in records
    ]
    return themes, records


def lay_out(
    fit: SampleFit, embeddings: np.ndarray, resolved: BuildConfig, carried: Carried
) -> Callable[[], np.ndarray]:
    """2-D positions: UMAP of the fitted papers (started from the previous map's positions on a
    rebuild), the rest (if any) at their neighbours' mean; the previous positions as they were when
    nothing changed (`carry_previous`). Started here (a large layout in a worker process:
    `map_coordinates_ahead`); what it returns gives the positions."""
    previous_xy = carried.positions
    if carried.labels is not None:
        return lambda: previous_xy.astype(np.float32)
    rows = fit.sample_rows
    init = None if previous_xy is None else initial_positions(embeddings[rows], previous_xy[rows])
    sample_xy = map_coordinates_ahead(
        embeddings[rows],
        n_neighbors=min(resolved.n_neighbors, len(rows) - 1),
        random_state=resolved.random_state,
        knn=fit.topics.knn,
        init=init,
    )

    def positions() -> np.ndarray:
        xy = sample_xy()
        return place_rest(fit, xy if init is None else align_to(xy, previous_xy[rows]))

    return positions


def assemble_tables(papers, topics: Topics, coordinates: np.ndarray, themes, theme_of, stability):
    """The papers, topics and themes tables as written: topics and positions joined in."""
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
    table = table[[*TOPIC_COLUMNS, "theme_id", "stability", "centroid", "name_share"]]
    return papers, table, themes


def papers_added_to(out: Path, log: Callable[[str], None]) -> pd.DataFrame:
    """The papers `add` placed on the map in `out` (`read_added_papers`); a map whose papers cannot
    be read is noted (it is about to be replaced) and nothing is kept."""
    try:
        return read_added_papers(out)
    except UserError as exc:
        log(f"note: {exc}; no papers added to it are kept")
        return pd.DataFrame({"doc_id": pd.Series([], dtype=object)})


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
    if not (Path(out) / MANIFEST).is_file():
        return None
    try:
        return read_previous(out)
    except UserError as exc:
        log(f"note: the map in {out} cannot be read for topic lineage ({exc}); topic ids start afresh")
        return None


def lineage_summary(table) -> str:
    """One line on what became of the previous map's topics, each counted once (`change_counts`)."""
    return "topics matched to the previous map: " + change_counts(table)
