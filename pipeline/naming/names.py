"""Names for topics and themes: phrases the papers use, acronyms spelled out, distinct across the map."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from pipeline.naming.sentences import split_sentences

# Words every abstract uses; as keywords they say nothing about a topic. "models" stays:
# it carries "diffusion models" and "language models".
ABSTRACT_STOP_WORDS = sorted(
    ENGLISH_STOP_WORDS
    | {
        "paper",
        "propose",
        "proposed",
        "proposes",
        "approach",
        "approaches",
        "method",
        "methods",
        "result",
        "results",
        "show",
        "shows",
        "showed",
        "novel",
        "existing",
        "work",
        "works",
        "study",
        "demonstrate",
        "demonstrates",
        "experiments",
        "experimental",
        "extensive",
        "state",
        "art",
        "based",
        "using",
        "use",
        "used",
        "new",
        "significantly",
        "significant",
        "performance",
        "achieve",
        "achieves",
        "address",
        "introduce",
        "present",
        "provide",
        "furthermore",
        "moreover",
        "however",
        "code",
        "available",
        "github",
        "com",
        "https",
        "http",
        "al",
        "et",
        "task",
        "tasks",
        "problem",
        "problems",
        "key",
        "recent",
        "model",
        "framework",
        "effective",
        "effectiveness",
        "various",
        "improve",
        "improves",
        "improved",
        "outperforms",
        "superior",
        "challenging",
        "challenge",
        "challenges",
        "large",
        "algorithm",
        "algorithms",
        "technique",
        "techniques",
        "application",
        "applications",
        "setting",
        "settings",
        "fundamental",
        "function",
        "functions",
        "efficient",
        "efficiently",
        # Hyphenated boilerplate: keywords keep hyphens ("few-shot"), so these come whole.
        "state-of-the-art",
        "real-world",
        "large-scale",
        "high-quality",
        "end-to-end",
        "well-known",
        "so-called",
        "plug-and-play",
        "trade-off",
        "trade-offs",
        "non-trivial",
    }
)

# A name may not start or end with these, on top of the stop words: a phrase like "better
# diffusion" or "models trained" is a fragment, not a field's name. Inside a 3-word name only
# `_CONNECTORS` among them may appear ("quality of service"). `_NOT_ALONE` words may end one.
_EDGE_WORDS = frozenset(ABSTRACT_STOP_WORDS) | {
    "better",
    "different",
    "given",
    "high",
    "low",
    "prior",
    "previous",
    "standard",
    "strong",
    "simple",
    "specific",
    "general",
    "typically",
    "widely",
    "including",
    "learn",
    "learned",
    "learns",
    "trained",
    "training-free",
    "leverage",
    "leverages",
    "leveraging",
    "enable",
    "enables",
    "remains",
    "remain",
    "make",
    "makes",
    "way",
    "ways",
    "set",
    "number",
    "non",
    "multi",
    "real",
    "world",
    "cost",
    "level",
    "end",
    "able",
    "like",
    "many",
    "often",
    "offers",
    "offer",
    "allows",
    "achieving",
    "introduces",
    "introducing",
    "study",
    "studies",
    "reduces",
    "reduce",
    "terms",
    "particular",
}
# Generic heads that only name a field together with another word ("models" alone says nothing,
# "diffusion models" does). They may end a phrase but are never a name on their own.
_NOT_ALONE = frozenset({"data", "models", "model", "learning", "networks", "network", "training", "time"})
_CONNECTORS = frozenset({"of", "for", "and", "to", "in"})
# Names that say nothing about an area: never a topic's or a theme's name on their own.
GENERIC_NAMES = frozenset(
    {
        "neural network",
        "deep neural network",
        "deep learning",
        "machine learning",
        "artificial intelligence",
        "deep model",
        "large model",
        "learning",
        "model",
        "inference",
        "algorithm",
        "data",
        "training",
        "network",
        "system",
        "representation",
        "prediction",
        "application",
        "benchmark",
        "dataset",
        "text",
        "image",
        "method",
        "framework",
        "problem",
        "deep",
        "neural",
        "robot",
        "robotic",
        "scene",
        "video",
        "graph",
        "force",
        "object",
        "language",
        "control",
        "detection",
        "estimation",
        "optimization",
        "classification",
        "generation",
        "analysis",
        "information",
        "motion",
        "vision",
        "dynamics",
        "distribution",
        "structure",
        "design",
        "performance",
        "quality",
        "accuracy",
        "efficiency",
        "environment",
        "interaction",
        "knowledge",
        "process",
        "feature",
        "architecture",
    }
)
# Single words that only complete another name ("Optimal transport & map", "Regret bounds &
# sequence"): never the second part of a name.
FILLER_WORDS = frozenset(
    {
        "map",
        "sequence",
        "encoder",
        "decoder",
        "solver",
        "text",
        "image",
        "function",
        "guarantee",
        "bound",
        "loss",
        "feature",
        "layer",
        "input",
        "output",
        "signal",
        "sample",
        "space",
        "structure",
        "information",
        "process",
        "label",
        "object",
        "scene",
        "video",
        "parameter",
        "distribution",
        "policy",
        "agent",
        "user",
        "query",
        "token",
        "graph",
        "example",
        "perturbation",
        "setting",
        "result",
        "approach",
        "task",
        "atom",
        "low-rank",
        "quality",
        "performance",
        "accuracy",
        "efficiency",
        "offline",
        "online",
        "explicit",
        "content",
        "view",
        "generation",
        "evaluation",
        "classification",
        # verbs the abstracts use about their work, never an area's name
        "recover",
        "improve",
        "reduce",
        "learn",
        "generate",
        "predict",
        "estimate",
        "optimize",
        "enable",
        "allow",
        "provide",
        "capture",
        "identify",
    }
)
# A lone hyphenated word ending so is half of a phrase ("Inference-time", "Transformer-based").
_FRAGMENT_SUFFIX = re.compile(
    r"-(time|based|aware|free|specific|level|scale|wise|like|agnostic|driven|guided|centric)$"
)
# Single words with an adjective's or participle's ending ("causal", "adversarial", "robust"):
# alone they describe rather than name, so a phrase around them is preferred.
_ADJECTIVE_ENDING = re.compile(r"(al|ive|ic|ous|ary|ed|ing|able|ible|ent|ant|ust)$")
# At the end of a phrase "-ing" is usually a noun ("motion planning"), so only these endings count.
_PHRASE_ADJECTIVE_ENDING = re.compile(r"(al|ive|ic|ous|ary|able|ible)$")

TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# Punctuation that ends a phrase: a name never spans a comma, a bracket or a sentence end.
_BREAK = re.compile(r"[.,;:!?()\[\]{}\"“”'’/|=<>+*%$&#@~^`\\]|\s-\s|\s–\s|\s—\s")
_ACRONYM_DEFINITION = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,6})\(\s*([A-Z][A-Za-z0-9-]*[A-Z][a-z]?s?)\s*\)")
MAX_WORDS = 3


def vectorizer_for(n_papers: int) -> CountVectorizer:
    """1-2-gram counts without stop words for BERTopic's keywords; rare terms dropped in big corpora."""
    return CountVectorizer(
        stop_words=ABSTRACT_STOP_WORDS,
        ngram_range=(1, 2),
        min_df=max(1, min(10, round(n_papers / 2000))),
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\b",
    )


