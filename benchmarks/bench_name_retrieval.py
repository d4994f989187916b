"""Do the names point at their own groups, and do they agree with the authors' own keywords? (issue 62)

    python benchmarks/bench_name_retrieval.py [--maps seeds,colm-fresh,...] [--from-maps]

Needs the shared corpus (../shared/corpus/ml_abstracts.parquet; exits 2 with an `error:` line when it
is absent). Builds each map with the current code (`build_map`, packaged int8 encoder, stability off,
the user's embedding cache) into benchmarks/maps/<name>/ (gitignored); `--from-maps` measures the
maps already there. The maps are built WITHOUT the corpus's `keywords` column, so the authors'
keywords are a held-out reference:

- `seeds`: the repository's seeds/ folder;
- `colm-incremental`: COLM 2024 built, then rebuilt on it with 2025 added (as a user would);
  `colm-fresh`: COLM 2024 + 2025 built at once;
- `corl`: CoRL 2021-2025; `eccv`: ECCV 2020 + 2022;
- `random-5000` (corpus.sample(5000, random_state=5)) and `balanced-5field` (600 papers of each of
  the 5 fields with >= 1,000), as bench_themes.py and bench_quality.py draw them.

Per map, side by side with the top-4 c-TF-IDF keywords of each group (stock BERTopic's label, the
floor):

- **name retrieval**, both levels: each name embedded with the map's encoder, the groups of its level
  ranked by the cosine to their papers' mean vector; a hit when its own group comes first.
  Targets: themes 100%, topics >= 95%, never below the keyword label.
- **author-keyword agreement** (maps whose papers carry keywords: COLM, CoRL): the share of topics
  whose name shares a content word with the 3 most distinctive author keywords of its papers (lift:
  share of the topic's papers giving the keyword over the map's share; written by at least 2 of
  its papers). Target >= 80%.
- **evidence**: every theme's weakest member writes its name (`name_share` >= 25%); no part of a
  name is written by more than a third of the map's papers (`uses_name`).

Writes benchmarks/results/name-retrieval.json and benchmarks/NAME_RETRIEVAL_RESULTS.md, and the
page of every theme and topic name of the COLM (incremental) and ECCV maps with three titles each,
benchmarks/NAMES_RESULTS.md's part above bench_names.py's.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.common import (  # noqa: E402
    CORPUS,
    EARLIER_NAMES,
    NAMES_RESULTS,
    balanced_set,
    corpus_missing,
    random_set,
    run_facts,
    write_part,
)

MAPS_DIR = ROOT / "benchmarks" / "maps"
RESULTS = ROOT / "benchmarks" / "results" / "name-retrieval.json"
PAGE = ROOT / "benchmarks" / "NAME_RETRIEVAL_RESULTS.md"
MAPS = ("seeds", "colm-incremental", "colm-fresh", "corl", "eccv", "random-5000", "balanced-5field")
COLUMNS = ["title", "abstract", "venue", "year", "field"]  # never `keywords`: the held-out reference
LISTED = ("colm-incremental", "eccv")  # maps whose every name the page lists with three titles


def built_maps(spec: str) -> list[str] | None:
    """The maps a `--maps` list (comma-separated) names, built by this script into `MAPS_DIR`; None,
    after one `error:` line, when one of them is not (for the scripts that read these maps)."""
    wanted = [m for m in spec.split(",") if m]
    missing = [m for m in wanted if m not in MAPS or not (MAPS_DIR / m / "manifest.json").is_file()]
    if missing:
        print(
            f"error: no built map for {', '.join(missing)} in {MAPS_DIR}: "
            "run benchmarks/bench_name_retrieval.py first",
            file=sys.stderr,
        )
        return None
    return wanted


def inputs_of(name: str, corpus) -> list:
    """The map's input tables, in build order (an incremental map: the first, then all)."""
    if name == "seeds":
        return []
    venue, year = corpus["venue"], corpus["year"]
    if name == "colm-incremental":
        return [corpus[(venue == "COLM") & (year == 2024)], corpus[venue == "COLM"]]
    chosen = {
        "colm-fresh": lambda: corpus[venue == "COLM"],
        "corl": lambda: corpus[venue == "CORL"],
        "eccv": lambda: corpus[(venue == "ECCV") & year.isin([2020, 2022])],
        "random-5000": lambda: random_set(corpus, 5000, seed=5),
        "balanced-5field": lambda: balanced_set(corpus),
    }[name]()
    return [chosen]


