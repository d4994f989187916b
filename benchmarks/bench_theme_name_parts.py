"""How many parts a theme's name would need to hold for every member topic: a floor measurement (issue 62).

    python benchmarks/bench_theme_name_parts.py [--maps seeds,colm-incremental,...]

Reads the seven maps `bench_name_retrieval.py` built into benchmarks/maps/ (run it first; read
only) and, for each map's own themes, gathers the candidate name parts the naming already considers
for a theme (`pipeline.modelling.themes`): its phrases and vocabulary areas (`_phrase_parts`,
`_area_parts`), the phrases its member topics write (`_member_parts`) and the parts of its member
topics' names (as `_lines` takes them; the names the map shows). Whether a paper writes a part is
the product's one rule (`support.uses_name`: words in order as word starts, the forms `areas.tsv`
lists, the map's acronyms), the rule of the target: a theme's name holds for a member topic when at
least `themes.HOLDS` (25%) of its papers write a part of it.

Per member topic: the best share of its papers writing any one candidate part (its floor: under
25%, no one part holds for it), of its own topic name (all its parts), and of all candidates together (under 25%,
no name of any length drawn from them holds). Per theme: the fewest parts such that every member
holds (`fewest_parts`: exact for one and two parts, greedy set cover beyond, an upper bound), and
the best weakest member a name of at most 1, 2 (both exact), 3 and 4 parts (greedy, a lower bound)
could reach, beside today's name.

Writes benchmarks/results/theme-name-parts.json and the part of
benchmarks/THEME_NAME_PARTS_RESULTS.md above its hand-written reading when every map is measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.bench_name_retrieval import MAPS, MAPS_DIR, built_maps  # noqa: E402
from benchmarks.bench_themes import phrases_of, read_built  # noqa: E402
from benchmarks.common import run_facts, write_part  # noqa: E402
from pipeline.modelling.themes import HOLDS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "theme-name-parts.json"
PAGE = ROOT / "benchmarks" / "THEME_NAME_PARTS_RESULTS.md"
READING = "## Reading of this run (written by hand; rerunning the script rewrites only the part above)"
LONGEST = 4  # names of up to this many parts measured


# ---- the core: member topics' papers x candidate parts, one boolean block per member ----


def member_shares(blocks: list[np.ndarray], chosen: list[int]) -> list[float]:
    """Per member, the share of its papers that write at least one of the `chosen` parts."""
    return [float(b[:, chosen].any(axis=1).mean()) if len(b) else 1.0 for b in blocks]


def best_pair(blocks: list[np.ndarray], joins: np.ndarray | None = None) -> tuple[float, list[int]]:
    """The name of at most two parts whose weakest member is strongest (exact: every pair `joins`
    allows, a part with itself standing for one part): (its weakest member's share, its parts)."""
    n_parts = blocks[0].shape[1]
    least = np.full((n_parts, n_parts), np.inf)
    for b in blocks:
        f = b.astype(np.float64)
        together = f.T @ f
        alone = np.diag(together)
        least = np.minimum(least, (alone[:, None] + alone[None, :] - together) / len(b))
    allowed = np.triu(
        np.ones_like(least, dtype=bool) if joins is None else joins | np.eye(n_parts, dtype=bool)
    )
    least = np.where(allowed, least, -1.0)  # each pair once; the diagonal is the part alone
    i, j = np.unravel_index(int(np.argmax(least)), least.shape)
    return float(least[i, j]), sorted({int(i), int(j)})


def best_single(blocks: list[np.ndarray]) -> tuple[float, list[int]]:
    """The one part whose weakest member is strongest: (that member's share, [the part])."""
    least = np.min([b.mean(axis=0) for b in blocks], axis=0)
    return float(least.max()), [int(np.argmax(least))]


def greedy_cover(blocks: list[np.ndarray], target: float, joins: np.ndarray) -> list[int] | None:
    """Greedy set cover: parts taken one by one, the one that brings most members to `target` of
    their papers, then most of the way there, first, each free to join the parts taken (`joins`),
    until every member is at `target`; None when no free part moves a member."""
    n_parts = blocks[0].shape[1]
    chosen: list[int] = []
    free = np.ones(n_parts, dtype=bool)  # may join every part chosen so far
    covered = [np.zeros(len(b), dtype=bool) for b in blocks]
    while min(float(c.mean()) for c in covered) < target:
        shares = np.stack([(c[:, None] | b).mean(axis=0) for c, b in zip(covered, blocks)])  # members x parts
        held = np.where(free, (shares >= target).sum(axis=0), -1)
        toward = np.minimum(shares, target).sum(axis=0)
        part = int(np.lexsort((-toward, -held))[0])
        if not free[part] or toward[part] <= sum(min(float(c.mean()), target) for c in covered):
            return None
        chosen.append(part)
        free &= joins[part] & (np.arange(n_parts) != part)
        covered = [c | b[:, part] for c, b in zip(covered, blocks)]
    return chosen


# The shares greedy covers aim at (`covers`): every percent.
GRID = np.arange(1, 101) / 100


def covers(blocks: list[np.ndarray], joins: np.ndarray | None) -> list[list[int]]:
    """The exact best one part and pair (`best_single`, `best_pair`), and a greedy cover aiming at
    each percent of `GRID` (`greedy_cover`; greedy is not monotone in its aim, so a cover aimed
    higher may be shorter): the names of several parts both measures choose from."""
    n_parts = blocks[0].shape[1]
    joins = np.ones((n_parts, n_parts), dtype=bool) if joins is None else joins
    found = [best_single(blocks)[1], best_pair(blocks, joins)[1]]
    for target in GRID:
        cover = greedy_cover(blocks, float(target), joins)
        if cover is None:
            break  # the covers stop at the first share greedy does not reach
        found.append(cover)
    return found


def fewest_parts(
    blocks: list[np.ndarray], holds: float = HOLDS, joins: np.ndarray | None = None
) -> list[int] | None:
    """The fewest parts such that at least `holds` of each member's papers write one of them, no
    two of them a pair `joins` (parts x parts) refuses: exact for one and two parts, else the
    shortest of the greedy covers (`covers`) that hold, an upper bound on the fewest. None when none
    is found.

    Examples:
        >>> a = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], bool)
        >>> fewest_parts([a], 0.5), fewest_parts([a], 0.75), fewest_parts([a[:, 1:2]], 0.5)
        ([0], [0, 1], None)
        >>> apart = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0]], bool)  # part 0 joins neither other
        >>> fewest_parts([a], 0.75, apart), fewest_parts([a], 0.5, apart)
        (None, [0])
    """
    blocks = [b for b in blocks if len(b)]
    holding = [c for c in covers(blocks, joins) if min(member_shares(blocks, c)) >= holds]
    return min(holding, key=len) if holding else None


def weakest_with(
    blocks: list[np.ndarray], most: int, joins: np.ndarray | None = None
) -> tuple[float, list[int]]:
    """A name of at most `most` parts (no two of them a pair `joins` refuses) whose weakest member
    is as strong as found: (that member's share, the parts). Exact for one and two parts; beyond,
    the best of those and of the greedy covers (`covers`) of no more than `most` parts (a lower
    bound on the best)."""
    blocks = [b for b in blocks if len(b)]
    found = [c for c in covers(blocks, joins) if len(c) <= most]
    found = found[:1] if most == 1 else found
    best = max(found, key=lambda c: min(member_shares(blocks, c)))  # the first of the strongest
    return min(member_shares(blocks, best)), best


# ---- the maps: each theme's candidate parts, as the naming gathers them ----


def candidate_parts(name: str) -> dict:
    """The map's themes, each with its member topics and the candidate parts the naming considers."""
    from pipeline.embedding.embed import embed_texts
    from pipeline.modelling import themes as th
    from pipeline.naming.areas import area_votes
    from pipeline.naming.names import _may_stand_alone, common_keys, is_generic, name_key, too_common

    papers, topics, themes_table, vectors, manifest = read_built(MAPS_DIR / name)
    documents = papers["abstract"].astype(str).tolist()
    phrases = phrases_of(documents, MAPS_DIR, name)
    config = manifest.config.settings

    def encode(texts):  # only when the shipped area vectors are not the map's encoder's
        return embed_texts(
            texts, embedder=config["embedder"], max_tokens=config["max_tokens"], progress=False
        )[0]

    topic_ids = topics["topic_id"].astype(int).tolist()
    index_of = {t: i for i, t in enumerate(topic_ids)}
    rows = np.array([index_of.get(int(t), -1) for t in papers["topic_id"].tolist()], dtype=np.int64)
    topic_rows = [np.flatnonzero(rows == t) for t in range(len(topic_ids))]
    topic_names = topics["label"].astype(str).tolist()
    groups = [sorted(index_of[int(t)] for t in ids) for ids in themes_table["topic_ids"]]
    theme_of_paper = np.full(len(documents), -1, dtype=np.int64)
    for g, members in enumerate(groups):
        for t in members:
            theme_of_paper[topic_rows[t]] = g
    spelling = phrases.spelling or {}
    common = common_keys(phrases, theme_of_paper)

    def may_name(form: str) -> bool:  # as `fit_themes` asks of a phrase
        return _may_stand_alone(form, spelling) and not is_generic(form) and not too_common(form, common)

    keyed = th._key_matrix(phrases)
    found = th._phrase_parts(phrases, keyed, theme_of_paper, len(groups), may_name)
    votes = area_votes(vectors, encode, encoder_name=manifest.model.encoder)
    rows_of_theme = [np.concatenate([topic_rows[t] for t in members]) for members in groups]
    for g, parts in th._area_parts(
        votes, theme_of_paper, len(groups), rows_of_theme, documents, phrases.acronyms
    ).items():
        found[g].extend(parts)
    pools = []
    for g, members in enumerate(groups):
        pool = {}  # name_key -> the part as displayed
        for t in sorted(members, key=lambda t: (-len(topic_rows[t]), t)):
            for part in topic_names[t].split(" & ")[:2]:
                pool.setdefault(name_key(part), part)
        for _, _, part in sorted(found[g], key=lambda c: -c[0]):
            pool.setdefault(part.key, part.name)
        for _, _, part in th._member_parts(keyed, phrases, members, topic_rows, may_name, set()):
            pool.setdefault(part.key, part.name)
        pools.append(pool)
    return {
        "documents": documents,
        "acronyms": phrases.acronyms,
        "topic_rows": topic_rows,
        "topic_names": topic_names,
        "groups": groups,
        "theme_names": themes_table["label"].astype(str).tolist(),
        "theme_of_paper": theme_of_paper,
        "pools": pools,  # per theme: name_key -> the part as displayed
    }


def measure(name: str) -> dict:
    """One map: per member topic its floors, per theme the fewest parts and the best weakest member."""
    from pipeline.modelling.themes import contrast
    from pipeline.naming.support import uses_name, written_index

    c = candidate_parts(name)
    documents, acronyms, topic_rows = c["documents"], c["acronyms"], c["topic_rows"]
    members_out, themes_out = [], []
    with written_index(documents):
        written = {}

        def writes(part: str) -> np.ndarray:
            if part not in written:
                written[part] = uses_name(part, documents, acronyms)
            return written[part]

        for g, members in enumerate(c["groups"]):
            keys, pool = list(c["pools"][g]), list(c["pools"][g].values())
            used = np.stack([writes(p) for p in pool], axis=1)  # papers x parts
            blocks = [used[topic_rows[t]] for t in members]
            today = writes(c["theme_names"][g])
            for t, block in zip(members, blocks, strict=True):
                shares = block.mean(axis=0)
                members_out.append(
                    {
                        "theme": g,
                        "topic": c["topic_names"][t],
                        "papers": len(block),
                        "today": round(float(today[topic_rows[t]].mean()), 4),
                        "own_name": round(float(writes(c["topic_names"][t])[topic_rows[t]].mean()), 4),
                        "best_part": round(float(shares.max()), 4),
                        "best_part_name": pool[int(np.argmax(shares))],
                        "all_parts": round(float(block.any(axis=1).mean()), 4),
                    }
                )
            # Two parts that share a word never make one name (as `themes._pair` refuses them).
            words = [set(k.split()) for k in keys]
            joins = np.array([[not a & b for b in words] for a in words], dtype=bool)
            cover = fewest_parts(blocks, HOLDS, joins)
            theme = {
                "name": c["theme_names"][g],
                "topics": len(members),
                "candidates": len(pool),
                "today": round(min(float(today[topic_rows[t]].mean()) for t in members), 4),
                "fewest_parts": None if cover is None else len(cover),
                "cover": None if cover is None else [pool[p] for p in cover],
            }
            if cover is not None:  # does its cover tell it apart (more written inside than by any sibling)?
                inside, sibling = contrast(used[:, cover].any(axis=1), c["theme_of_paper"], len(c["groups"]))
                theme["cover_inside"], theme["cover_sibling"] = round(inside[g], 4), round(sibling[g], 4)
            for most in range(1, LONGEST + 1):
                share, parts = weakest_with(blocks, most, joins)
                theme[f"best_{most}"] = round(share, 4)
                theme[f"best_{most}_parts"] = [pool[p] for p in parts]
            themes_out.append(theme)
    return {"members": members_out, "themes": themes_out}


# ---- the page ----


def pct(share: float) -> str:
    """A share in whole percent, rounded down: under 25% never reads 25%."""
    return f"{math.floor(share * 100 + 1e-9)}%"


def section(text: str, *rows: str) -> list[str]:
    """A paragraph of the page, then its table's rows (if any), each after a blank line."""
    return ["", text, "", *rows]


def by_map(results: dict, cells) -> list[str]:
    """A table's rows: each map's name, then `cells` of its themes."""
    return [f"| {name} | " + " | ".join(cells(r["themes"])) + " |" for name, r in results.items()]


def fewest_cells(themes: list[dict]) -> list[str]:
    """A map's themes by the fewest parts their name needs: its count, 1, 2, 3, 4, 5+, impossible,
    and the names of 3+ parts that do not tell their theme apart."""
    fewest = [x["fewest_parts"] or 0 for x in themes]
    counts = [len(themes), *(fewest.count(k) for k in (1, 2, 3, 4)), sum(k >= 5 for k in fewest)]
    counts.append(fewest.count(0))
    counts.append(sum(k >= 3 and x["cover_inside"] <= x["cover_sibling"] for k, x in zip(fewest, themes)))
    return list(map(str, counts))


def weakest_cells(themes: list[dict]) -> list[str]:
    """A map's weakest member today and at names of at most 1..`LONGEST` parts (themes under 25%)."""
    return [
        f"{pct(min(x[k] for x in themes))} ({sum(x[k] < HOLDS for x in themes)})"
        for k in ("today", *(f"best_{n}" for n in range(1, LONGEST + 1)))
    ]


def page(results: dict, facts: str) -> str:
    lines = [
        "# How many parts a theme's name would need to hold for every member topic "
        "(`python benchmarks/bench_theme_name_parts.py`)",
        "",
        facts,
        "",
        "Each map's own themes (read only). A theme's candidate parts are those the naming considers for it: "
        "its phrases and vocabulary areas (`themes._phrase_parts`, `_area_parts`), the phrases its member "
        "topics write (`_member_parts`) and the parts of its member topics' names as the map shows them. A "
        "paper writes a part by the product's rule (`support.uses_name`: aliases from `areas.tsv`, the map's "
        "acronyms, stems). A name holds for a member topic when >= 25% of its papers write a part of it.",
        "",
        "**Member topics** under 25%: for today's theme name; for its own topic name (the share that write a part of it); for the "
        "best single candidate part of its theme (its floor); for all its theme's candidates together (no name "
        "of any length drawn from them holds). Median best part in brackets.",
        "",
        "| map | member topics | today's theme name | its own topic name | best candidate part (median) "
        "| all candidates together |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        m = r["members"]

        def under(key: str, m=m) -> int:
            return sum(x[key] < HOLDS for x in m)

        median = float(np.median([x["best_part"] for x in m]))
        lines.append(
            f"| {name} | {len(m)} | {under('today')} | {under('own_name')} | {under('best_part')} ({pct(median)}) "
            f"| {under('all_parts')} |"
        )
    total = {
        k: sum(sum(x[k] < HOLDS for x in r["members"]) for r in results.values())
        for k in ("today", "own_name", "best_part", "all_parts")
    }
    lines.append(
        f"| all | {sum(len(r['members']) for r in results.values())} | {total['today']} | {total['own_name']} "
        f"| {total['best_part']} | {total['all_parts']} |"
    )
    lines += section(
        "**Themes by the fewest parts a name needs to hold for every member** (1 and 2 exact, over every part "
        "and pair; 3 and more by greedy set cover, an upper bound; two parts sharing a word never make one "
        "name, as the naming's `_pair` rule). Last column: of the names of 3+ parts, those the theme's papers "
        "write no more than its most-writing sibling theme's (they would not tell the theme apart).",
        "| map | themes | 1 | 2 | 3 | 4 | 5+ | impossible | 3+ not telling it apart |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *by_map(results, fewest_cells),
    )
    lines += section(
        "**Weakest member per map** (the smallest share of a member topic's papers writing its theme's name): "
        "today's names, then the best a name of at most 1, 2 (exact), 3 and 4 parts (greedy, a lower bound) "
        "could reach on each theme; themes under 25% in brackets.",
        "| map | today | <= 1 part | <= 2 parts | <= 3 parts | <= 4 parts |",
        "|---|---|---|---|---|---|",
        *by_map(results, weakest_cells),
    )
    lines += section(
        "Themes under 25% today that a name of at most two parts holds for (today's name and weakest member; "
        "the best pair and its weakest member):"
    )
    for name, r in results.items():
        for x in r["themes"]:
            if x["today"] < HOLDS <= x["best_2"]:
                lines.append(
                    f"- {name}: {x['name']} ({pct(x['today'])}); {' & '.join(x['best_2_parts'])} ({pct(x['best_2'])})"
                )
    lines += section(
        "Themes a name of at most two parts cannot hold for (today's name, its topics; best weakest "
        "member at 2 / 3 / 4 parts; the fewest parts that hold, greedy):"
    )
    for name, r in results.items():
        for x in r["themes"]:
            if x["best_2"] >= HOLDS:
                continue
            cover = "impossible" if x["cover"] is None else " & ".join(x["cover"])
            lines.append(
                f"- {name}: {x['name']} ({x['topics']} topics): "
                f"{pct(x['best_2'])} / {pct(x['best_3'])} / {pct(x['best_4'])}; {cover}"
            )
    lines += section(
        "Member topics no single candidate part holds for (papers; best part and its share; all "
        "candidates together):"
    )
    for name, r in results.items():
        weak = [x for x in r["members"] if x["best_part"] < HOLDS]
        if weak:
            lines.append(
                f"- {name}: "
                + "; ".join(
                    f"{x['topic']} ({x['papers']}; {x['best_part_name']} {pct(x['best_part'])}; "
                    f"{pct(x['all_parts'])})"
                    for x in weak
                )
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", default=",".join(MAPS))
    args = parser.parse_args(argv)
    wanted = built_maps(args.maps)
    if wanted is None:
        return 2
    os.environ.setdefault("ATLAS_CACHE_DIR", str(Path.home() / ".cache" / "abstract-atlas"))
    started = time.perf_counter()
    load = os.getloadavg()[0]
    results = {}
    for name in wanted:
        results[name] = measure(name)
        print(
            name,
            [(x["name"], x["fewest_parts"], x["today"], x["best_2"]) for x in results[name]["themes"]],
            flush=True,
        )
    command = (
        f"python benchmarks/bench_theme_name_parts.py{'' if wanted == list(MAPS) else ' --maps ' + args.maps}"
    )
    facts = run_facts(command, started) + (
        f" Load average at the start {load:.1f} (2 cores). Maps in benchmarks/maps/ (gitignored), built by "
        "`python benchmarks/bench_name_retrieval.py`."
    )
    print(facts)
    if wanted == list(MAPS):  # the results files: every map's, one run
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        write_part(PAGE, page(results, facts), READING, above=True)
    else:
        print(page(results, facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