_LATIN_WORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\b")
# Chinese and Japanese are written without spaces. Hiragana (particles, verb endings) and the
# commonest Chinese function words and abstract boilerplate split a run of ideographs and katakana
# into pieces that are mostly words ("扩散模型", "画像生成"); pieces over 12 characters are read as 2-4
# character sequences.
_IDEOGRAPHIC = "\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TERM = re.compile(rf"[{_IDEOGRAPHIC}]+|[^\W\d_\u3040-\u309f{_IDEOGRAPHIC}](?:[\w-]*[^\W_])?")
_CJK_FUNCTION = re.compile(
    "我们|本文|本研究|研究|提出|一种|方法|问题|通过|基于|验证|效果|结果|表明|实验|数据集|新的|"
    "[的了和与及在是并其对中为上等种个第将被从到以或也这该]"
)
# Words every Russian abstract uses (the English ones are in ABSTRACT_STOP_WORDS).
_RUSSIAN_STOP_WORDS = (
    "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по ее мне было вот "
    "от меня о из ему теперь когда даже ну ли если уже или ни быть был него до вас нибудь опять уж "
    "вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам "
    "чтобы без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем "
    "ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при "
    "наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве "
    "три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда "
    "конечно всю между это также работе статье предлагаем показываем исследуем метод методы задачу "
    "задача результаты"
)
_OTHER_STOP_WORDS = frozenset(_RUSSIAN_STOP_WORDS.split())
NOT_ENGLISH_NOTE = (
    "fewer than half the abstracts are English: topic keywords are words of any script, "
    "and for Chinese and Japanese the pieces between particles and function words"
)
NO_WORDS_NOTE = (
    "the abstracts have no words (only numbers or symbols): topics are named Topic 0, Topic 1, ... "
    "and their keywords are the most telling tokens"
)


