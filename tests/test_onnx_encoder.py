"""The int8 ONNX encoder agrees with the fp32 reference model and is built once per cache."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.embed import TorchEncoder
from pipeline.onnx_encoder import OnnxEncoder, onnx_model_file

TEXTS = [
    "Diffusion models generate images by iteratively denoising samples from a Gaussian prior.",
    "We study optimal transport between probability measures and compute Wasserstein barycenters.",
    "Large language models can be jailbroken by adversarial prompts that bypass safety alignment.",
    "Multi-view clustering with anchor graphs scales to millions of samples.",
    "A regret bound for stochastic bandits with delayed feedback.",
    "Robots learn grasping policies from human demonstrations with imitation learning.",
    "",
    "Sparse autoencoders decompose transformer activations into interpretable features. " * 30,
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


def test_int8_vectors_agree_with_fp32_reference(cache):
    onnx_vectors = OnnxEncoder(cache_dir=cache).encode(TEXTS)
    reference = TorchEncoder().encode(TEXTS)
    assert onnx_vectors.shape == (len(TEXTS), 384) and onnx_vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1, atol=1e-4)
    cosine = (onnx_vectors * reference).sum(axis=1)
    assert cosine.min() >= 0.97 and cosine.mean() >= 0.98, cosine


def test_model_is_exported_once_and_reused(cache):
    first = onnx_model_file(cache_dir=cache)
    stamp = first.stat().st_mtime_ns
    encoder = OnnxEncoder(cache_dir=cache)
    assert onnx_model_file(cache_dir=cache) == first and first.stat().st_mtime_ns == stamp
    assert encoder.name.startswith("all-MiniLM-L6-v2/onnx-int8-")
    assert not list(first.parent.glob("*.partial"))
