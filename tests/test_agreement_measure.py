"""The benchmark's author-keyword agreement (benchmarks/bench_name_retrieval.py, issue 62) joins the
forms the product itself counts as one name, alike for the names and for the keyword label beside
them: an acronym the map defines or `areas.tsv` lists ("PPO", "RL"), singular and plural, a hyphen
("pre-training"). "models" is no content word in the plural either. No corpus needed."""

from __future__ import annotations

import pandas as pd

from benchmarks.bench_name_retrieval import agreement, ceiling, content_words


def test_the_agreement_joins_the_forms_the_product_counts_as_one_for_names_and_label_alike():
    papers = pd.DataFrame(
        {
            "topic_id": [0, 0, 0, 1, 1, 1, 2, 2, 2],
            "abstract": [
                "We tune robots with proximal policy optimization (PPO).",
                "Robots trained with PPO and shaped rewards.",
                "Policy gradients for arms.",
                "Continual pretraining of language models.",
                "Pretraining data for language models.",
                "Corpus filtering.",
                "Diffusion models for images.",
                "Score matching.",
                "Denoising images.",
            ],
        }
    )
    keywords = [["ppo"], ["ppo"], ["robots"]]
    keywords += [["continual pre-training"], ["continual pre-training"], ["corpora"]]
    keywords += [["language models"], ["language models"], ["images"]]
    topics = pd.DataFrame(
        {
            "topic_id": [0, 1, 2],
            "label": ["Proximal policy optimization", "Continual pretraining", "Diffusion models"],
            "keywords": [["ppo", "arms"], ["pretraining", "corpus"], ["diffusion", "models"]],
        }
    )
    names, label, rows = agreement(topics, papers, keywords)
    assert [r["name"] for r in rows] == [True, True, False], rows
    assert [r["label"] for r in rows] == [True, True, False], rows
    assert (names, label) == (2 / 3, 2 / 3)


def test_content_words_take_plurals_hyphens_and_stop_words_alike():
    assert content_words("Diffusion policies") == content_words("diffusion policy") == {"diffusion", "policy"}
    assert "pretraining" in content_words("pre-training") & content_words("Pretraining")
    assert content_words("Language models & networks") == {"language"}


def test_the_ceiling_counts_a_keyword_word_a_third_writes_alone_or_as_one_of_two_lines():
    """Topic 0's authors' word "hallucination" is written by a quarter of its papers: no name of one
    part could carry it, one of two lines could ("Hallucination detection & ..."); topic 1's
    "spiking" is written by all of its papers."""
    papers = pd.DataFrame(
        {
            "topic_id": [0] * 8 + [1] * 4,
            "abstract": [
                "Hallucination detection for retrieval systems.",
                "Hallucination detection with retrieval systems.",
                *["Retrieval systems for long documents."] * 2,
                *["Dense passages for open questions."] * 4,
                *["Spiking neurons fire on chips."] * 4,
            ],
        }
    )
    topics = pd.DataFrame({"topic_id": [0, 1], "label": ["Dense passages", "Spiking neurons"]})
    rows = [{"words": ["hallucination"]}, {"words": ["spiking"]}]
    assert ceiling(papers, topics, rows) == {"written": 0.5, "named": 0.5, "paired": 1.0}