def build(name: str, corpus) -> float:
    from pipeline.commands.build import build_map
    from pipeline.config import BuildConfig

    out = MAPS_DIR / name
    started = time.perf_counter()
    tables = inputs_of(name, corpus)
    if not tables:
        build_map([ROOT / "seeds"], out, BuildConfig(stability=False), progress=False, previous=False)
    for step, table in enumerate(tables):
        source = MAPS_DIR / f"{name}-{step}.parquet"
        table.reset_index(drop=True)[COLUMNS].to_parquet(source, index=False)
        build_map([source], out, BuildConfig(stability=False), name=name, progress=False, previous=step > 0)
    return round(time.perf_counter() - started, 1)


def retrieval(names: list[str], means, encoder) -> float:
    """Share of groups whose name's vector is nearest (cosine) to their own papers' mean vector."""
    import numpy as np

    vectors = np.asarray(encoder.encode(names), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return float((np.argmax(vectors @ means.T, axis=1) == np.arange(len(names))).mean())


def group_means(vectors, rows_per_group):
    import numpy as np

    means = np.stack([vectors[rows].mean(axis=0) for rows in rows_per_group])
    return means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)


_STOP = None


def content_words(text: str, forms: MapForms | None = None) -> set[str]:
    """Lower-case content words, singular ("Diffusion policies" -> {"diffusion", "policy"}), a
    hyphenated word also joined ("pre-training" -> {"pre", "training", "pretraining"}), and with
    `forms` an acronym the map writes in capitals also as its expansion ("PPO" -> {"ppo", "proximal",
    "policy", "optimization"}): the forms the product itself counts as one name (`MapForms`).

    Examples:
        >>> sorted(content_words("Continual pre-training of policies"))
        ['continual', 'policy', 'pre', 'pretraining', 'training']
    """
    global _STOP
    if _STOP is None:
        from pipeline.naming.phrases import ABSTRACT_STOP_WORDS

        _STOP = set(ABSTRACT_STOP_WORDS) | {"model", "learning", "network", "method", "data"}
    words = set()
    for token in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", text):
        pieces = token.split("-")
        for piece in pieces + (["".join(pieces)] if len(pieces) > 1 else []):
            word = piece.lower()
            if forms is not None:
                words |= forms.expansion(piece)
            if word not in _STOP and len(word) > 1:
                words.add(_singular(word))
    return words - _STOP


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


class MapForms:
    """What the product counts as one name on a map, for the agreement measure to join alike on both
    sides (names and the keyword label): an acronym the map defines (`acronym_definitions`, as
    `name_support` counts it) or `areas.tsv` lists beside the form its initials spell ("RL",
    "reinforcement learning"), when written in capitals or spelt so by the map's papers
    (`word_case`: "rl" in a keyword list is "RL" where the papers write "RL")."""

    def __init__(self, documents: list[str]):
        from pipeline.naming.phrases import acronym_definitions, word_case

        self.spelling = word_case(documents)
        self.expansions: dict[str, set[str]] = {}
        for key, expansion in [*_listed_acronyms(), *acronym_definitions(documents).items()]:
            self.expansions.setdefault(key, set()).update(content_words(expansion))

    def expansion(self, token: str) -> set[str]:
        key = token.lower()
        if key not in self.expansions and key.endswith("s"):
            key = key[:-1]  # "LLMs"
        written = self.spelling.get(key, token)
        capitals = sum(c.isupper() for c in token) >= 2 or sum(c.isupper() for c in written) >= 2
        return self.expansions.get(key, set()) if capitals else set()


def _listed_acronyms() -> list[tuple[str, str]]:
    """`areas.tsv`'s acronym forms with the form of the same area whose initials spell them
    ("MARL", "multi-agent reinforcement learning"); "DPO" beside "reward model" is not one."""
    from pipeline.naming.areas import read_areas

    pairs = []
    for area in read_areas():
        for form in area.forms:
            core = form[:-1] if form.endswith("s") and form[:-1].isupper() else form
            if " " in core or sum(c.isupper() for c in core) < 2:
                continue
            key = re.sub(r"[^a-z0-9]", "", core.lower())
            for other in (area.name, *area.forms):
                words = [w for w in re.split(r"[\s-]+", other.lower()) if w]
                if other != form and key in {
                    "".join(w[0] for w in words),
                    "".join(w[0] for w in words if w not in {"of", "and", "for", "the", "in", "to"}),
                }:
                    pairs.append((key, other))
                    break
    return pairs


