"""Write `pipeline/naming/areas.npz`: the research areas' vectors under the packaged int8 model.

python -m pipeline.commands.area_vectors     # after editing pipeline/naming/areas.tsv; commit both
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from pipeline.embedding.embed import cache_name_for, load_encoder
from pipeline.naming.areas import AREA_VECTORS, AREAS_FILE, area_texts, read_areas


def write_shipped_vectors() -> Path:
    """Embed `areas.tsv` with the packaged int8 model and write `areas.npz` (float16)."""
    encoder = load_encoder("onnx-int8")
    vectors = np.asarray(encoder.encode(area_texts(read_areas())), dtype=np.float16)
    np.savez(
        AREA_VECTORS,
        vectors=vectors,
        encoder=np.array(cache_name_for("onnx-int8", None)),  # the name a build's embedding report gives
        tsv_sha256=np.array(hashlib.sha256(AREAS_FILE.read_bytes()).hexdigest()),
    )
    return AREA_VECTORS


if __name__ == "__main__":
    print(f"wrote {write_shipped_vectors()}")
