from __future__ import annotations

from pathlib import Path

import pytest
from report_cases import make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the small project the hand-built findings point into."""
    return make_project(tmp_path)