def author_keywords(papers, corpus) -> list[list[str]]:
    """Each paper's author keywords (lower case), matched to the corpus by title and abstract."""
    keyed = corpus.dropna(subset=["keywords"])
    lookup = dict(zip(keyed["abstract"].str.strip(), keyed["keywords"], strict=False))
    return [
        [k.strip().lower() for k in re.split(r"[;,]", lookup.get(a.strip(), "")) if k.strip()]
        for a in papers["abstract"].astype(str)
    ]


def agreement(topics, papers, keywords) -> tuple[float, float, list[dict]] | None:
    """Share of topics whose name (and whose keyword label) shares a content word with the 3 most
    distinctive author keywords of its papers; None where too few papers carry keywords. Words are
    joined as the product joins them (`MapForms`), alike for the names and the keyword label."""
    from collections import Counter

    import numpy as np

    has = np.array([bool(k) for k in keywords])
    if has.mean() < 0.5:
        return None
    labels = papers["topic_id"].to_numpy()
    overall = Counter(k for ks, h in zip(keywords, has) if h for k in set(ks))
    n_all = int(has.sum())
    rows, named, labelled = [], 0, 0
    forms = MapForms(papers["abstract"].astype(str).tolist())
    for topic in topics.itertuples():
        members = [i for i in np.flatnonzero(labels == topic.topic_id) if has[i]]
        counts = Counter(k for i in members for k in set(keywords[i]))
        lift = {k: (c / len(members)) / (overall[k] / n_all) for k, c in counts.items() if c >= 2 and members}
        top = sorted(lift, key=lambda k: (-lift[k], -counts[k], k))[:3]
        words = set().union(*(content_words(k, forms) for k in top)) if top else set()
        name_hit = bool(content_words(topic.label, forms) & words)
        label_hit = bool(content_words(" ".join(list(topic.keywords)[:4]), forms) & words)
        named += name_hit
        labelled += label_hit
        rows.append(
            {
                "topic": topic.label,
                "keywords": top,
                "words": sorted(words),
                "name": name_hit,
                "label": label_hit,
            }
        )
    return named / len(rows), labelled / len(rows), rows


def ceiling(papers, topics, rows: list[dict]) -> dict[str, float]:
    """How far any name could agree under the issue's rules: the share of topics for which some phrase
    the map counts (`count_phrases`) shares a content word with the topic's 3 author keywords
    (`rows[i]["words"]`, from `agreement`) and is written (`uses_name`) by at least a third of the
    topic's papers ("written"); the same, of phrases that may be a whole name (not generic, not a
    third of the map's, a lone word only as an area's noun: "named"); and such a phrase written by two
    or more of its papers that with another such phrase reaches a third (a name of two lines:
    "paired")."""
    import numpy as np

    from pipeline.naming.names import _may_stand_alone, common_keys, is_generic, too_common
    from pipeline.naming.phrases import count_phrases
    from pipeline.naming.support import NAME_SUPPORT, uses_name

    documents = papers["abstract"].astype(str).tolist()
    counts = count_phrases(documents)
    forms = MapForms(documents)
    labels = papers["topic_id"].to_numpy()
    common = common_keys(counts, labels)
    binary = (counts.matrix > 0).tocsc()
    found = dict.fromkeys(("written", "named", "paired"), 0)
    for topic, row in zip(topics.itertuples(), rows, strict=True):
        members = np.flatnonzero(labels == topic.topic_id)
        texts = [documents[i] for i in members]
        writers = np.asarray(binary[members].sum(axis=0)).ravel()
        phrases = [str(counts.phrases[i]) for i in np.argsort(-writers, kind="stable") if writers[i] >= 2]
        allowed = [
            p
            for p in phrases
            if not is_generic(p) and not too_common(p, common) and _may_stand_alone(p, counts.spelling or {})
        ]
        sharing = [p for p in phrases if content_words(p, forms) & set(row["words"])]
        masks = {p: uses_name(p, texts, counts.acronyms) for p in {*sharing, *allowed[:30]}}
        held = [p for p in sharing if masks[p].mean() >= NAME_SUPPORT]
        found["written"] += bool(held)
        found["named"] += any(p in allowed for p in held)
        found["paired"] += any(
            (masks[p] | masks[q]).mean() >= NAME_SUPPORT
            for p in sharing
            if p in allowed
            for q in allowed[:30]
        )
    return {k: round(v / len(rows), 4) for k, v in found.items()}


