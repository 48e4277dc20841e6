"""Golden tests of the host model: every recorded scenario (tests/fixtures/hosts/) compiled by the real CLI
for its host gives the split the real host sent.
(The CLI runs in process, once a scenario: other tests run it as a subprocess.)

Each scenario is a small project recorded against Claude Code 2.1.332 or Copilot CLI 1.0.102
(scripts/record-hosts.py; docs/hosts.md). Here each is copied, given the scenario's model and
environment as quiver.toml host settings (`[hosts.<id>]`; the main session as `sessions`), compiled with
`quiver compile`, and every recorded agent's manifest is compared with the recording: which MCP tools are
up front and which deferred (by their model-facing names, none dropped, none added), which of the host's
own tools it sends up front and which it defers, and its search tool.

`auto` scenarios were recorded with the endpoint answering `count_tokens` with a set count, on one side
of the host's threshold: the count quiver estimates for these small catalogs is not that count, so the
test gives quiver a context window that puts its own estimate on the recorded side, and checks the rest
of the split, and separately that the recorded side is the one quiver's threshold gives the set count.
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.hosts import claude_code

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "hosts"
SCENARIOS = sorted(p.parent for p in FIXTURES.glob("*/scenario.json"))
NAMES_KEY = {"claude-code": "claude", "copilot-cli": "copilot_cli"}
PLACEHOLDERS = {"DeferredToolPlaceholder"}


def runs(path: Path) -> list[tuple[str | None, dict[str, Any]]]:
    data = json.loads((path / "recorded.json").read_text(encoding="utf-8"))
    return [(data["agent"], data), *data.get("agents", {}).items()]


def cases() -> list[tuple[Path, str | None]]:
    return [(path, agent) for path in SCENARIOS for agent, record in runs(path) if record.get("sent", True)]


def _setting(scenario: dict[str, Any]) -> str:
    return str((scenario.get("env") or {}).get("ENABLE_TOOL_SEARCH", "")).strip().lower()


def _defers(record: dict[str, Any]) -> bool:
    return any(name.startswith("mcp__") for name in record["deferred"]) or record["search_tool"] is not None


@functools.cache
def compiled(path: Path) -> tuple[dict[str, Any], dict[str | None, dict[str, Any]]]:
    """The scenario compiled by the CLI (in process, once a scenario) under its host, model and environment:
    manifests by agent (None: the host's main session)."""
    tmp_path = Path(tempfile.mkdtemp(prefix="quiver-golden-"))
    try:
        return _compiled(tmp_path, path)
    finally:
        shutil.rmtree(tmp_path)


def _compiled(tmp_path: Path, path: Path) -> tuple[dict[str, Any], dict[str | None, dict[str, Any]]]:
    scenario = json.loads((path / "scenario.json").read_text(encoding="utf-8"))
    host = scenario["host"]
    project = tmp_path / path.name
    shutil.copytree(path, project, ignore=shutil.ignore_patterns("recorded.json", "build"))
    lines = [f'sessions = ["{host}"]', f"[hosts.{host}]"]
    if host == "copilot-cli":
        lines.append('provider = "anthropic"')  # recorded offline, through a custom provider of type anthropic
        lines.append("offline = true")
    if scenario.get("model"):
        lines.append(f'model = "{scenario["model"]}"')
    setting = _setting(scenario)
    if host == "claude-code" and setting:
        lines.append(f'enable_tool_search = "{setting}"')
        if setting.startswith("auto"):  # put quiver's own estimate on the recorded side of its threshold
            above = dict(runs(path))[scenario.get("agent")]
            lines.append(f"context_window = {1 if _defers(above) else 10**8}")
    (project / "quiver.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = CliRunner().invoke(cli, ["compile", "--project", str(project), "--format", "json", "--host", host])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    out = project / "build" / "quiver"
    manifests: dict[str | None, dict[str, Any]] = {}
    for file in out.rglob("*.json"):
        if file.name != "index.json":
            data = json.loads(file.read_text(encoding="utf-8"))
            ident = data["agent"]["id"]
            manifests[None if ident == f"@{host}" else ident] = data
    return scenario, manifests


@pytest.mark.parametrize(("path", "agent"), cases(), ids=[f"{p.name}:{a or 'session'}" for p, a in cases()])
def test_quiver_splits_each_agent_as_its_host_sent_it(path: Path, agent: str | None) -> None:
    scenario, manifests = compiled(path)
    record = dict(runs(path))[agent]
    assert agent in manifests, f"quiver compiled no manifest for {agent or 'the main session'}"
    manifest = manifests[agent]
    key = NAMES_KEY[scenario["host"]]
    mcp = {t["names"][key]: t["load"] for t in manifest["tools"]}
    sent = [n for n in record["up_front"] if n not in PLACEHOLDERS]
    recorded_mcp = {n for n in [*sent, *record["deferred"]] if n in mcp or n.startswith("mcp__")}
    assert set(mcp) == recorded_mcp, "the MCP tools quiver carries are not the ones the host sent"
    assert {n for n, load in mcp.items() if load == "preloaded"} == {n for n in sent if n in mcp}
    assert {n for n, load in mcp.items() if load == "deferred"} == {n for n in record["deferred"] if n in mcp}
    host = manifest["host"]
    assert host["id"] == scenario["host"] and host["version"] == record["host_version"]
    if scenario.get("launch") == "flag" and agent is not None:
        return  # `claude --agent NAME`: the agent runs as the main session, with its built-ins (quiver: a subagent)
    assert set(host["builtins_up_front"]) == {n for n in sent if n not in mcp}
    assert set(host["builtins_deferred"]) == {n for n in record["deferred"] if n not in mcp}
    assert host["search_tool"] == record["search_tool"]


AUTO = [p for p in SCENARIOS if _setting(json.loads((p / "scenario.json").read_text())).startswith("auto")]


@pytest.mark.parametrize("path", AUTO, ids=[p.name for p in AUTO])
def test_claude_codes_auto_threshold_is_the_recorded_one(path: Path) -> None:
    scenario = json.loads((path / "scenario.json").read_text(encoding="utf-8"))
    setting = _setting(scenario)
    percent = claude_code.auto_percent(setting)
    assert percent is not None
    threshold = claude_code.auto_threshold(percent, claude_code.CONTEXT_WINDOW)
    record = dict(runs(path))[scenario.get("agent")]
    assert _defers(record) == (scenario["count_tokens"] >= threshold), scenario.get("about")


def test_the_recordings_cover_both_hosts_a_multi_agent_project_each_and_the_threshold_edges() -> None:
    names = {p.name for p in SCENARIOS}
    assert {"claude-multi", "copilot-multi", "copilot-main-13", "copilot-main-14"} <= names
    assert {"copilot-agent-named27", "copilot-agent-named28", "claude-auto5-above", "claude-auto5-below"} <= names
    assert len(cases()) >= 50
