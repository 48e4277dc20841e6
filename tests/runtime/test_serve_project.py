"""`quiver serve` keeps the ledger and the usage records together, under the manifest's project (or
`-C`), whatever the working directory; and it refuses to start without a `${input:...}` it needs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

pytestmark = pytest.mark.anyio
TEST_S = 45.0


def _compiled(repo_root: Path, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(repo_root / "examples" / "serve", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)], check=True, capture_output=True
    )
    return project


async def test_the_ledger_and_usage_records_land_in_the_manifests_project(
    repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    project = _compiled(repo_root, tmp_path)
    manifest = project / "build" / "quiver" / "assistant.json"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "quiver", "serve", str(manifest)], env=upstream_env(), cwd=str(repo_root)
    )
    with anyio.fail_after(TEST_S), (tmp_path / "stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("calc__multiply", {"a": 2, "b": 3})
    assert (project / ".quiver" / "ledger.db").is_file()
    assert (project / ".quiver" / "usage" / "assistant.jsonl").is_file()
    assert (project / ".quiver" / "usage" / ".gitignore").read_text(encoding="utf-8").endswith("*\n")
    listed = subprocess.run(  # the README's `quiver ledger list -C PROJECT` finds the gateway's calls
        [sys.executable, "-m", "quiver", "ledger", "list", "-C", str(project), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert [a["tool"] for a in json.loads(listed.stdout)] == ["multiply"]


def test_serve_refuses_to_start_without_a_required_input_naming_each_one(tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    demo = Path(__file__).resolve().parents[2] / "examples" / "demo"
    source = demo / "build" / "quiver" / "browser-tester.json"  # a VS Code agent: it reads .vscode/mcp.json
    data = json.loads(source.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "quiver", "serve", "-C", str(tmp_path), str(manifest)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("QUIVER_INPUT_")},
    )
    assert done.returncode == 2, done.stderr
    assert "variable `${input:workspace}` is not set" in done.stderr
    # where the project defines the server (as `quiver snapshot` says it), which manifest, and the fix
    (line,) = [x for x in done.stderr.splitlines() if "${input:workspace}" in x]
    at = next(i for i, x in enumerate((demo / ".vscode/mcp.json").read_text().splitlines(), 1) if '"filesystem"' in x)
    where = f"{tmp_path / '.vscode' / 'mcp.json'}:{at}:5"
    assert line.startswith(f"error: {where}: server `filesystem` (manifest {manifest})")
    assert line.endswith("(export QUIVER_INPUT_WORKSPACE=... before running quiver)")
    assert "export QUIVER_INPUT_WORKSPACE=" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_named_tool_of_an_unsnapshotted_server_says_which_server_and_what_fixes_it(tmp_path: Path) -> None:
    agents = tmp_path / ".github" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.agent.md").write_text("---\ndescription: d\ntools: ['notes/list_notes']\n---\nbody\n")
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"notes": {"command": "srv", "tools": ["*"]}}}\n')
    compiled = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "-C", str(tmp_path)], capture_output=True, text=True
    )
    assert compiled.returncode == 0
    assert "including the named `notes/list_notes`" in compiled.stderr
    assert "run `quiver snapshot --server notes`" in compiled.stderr
    explained = subprocess.run(
        [sys.executable, "-m", "quiver", "explain", "-C", str(tmp_path), "a", "notes/list_notes"],
        capture_output=True,
        text=True,
    )
    assert explained.returncode == 2
    assert "server `notes` has no catalog in quiver.lock.json" in explained.stderr
    assert "run `quiver snapshot --server notes`, then `quiver compile`" in explained.stderr
    manifest = tmp_path / "build" / "quiver" / "a.json"
    argv = ["-m", "quiver", "serve", "--no-ledger", str(manifest)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
    with anyio.fail_after(TEST_S), (tmp_path / "stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("notes__list_notes", {})
    assert result.is_error
    message = " ".join(getattr(c, "text", "") for c in result.content)
    assert "server `notes` had no catalog in the lock file" in message, message
    assert "run `quiver snapshot --server notes`, then `quiver compile`" in message


@pytest.mark.parametrize("existing", [None, "scratch/\n"])
async def test_the_ledger_files_are_git_ignored_and_routes_yaml_is_not(
    repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path, existing: str | None
) -> None:
    project = _compiled(repo_root, tmp_path)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".quiver").mkdir()
    (project / ".quiver" / "routes.yaml").write_text("cases: []\n", encoding="utf-8")
    if existing is not None:  # the user's own ignores are kept, the ledger's line added
        (project / ".quiver" / ".gitignore").write_text(existing, encoding="utf-8")
    manifest = project / "build" / "quiver" / "assistant.json"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "quiver", "serve", str(manifest)], env=upstream_env(), cwd=str(repo_root)
    )
    with anyio.fail_after(TEST_S), (tmp_path / "stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("calc__multiply", {"a": 2, "b": 3})
    assert (project / ".quiver" / "ledger.db").is_file()
    names = [".quiver/ledger.db", ".quiver/ledger.db-wal", ".quiver/ledger.db-shm", ".quiver/routes.yaml"]
    ignored = subprocess.run(
        ["git", "check-ignore", *names], cwd=project, capture_output=True, text=True, check=False
    ).stdout.split()
    assert ignored == names[:3]
    gitignore = (project / ".quiver" / ".gitignore").read_text(encoding="utf-8")
    assert gitignore.splitlines()[-1] == "ledger.db*"
    assert existing is None or gitignore.startswith(existing)
    status = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=project, capture_output=True, text=True)
    assert " .quiver/routes.yaml" in status.stdout and "ledger.db" not in status.stdout
