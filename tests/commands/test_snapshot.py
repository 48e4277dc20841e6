"""`quiver snapshot` against our own MCP servers run as real subprocesses, and imports from real data."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.sources.lock import parse_lock

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT / "examples" / "servers" / "notes_server.py"


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--project", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


@pytest.fixture
def notes_project(tmp_path: Path) -> Path:
    config = {
        "mcpServers": {
            "notes": {
                "type": "stdio",
                "command": sys.executable,
                "args": [str(NOTES)],
                "env": {"NOTES_SCHEMA_VARIANT": "${QUIVER_TEST_VARIANT:-1}", "NOTES_PAGE_SIZE": "2"},
                "tools": ["*"],
            }
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    return tmp_path


def test_snapshot_captures_every_page_and_writes_a_byte_stable_lock(notes_project: Path) -> None:
    code, err = run(notes_project, "snapshot")
    assert code == 0, err
    assert "snapshotted `notes`: 6 tools" in err
    first = (notes_project / "quiver.lock.json").read_bytes()
    lock = parse_lock(first.decode(), "quiver.lock.json")
    notes = lock.servers["notes"]
    assert [t.name for t in notes.tools] == sorted(t.name for t in notes.tools)
    assert len(notes.tools) == 6 and notes.server_info["name"] == "notes"
    assert notes.protocol_version and notes.instructions
    assert all(t.tokens and t.tokens > 10 for t in notes.tools)
    assert all(t.location.line > 0 for t in notes.tools)
    assert run(notes_project, "snapshot")[0] == 0
    assert (notes_project / "quiver.lock.json").read_bytes() == first


def test_snapshot_check_passes_then_names_the_drifted_tool(
    notes_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(notes_project, "snapshot")[0] == 0
    before = (notes_project / "quiver.lock.json").read_bytes()
    code, err = run(notes_project, "snapshot", "--check")
    assert code == 0, err
    monkeypatch.setenv("QUIVER_TEST_VARIANT", "2")
    code, err = run(notes_project, "snapshot", "--check")
    assert code == 1
    assert "notes: tool `create_note` changed (sha256 differs from its pin)" in err
    assert (notes_project / "quiver.lock.json").read_bytes() == before  # --check writes nothing


def test_snapshot_of_an_unknown_server_is_a_usage_error(notes_project: Path) -> None:
    code, err = run(notes_project, "snapshot", "--server", "nots")
    assert code == 2 and "no configured server named `nots`" in err and "notes" in err


def test_snapshot_of_a_server_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    config = {"mcpServers": {"gone": {"command": "definitely-not-a-command-xyz", "args": [], "tools": ["*"]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    code, err = run(tmp_path, "snapshot", "--timeout", "10")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "definitely-not-a-command-xyz" in err
    assert not (tmp_path / "quiver.lock.json").exists()


def test_import_of_the_github_snapshot_directory(corpus: Path, tmp_path: Path) -> None:
    snaps = corpus / "github-mcp-server" / "v0.30.0"
    code, err = run(tmp_path, "snapshot", "--import", str(snaps), "--server", "github")
    assert code == 0, err
    lock = parse_lock((tmp_path / "quiver.lock.json").read_text(), "quiver.lock.json")
    tools = lock.servers["github"].tools
    assert len(tools) == 101
    assert {"add_issue_comment", "create_issue", "search_code"} <= {t.name for t in tools}


def test_import_keeps_other_servers_and_reuses_their_token_counts(corpus: Path, tmp_path: Path) -> None:
    run(tmp_path, "snapshot", "--import", str(corpus / "catalogs" / "time.json"), "--server", "time")
    first = parse_lock((tmp_path / "quiver.lock.json").read_text(), "l").servers["time"]
    run(tmp_path, "snapshot", "--import", str(corpus / "catalogs" / "git.json"), "--server", "git")
    lock = parse_lock((tmp_path / "quiver.lock.json").read_text(), "l")
    assert set(lock.servers) == {"git", "time"}
    assert [(t.name, t.sha256, t.tokens) for t in lock.servers["time"].tools] == [
        (t.name, t.sha256, t.tokens) for t in first.tools
    ]


def test_several_imports_in_one_call_lock_what_the_same_imports_one_by_one_lock(corpus: Path, tmp_path: Path) -> None:
    catalogs = corpus / "catalogs"
    pairs = [("time", catalogs / "time.json"), ("git", catalogs / "git.json"), ("fetch", catalogs / "fetch.json")]
    one_by_one, together = tmp_path / "one", tmp_path / "together"
    for root in (one_by_one, together):
        root.mkdir()
    for server, path in pairs:
        assert run(one_by_one, "snapshot", "--import", str(path), "--server", server)[0] == 0
    args = [arg for server, path in pairs for arg in ("--import", str(path), "--server", server)]
    code, err = run(together, "snapshot", *args)
    assert code == 0, err
    assert [line.split(" tools of ")[1] for line in err.splitlines()] == [
        "`time` into quiver.lock.json", "`git` into quiver.lock.json", "`fetch` into quiver.lock.json",
    ]  # fmt: skip
    assert (together / "quiver.lock.json").read_bytes() == (one_by_one / "quiver.lock.json").read_bytes()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--import", "a.json", "--import", "b.json", "--server", "a"], "one --server NAME per source (2 source(s)"),
        (["--import", "a.json", "--server", "a", "--import", "b.json", "--server", "a"], "--server a is named for"),
        (["--import", "a.json", "--server", "a", "--import", "x.json", "--server", "x"], "no tool list found"),
    ],
    ids=["a-name-short", "a-name-twice", "a-broken-second-source"],
)
def test_a_bad_import_of_several_writes_nothing(tmp_path: Path, args: list[str], says: str) -> None:
    tool = {"name": "ping", "inputSchema": {"type": "object"}}
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps({"tools": [tool]}))
    (tmp_path / "x.json").write_text('{"nothing": 1}')
    with contextlib.chdir(tmp_path):
        code, err = run(tmp_path, "snapshot", *args)
    assert code == 2 and says in err, err
    assert not (tmp_path / "quiver.lock.json").exists()


def test_import_of_a_file_without_tools_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"nothing": 1}')
    code, err = run(tmp_path, "snapshot", "--import", str(tmp_path / "x.json"), "--server", "s")
    assert code == 2 and "no tool list found" in err


# A stdio server written by hand (no SDK, which would refuse to serve these tools): JSON-RPC lines, the
# handshake, and a tools/list whose first two tools break MCP's Tool schema, as a published release of a
# popular server did (inputSchema without "type").
BAD_TOOLS_SERVER = """
import json, sys
tools = [
    {"name": "read_file", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {}}},
    {"name": "write_file", "inputSchema": {"properties": {"path": {"type": "string"}}}},
    {"name": "fine", "inputSchema": {"type": "object"}},
]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bad-tools", "version": "1.0.0"}}
    elif message["method"] == "tools/list":
        result = {"tools": tools}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_a_server_whose_tools_break_the_mcp_schema_is_named_with_the_tools_and_the_problem(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "server.py").write_text(BAD_TOOLS_SERVER, encoding="utf-8")
    servers = {"bad": {"command": sys.executable, "args": [str(tmp_path / "server.py")]}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "quiver", "snapshot", "--project", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()  # one line, no pydantic dump
    assert line.startswith("error: .mcp.json:1:") and "server `bad`" in line, line
    assert 'serves 2 tool(s) that are not valid MCP: inputSchema.type is missing (MCP requires "object"): ' in line
    assert "tools[0], tools[1] (" in line and "quiver snapshot --import FILE --server NAME" in line
    assert not (tmp_path / "quiver.lock.json").exists()  # no part of a server is locked


def test_a_snapshot_tries_every_server_names_each_broken_one_and_locks_the_good_ones(tmp_path: Path) -> None:
    """A real `quiver snapshot` process: a crashing, a missing and a hanging server beside a good one."""
    import re
    import subprocess

    servers = {
        "crashy": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]},
        "missing": {"command": "definitely-not-a-command-xyz"},
        "hangs": {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)"], "timeout": 2000},
        "good": {"command": sys.executable, "args": [str(NOTES)]},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    (tmp_path / "old.json").write_text(json.dumps({"tools": [{"name": "old_tool", "inputSchema": {"type": "object"}}]}))
    code, err = run(tmp_path, "snapshot", "--import", str(tmp_path / "old.json"), "--server", "crashy")
    assert code == 0, err
    done = subprocess.run(
        # no --timeout: it would bound the good server's start too (3 s were too few on a loaded machine)
        [sys.executable, "-m", "quiver", "snapshot", "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "snapshotted `good`: 6 tools"
    config_lines = (tmp_path / ".mcp.json").read_text().splitlines()
    named = {}
    for line in lines[1:]:
        found = re.match(r"error: \.mcp\.json:(\d+):(\d+): .*?server `(\w+)`", line)
        assert found, line
        assert f'"{found[3]}"' in config_lines[int(found[1]) - 1]  # the position is the server's definition
        named[found[3]] = line
    assert sorted(named) == ["crashy", "hangs", "missing"]
    assert "closed the connection during initialize" in named["crashy"]
    assert "is installed, executable and on PATH" in named["missing"]
    assert "within 2 s" in named["hangs"] and "raise the timeout" in named["hangs"]
    lock = parse_lock((tmp_path / "quiver.lock.json").read_text(), "quiver.lock.json")
    assert sorted(lock.servers) == ["crashy", "good"]  # the broken server keeps what the lock held for it
    assert [t.name for t in lock.servers["crashy"].tools] == ["old_tool"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
