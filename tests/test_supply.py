"""Supply chain (issue 24): what the wheel carries, what src/ imports, where bundled data comes from."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTICES = ROOT / "THIRD-PARTY-NOTICES.md"


def test_every_package_src_imports_is_declared_and_every_declared_one_is_used() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check-imports.py")], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == ""


def test_the_wheel_carries_the_license_the_notices_and_every_bundled_file_they_name(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "THIRD-PARTY-NOTICES.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "LICENSES", source / "LICENSES")
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("agent_quiver-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    licenses = sorted(n.split("/licenses/", 1)[1] for n in names if ".dist-info/licenses/" in n)
    assert licenses == ["LICENSE", "LICENSES/Apache-2.0.txt", "LICENSES/MIT-tiktoken.txt", "THIRD-PARTY-NOTICES.md"]
    bundled = sorted(n for n in names if n.startswith("quiver/") and Path(n).suffix not in (".py", ".typed", ".json"))
    assert bundled == [
        "quiver/_search/data/english-words.txt.gz",
        "quiver/_search/data/minilm-tokenizer.json.gz",
        "quiver/data/o200k_base.tiktoken.gz",
    ]
    text = NOTICES.read_text(encoding="utf-8")
    for name in bundled:
        assert f"## `{name}`" in text, f"{name} has no section in THIRD-PARTY-NOTICES.md"
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in metadata


def test_the_english_word_list_is_the_extract_of_the_tokenizer_vocabulary_the_notices_describe() -> None:
    data = ROOT / "src" / "quiver" / "_search" / "data"
    vocab = json.loads(gzip.decompress((data / "minilm-tokenizer.json.gz").read_bytes()))["model"]["vocab"]
    words = gzip.decompress((data / "english-words.txt.gz").read_bytes()).decode("utf-8").split("\n")
    extract = sorted(w for w in vocab if w.isascii() and w.isalpha() and w.islower() and len(w) >= 4)
    assert [w for w in words if w] == extract
    assert f"the {len(extract):,} entries" in NOTICES.read_text(encoding="utf-8")
