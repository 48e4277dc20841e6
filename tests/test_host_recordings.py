"""The committed host recordings (tests/fixtures/hosts/*/recorded.json) against their scenarios, and the
recording endpoint (bench/_host_recorder.py) answering as the hosts need, over real HTTP on loopback.

The recordings are made by scripts/record-hosts.py with the real hosts; the golden tests that compare
quiver's split with them live beside the host model. Here: every scenario is recorded, for its host and
model and every agent it names; each record is consistent with itself; and a record carries tool names
and counts only, never a host's own descriptions or prompts.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _host_record import FIXTURES, load_scenario, reminder, scenario_dirs  # noqa: E402
from _host_recorder import PINNED, PROBE, SPAWN_ID, Recorder, target  # noqa: E402

SCENARIOS = scenario_dirs()


def records(path: Path) -> dict[str | None, dict[str, Any]]:
    data = json.loads((path / "recorded.json").read_text(encoding="utf-8"))
    out: dict[str | None, dict[str, Any]] = {data["agent"]: data}
    out.update(data.get("agents", {}))
    return out


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_every_host_and_case_has_scenarios() -> None:
    hosts = {load_scenario(p).host for p in SCENARIOS}
    assert hosts == {"claude-code", "copilot-cli"}
    assert len(SCENARIOS) >= 40


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_recording_matches_its_scenario(path: Path) -> None:
    scenario = load_scenario(path)
    assert (path / "quiver.lock.json").is_file(), "run `quiver snapshot` in the scenario"
    assert (path / "recorded.json").is_file(), f"run scripts/record-hosts.py {scenario.name}"
    found = records(path)
    assert list(found) == list(scenario.runs)
    for agent, record in found.items():
        assert record["host"] == scenario.host
        assert record["host_version"] == PINNED[scenario.host]
        assert record["model"] == scenario.model
        assert record["agent"] == agent
        assert record["raw"]["mcp_failed"] == [], "a server did not connect: record the scenario again"
        if not record["sent"]:
            assert record["up_front"] == record["deferred"] == [] and record["model_sent"] is None
            continue
        up, deferred = record["up_front"], record["deferred"]
        assert up, "a host always sends some tools up front"
        assert deferred == sorted(deferred) and not set(up) & set(deferred)
        raw = record["raw"]
        assert up == [n for n in raw["tools"] if n not in raw["defer_loading"]]
        assert record["tokens"]["up_front"] == sum(raw["tool_tokens"][n] for n in up)
        assert (record["tokens"]["deferred_listing"] > 0) == bool(raw["reminder"])
        assert record["search_tool"] in (None, *up)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_recording_holds_names_and_counts_only(path: Path) -> None:
    """No host description, schema or prompt text: every string is a name, a model, a version or the
    scenario's own `about`-free fields (none has a space)."""
    data = json.loads((path / "recorded.json").read_text(encoding="utf-8"))
    texts = [s for s in strings(data) if " " in s or len(s) > 80]
    assert texts == []


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.headers["content-type"], answer.read()


def test_recorder_answers_and_spawns_the_subagent_once() -> None:
    tools = [{"name": "Agent"}, {"name": "Read"}]
    with Recorder(input_tokens=20_500, spawn="probe") as rec:
        kind, counted = post(rec.url + "/v1/messages/count_tokens?beta=true", {"tools": tools})
        assert json.loads(counted) == {"input_tokens": 20_500}
        first = {"model": "m", "stream": True, "tools": tools, "messages": [{"role": "user", "content": "hello"}]}
        kind, streamed = post(rec.url + "/v1/messages?beta=true", first)
        assert kind == "text/event-stream"
        events = [json.loads(line[6:]) for line in streamed.decode().splitlines() if line.startswith("data: ")]
        block = events[1]["content_block"]
        assert (block["type"], block["name"], block["id"]) == ("tool_use", "Agent", SPAWN_ID)
        assert json.loads(events[2]["delta"]["partial_json"])["subagent_type"] == "probe"
        sub = {"model": "m", "tools": [{"name": "Read"}], "messages": [{"role": "user", "content": PROBE}]}
        kind, plain = post(rec.url + "/v1/messages", sub)
        assert json.loads(plain)["content"] == [{"type": "text", "text": "ok"}]
        _, again = post(rec.url + "/v1/messages", {**first, "stream": False})
        assert json.loads(again)["stop_reason"] == "end_turn"  # spawned once only
        found = target(rec.requests, subagent=True)
        assert found is not None and found.body["tools"] == [{"name": "Read"}]
        assert target(rec.requests, subagent=False) is rec.requests[1]
        assert [r.is_count_tokens for r in rec.requests] == [True, False, False, False]


