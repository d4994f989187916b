"""Command line: `python -m pipeline build|export|add|curate ...`; user errors exit 2 with one `error:` line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pipeline import UnreadableOutput, UserError, WorkerFailed

EXPORT_FORMATS = ("csv", "md", "bib")
EXPORT_EXTENSIONS = {".csv": "csv", ".md": "md", ".markdown": "md", ".bib": "bib"}
EPILOG = (
    "Exit codes: 0 success, 2 bad input or option (one 'error:' line on stderr), "
    "1 a bug or a stopped worker process."
)


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage + two lines; we promise one line
        raise UserError(message)


def whole_number(low: int, high: int | None = None):
    """An argparse type: a whole number in [low, high], said in one line when it is not."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def topic_number(text: str) -> int:
    """A topic or theme id (-1 allowed where it means unassigned); unknown ids are refused later."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a topic number, got {text!r}") from None


def path_text(text: str) -> str:
    """An argparse type for every path on the command line (inputs kept as typed): one the system
    can open, said in one line when it is too long (never `OSError: File name too long` later)."""
    from pipeline.mapfolder.safe_output import path_problem, shown_path

    problem = path_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{shown_path(text, 60)}: {problem}")
    return text


def path_argument(text: str) -> Path:
    """`path_text` as a `Path` (map folders and outputs)."""
    return Path(path_text(text))


SEED_MAX = 2**32 - 1  # UMAP and NumPy take seeds in [0, 2**32 - 1]
positive_int, non_negative_int, seed_value = whole_number(1), whole_number(0), whole_number(0, SEED_MAX)
edit_number = positive_int  # an edit's number as `curate list` shows it: edits are numbered from 1


def make_parser() -> Parser:
    """The whole command line: one small function per command below."""
    parser = Parser(
        prog="python -m pipeline",
        description="Abstract Atlas: build and export topic maps of abstracts.",
        epilog=EPILOG,
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_build_parser(commands)
    add_export_parser(commands)
    add_add_parser(commands)
    add_curate_parser(commands)
    return parser


def add_build_parser(commands) -> None:
    from pipeline.config import BuildConfig

    defaults = BuildConfig()
    build = commands.add_parser(
        "build",
        help="build a topic map from abstract files",
        epilog=EPILOG,
        description="Build a topic map from abstract files and folders (seed .txt, .csv, .tsv, .jsonl, "
        ".parquet). Tables need an 'abstract' column (any case) and may have 'title'; other columns are kept.",
    )
    build.add_argument(
        "inputs", nargs="+", type=path_text, metavar="INPUT", help="files or folders (walked recursively)"
    )
    build.add_argument(
        "--out", required=True, type=path_argument, metavar="DIR", help="map folder to write (replaced whole)"
    )
    build.add_argument(
        "--name",
        help="the map's name, shown in the app and kept by later rebuilds (default: the name given to the map in --out earlier; else derived from the inputs at every build: their one venue and years, e.g. \"ECCV 2020–2022\"; else the one input folder's name; else the files' stems)",
    )
    _embedding_options(build, defaults)
    _fitting_options(build, defaults)
    _rebuild_options(build)


def _embedding_options(build: argparse.ArgumentParser, defaults) -> None:
    from pipeline.config import (
        DEFAULT_MAX_TOKENS,
        EMBEDDERS,
        FIT_SAMPLE_ABOVE,
        FIT_SAMPLE_SIZE,
        MAX_TOKENS_LIMIT,
    )

    build.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default=defaults.embedder,
        help="onnx-int8: quantised locally from the packaged model, about 2x the throughput of torch-fp32 (default); "
        "torch-fp32: the reference sentence-transformers model",
    )
    build.add_argument(
        "--max-tokens",
        type=positive_int,
        metavar="N",
        help=f"word pieces embedded per abstract, longer ones cut (default {DEFAULT_MAX_TOKENS}, "
        f"at most {MAX_TOKENS_LIMIT}; see benchmarks/TOKENS_RESULTS.md)",
    )
    build.add_argument(
        "--fit-sample",
        type=non_negative_int,
        metavar="N",
        help=f"fit topics and the map on a seeded sample of N papers and assign the rest; 0 fits on all "
        f"(default: {FIT_SAMPLE_SIZE:,} for corpora over {FIT_SAMPLE_ABOVE:,} papers, else all)",
    )
    build.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="embed on this Ray cluster as a Ray Data job (e.g. 'auto' or 'HOST:6379'; default: "
        "ATLAS_RAY_ADDRESS if set, else this machine); needs requirements-ray.txt",
    )


def _fitting_options(build: argparse.ArgumentParser, defaults) -> None:
    build.add_argument(
        "--topics",
        type=positive_int,
        metavar="N",
        help="number of topics (default: 3.5*papers^0.25 -- 10 for 57 papers, 20 for 1,000, 59 for 81,646 "
        "-- or from 500 papers on, of the counts near it, the one whose re-clusterings agree best)",
    )
    build.add_argument(
        "--min-topic-size",
        type=positive_int,
        metavar="N",
        help="smallest group called a topic; smaller clusters join their nearest topic (default: "
        "0.25*papers^0.63, at least 3: 3 for 57 papers, 30 for 2,000)",
    )
    build.add_argument(
        "--min-samples",
        type=positive_int,
        metavar="N",
        help="HDBSCAN min_samples for finding the papers that fit no topic (default: min topic size / 4)",
    )
    build.add_argument(
        "--neighbors",
        type=positive_int,
        metavar="N",
        help="UMAP n_neighbors (default: 2*log2(papers), between 10 and 30)",
    )
    build.add_argument(
        "--top-words",
        type=positive_int,
        default=defaults.top_n_words,
        metavar="N",
        help=f"keywords kept per topic (default {defaults.top_n_words})",
    )
    build.add_argument(
        "--seed",
        type=seed_value,
        default=defaults.random_state,
        help=f"random seed, 0 to {SEED_MAX} (default 42)",
    )


def _rebuild_options(build: argparse.ArgumentParser) -> None:
    build.add_argument("--no-cache", action="store_true", help="embed everything again, ignoring the cache")
    build.add_argument(
        "--no-stability",
        action="store_true",
        help="skip scoring each topic's stability (5 re-clusterings of 90%% subsamples; "
        "about 8%% of a cold build at 10,000 papers)",
    )
    build.add_argument(
        "--if-stale",
        action="store_true",
        help="do nothing when DIR already holds a map of these inputs and options",
    )
    build.add_argument(
        "--drop-added",
        action="store_true",
        help="leave out the papers `add` placed on the map in --out (by default a rebuild keeps them)",
    )
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.add_argument(
        "--refit",
        action="store_true",
        help="fit topics and the map afresh instead of starting from the previous map's topics, settings "
        "and positions (topic ids are still matched to the previous map's; see docs/rebuilds.md)",
    )
    lineage = build.add_mutually_exclusive_group()
    lineage.add_argument(
        "--previous",
        type=path_argument,
        metavar="DIR",
        help="map whose topic ids (and names, unless the content moved) matching topics keep; "
        "default: the map already in --out, if any. The map records what changed in lineage.parquet",
    )
    lineage.add_argument(
        "--no-previous",
        action="store_true",
        help="number topics afresh by size, ignoring any map in --out (ids of a replaced map may then mean other topics)",
    )


def add_export_parser(commands) -> None:
    export = commands.add_parser(
        "export",
        help="write a map's papers as CSV, or as a Markdown or BibTeX reading list",
        epilog=EPILOG,
        description="Write a map's papers (or one topic's) as a spreadsheet-safe UTF-8 CSV, a Markdown "
        "reading list (titles, one-line summaries, links from a 'url' column, grouped by topic) or BibTeX.",
    )
    export.add_argument("map", type=path_argument, metavar="DIR", help="a map folder written by build")
    export.add_argument(
        "--out", required=True, type=path_argument, metavar="FILE", help="file to write (.csv, .md or .bib)"
    )
    export.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        help="csv, md (Markdown reading list) or bib (BibTeX); default: from the --out extension, else csv",
    )
    export.add_argument("--topic", type=int, metavar="ID", help="export only this topic (-1: unassigned)")


def add_add_parser(commands) -> None:
    add = commands.add_parser(
        "add",
        help="place new abstracts on an existing map without refitting",
        epilog=EPILOG,
        description="Embed new abstracts (through the cache), place each among the map papers it is most "
        "like (the placement of the app's 'Where does my paper fit?'), mark them added and rewrite DIR "
        "atomically. Abstracts already in the map are skipped. Reports how well the new papers fit the "
        "existing topics and recommends a full rebuild when many fit none.",
    )
    add.add_argument(
        "map", type=path_argument, metavar="DIR", help="a map folder written by build (rewritten in place)"
    )
    add.add_argument(
        "inputs", nargs="+", type=path_text, metavar="FILE", help="abstract files or folders, as for build"
    )
    add.add_argument("--no-cache", action="store_true", help="embed everything again, ignoring the cache")
    add.add_argument("--quiet", action="store_true", help="no progress bars")


def add_curate_parser(commands) -> None:
    from pipeline.mapfolder.curation import MAX_NAME, MAX_NOTE

    curate = commands.add_parser(
        "curate",
        help="rename, merge, hide or annotate topics; the edits survive rebuilds",
        epilog=EPILOG + " Edits are kept in DIR/curation.json (plain JSON, fine to keep in git); "
        "see docs/curation.md.",
        description="Edit a map by hand. Each edit is stored in DIR/curation.json, applied to what the app "
        "and exports show, and applied again by every rebuild through the stable topic ids; an edit whose "
        "topic's content moved in a rebuild is kept and flagged for review instead.",
    )
    curate.add_argument("map", type=path_argument, metavar="DIR", help="a map folder written by build")
    actions = curate.add_subparsers(dest="action", required=True, parser_class=Parser, metavar="ACTION")
    actions.add_parser("list", help="show the map's edits, flagged ones with the reason")
    rename = actions.add_parser("rename", help="rename a topic: rename TOPIC NAME")
    rename.add_argument("topic", type=topic_number, metavar="TOPIC")
    rename.add_argument("name", metavar="NAME", help=f"plain text, at most {MAX_NAME} characters")
    rename_theme = actions.add_parser("rename-theme", help="rename a theme: rename-theme THEME NAME")
    rename_theme.add_argument("theme", type=topic_number, metavar="THEME")
    rename_theme.add_argument("name", metavar="NAME", help=f"plain text, at most {MAX_NAME} characters")
    merge = actions.add_parser("merge", help="merge a topic into another: merge TOPIC --into OTHER")
    merge.add_argument("topic", type=topic_number, metavar="TOPIC")
    merge.add_argument("--into", type=topic_number, required=True, metavar="OTHER")
    hide = actions.add_parser("hide", help="hide a topic; its papers go to unassigned or --into OTHER")
    hide.add_argument("topic", type=topic_number, metavar="TOPIC")
    hide.add_argument("--into", type=topic_number, metavar="OTHER", help="default: unassigned")
    note = actions.add_parser("note", help="write a note on a topic (an empty TEXT removes it)")
    note.add_argument("topic", type=topic_number, metavar="TOPIC")
    note.add_argument("text", metavar="TEXT", help=f"plain text, at most {MAX_NOTE} characters")
    for verb, what in (("accept", "apply an edit flagged for review again"), ("drop", "delete an edit")):
        command = actions.add_parser(verb, help=f"{what}: {verb} N (numbers as in `list`)")
        command.add_argument("edit_id", type=edit_number, metavar="N")


def run_build(args: argparse.Namespace) -> None:
    from pipeline.commands.build import build_map, is_current
    from pipeline.config import BuildConfig
    from pipeline.mapfolder.lock import out_lock, recover
    from pipeline.mapfolder.store import check_out

    check_out(args.out, args.inputs)  # before anything is written, the lock file included

    config = BuildConfig(
        embedder=args.embedder,
        max_tokens=args.max_tokens,
        fit_sample=args.fit_sample,
        n_topics=args.topics,
        min_topic_size=args.min_topic_size,
        min_samples=args.min_samples,
        n_neighbors=args.neighbors,
        top_n_words=args.top_words,
        random_state=args.seed,
        stability=not args.no_stability,
    )
    with out_lock(args.out):  # one build per map folder: a second one fails at once, naming the first
        for note in recover(args.out):  # a previous map an interrupted build left aside comes back first
            print(note, file=sys.stderr)
        if args.if_stale and is_current(args.inputs, args.out, config):
            print(f"{args.out}: map is up to date", file=sys.stderr)
            return
        build_map(
            args.inputs,
            args.out,
            config,
            name=args.name,
            use_cache=not args.no_cache,
            progress=not args.quiet,
            previous=False if args.no_previous else args.previous,
            ray_address=args.ray or os.environ.get("ATLAS_RAY_ADDRESS") or None,
            ray_option="--ray" if args.ray else "ATLAS_RAY_ADDRESS",
            drop_added=args.drop_added,
            refit=args.refit,
        )


def run_export(args: argparse.Namespace) -> None:
    from pipeline.exports.export import export_frame, to_csv_bytes
    from pipeline.exports.reading_list import (
        export_choice,
        reading_list_bibtex,
        reading_list_heading,
        reading_list_markdown,
    )
    from pipeline.mapfolder.safe_output import output_target, write_output
    from pipeline.mapfolder.store import read_map

    kind = args.format or EXPORT_EXTENSIONS.get(args.out.suffix.lower(), "csv")
    atlas = read_map(args.map)
    output_target(args.out, map_folder=args.map, manifest=atlas.manifest)  # refused before any work
    known = set(atlas.topics["topic_id"].tolist()) | {-1}
    if args.topic is not None and args.topic not in known:
        ids = ", ".join(str(t) for t in sorted(known - {-1}))
        raise UserError(f"{args.map}: no topic {args.topic} (topics are {ids}, or -1)")
    papers = atlas.papers if args.topic is None else atlas.papers[atlas.papers["topic_id"] == args.topic]
    if kind == "csv":
        payload = to_csv_bytes(
            export_frame(atlas.papers, atlas.topics, topic_id=args.topic, themes=atlas.themes)
        )
    else:
        heading = reading_list_heading(atlas.manifest.name or args.map.name)
        chosen = export_choice(args.topic, atlas.topics, len(papers))
        if kind == "md":
            payload = reading_list_markdown(papers, atlas.topics, heading=heading, chosen=chosen).encode(
                "utf-8"
            )
        else:
            payload = reading_list_bibtex(papers, heading=heading, chosen=chosen).encode("utf-8")
    write_output(args.out, payload, map_folder=args.map, manifest=atlas.manifest)
    print(f"wrote {len(papers):,} papers to {args.out} ({kind})", file=sys.stderr)


def run_add(args: argparse.Namespace) -> None:
    from pipeline.commands.add import add_papers

    add_papers(args.map, args.inputs, use_cache=not args.no_cache, progress=not args.quiet)


def run_curate(args: argparse.Namespace) -> None:
    from pipeline.commands.curate import edit_map, list_edits

    if args.action == "list":
        from pipeline.mapfolder.manifest import read_manifest

        read_manifest(args.map, check=False)  # not a map folder: one error line
        print(list_edits(args.map))
        return
    fields = {
        key: getattr(args, key)
        for key in ("topic", "theme", "name", "text", "into", "edit_id")
        if key in args
    }
    print(edit_map(args.map, args.action, **fields), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    try:
        args = make_parser().parse_args(argv)
        {"build": run_build, "export": run_export, "add": run_add, "curate": run_curate}[args.command](args)
    except (UserError, UnreadableOutput, WorkerFailed) as exc:
        # One line whatever the message holds: a file or topic name with a line break is shown as \n,
        # U+2028 or U+202E as \u2028, \u202e (`pipeline.text.shown_plainly`).
        from pipeline.text import shown_plainly

        print(f"error: {shown_plainly(exc)}", file=sys.stderr)
        return 2 if isinstance(exc, UserError) else 1  # a map its own reader refuses, a killed worker
    except KeyboardInterrupt:
        print("error: interrupted; any previous map is untouched", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