def any_script_terms(text: str) -> list[str]:
    """Words of any alphabet, lower-cased, without common function words; Chinese and Japanese
    split at particles and function words into word-like pieces.

    Examples:
        >>> any_script_terms("Мы изучаем оптимальный транспорт")
        ['изучаем', 'оптимальный', 'транспорт']
        >>> any_script_terms("我们研究扩散模型的图像生成问题")
        ['扩散模型', '图像生成']
        >>> any_script_terms("本研究では拡散モデルによる画像生成について")
        ['拡散モデル', '画像生成']
    """
    terms = []
    for run in _TERM.findall(text.lower()):
        if re.match(rf"[{_IDEOGRAPHIC}]", run):
            for piece in _CJK_FUNCTION.split(run):
                if 2 <= len(piece) <= 12:
                    terms.append(piece)
                elif len(piece) > 12:
                    terms.extend(piece[i : i + n] for n in (2, 3, 4) for i in range(len(piece) - n + 1))
        elif run not in ENGLISH_STOP_WORDS and run not in _OTHER_STOP_WORDS:
            terms.append(run)
    return terms


def vectorizers_for(documents: list[str]) -> list[tuple[CountVectorizer, str | None]]:
    """Term counters to try in order, each with a notice for the user.

    English corpora get `vectorizer_for`, unchanged. Where most abstracts are not English, words
    of any script; where no abstract has a letter at all, any whitespace-separated token.
    """
    english = sum(1 for doc in documents if len(_LATIN_WORD.findall(doc)) >= 3)
    candidates = []
    if english * 2 >= len(documents):
        candidates.append((vectorizer_for(len(documents)), None))
    candidates.append((CountVectorizer(analyzer=any_script_terms), NOT_ENGLISH_NOTE))
    candidates.append((CountVectorizer(token_pattern=r"\S+", lowercase=True), NO_WORDS_NOTE))
    return candidates


def _initials(words: list[str]) -> list[str]:
    """Letters an acronym may take from words: the first of each, or of each hyphen part."""
    whole = "".join(w[0] for w in words)
    parts = "".join(p[0] for w in words for p in w.split("-") if p)
    return [whole.lower(), parts.lower()]


def acronym_definitions(documents: list[str]) -> dict[str, str]:
    """Acronyms the papers define, lower-cased, with the expansion most papers give them.

    "optimal transport (OT)" defines "ot" as "optimal transport": the acronym's capitals must be
    the initials of the words just before the bracket (of their hyphen parts, too, so
    "Multi-Modal Learning (MML)" counts). A plural acronym ("SNNs") is defined with its singular.

    Examples:
        >>> acronym_definitions(["Optimal transport (OT) is old.", "Spiking neural networks (SNNs) fire."])
        {'ot': 'optimal transport', 'snn': 'spiking neural networks'}
    """
    found: dict[str, Counter] = {}
    for doc in documents:
        for match in _ACRONYM_DEFINITION.finditer(doc):
            acronym = match.group(2)
            letters = re.sub(r"s$", "", acronym) if re.search(r"[A-Z]s$", acronym) else acronym
            letters = "".join(c for c in letters if c.isalpha() and c.isupper()).lower()
            if len(letters) < 2:
                continue
            words = match.group(1).split()
            for size in range(1, len(words) + 1):
                tail = words[-size:]
                if letters in _initials(tail):
                    phrase = " ".join(w.lower() for w in tail)
                    if tail[0].lower() not in _EDGE_WORDS or size == len(letters):
                        found.setdefault(letters, Counter())[phrase] += 1
                    break
    return {acronym: forms.most_common(1)[0][0] for acronym, forms in sorted(found.items())}


def _acronym_key(token: str) -> str | None:
    """The lower-case letters of an acronym token ("SNNs" -> "snn", "OT" -> "ot"), else None."""
    core = token[:-1] if len(token) > 2 and token.endswith("s") and token[-2].isupper() else token
    if len(core) >= 2 and sum(c.isupper() for c in core) >= 2 and core[0].isupper():
        return "".join(c for c in core if c.isalpha()).lower()
    return None


