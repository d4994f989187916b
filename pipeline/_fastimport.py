"""Cold-start savers for the topic stage: cached Numba JIT and a BERTopic import without torch.

Every new process would otherwise spend ~20-50 s compiling UMAP/PyNNDescent/HDBSCAN kernels and
~8 s importing torch and transformers that BERTopic only needs for models we never ask it to load.
"""

from __future__ import annotations

import os
import sys
import warnings


def enable_numba_cache(cache_root: str) -> None:
    """Make every `numba.jit`/`njit` kernel compiled from here on cache itself on disk.

    UMAP and PyNNDescent mark only a few kernels `cache=True`; the rest are compiled again in
    every process. Must run before `umap`, `pynndescent` or `hdbscan` is imported.
    """
    os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(cache_root, "numba"))
    import numba

    if getattr(numba, "_atlas_cached", False):
        return

    def caching(decorator):
        def wrapper(*args, **kwargs):
            kwargs.setdefault("cache", True)
            if args and not callable(args[0]) and _called_from(PYNNDESCENT):
                args = ()  # its signatures: compiled when first called, if ever
            return decorator(*args, **kwargs)

        return wrapper

    numba.njit, numba.jit = caching(numba.njit), caching(numba.jit)
    numba._atlas_cached = True
    # Kernels that cannot be cached (closures) just compile as before; their warning is noise.
    warnings.filterwarnings("ignore", category=numba.NumbaWarning)


# UMAP imports PyNNDescent, whose kernels are declared with their types and so compiled as it is
# imported: 12 of the 14 CPU s of importing UMAP and HDBSCAN into an empty JIT cache (a first build),
# for a neighbour search the build never asks for (it passes UMAP an exact neighbour graph). Declared
# without their types, they compile only if called.
PYNNDESCENT = "pynndescent"


def _called_from(package: str) -> bool:
    """Whether the decorator's caller (two frames up: the wrapper's caller) is in `package`."""
    caller = sys._getframe(2).f_globals.get("__name__", "")
    return caller == package or caller.startswith(package + ".")


def import_topic_libraries(cache_root: str):
    """Import BERTopic, UMAP and HDBSCAN quickly; returns `(BERTopic, ClassTfidfTransformer, UMAP, HDBSCAN)`."""
    enable_numba_cache(cache_root)
    import hdbscan  # noqa: F401  (compiled under the cache patch)
    import sklearn  # noqa: F401  (scipy must see the real torch state while importing)
    import umap

    # Both UMAP runs get an exact neighbour graph without a search index (`neighbours.neighbour_graph`);
    # UMAP warns that `transform` is then unavailable, which nothing here calls.
    warnings.filterwarnings("ignore", message=r"precomputed_knn\[2\]", category=UserWarning)
    if "bertopic" not in sys.modules:
        # BERTopic imports these optionally (for embedding backends and LLM representations we do
        # not use); marking them absent for the import makes it skip them, as on a lightweight install.
        blocked = [m for m in ("sentence_transformers", "transformers", "torch") if m not in sys.modules]
        for name in blocked:
            sys.modules[name] = None
        try:
            import bertopic  # noqa: F401
        except ImportError:
            for name in blocked:
                sys.modules.pop(name, None)
            for name in [m for m in sys.modules if m.startswith("bertopic")]:
                del sys.modules[name]
            import bertopic  # noqa: F401
        finally:
            for name in blocked:
                if sys.modules.get(name, 0) is None:
                    del sys.modules[name]
    from bertopic import BERTopic
    from bertopic.vectorizers import ClassTfidfTransformer

    return BERTopic, ClassTfidfTransformer, umap.UMAP, hdbscan.HDBSCAN
