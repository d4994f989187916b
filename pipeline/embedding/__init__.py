"""Embedding abstracts: the packaged model's one path, the int8 ONNX model (built once per
machine) and its encoder, the torch encoder, the on-disk cache by text hash, and the Ray Data job."""
