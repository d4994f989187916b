"""Abstract Atlas offline pipeline: abstract files in, topic-map artifact folder out.

Where things live: `__main__` (CLI) -> `commands.build.build_map`, which calls the stages in order:
`ingest` -> `embedding.embed` -> `modelling.topics` (on all papers, or `modelling.sample_fit` on a
sample) -> `modelling.lineage` (ids kept across rebuilds) -> `modelling.themes` -> `modelling.layout`
-> `modelling.evaluate` -> `mapfolder.store` (the map folder: write, read; its lock `mapfolder.lock`).
`commands.add`/`modelling.place` put new papers on a map, `exports.export`/`exports.reading_list`
write it out. The full table is in docs/architecture.md.
"""

import os
import platform

__version__ = "0.1.0"

# The same inputs give the same map on every machine of a kind (AVX2 and AVX-512 alike). The
# numeric libraries pick code for the host CPU when they load: Numba compiles UMAP's and
# HDBSCAN's kernels for it, OpenBLAS picks a matrix kernel, NumPy dispatches its loops. Each picks
# a summation order of its own, UMAP's layout amplifies the last bit, and an AVX-512 machine drew
# other topics than an AVX2 one from the same vectors. So every x86-64 machine with AVX2 and FMA
# gets the same code: Numba for a generic x86-64, OpenBLAS's Haswell kernels, NumPy's AVX2 loops
# (benchmarks/DETERMINISM_RESULTS.md measures the cost). They must be set before NumPy or Numba
# is imported; `numeric_target()` says whether they were.
SAME_ON_EVERY_CPU = {
    "NUMBA_CPU_NAME": "generic",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}


def _has_avx2_and_fma() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx2", "fma"} <= flags
    except OSError:
        pass
    return False


if platform.machine() in ("x86_64", "AMD64") and _has_avx2_and_fma():
    for _name, _value in SAME_ON_EVERY_CPU.items():
        os.environ.setdefault(_name, _value)


class UserError(Exception):
    """A problem the user can fix (bad input file, bad option); shown as one `error:` line."""


class WorkerFailed(Exception):
    """A worker process the build started stopped (killed: out of memory, say): nothing is written,
    and the CLI says so in one `error:` line and exits 1."""


class UnreadableOutput(Exception):
    """A map a writer made that its own reader refuses (a bug, not the user's): nothing is replaced,
    and the CLI says so in one `error:` line and exits 1."""


def numeric_target() -> dict:
    """What code the numeric libraries run here, and whether it is the same on every CPU kind.

    Loads NumPy, Numba and threadpoolctl (the build has them); the manifest records the answer.
    """
    import numba
    import threadpoolctl
    from numpy._core._multiarray_umath import __cpu_features__ as features

    numpy_simd = next(
        (f for f in ("AVX512_SPR", "AVX512_ICL", "X86_V4", "X86_V3") if features.get(f)), "X86_V2"
    )
    openblas = sorted(
        {
            str(info.get("architecture"))
            for info in threadpoolctl.threadpool_info()
            if info["internal_api"] == "openblas"
        }
    )
    target = {
        "numba_cpu": str(numba.config.CPU_NAME or "host"),
        "numba_features": str(numba.config.CPU_FEATURES if numba.config.CPU_FEATURES is not None else "host"),
        "openblas": openblas,
        "numpy_simd": numpy_simd,
    }
    target["same_on_every_cpu"] = (
        target["numba_cpu"] == "generic"
        and target["numba_features"] == ""
        and all(kind == SAME_ON_EVERY_CPU["OPENBLAS_CORETYPE"] for kind in openblas)
        and numpy_simd in ("X86_V3", "X86_V2")
    )
    return target
