"""A warm `quiver compile` (quiver.commands._warm): it builds only what changed, and its output, messages and
exit code are those of a cold compile of the same inputs into a fresh copy of the project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli

AGENTS = ["browser-tester", "ops", "release-notes", "researcher"]
OUT = "build/quiver"


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["compile", *args, "--project", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def files(root: Path, out: str = OUT) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / out).rglob("*")) if p.is_file()}


@pytest.fixture
def warm(demo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo, with quiver's caches (and so the compile state) on, as a user has them."""
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    return demo


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the agents whose manifest a compile builds, in order."""
    from quiver.commands import compile as cmd

    ids: list[str] = []
    real = cmd.build_manifest

    def spy(resolved: object, *args: object, **kwargs: object) -> object:
        ids.append(resolved.agent.id)  # type: ignore[attr-defined]
        return real(resolved, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cmd, "build_manifest", spy)
    return ids


def cold(root: Path, target: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """A compile of a fresh copy of the project's inputs (no output, no cache, no state) at `target`."""
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("build", ".quiver", "out"))
    with monkeypatch.context() as patch:
        patch.setenv("QUIVER_NO_CACHE", "1")
        return run(target, *args)


def assert_as_cold(root: Path, got: tuple[int, str, str], expected: tuple[int, str, str], cold_root: Path) -> None:
    """The warm run's outputs, report, problems and exit code are the cold run's (on stderr all but the lines
    that say what each wrote or removed)."""
    assert files(root) == files(cold_root)
    assert got[0] == expected[0] and got[1] == expected[1]
    assert problems(got[2]) == problems(expected[2])


def problems(err: str) -> list[str]:
    return [line for line in err.splitlines()[:-1] if not line.startswith("removed: ")]