def measure(name: str, corpus, encoder) -> dict:
    import numpy as np

    from pipeline.mapfolder.store import read_map
    from pipeline.naming.phrases import acronym_definitions
    from pipeline.naming.support import _NAME_PARTS, uses_name

    atlas = read_map(MAPS_DIR / name)
    papers, topics, themes = atlas.papers, atlas.topics, atlas.themes
    vectors = np.asarray(atlas.embeddings, dtype=np.float32)
    labels = papers["topic_id"].to_numpy()
    topic_rows = [np.flatnonzero(labels == t) for t in topics["topic_id"]]
    theme_rows = [np.flatnonzero(np.isin(labels, list(ids))) for ids in themes["topic_ids"]]
    result = {"papers": len(papers), "n_topics": len(topics), "n_themes": len(themes)}
    for level, table, rows in (("topics", topics, topic_rows), ("themes", themes, theme_rows)):
        means = group_means(vectors, rows)
        result[level] = {
            "names": round(retrieval(table["label"].astype(str).tolist(), means, encoder), 4),
            "keywords": round(
                retrieval([", ".join(list(k)[:4]) for k in table["keywords"]], means, encoder), 4
            ),
        }
        vec = np.asarray(encoder.encode(table["label"].astype(str).tolist()), dtype=np.float32)
        vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
        wrong = np.flatnonzero(np.argmax(vec @ means.T, axis=1) != np.arange(len(table)))
        result[level]["pointing_elsewhere"] = [
            f"{table['label'].iloc[i]} -> {table['label'].iloc[int(np.argmax(vec[i] @ means.T))]}"
            for i in wrong
        ]
    result["theme_weakest_member"] = sorted(float(s) for s in themes["name_share"])
    documents = papers["abstract"].astype(str).tolist()
    acronyms = acronym_definitions(documents)
    parts = {p for n in [*topics["label"], *themes["label"]] for p in _NAME_PARTS.split(str(n)) if p}
    shares = {p: float(uses_name(p, documents, acronyms).mean()) for p in sorted(parts)}
    result["parts_over_a_third"] = {p: round(s, 3) for p, s in shares.items() if s > 1 / 3}
    if "name_share" in topics.columns:
        result["topic_name_share_median"] = round(float(topics["name_share"].median()), 3)
        result["topics_under_a_third"] = int((topics["name_share"] < 1 / 3).sum())
    agreed = agreement(topics, papers, author_keywords(papers, corpus)) if corpus is not None else None
    if agreed is not None:
        result["keyword_agreement"] = {"names": round(agreed[0], 4), "keywords": round(agreed[1], 4)}
        result["agreement_ceiling"] = ceiling(papers, topics, agreed[2])
        result["keyword_rows"] = agreed[2]
    return result


def titles_page(name: str) -> list[str]:
    """Every theme and topic of a map, with three of each topic's most central titles."""
    from pipeline.mapfolder.store import read_map

    atlas = read_map(MAPS_DIR / name)
    title_of = dict(zip(atlas.papers["doc_id"], atlas.papers["title"].astype(str), strict=True))
    topics = atlas.topics.set_index("topic_id")
    lines = [
        f"## {name} ({len(atlas.papers):,} papers, {len(topics)} topics, {len(atlas.themes)} themes)",
        "",
    ]
    for theme in atlas.themes.sort_values("size", ascending=False).itertuples():
        lines.append(
            f"### {theme.label} ({theme.size} papers; written by {theme.name_written:.0%} of them, "
            f"{theme.name_share:.0%} of its weakest topic's; {theme.name_source})"
        )
        lines.append("")
        for t in sorted(theme.topic_ids, key=lambda t: -int(topics.loc[t, "size"])):
            row = topics.loc[t]
            titles = "; ".join(
                title_of[d].replace("|", "/")[:90] for d in list(row["representative_doc_ids"])[:3]
            )
            lines.append(
                f"- **{row['label']}** ({row['size']} papers, written by {row['name_share']:.0%}): {titles}"
            )
        lines.append("")
    return lines


def pct(x) -> str:
    return "–" if x is None else f"{x:.0%}"


