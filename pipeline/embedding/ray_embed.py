"""The embedding stage as a Ray Data job on an existing Ray cluster (`build --ray ADDRESS`).

Only the texts not already in the local embedding cache travel. The driver cuts them into the same
length-sorted batches a local build encodes (`pipeline.embedding.embed.sort_batches`); each batch is one Ray
Data row, so every encoder sees exactly the batches it would see locally and the vectors are
bit-identical to a local build on the same kind of CPU. Each actor loads the packaged model once
(a class-based `map_batches` UDF) and embeds batch after batch; vectors stream back to the driver,
which writes them to the same cache as a local build. Ray is imported only here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline import UserError
from pipeline.config import BuildConfig

# Environment every worker gets: nothing may reach for the Hugging Face hub there either.
WORKER_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class EmbedBatches:
    """Ray Data UDF: loads the encoder once per actor, then embeds one local-sized batch per row."""

    def __init__(self, embedder: str, max_tokens: int) -> None:
        from pipeline.embedding.embed import cache_name_for, load_encoder

        # One actor per CPU, so one text at a time within an actor.
        if embedder == "onnx-int8":
            from pipeline.cache import cache_dir
            from pipeline.embedding.model import model_path
            from pipeline.embedding.onnx_encoder import OnnxEncoder

            self.encoder = OnnxEncoder(model_path(), cache_dir=cache_dir(), threads=1, max_tokens=max_tokens)
        else:
            self.encoder = load_encoder(embedder, max_tokens)
        # Named on the worker's own CPU: the driver refuses vectors its cache would mislabel.
        self.cache_name = cache_name_for(embedder, max_tokens)

    def __call__(self, batch: dict) -> dict:
        rows, vectors = [], []
        for row_ids, texts in zip(batch["rows"], batch["texts"], strict=True):
            rows.append(np.asarray(row_ids, dtype=np.int64))
            vectors.append(self.encoder.encode([str(t) for t in texts]))
        row = np.concatenate(rows)
        return {
            "row": row,
            "vector": np.concatenate(vectors).astype(np.float32),
            "cache_name": np.array([self.cache_name] * len(row)),
        }


class RayCompute:
    """`compute(texts, on_batch)` for `pipeline.embedding.embed.embed_texts`, on a Ray cluster."""

    def __init__(
        self, address: str, config: BuildConfig, log: Callable[[str], None], option: str = "--ray"
    ) -> None:
        self.address = address
        self.option = option  # how the user gave the address: --ray or ATLAS_RAY_ADDRESS
        self.embedder = config.embedder
        self.max_tokens = config.max_tokens
        self.log = log
        self.report: dict = {"address": address}

    def __call__(self, texts: list[str], on_batch: Callable[[list[int], np.ndarray], None]) -> np.ndarray:
        from pipeline.embedding.embed import cache_name_for, sort_batches
        from pipeline.embedding.model import DIMENSIONS

        ray = _import_ray(self.option)
        expected = cache_name_for(self.embedder, self.max_tokens)
        _connect(ray, self.address, self.option)
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
            self.log(
                f"embedding {len(texts):,} abstracts on the Ray cluster at {self.address}: "
                f"{nodes} node(s), {cpus} CPU(s)"
            )
            batches = sort_batches(texts)
            items = [{"rows": rows, "texts": [texts[i] for i in rows]} for rows in batches]
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False
            context.execution_options.verbose_progress = False
            dataset = ray.data.from_items(items, override_num_blocks=min(len(items), max(1, 4 * cpus)))
            embedded = dataset.map_batches(
                EmbedBatches,
                fn_constructor_kwargs={"embedder": self.embedder, "max_tokens": self.max_tokens},
                batch_size=1,
                batch_format="numpy",
                concurrency=max(1, min(cpus, len(items))),
                num_cpus=1,
            )
            vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
            done = np.zeros(len(texts), dtype=bool)
            started = time.perf_counter()
            for result in embedded.iter_batches(batch_format="numpy", batch_size=None):
                names = set(result["cache_name"].tolist())
                if names != {expected}:
                    raise UserError(
                        f"{self.option} {self.address}: workers embed as {', '.join(sorted(names))}, this "
                        f"machine as {expected}; their vectors would not match a local build "
                        "(int8 kernels differ by CPU): use --embedder torch-fp32 or like machines"
                    )
                rows = result["row"].astype(np.int64)
                vectors[rows] = result["vector"]
                done[rows] = True
                on_batch(rows.tolist(), result["vector"])
            if not done.all():
                raise RuntimeError(f"Ray returned {int(done.sum())} of {len(texts)} vectors")
            self.report.update(nodes=nodes, cpus=cpus, seconds=round(time.perf_counter() - started, 2))
            return vectors
        finally:
            ray.shutdown()


def ray_compute(
    address: str, config: BuildConfig, log: Callable[[str], None], option: str = "--ray"
) -> RayCompute:
    """The Ray embedding step for `embed_texts(compute=...)`; see `check_ray` for what to call first.
    `option` names where the address came from in messages (`--ray` or `ATLAS_RAY_ADDRESS`)."""
    _import_ray(option)
    return RayCompute(address, config, log, option)


def check_ray(address: str, option: str = "--ray") -> None:
    """Ray is installed and a cluster answers at `address`: checked before a build does any work,
    also when every vector is cached and Ray would not be asked (the manifest would record it)."""
    _import_ray(option)
    _check_reachable(address, option)


def _import_ray(option: str = "--ray"):
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise UserError(
            f"{option} needs Ray: pip install -r requirements-ray.txt (on this machine and every node)"
        ) from None
    return ray


def _check_reachable(address: str, option: str = "--ray", timeout: float = 5.0) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local" and the like: Ray resolves them
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UserError(
            f"{option} {address}: cannot connect to a Ray cluster ({exc.strerror or exc})"
        ) from None


def _connect(ray, address: str, option: str = "--ray") -> None:
    """Join the cluster, shipping this `pipeline` package (the workers need no checkout)."""
    _check_reachable(address, option)
    package = str(Path(__file__).resolve().parents[1])
    env = dict(WORKER_ENV)
    try:
        ray.init(
            address=address,
            runtime_env={"py_modules": [package], "env_vars": env},
            logging_level="ERROR",
            log_to_driver=False,
            configure_logging=True,
        )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{option} {address}: cannot connect to a Ray cluster ({message})") from None
