"""Worker processes a build starts (its texts read, its 2-D layout made): how they start, and what a
worker that stops becomes."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from pipeline import WorkerFailed


def cores() -> int:
    """How many cores this process may run on."""
    return len(os.sched_getaffinity(0))


def spawn_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` processes, spawned, not forked: the build process has threads (ONNX,
    Numba) a fork would copy mid-flight."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))


@contextmanager
def failing_as(doing: str) -> Iterator[None]:
    """A worker process that stops within it (killed: out of memory, say) is one `WorkerFailed`
    saying what it was `doing`; nothing was written or stored."""
    try:
        yield
    except BrokenProcessPool:
        raise WorkerFailed(
            f"a worker process {doing} stopped before it finished (out of memory?); nothing was written"
        ) from None