def _phrases(text: str, acronyms: dict[str, str]) -> list[str]:
    """1-3-word lower-case phrases as the text writes them, within punctuation.

    A phrase neither starts nor ends with a stop word; an acronym the map defines stands for its
    expansion ("OT" -> "optimal transport"), so papers that only write the acronym count too.
    """
    result = []
    for segment in _BREAK.split(text):
        tokens = []
        for token in TOKEN.findall(segment):
            key = _acronym_key(token)
            if key and key in acronyms:
                result.append(acronyms[key])  # the acronym is a use of its expansion
                tokens.append(None)  # and breaks phrases around it
            else:
                tokens.append(token.lower())
        for size in range(1, MAX_WORDS + 1):
            for start in range(len(tokens) - size + 1):
                words = tokens[start : start + size]
                if None in words or any(len(w) < 2 for w in words):
                    continue
                first, last = words[0], words[-1]
                if first in _EDGE_WORDS or (size == 1 and first in _NOT_ALONE):
                    continue
                if last in _EDGE_WORDS and last not in _NOT_ALONE:
                    continue
                if size == 3 and words[1] in _EDGE_WORDS and words[1] not in _CONNECTORS:
                    continue
                result.append(" ".join(words))
    return result


@dataclass
class PhraseCounts:
    """Which papers use which candidate phrases: a binary papers x phrases matrix."""

    matrix: sparse.csr_matrix  # papers x phrases, 1 where a paper uses the phrase
    phrases: np.ndarray  # phrase strings, lower-case
    acronyms: dict[str, str]  # acronym -> expansion the papers define
    spelling: dict[str, str] | None = None  # how the corpus writes each word (see `_word_case`)


def count_phrases(documents: list[str], analyzer: Callable[[str], list[str]] | None = None) -> PhraseCounts:
    """Candidate phrases of a corpus: those at least two papers use (a name is never one paper's term).

    `analyzer` replaces the English phrase finder for corpora that are not English (see
    `vectorizers_for`); where no term is shared by two papers, every term is a candidate.
    """
    acronyms = {} if analyzer else acronym_definitions(documents)
    terms = analyzer or (lambda text: _phrases(text, acronyms))
    try:
        vectorizer = CountVectorizer(analyzer=terms, binary=True, min_df=min(2, len(documents)))
        matrix = vectorizer.fit_transform(documents).tocsr()
    except ValueError:  # no term two papers share
        vectorizer = CountVectorizer(analyzer=terms, binary=True)
        matrix = vectorizer.fit_transform(documents).tocsr()
    return PhraseCounts(
        matrix=matrix,
        phrases=vectorizer.get_feature_names_out(),
        acronyms=acronyms,
        spelling=_word_case(documents),
    )


def _word_case(documents: list[str]) -> dict[str, str]:
    """How the papers spell each word mid-sentence: lower case when they ever write it so.

    Title Case in a definition ("Answer Set Programming (ASP)") then reads "Answer set
    programming"; "Gaussian", "Wasserstein" and "LLM" keep their capitals.
    """
    forms: dict[str, Counter] = {}
    for doc in documents:
        # A definition's capitals mark where its acronym's letters come from, not proper nouns:
        # the words before "(ASP)" are no evidence of spelling. Words with no evidence stay lower case.
        doc = _ACRONYM_DEFINITION.sub(" ", doc)
        for sentence in split_sentences(doc):
            for i, token in enumerate(TOKEN.findall(sentence)):
                if i == 0:
                    continue  # a sentence's first word is capitalised whatever it is
                forms.setdefault(token.lower(), Counter())[token] += 1
    spelling = {}
    for word, counts in forms.items():
        if counts[word] > 0:
            spelling[word] = word
        else:
            spelling[word] = counts.most_common(1)[0][0]
    return spelling


def display_name(phrase: str, spelling: dict[str, str]) -> str:
    """A phrase spelled as the papers spell its words, with a capital first letter.

    Examples:
        >>> display_name("llm safety", {"llm": "LLM", "safety": "safety"})
        'LLM safety'
        >>> display_name("answer set programming", {})
        'Answer set programming'
    """
    words = [spelling.get(w, w) for w in phrase.split()]
    name = " ".join(words)
    return name[0].upper() + name[1:] if name else name


def as_in_text(name: str, spelling: dict[str, str]) -> str:
    """A name's first word as the papers spell it mid-sentence, for the later parts of a name
    that lists several ("Pose estimation & body models").

    Examples:
        >>> as_in_text("Body models", {"body": "body"}), as_in_text("LLM safety", {"llm": "LLM"})
        ('body models', 'LLM safety')
    """
    first, _, rest = name.partition(" ")
    word = spelling.get(first.lower(), first if first[1:2].isupper() else first.lower())
    return f"{word} {rest}" if rest else word


