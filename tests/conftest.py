from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("QUIVER_NO_CACHE", "1")  # tests never leave caches in the source tree

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("QUIVER_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
DEMO = ROOT / "examples" / "demo"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh copy of the demo repository (agents, configs, lock) without build outputs."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("build", ".quiver"))
    return target


@pytest.fixture
def corpus() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus is missing at {CORPUS} (set QUIVER_SHARED)"
    return CORPUS