def test_a_warm_compile_reads_builds_and_writes_nothing_and_says_so(
    warm: Path, built: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from quiver.commands import compile as cmd

    first = run(warm)
    assert first[0] == 0 and first[2].strip() == "wrote 5 file(s) to build/quiver/"
    assert sorted(built) == AGENTS
    stats = {rel: os.stat(warm / rel) for rel in files(warm)}
    loads: list[Path] = []
    real = cmd.load_project
    monkeypatch.setattr(cmd, "load_project", lambda root, **kw: loads.append(root) or real(root, **kw))
    built.clear()
    code, out, err = run(warm)
    assert (code, err.strip()) == (0, "build/quiver/ is up to date: 5 file(s) unchanged, none written")
    assert out == first[1] and "total (4 agents)" in out  # the budget table, as the first run printed it
    assert built == [] and loads == []
    after = {rel: os.stat(warm / rel) for rel in files(warm)}
    assert {r: (s.st_ino, s.st_mtime_ns) for r, s in after.items()} == {
        r: (s.st_ino, s.st_mtime_ns) for r, s in stats.items()
    }
    code, _, err = run(warm, "--check")
    assert (code, err.strip(), built) == (0, "5 manifest file(s) up to date", [])


def _edit(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def _write(rel: str, text: str) -> Callable[[Path], None]:
    def write(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")

    return write


def _delete(rel: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).unlink()


def _lock_tokens(root: Path) -> None:
    path = root / "quiver.lock.json"
    lock = json.loads(path.read_text(encoding="utf-8"))
    entry = next(e for e in lock["servers"]["git"]["tools"] if e["tool"]["name"] == "git_status")
    entry["tokens"] += 7
    path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")


def _new_agent(root: Path) -> None:
    text = (root / ".github/agents/release-notes.agent.md").read_text(encoding="utf-8")
    (root / ".github/agents/writer.agent.md").write_text(text.replace("name: Release notes", "name: Writer"))


SKILL = "---\nname: release-check\ndescription: Check a release before it ships.\n---\nRun the checks.\n"
WEATHER = '{"mcpServers": {"weather": {"type": "stdio", "command": "uvx", "args": ["weather-mcp"]}}}\n'
CASES: dict[str, tuple[Callable[[Path], None], tuple[str, ...], list[str]]] = {
    # what changes: (the change, compile options, the agents built again)
    "agent file": (_edit(".claude/agents/ops.md", "description:", "description: Changed."), (), ["ops"]),
    "quiver.toml": (_edit("quiver.toml", "threshold = 30", "threshold = 3"), (), AGENTS),
    "host setting": (_write("quiver.toml", "[hosts.claude-code]\nenable_tool_search = false\n"), (), AGENTS),
    ".mcp.json": (_edit(".mcp.json", "GitHub: repositories", "GitHub repositories"), (), AGENTS),
    ".vscode/mcp.json": (_edit(".vscode/mcp.json", "Read, write, move and search", "Read and write"), (), AGENTS),
    "lock": (_lock_tokens, (), AGENTS),
    "skill": (_edit(".claude/skills/triage/SKILL.md", "description: Triage", "description: Sort"), (), AGENTS),
    "new skill": (_write(".claude/skills/release-check/SKILL.md", SKILL), (), AGENTS),
    "new agent file": (_new_agent, (), ["writer"]),
    "deleted agent file": (_delete(".github/agents/researcher.agent.md"), (), []),
    "deleted output": (_delete(f"{OUT}/ops.json"), (), ["ops"]),
    "edited output": (_write(f"{OUT}/researcher.json", "{}\n"), (), ["researcher"]),
    "deleted index": (_delete(f"{OUT}/index.json"), (), []),
    "--host": (lambda root: None, ("--host", "claude-code"), AGENTS),
    "--emit": (lambda root: None, ("--emit", "openai"), AGENTS),
}

RESTORED = ("deleted output", "edited output", "deleted index")  # the compile writes back what was there


@pytest.mark.parametrize("case", list(CASES))
def test_a_change_rebuilds_what_it_changes_and_the_output_is_a_cold_compiles(
    case: str, warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change, options, rebuilt = CASES[case]
    assert run(warm, "-q")[0] == 0
    before = files(warm)
    change(warm)
    built.clear()
    got = run(warm, "-q", *options)
    assert sorted(built) == rebuilt
    assert ("removed: build/quiver/researcher.json" in got[2]) == (case == "deleted agent file")
    assert_as_cold(warm, got, cold(warm, tmp_path / "cold", monkeypatch, "-q", *options), tmp_path / "cold")
    # each change of an input shows in the output (a digest that missed it would leave the old bytes)
    assert (files(warm) == before) == (case in RESTORED)
    built.clear()
    assert run(warm, "-q", *options)[2].strip().endswith("none written") and built == []


def test_a_new_mcp_config_file_is_an_input(
    warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config file that did not exist (Copilot CLI's mcp-config.json) defines a server an agent names."""
    _edit(".github/agents/researcher.agent.md", '"tavily/*"', '"tavily/*", "weather/*"')(warm)
    run(warm, "-q")
    before = files(warm)
    _write("mcp-config.json", WEATHER)(warm)
    built.clear()
    got = run(warm, "-q")
    assert sorted(built) == AGENTS and files(warm)[f"{OUT}/researcher.json"] != before[f"{OUT}/researcher.json"]
    assert_as_cold(warm, got, cold(warm, tmp_path / "cold", monkeypatch, "-q"), tmp_path / "cold")


def test_quivers_environment_and_version_are_inputs(
    warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import quiver
    import quiver.compile

    run(warm, "-q")
    monkeypatch.delenv("QUIVER_CHECK_OUTPUT")
    built.clear()
    run(warm, "-q")
    assert sorted(built) == AGENTS
    monkeypatch.setattr(quiver, "__version__", "9.9.9")
    monkeypatch.setattr(quiver.compile, "__version__", "9.9.9")
    built.clear()
    got = run(warm, "-q")
    assert sorted(built) == AGENTS
    assert json.loads((warm / OUT / "ops.json").read_text())["generator"] == "quiver 9.9.9"
    assert_as_cold(warm, got, cold(warm, tmp_path / "cold", monkeypatch, "-q"), tmp_path / "cold")


def test_report_options_reprint_the_report_without_building(
    warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(warm, "-q")
    for options in ((), ("--format", "json"), ("-q",)):
        built.clear()
        got = run(warm, *options)
        assert built == [] and got[2].strip().endswith("none written")
        target = tmp_path / f"cold{len(options)}{options[-1] if options else ''}"
        assert_as_cold(warm, got, cold(warm, target, monkeypatch, *options), target)
    assert "total (4 agents)" in run(warm)[1]


def test_a_warm_compile_repeats_the_problems_and_the_exit_code(
    warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _edit(".claude/agents/ops.md", "mcp__git", "mcp__git, mcp__nosuch")(warm)
    (warm / ".github/agents/broken.agent.md").write_bytes(b"---\nname: \xff\n---\n")
    first = run(warm, "-q")
    assert first[0] == 2 and "broken.agent.md" in first[2]
    built.clear()
    got = run(warm, "-q")
    assert built == [] and got[2].strip().endswith("none written")
    assert got[2].splitlines()[:-1] == first[2].splitlines()[:-1] and got[0] == first[0]
    assert_as_cold(warm, got, cold(warm, tmp_path / "cold", monkeypatch, "-q"), tmp_path / "cold")


def test_check_builds_only_what_changed_and_names_it(warm: Path, built: list[str]) -> None:
    run(warm, "-q")
    _edit(".github/agents/release-notes.agent.md", "Keep a Changelog", "plain")(warm)
    (warm / OUT / "ops.json").unlink()
    built.clear()
    code, _, err = run(warm, "--check")
    assert code == 1 and sorted(built) == ["ops", "release-notes"]
    assert [line for line in err.splitlines() if line.startswith("stale:")] == [
        "stale: build/quiver/ops.json",
        "stale: build/quiver/release-notes.json",
    ]


def test_a_file_changed_while_compile_reads_it_is_built_again_next_time(
    warm: Path, built: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digests are taken before the files are read: an edit in between leaves a state that no longer
    matches, so the next compile builds that agent again rather than trusting a manifest of the old text."""
    from quiver.commands import compile as cmd

    real = cmd.load_project
    edit = _edit(".claude/agents/ops.md", "description:", "description: Edited meanwhile.")

    def late(root: Path, **kwargs: object) -> object:
        edit(root)
        return real(root, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(cmd, "load_project", late)
        run(warm, "-q")
    built.clear()
    got = run(warm, "-q")
    assert built == ["ops"]
    assert_as_cold(warm, got, cold(warm, tmp_path / "cold", monkeypatch, "-q"), tmp_path / "cold")


def test_no_cache_leaves_no_state_and_reads_none(demo: Path, built: list[str]) -> None:
    from quiver.sources.compile_state import STATE_FILE

    run(demo, "-q")
    run(demo, "-q")
    assert not (demo / STATE_FILE).exists() and sorted(built) == sorted(AGENTS * 2)


PLUGIN = {"name": "kit", "agents": ["./more/"], "skills": ["./skills"]}
PLUGIN_AGENT = "---\nname: helper\ndescription: Helps.\ntools: Read, mcp__git\n---\nHelp.\n"
PROBE = """
import json, os, sys
from pathlib import Path

root = Path(sys.argv[1]).resolve()
seen = {"opened": set(), "listed": set()}

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        seen["opened"].add(os.path.realpath(os.fsdecode(args[0])))
    elif event in ("os.listdir", "os.scandir") and args and args[0] is not None:
        seen["listed"].add(os.path.realpath(os.fsdecode(args[0])))

from quiver.commands import _warm
from quiver.commands import compile as cmd

sys.addaudithook(hook)
inputs = _warm.inputs_of(root, None, (), None)
digested = dict(seen)
seen = {"opened": set(), "listed": set()}
cmd.build(root)
def project(paths):
    out = []
    for p in paths:
        rel = os.path.relpath(p, root)
        if not rel.startswith(("../", "build/", ".quiver/cache/")):  # outside, the outputs, the caches
            out.append(rel)
    return sorted(out)
print(json.dumps({
    "hashed": sorted(inputs.files),
    "opened": project(seen["opened"]),
    "listed": project(seen["listed"]),
    "listed_by_digest": project(digested["listed"]),
}))
"""


def test_every_file_compile_reads_is_digested_and_every_folder_it_lists_is_listed_first(warm: Path) -> None:
    """An audit hook sees every file a compile opens and every folder it lists: each project file it opens is one
    the inputs digest hashed, and each folder it lists was listed by the digest's discovery too (a new file
    there changes the digest)."""
    (warm / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    _write("tools/kit/.claude-plugin/plugin.json", json.dumps(PLUGIN))(warm)
    _write("tools/kit/agents/fixer.md", PLUGIN_AGENT)(warm)
    _write("tools/kit/more/helper.md", PLUGIN_AGENT)(warm)
    _write("tools/kit/skills/pack/SKILL.md", SKILL)(warm)
    _write(".github/skills/notes/SKILL.md", SKILL.replace("release-check", "notes"))(warm)
    _write("extra/servers.mcp.json", WEATHER)(warm)
    _write("quiver.toml", 'mcp_configs = ["extra/*.mcp.json"]\n[[agents]]\npath = "docs/*.md"\n')(warm)
    _write("docs/writer.md", PLUGIN_AGENT.replace("helper", "writer"))(warm)
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples/demo/.quiver", warm / ".quiver")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(warm)], capture_output=True, text=True, env=env, check=True
    )
    seen = json.loads(probe.stdout)
    assert {"docs/writer.md", "tools/kit/more/helper.md", "tools/kit/skills/pack/SKILL.md"} <= set(seen["hashed"])
    assert "extra/servers.mcp.json" in seen["hashed"] and "tools/kit/agents/fixer.md" in seen["hashed"]
    assert sorted(set(seen["opened"]) - set(seen["hashed"])) == []
    assert sorted(set(seen["listed"]) - set(seen["listed_by_digest"])) == []
