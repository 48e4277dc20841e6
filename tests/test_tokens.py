from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from quiver import tokens
from quiver.tokens import PATTERN, SPECIAL_TOKENS, VOCABULARY, count_tools_payload, counter

EXPECTED = {"github": 19_124, "notion": 17_165, "playwright": 7_425}


def test_token_counts_of_the_real_catalogs_match_o200k_base_exactly(corpus: Path) -> None:
    assert counter().name.startswith("o200k_base")
    total = 0
    for path in sorted((corpus / "catalogs").glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        n = count_tools_payload(catalog["tools"])
        if catalog["server"] in EXPECTED:
            assert n == EXPECTED[catalog["server"]], catalog["server"]
        total += n
    assert total == 50_370


def test_the_counter_is_tiktokens_own_o200k_base_on_the_shipped_vocabulary(tmp_path: Path) -> None:
    # tiktoken's own definition of o200k_base (pattern, special tokens, the hash it pins for the file),
    # fed the shipped vocabulary through its documented cache directory: no network is touched.
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(gzip.decompress(VOCABULARY.read_bytes()))
    texts = ["hello world", "<|endoftext|> as text", "naïve café 東京 🙂", " \r\n\t  x", "a" * 5000, "12345678"]
    code = (
        "import json, sys, tiktoken; enc = tiktoken.get_encoding('o200k_base'); "
        "texts = json.loads(sys.stdin.read()); "
        "print(json.dumps([enc._pat_str, enc._special_tokens, [len(enc.encode_ordinary(t)) for t in texts]]))"
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(texts), capture_output=True, text=True, check=True, env=env
    )
    pattern, special, counts = json.loads(out.stdout)
    assert pattern == PATTERN
    assert special == SPECIAL_TOKENS
    assert counts == [counter().count(t) for t in texts]
    assert counts[1] > 1  # special-token text counts as text, it does not raise


def test_a_vocabulary_that_is_not_the_pinned_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "o200k_base.tiktoken.gz"
    broken.write_bytes(gzip.compress(gzip.decompress(tokens.VOCABULARY.read_bytes())[:-10]))
    monkeypatch.setattr(tokens, "VOCABULARY", broken)
    with pytest.raises(tokens.VocabularyError, match="not the pinned o200k_base vocabulary"):
        tokens.mergeable_ranks()