def name_key(phrase: str) -> str:
    """A phrase with plural endings dropped, to treat "diffusion model(s)" as one name."""
    return " ".join(re.sub(r"(?<=[a-z]{3})(es|s)$", "", w) for w in phrase.lower().split())


# Keys of the singular and the plural: `name_key` cuts "examples" to "exampl", "example" not at all.
_GENERIC_KEYS = frozenset(name_key(w + end) for w in GENERIC_NAMES for end in ("", "s"))
_FILLER_KEYS = frozenset(name_key(w + end) for w in FILLER_WORDS for end in ("", "s"))


def is_generic(phrase: str) -> bool:
    """Whether a phrase is too generic ("Neural networks") or too partial ("Inference-time") to name an area.

    Examples:
        >>> [is_generic(p) for p in ("Neural networks", "inference-time", "Diffusion models", "safety")]
        [True, True, False, False]
    """
    key = name_key(phrase)
    return key in _GENERIC_KEYS or (" " not in key and bool(_FRAGMENT_SUFFIX.search(key)))


# A name is written at least this many times as often in its group as in the whole map; a lone
# word, which every field writes in some sense, at least `WORD_LIFT` times.
NAME_LIFT = 2.0
WORD_LIFT = 3.0
# A lone word names an area when it is an area's noun ("Clustering", "Localization", "Robotics",
# "Haptics") or an acronym the papers write ("SLAM"); "Convex", "Vector", "Presents" do not.
_AREA_NOUN = re.compile(r"(ing|tion|sion|ics|ity|sis|ment|ance|ence|graphy|logy|ness)$")


def _may_stand_alone(phrase: str, spelling: dict[str, str]) -> bool:
    """Whether a phrase may be a name (or a name's part) on its own: any phrase of two or three
    words, and a lone word only as `_AREA_NOUN` says.

    Examples:
        >>> [_may_stand_alone(p, {"slam": "SLAM"}) for p in ("clustering", "convex", "slam", "point clouds")]
        [True, False, True, True]
    """
    if " " in phrase.strip():
        return True
    written = spelling.get(phrase.lower(), phrase)
    return bool(_AREA_NOUN.search(phrase.lower())) or (written.isupper() and len(written) >= 2)


