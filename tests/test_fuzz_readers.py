"""Fuzz every reader with mutated inputs (seeded: the same cases every run): a reader answers or raises a
QuiverError (one line, exit 2), never anything else (what the CLI reports as an internal error, exit 3).
A short run here; `python bench/fuzz.py` runs 10,000 cases and prints the figure. Then `lint` and
`compile` through the CLI on mutated projects, where every reader, resolver and rule meets the damage."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_inputs import READERS, mutate, read_case, seed_project
from quiver.cli import cli


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = seed_project(tmp_path_factory.mktemp("fuzz") / "project")
    done = subprocess.run([sys.executable, "-m", "quiver", "compile", "-q", "-C", str(root)], capture_output=True)
    assert (root / "build/quiver/ops.json").is_file(), done.stderr
    return root


@pytest.mark.parametrize("kind", sorted(READERS))
def test_every_reader_survives_mutated_input(project: Path, kind: str) -> None:
    originals: dict[str, bytes] = {}

    @fuzz(60)
    @given(st.integers(0, 2**32 - 1))
    def case(seed: int) -> None:
        failure = read_case(project, kind, seed, originals)
        assert failure is None, f"{kind} seed {seed}: {type(failure).__name__}: {failure}"

    case()


@fuzz(12)
@given(st.sampled_from(sorted(READERS)), st.integers(0, 2**32 - 1))
def test_lint_and_compile_never_exit_3_on_a_mutated_project(project: Path, kind: str, seed: int) -> None:
    rel = READERS[kind][0]
    path = project / rel
    original = path.read_bytes()
    path.write_bytes(mutate(original, random.Random(seed)))
    try:
        for command in ("lint", "compile"):
            result = CliRunner().invoke(cli, [command, "--project", str(project), "--out", str(project / "out")])
            assert result.exit_code in (0, 1, 2), f"{command} on {kind} seed {seed}:\n{result.output[-3000:]}"
            assert "internal error" not in result.output
    finally:
        path.write_bytes(original)