def test_recorder_refuses_to_proxy_anywhere() -> None:
    with Recorder() as rec:
        proxy = urllib.request.ProxyHandler({"http": rec.url})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.build_opener(proxy).open("http://example.com/x", timeout=30)
        refused.value.close()
        assert refused.value.code == 403
        assert rec.refused == ["http://example.com/x"]


def test_reminders_are_read_to_their_end() -> None:
    claude = (
        "The following deferred tools are now available via ToolSearch. Load them first:\n"
        "WebFetch\nmcp__alpha__a1\n\nAvailable agent types for the Agent tool:\n- claude: anything"
    )
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": claude}]}]}
    assert reminder(body, "claude-code") == (["WebFetch", "mcp__alpha__a1"], "WebFetch\nmcp__alpha__a1")
    copilot = (
        "<system_reminder>\nIMPORTANT: The tools listed below are deferred — search first.\n\n"
        "alpha MCP server. Tools prefixed with `alpha-`:\n- a1\n- a2\n</system_reminder>"
    )
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": copilot}]}]}
    names, listing = reminder(body, "copilot-cli")
    assert names == ["alpha-a1", "alpha-a2"] and listing.endswith("- a2")
    assert FIXTURES.is_dir()


STAND_IN_HOST = """#!{python}
import json, os, subprocess, sys, time, urllib.request
if sys.argv[1:] == ["--version"]:
    print("2.1.332 (Claude Code)")
    sys.exit(0)
# a child that leaves the host's process group, as an MCP server may, and says so in PIDFILE
pidfile = os.environ["PIDFILE"]
code = "import os, sys, time; os.setsid(); open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); "
code += "os.rename(sys.argv[1] + '.tmp', sys.argv[1]); time.sleep(600)"
subprocess.Popen([sys.executable, "-c", code, pidfile])
while not os.path.exists(pidfile):
    time.sleep(0.01)
body = {{"model": "m", "tools": [{{"name": "Read"}}], "messages": [{{"role": "user", "content": "hello"}}]}}
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", json.dumps(body).encode(), {{"content-type": "application/json"}}
)
urllib.request.urlopen(request, timeout=30).read()
time.sleep(600)
"""


def test_run_host_returns_on_the_request_and_ends_every_process(tmp_path: Path) -> None:
    """A stand-in for Claude Code (the real one is not installed in CI): it starts a child that leaves its
    process group, sends its request, and would sleep; run_host returns on the request and ends both."""
    from _host_recorder import _live, host_version, run_host

    hosts = tmp_path / "hosts"
    binary = hosts / "node_modules" / ".bin" / "claude"
    binary.parent.mkdir(parents=True)
    binary.write_text(STAND_IN_HOST.format(python=sys.executable), encoding="utf-8")
    binary.chmod(0o755)
    project = tmp_path / "project"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    pidfile = tmp_path / "child.pid"
    assert host_version(hosts, "claude-code") == "2.1.332"
    run = run_host("claude-code", project, hosts, model="m", env={"PIDFILE": str(pidfile)})
    assert run.target is not None and run.target.body["tools"] == [{"name": "Read"}]
    assert run.refused == () and run.mcp_failed == ()
    assert _live([int(pidfile.read_text())]) == []