def _lexical_scores(counts: PhraseCounts, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group and phrase: share of the group's papers using it, c-TF-IDF, and its precision.

    c-TF-IDF is BERTopic's class-based TF-IDF on document counts: a phrase's frequency in the
    group times log(1 + average group size / its frequency in the corpus). Precision is the
    share of all papers using the phrase that are in the group: high for a field's own term,
    low for "language models" when every topic writes it.
    """
    group_ids = np.unique(groups)
    indicator = sparse.csr_matrix(
        (np.ones(len(groups)), (np.searchsorted(group_ids, groups), np.arange(len(groups)))),
        shape=(len(group_ids), len(groups)),
    )
    df = np.asarray((indicator @ counts.matrix).todense(), dtype=np.float64)  # groups x phrases
    sizes = np.bincount(np.searchsorted(group_ids, groups), minlength=len(group_ids)).astype(np.float64)
    coverage = df / sizes[:, None]
    total = df.sum(axis=0)
    average = sizes.mean()
    ctfidf = coverage * np.log1p(average / np.maximum(total, 1))[None, :]
    precision = df / np.maximum(total, 1)[None, :]
    return coverage, ctfidf, precision


def _shape_factor(phrase: str) -> float:
    """Two- and three-word phrases name a field; a lone word, and an adjective above all, less so."""
    words = phrase.split()
    if len(words) > 1:
        # A phrase ending on an adjective is a cut-off name ("deep neural", "unmanned aerial").
        return 0.45 if _PHRASE_ADJECTIVE_ENDING.search(words[-1]) and words[-1] not in _NOT_ALONE else 1.0
    # A lone word names an area less often than a phrase does ("Clustering" does, "Force" not).
    return 0.35 if _ADJECTIVE_ENDING.search(words[0]) else 0.5


@dataclass
class Candidate:
    phrase: str
    score: float
    coverage: float
    precision: float = 1.0  # share of all the papers using the phrase that are in the group
    alone: bool = True  # may be a name on its own (`_may_stand_alone`), not only a name's second part


def name_groups(
    documents: list[str],
    groups: np.ndarray,
    centroids: dict[int, np.ndarray] | None = None,
    *,
    embeddings: np.ndarray | None = None,
    counts: PhraseCounts | None = None,
    avoid: dict[int, set[str]] | None = None,
    forbid: set[str] | None = None,
    shortlist: int = 30,
) -> dict[int, str]:
    """A distinct name for each group of papers (topic or theme), from the phrases its papers use.

    Each candidate phrase (1-3 words, used by at least two of the group's papers, acronyms
    counted as their spelled-out form) is scored by the share of the group's papers using it,
    its precision (how much of its use is in this group) and its c-TF-IDF rank; the best
    `shortlist` per group are then re-ranked by how close the papers writing the phrase are to the
    group's centroid (`_closeness`; no encoder runs). Names are given greedily, most confident group
    first, so two groups never share a name (nor its plural); `avoid` lists phrases a group
    should not take when it has another (a theme avoids its topics' names).

    Args:
        documents: the papers' texts, row i = groups[i].
        groups: a group id per paper; -1 (unassigned) is not named.
        centroids: unit mean embedding per group id, for the closeness re-ranking.
        embeddings: the papers' unit vectors, row i = groups[i], same space as `centroids`.
        counts: `count_phrases(documents)`, when the caller already has it.
        avoid: phrases (lower case) per group id to use only as a last resort.
        forbid: names no group may take (a map's theme names, which its topics never repeat).

    Returns:
        group id -> name, e.g. {0: "Optimal transport", 1: "Diffusion models"}.
    """
    groups = np.asarray(groups)
    keep = groups != -1
    if not keep.any():
        return {}
    documents_kept = [d for d, k in zip(documents, keep) if k]
    groups_kept = groups[keep]
    embeddings_kept = None if embeddings is None else np.asarray(embeddings)[keep]
    if counts is None:
        counts = count_phrases(documents_kept)
    else:
        counts = PhraseCounts(
            counts.matrix[np.flatnonzero(keep)], counts.phrases, counts.acronyms, counts.spelling
        )
    group_ids = np.unique(groups_kept)
    coverage, ctfidf, precision = _lexical_scores(counts, groups_kept)
    sizes = np.bincount(np.searchsorted(group_ids, groups_kept))
    shape = np.array([_shape_factor(p) for p in counts.phrases])
    spelling = counts.spelling if counts.spelling is not None else _word_case(documents_kept)

    # Rank by c-TF-IDF, normalised per group so groups of any size weigh alike, and by coverage
    # times precision: a name most of the group's papers write and few others do.
    lexical = np.sqrt(coverage * np.sqrt(precision)) * np.sqrt(
        ctfidf / np.maximum(ctfidf.max(axis=1, keepdims=True), 1e-12)
    )
    lexical *= shape[None, :]
    generic = np.array([is_generic(p) for p in counts.phrases], dtype=bool)
    single = np.array([" " not in p for p in counts.phrases], dtype=bool)
    shortlists: dict[int, np.ndarray] = {}
    for row in range(len(group_ids)):
        used_by = coverage[row] * sizes[row]
        # Distinctive: written at least `NAME_LIFT` times as often in the group as in the corpus
        # ("analysis" and "information" are everywhere; "convex" is not).
        share = sizes[row] / max(1, sizes.sum())
        lift = precision[row] / max(share, 1e-12)
        distinctive = lift >= np.minimum(np.where(single, WORD_LIFT, NAME_LIFT), 0.5 / max(share, 1e-12))
        eligible = np.flatnonzero((used_by >= min(2, sizes[row])) & ~generic & distinctive)
        if not len(eligible):  # nothing distinctive enough: the best of what the group writes
            eligible = np.flatnonzero((used_by >= min(2, sizes[row])) & ~generic)
        shortlists[row] = eligible[np.argsort(-lexical[row, eligible], kind="stable")[:shortlist]]
    closeness = _closeness(counts, shortlists, group_ids, groups_kept, centroids, embeddings_kept)
    options: dict[int, list[Candidate]] = {}
    for row, group in enumerate(group_ids):
        best = shortlists[row]
        scores = lexical[row, best] * closeness.get(row, 1.0)
        order = np.argsort(-scores, kind="stable")
        options[int(group)] = [
            Candidate(
                str(counts.phrases[best[i]]),
                float(scores[i]),
                float(coverage[row, best[i]]),
                float(precision[row, best[i]]),
                _may_stand_alone(str(counts.phrases[best[i]]), spelling),
            )
            for i in order
        ]
    members: dict[int, list[str]] = {}
    for doc, group in zip(documents_kept, groups_kept.tolist()):
        members.setdefault(int(group), []).append(doc)

    masks: dict[tuple[int, str], np.ndarray] = {}

    def support(group: int, name: str) -> float:
        """`name_support` of a name (parts joined by " & ") on the group's papers, each part once."""
        used = np.zeros(len(members[group]), dtype=bool)
        for part in name.split(" & "):
            if (group, part) not in masks:
                masks[group, part] = uses_name(part, members[group], counts.acronyms)
            used |= masks[group, part]
        return float(used.mean()) if len(used) else 0.0

    return _assign_distinct(options, spelling, avoid or {}, support, {name_key(f) for f in forbid or ()})


def _closeness(
    counts: PhraseCounts,
    shortlists: dict[int, np.ndarray],
    group_ids: np.ndarray,
    groups: np.ndarray,
    centroids: dict[int, np.ndarray] | None,
    embeddings: np.ndarray | None,
) -> dict[int, np.ndarray]:
    """How central the papers writing each shortlisted phrase are to their group: the mean cosine of
    the group's papers that write it to the group's centroid, clipped to [0, 1].

    A phrase the topic's central papers write names it better than one its fringe writes (KeyBERT's
    idea, measured on the papers' own vectors rather than on an embedding of the phrase: no encoder
    runs, and the same vectors give the same names on every machine).
    """
    if embeddings is None or not centroids:
        return {}
    vectors = np.asarray(embeddings, dtype=np.float32)
    matrix = counts.matrix.tocsc()
    result = {}
    for row, best in shortlists.items():
        group = int(group_ids[row])
        centroid = centroids.get(group)
        if centroid is None or not len(best):
            continue
        members = np.flatnonzero(groups == group)
        closeness = vectors[members] @ np.asarray(centroid, dtype=np.float32)
        uses = matrix[members][:, best].toarray() > 0  # members x shortlisted phrases
        written = np.maximum(uses.sum(axis=0), 1)
        result[row] = np.clip((closeness[:, None] * uses).sum(axis=0) / written, 0.0, 1.0)
    return result


# A topic's name should be written by at least this share of its papers; among its candidates
# the best-scored one that is takes precedence over a better-scored one that is not.
NAME_SUPPORT = 0.25


def _assign_distinct(
    options: dict[int, list[Candidate]],
    spelling: dict[str, str],
    avoid: dict[int, set[str]],
    support: Callable[[int, str], float] | None = None,
    forbidden: set[str] = frozenset(),
) -> dict[int, str]:
    """Give each group its best phrase no other group took; the most confident group chooses first.

    With `support` (group, phrase -> share of the group's papers using it, see `name_support`),
    a phrase at least `NAME_SUPPORT` of the group's papers write comes before any that fewer do:
    a name should describe most of what it names, not a corner of it.
    """
    taken: set[str] = set(forbidden)
    names: dict[int, str] = {}
    confidence = {g: (c[0].score if c else 0.0) for g, c in options.items()}
    for group in sorted(options, key=lambda g: (-confidence[g], g)):
        avoided = {name_key(p) for p in avoid.get(group, set())}
        free = [c for c in options[group] if name_key(c.phrase) not in taken]
        # An avoided phrase is still better than a fragment: it costs half its score, not all.
        preferred = sorted(free, key=lambda c: -c.score * (0.5 if name_key(c.phrase) in avoided else 1.0))
        by_score = preferred
        # A lone word that names no area ("Convex", "Presents") is only ever a second part.
        preferred = [c for c in preferred if c.alone] + [c for c in preferred if not c.alone]
        if not preferred:
            names[group] = f"Topic {group}"
            continue
        choice = preferred[0].phrase
        name = display_name(choice, spelling)
        if support is not None:
            # The best phrase, with a second part where it names less than most of the topic;
            # failing NAME_SUPPORT even so, the best phrase that reaches it (and its second part).
            for candidate in [preferred[0], *preferred[1:]]:
                second = _second_part(group, candidate.phrase, by_score, support)
                whole = candidate.phrase if second is None else f"{candidate.phrase} & {second}"
                if support(group, whole) >= NAME_SUPPORT:
                    break
            else:
                candidate, second = preferred[0], _second_part(group, preferred[0].phrase, by_score, support)
            choice = candidate.phrase
            name = display_name(choice, spelling)
            if second is not None:
                name = f"{name} & {as_in_text(display_name(second, spelling), spelling)}"
        taken.add(name_key(choice))
        names[group] = name
    return names


# A name fewer than this share of a topic's papers write names only part of it...
MAJORITY = 2 / 3
# ...and it takes a second part ("Adversarial examples & safety") that adds at least this share
# and that this share of the topic's papers write themselves (no "& R-CNN" written by 7%).
SECOND_PART_GAIN = 0.1
PART_SUPPORT = 0.2


def _second_part(
    group: int, choice: str, candidates: list[Candidate], support: Callable[[int, str], float]
) -> str | None:
    """A second phrase for a name that describes less than `MAJORITY` of its topic: of the topic's
    own phrases (most of their use is in it; not a lone adjective like "restricted"), the one whose
    papers add most to the name's, when they add at least `SECOND_PART_GAIN`."""
    alone = support(group, choice)
    if alone >= MAJORITY:
        return None
    stems = {w[:4] for w in name_key(choice).split()}
    best, best_value = None, 0.0
    for candidate in candidates[:10]:
        phrase = candidate.phrase
        # No word of the name again, in any form ("Dialogue & dialog", "Question answering & answers").
        if stems & {w[:4] for w in name_key(phrase).split()} or candidate.precision < 0.5:
            continue
        if " " not in phrase and (
            _ADJECTIVE_ENDING.search(phrase)
            or phrase.lower().endswith("ly")
            or name_key(phrase) in _FILLER_KEYS
        ):
            continue
        if is_generic(phrase) or support(group, phrase) < PART_SUPPORT:
            continue
        if support(group, f"{choice} & {phrase}") < alone + SECOND_PART_GAIN:
            continue
        value = support(group, phrase) * candidate.precision  # common in the topic, rare elsewhere
        if value > best_value:
            best, best_value = phrase, value
    return best


def keywords_of(counts: PhraseCounts, groups: np.ndarray, top_n: int = 10) -> dict[int, list[str]]:
    """A group's top phrases by c-TF-IDF (for themes; topics keep BERTopic's keywords)."""
    groups = np.asarray(groups)
    keep = np.flatnonzero(groups != -1)
    if not len(keep):
        return {}
    _, ctfidf, _ = _lexical_scores(
        PhraseCounts(counts.matrix[keep], counts.phrases, counts.acronyms), groups[keep]
    )
    result = {}
    for row, group in enumerate(np.unique(groups[keep])):
        order = np.argsort(-ctfidf[row], kind="stable")[:top_n]
        result[int(group)] = [str(counts.phrases[i]) for i in order if ctfidf[row, i] > 0]
    return result


# A name that lists its parts ("Pose estimation & body models", "Robots, drones & vehicles",
# "Bundle adjustment & camera models; illumination").
_NAME_PARTS = re.compile(r"\s*(?:&|,|;)\s*")


def name_support(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> float:
    """How far a name holds for a set of papers: the share of them that use all the words of the
    name, or of one of its parts when the name lists several ("Pose estimation & body models").

    The one definition of "support" for topic and theme names (naming, themes, benchmark, tests).
    Words are compared as word starts, case aside, without stop words and with plurals as
    singulars ("models" counts "model"); a hyphenated word counts its parts ("multi-view" is
    "multi" and "view"). With `acronyms` (acronym -> expansion, as `acronym_definitions` finds
    them), a paper that writes the acronym of a part ("OT" for "optimal transport") uses it too.

    Examples:
        >>> name_support("Optimal transport", ["optimal transport plans", "OT maps", "diffusion"])
        0.3333333333333333
        >>> name_support("Optimal transport", ["optimal transport plans", "OT maps"], {"ot": "optimal transport"})
        1.0
        >>> name_support("Pose estimation & body models", ["human pose estimation", "a body model", "x"])
        0.6666666666666666
    """
    if not documents:
        return 0.0
    return float(uses_name(name, documents, acronyms).mean())


def uses_name(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> np.ndarray:
    """Per document, whether it uses the name (see `name_support`, the share of them that do)."""

    def stem(word: str) -> str:
        return word[:-1] if len(word) > 4 and word.endswith("s") else word

    by_expansion: dict[str, list[str]] = {}
    for acronym, expansion in (acronyms or {}).items():
        by_expansion.setdefault(" ".join(stem(w) for w in expansion.split()), []).append(acronym)
    parts = []
    for part in _NAME_PARTS.split(name):
        words = [w for w in re.findall(r"[^\W_]+", part.lower()) if w not in ENGLISH_STOP_WORDS]
        if not words:
            continue
        patterns = [re.compile(rf"\b{re.escape(stem(w))}", re.I) for w in words]
        written = by_expansion.get(" ".join(stem(w) for w in re.findall(r"[^\W_]+", part.lower())), [])
        short = [re.compile(rf"\b{re.escape(a)}s?\b", re.I) for a in written]
        parts.append((patterns, short))
    return np.array(
        [
            any(
                all(p.search(doc) for p in words) or any(a.search(doc) for a in short)
                for words, short in parts
            )
            for doc in documents
        ],
        dtype=bool,
    )
