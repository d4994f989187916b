"""Fitting the map: UMAP + HDBSCAN topics (on all papers or a sample), the 2-D layout, themes,
topic ids kept across rebuilds (lineage), quality figures, and placing new papers by neighbours."""
