"""The one build configuration: defaults that scale with the number of papers."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from pipeline import UserError

EMBEDDERS = ("onnx-int8", "torch-fp32")
# Word pieces embedded per abstract. The model's own 256 costs 1.18x the CPU of 192 for the same
# topic quality (NMI within 0.002 over three UMAP seeds on sample-2000 and corpus-10k); 128 is
# 1.75x faster but loses 0.014-0.021 NMI. See benchmarks/TOKENS_RESULTS.md.
DEFAULT_MAX_TOKENS = 192
# all-MiniLM-L6-v2 has 512 position embeddings.
MAX_TOKENS_LIMIT = 512
# Past FIT_SAMPLE_ABOVE papers, topics and the map are fitted on FIT_SAMPLE_SIZE of them and the
# rest assigned (see pipeline/modelling/sample_fit.py and benchmarks/RESULTS.md for the measurements).
FIT_SAMPLE_ABOVE = 40_000
FIT_SAMPLE_SIZE = 25_000


MIN_FIT_SAMPLE = 100


def topic_count_for(n_papers: int) -> int:
    """The number of topics a map of `n_papers` aims at (on maps of `CHOOSE_TOPICS_FROM` papers or
    more, stability picks among its neighbours): 3.5·n^0.25, so 57 papers -> 10, 1,000 -> 20,
    10,000 -> 35, 81,646 -> 59 (what readers took in on earlier maps, where HDBSCAN's count grew at
    about that rate). Never more than a topic per 3 papers.

    Examples:
        >>> [topic_count_for(n) for n in (5, 57, 1_000, 10_000, 81_646)]
        [1, 10, 20, 35, 59]
    """
    return max(1, min(n_papers // 3, round(3.5 * n_papers**0.25)))


# Below this many papers a re-clustering's agreement is measured on too few papers to choose by.
CHOOSE_TOPICS_FROM = 500


def resolve_fit_sample(requested: int | None, n_papers: int) -> int:
    """Papers to fit on, or 0 to fit on all (a sample as large as the corpus is the corpus).

    Examples:
        >>> resolve_fit_sample(None, 10_000), resolve_fit_sample(None, 81_646)
        (0, 25000)
        >>> resolve_fit_sample(2_000, 1_500), resolve_fit_sample(0, 81_646)
        (0, 0)
    """
    if requested is None:
        return FIT_SAMPLE_SIZE if n_papers > FIT_SAMPLE_ABOVE else 0
    return requested if 0 < requested < n_papers else 0


@dataclass(frozen=True)
class BuildConfig:
    """How a map is built. `None` means "derive from the corpus size" (see `resolve`).

    Attributes:
        embedder: "onnx-int8" (fast, quantised locally from the packaged model) or "torch-fp32".
        max_tokens: word pieces embedded per abstract (longer ones are cut); part of the
            embedding cache key.
        n_topics: how many topics; `None` lets the build choose among counts near
            `topic_count_for(papers)` the one whose re-clusterings agree best.
        choose_n_topics: whether the build may choose (resolved: False when `n_topics` was given).
        min_topic_size: smallest group of papers called a topic (smaller clusters are dissolved
            into their nearest topics); also HDBSCAN's `min_cluster_size` for finding outliers.
        min_samples: HDBSCAN `min_samples` for finding outliers.
        n_neighbors: UMAP neighbourhood size for both the 10-D clustering space and the 2-D map.
        reassign_neighbors: neighbours consulted when reassigning papers HDBSCAN left out; a
            tenth of the corpus, between 5 and 15, so a vote stays local in small corpora.
        top_n_words: keywords kept per topic.
        random_state: seed for UMAP; the same input and config give the same map.
        stability: re-cluster 90% subsamples a few times to score each topic's stability
            (`--no-stability` turns it off; topics' `stability` is then NaN).
        fit_sample: fit UMAP + HDBSCAN on this many papers (a seeded sample) and assign the rest;
            0 fits on all. Default: FIT_SAMPLE_SIZE for corpora over FIT_SAMPLE_ABOVE papers.
    """

    embedder: str = "onnx-int8"
    max_tokens: int | None = None
    n_topics: int | None = None
    choose_n_topics: bool = True
    min_topic_size: int | None = None
    min_samples: int | None = None
    n_neighbors: int | None = None
    reassign_neighbors: int | None = None
    top_n_words: int = 10
    random_state: int = 42
    stability: bool = True
    fit_sample: int | None = None

    def resolve(self, n_papers: int) -> BuildConfig:
        """Fill every size-dependent default for a corpus of `n_papers` and validate.

        Topic size grows as n^0.63: 3 for 57 papers, 30 for 2,000, 83 for 10,000, about 310 for
        80,000, so a small corpus still shows its small themes and a large one stays at tens
        (not thousands) of topics a reader can take in.

        Examples:
            >>> BuildConfig().resolve(57).min_topic_size
            3
            >>> BuildConfig().resolve(2_000).min_topic_size
            30
        """
        if self.embedder not in EMBEDDERS:
            raise UserError(f"--embedder must be one of {', '.join(EMBEDDERS)}, not {self.embedder!r}")
        min_topic_size = self.min_topic_size or max(3, round(0.25 * n_papers**0.63))
        # min_samples 1 below about 170 papers: at 2, HDBSCAN leaves 30-40% of a 57-paper corpus out
        # and the map is drawn by reassignment votes rather than by the clusters.
        min_samples = self.min_samples or max(1, min_topic_size // 4)
        n_neighbors = self.n_neighbors or int(min(30, max(10, round(2 * math.log2(n_papers)))))
        resolved = replace(
            self,
            n_topics=self.n_topics or topic_count_for(n_papers),
            choose_n_topics=self.choose_n_topics and self.n_topics is None and n_papers >= CHOOSE_TOPICS_FROM,
            max_tokens=self.max_tokens or DEFAULT_MAX_TOKENS,
            fit_sample=resolve_fit_sample(self.fit_sample, n_papers),
            min_topic_size=min_topic_size,
            min_samples=min_samples,
            n_neighbors=min(n_neighbors, n_papers - 1),
            reassign_neighbors=self.reassign_neighbors or min(15, max(5, n_papers // 10)),
        )
        resolved.validate(n_papers)
        return resolved

    def validate(self, n_papers: int) -> None:
        """Raise `UserError` naming the option when a value cannot work."""
        checks = {
            "--topics": (self.n_topics, 1),
            "--min-topic-size": (self.min_topic_size, 2),
            "--min-samples": (self.min_samples, 1),
            "--neighbors": (self.n_neighbors, 2),
            "--top-words": (self.top_n_words, 1),
            "--reassign-neighbors": (self.reassign_neighbors, 1),
        }
        for option, (value, lowest) in checks.items():
            if value is not None and value < lowest:
                raise UserError(f"{option} must be at least {lowest}, not {value}")
        if self.fit_sample is not None and self.fit_sample != 0 and self.fit_sample < MIN_FIT_SAMPLE:
            raise UserError(
                f"--fit-sample must be 0 (fit on all) or at least {MIN_FIT_SAMPLE}, not {self.fit_sample}"
            )
        if self.max_tokens is not None and not 16 <= self.max_tokens <= MAX_TOKENS_LIMIT:
            raise UserError(f"--max-tokens must be between 16 and {MAX_TOKENS_LIMIT}, not {self.max_tokens}")
        if self.n_topics is not None and self.n_topics > n_papers:
            raise UserError(f"--topics {self.n_topics} is more than the corpus's {n_papers} papers")
        if self.min_topic_size is not None and self.min_topic_size > n_papers:
            raise UserError(
                f"--min-topic-size {self.min_topic_size} is larger than the corpus ({n_papers} papers)"
            )

    def to_dict(self) -> dict:
        return asdict(self)