def page(results: dict, facts: str) -> str:
    lines = [
        "# Name retrieval and author-keyword agreement (`python benchmarks/bench_name_retrieval.py`)",
        "",
        facts,
        "",
        "Each name embedded with the map's encoder ranks the groups of its level by the cosine to their "
        "papers' mean vector: a hit when its own group comes first. Beside it, the top-4 c-TF-IDF keywords "
        "of each group (stock BERTopic's label), the floor. Agreement: share of topics whose name shares a "
        "content word with the 3 most distinctive author keywords of its papers (maps built without the "
        "keywords column), words joined as the product joins them, alike for names and keywords: an acronym "
        "the map defines or areas.tsv lists (PPO = proximal policy optimization, RL), plural and singular, "
        "a hyphen (pre-training = pretraining). Its ceiling under the issue's rules: the share of topics "
        "where some phrase sharing such a word is written by a third of the topic / may also be a whole "
        "name / may be one of a name's two lines (written by two of its papers, a third with the other). "
        "Targets (issue 62): themes 100%, topics >= 95%, never below the keywords; "
        "agreement >= 80%; every theme's weakest member writes its name (>= 25%); no name part written "
        "by more than a third of the map.",
        "",
        "| map | papers | topics: names / keywords | themes: names / keywords | agreement: names / keywords "
        "| agreement ceiling: written / may name / a line | weakest theme member | parts by > 1/3 of map "
        "| topics under 1/3 |",
        "|---|---:|---|---|---|---|---:|---|---:|",
    ]
    for name, r in results.items():
        agreed, top = r.get("keyword_agreement"), r.get("agreement_ceiling", {})
        lines.append(
            f"| {name} | {r['papers']:,} | {pct(r['topics']['names'])} / {pct(r['topics']['keywords'])} "
            f"| {pct(r['themes']['names'])} / {pct(r['themes']['keywords'])} "
            f"| {pct(agreed and agreed['names'])} / {pct(agreed and agreed['keywords'])} "
            f"| {' / '.join(pct(top.get(k)) for k in ('written', 'named', 'paired'))} "
            f"| {pct(min(r['theme_weakest_member'], default=None))} "
            f"| {', '.join(f'{p} ({s:.0%})' for p, s in r['parts_over_a_third'].items()) or 'none'} "
            f"| {r.get('topics_under_a_third', '–')} of {r['n_topics']} |"
        )
    lines += ["", "Names that point at another group of their level (name -> the group it points at):", ""]
    for name, r in results.items():
        for level in ("themes", "topics"):
            if r[level]["pointing_elsewhere"]:
                lines.append(f"- {name}, {level}: " + "; ".join(r[level]["pointing_elsewhere"]))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--maps", default=",".join(MAPS))
    parser.add_argument("--from-maps", action="store_true", help="measure the maps already built")
    args = parser.parse_args(argv)
    if corpus_missing("bench_name_retrieval.py"):
        return 2
    wanted = [m for m in args.maps.split(",") if m]
    if set(wanted) - set(MAPS):
        print(f"error: --maps takes {', '.join(MAPS)}", file=sys.stderr)
        return 2
    import pandas as pd

    from pipeline.embedding.embed import load_encoder

    started = time.perf_counter()
    corpus = pd.read_parquet(CORPUS)
    MAPS_DIR.mkdir(parents=True, exist_ok=True)
    seconds = {}
    for name in wanted:
        if not args.from_maps:
            print(f"[{name}] building", flush=True)
            seconds[name] = build(name, corpus)
    encoder = load_encoder()
    results = {}
    for name in wanted:
        results[name] = measure(name, corpus, encoder)
        results[name]["build_seconds"] = seconds.get(name)
        print(name, {k: v for k, v in results[name].items() if k != "keyword_rows"}, flush=True)
    facts = (
        run_facts(
            f"python benchmarks/bench_name_retrieval.py{' --from-maps' if args.from_maps else ''}", started
        )
        + " Maps in benchmarks/maps/ (gitignored)."
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    RESULTS.write_text(json.dumps({**old, **results}, indent=1, default=str) + "\n")
    PAGE.write_text(page({**{k: v for k, v in old.items() if k in MAPS}, **results}, facts), encoding="utf-8")
    if all((MAPS_DIR / m / "manifest.json").is_file() for m in LISTED):
        text = [
            "# Every theme and topic name of the COLM and ECCV maps (`python benchmarks/bench_name_retrieval.py`)",
            "",
            facts,
            "",
            "Each theme with the share of its papers that write its name (and of its weakest topic's), "
            "and each topic with three of its most central papers' titles, so a person can judge the "
            "names in one read. The figures are in NAME_RETRIEVAL_RESULTS.md.",
            "",
        ]
        for name in LISTED:
            text += titles_page(name)
        write_part(NAMES_RESULTS, "\n".join(text), EARLIER_NAMES, above=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
