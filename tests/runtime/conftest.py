"""Fixtures for the gateway tests: the example project compiled afresh, process helpers, env for upstreams.

Helpers are handed out as fixtures (`procs`, `upstream_env`): test directories here have no `__init__`,
so a test module cannot import this conftest by name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SERVE_PROJECT = ROOT / "examples" / "serve"
DEMO_MANIFEST = ROOT / "examples" / "demo" / "build" / "quiver" / "researcher.json"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def serve_manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/serve compiled into a fresh directory (never the committed build output)."""
    root = tmp_path_factory.mktemp("serve") / "project"
    shutil.copytree(SERVE_PROJECT, root, ignore=shutil.ignore_patterns("build", ".quiver"))
    result = CliRunner().invoke(cli, ["compile", "--project", str(root), "--quiet"])
    assert result.exit_code == 0, result.output
    manifest = root / "build" / "quiver" / "assistant.json"
    assert manifest.is_file()
    return manifest


@pytest.fixture
def demo_manifest(tmp_path: Path) -> Path:
    """The committed demo manifest (115 tools of npx/remote servers that cannot run here; none need to), in a
    copy of the demo project, so the gateway's usage records and ledger never land in the source tree."""
    assert DEMO_MANIFEST.is_file()
    demo = DEMO_MANIFEST.parents[2]
    copy = tmp_path / "demo"
    shutil.copytree(demo, copy, ignore=shutil.ignore_patterns(".quiver"))
    return copy / DEMO_MANIFEST.relative_to(demo)


@pytest.fixture
def repo_root() -> Path:
    """Where the example manifests' relative server paths resolve: upstreams run in this directory."""
    return ROOT


def _upstream_env(**extra: str) -> dict[str, str]:
    """Our environment plus the interpreter the manifest's `${PYTHON:-python3}` references should run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTES_", "CALC_"))}
    return {**env, "PYTHON": sys.executable, **extra}


class Procs:
    """Process inspection through /proc."""

    @staticmethod
    def children_of(pid: int) -> list[int]:
        """Live (non-zombie) processes whose parent is `pid`."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[1] == pid and stat[0] != "Z":
                found.append(int(entry))
        return found

    @staticmethod
    def alive(pid: int) -> bool:
        stat = _stat(pid)
        return stat is not None and stat[0] != "Z"

    @staticmethod
    def with_argument(text: str) -> list[int]:
        """Live processes with `text` as one of their arguments (a unique path identifies a gateway)."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            if text in cmdline.split("\0") and Procs.alive(int(entry)):
                found.append(int(entry))
        return found


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


@pytest.fixture
def procs() -> Procs:
    assert Path("/proc/self/stat").exists(), "these tests inspect processes through /proc (Linux)"
    return Procs()


@pytest.fixture
def upstream_env() -> Callable[..., dict[str, str]]:
    return _upstream_env


@pytest.fixture
def no_leaked_children(procs: Procs) -> Iterator[None]:
    """Fails the test when it leaves a child process of the test runner behind."""
    before = set(procs.children_of(os.getpid()))
    yield
    leaked = [pid for pid in set(procs.children_of(os.getpid())) - before if procs.alive(pid)]
    assert not leaked, f"leftover child processes: {leaked}"


@pytest.fixture
def gateways() -> Iterator[list[subprocess.Popen[bytes]]]:
    """`quiver serve` processes a test starts (appended here): killed if still running, pipes closed."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
