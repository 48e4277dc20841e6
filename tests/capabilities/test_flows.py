"""Toxic flows per agent, end to end through the CLI on the real catalogs (github, filesystem, fetch): who is
flagged and with which tools, what an override silences, what `explain --flows` and the manifest say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.sources.lock import ServerCatalog, render_lock

TRIAGE = "---\ndescription: Triages issues.\ntools: ['github/issue_read', 'github/get_file_contents', 'github/add_issue_comment']\n---\nTriage.\n"  # noqa: E501
RESEARCH = "---\ndescription: Researches.\ntools:\n  - fetch/fetch\n  - filesystem/read_text_file\n---\nRead.\n"
LOCAL = "---\ndescription: Reads files.\ntools: ['filesystem/read_text_file', 'filesystem/list_directory', 'read']\n---\nRead.\n"  # noqa: E501
DEFERRED = "---\ndescription: Everything on GitHub.\ntools: ['github/*']\n---\nWork.\n"


def project(root: Path, corpus: Path, agents: dict[str, str], config: str = "") -> Path:
    catalogs = []
    for name in ("github", "filesystem", "fetch"):
        data = json.loads((corpus / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))
        catalogs.append(
            ServerCatalog(name, {"name": name, "description": data["description"]}, None, None, tuple(data["tools"]))
        )
    root.mkdir()
    (root / "quiver.lock.json").write_text(render_lock(catalogs, {}), encoding="utf-8")
    servers = {c.name: {"type": "stdio", "command": c.name, "tools": ["*"]} for c in catalogs}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (root / ".github" / "agents").mkdir(parents=True)
    for name, text in agents.items():
        (root / ".github" / "agents" / f"{name}.agent.md").write_text(text, encoding="utf-8")
    if config:
        (root / "quiver.toml").write_text(config, encoding="utf-8")
    return root


def lint(root: Path, *select: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["lint", "-C", str(root), "--select", ",".join(select), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return list(json.loads(result.stdout))


def test_the_github_agent_is_flagged_with_the_three_tools_named_and_the_local_reader_is_not(
    corpus: Path, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE, "local": LOCAL})
    found = lint(root, "SEC101", "SEC102", "SEC103")
    assert [(f["rule"], f["agent"]) for f in found] == [("SEC101", "triage")]
    message = found[0]["message"]
    for tool in ("github/issue_read", "github/get_file_contents", "github/add_issue_comment"):
        assert f"`{tool}`" in message
    assert (found[0]["file"], found[0]["line"]) == (".github/agents/triage.agent.md", 3)
    assert "drop `github/add_issue_comment` (its only exfiltration tool)" in found[0]["hint"]


def test_deferred_tools_count_deferral_is_not_authorization(corpus: Path, tmp_path: Path) -> None:
    root = project(tmp_path / "p", corpus, {"all": DEFERRED})
    (flow,) = lint(root, "SEC101")
    assert "deferred" in flow["message"]  # 86 github tools: tool search defers them, the flow stays


def test_an_override_silences_one_flow_and_an_unused_one_is_reported(corpus: Path, tmp_path: Path) -> None:
    config = (
        '[tools."fetch/fetch"]\n'
        "capabilities = { exfiltration = false }  # behind an egress proxy that allows two hosts\n\n"
        '[tools."github/add_issue_coment"]\n'
        "capabilities = { exfiltration = false }\n"
    )
    before = project(tmp_path / "before", corpus, {"triage": TRIAGE, "research": RESEARCH})
    assert sorted(f["agent"] for f in lint(before, "SEC101")) == ["research", "triage"]
    after = project(tmp_path / "after", corpus, {"triage": TRIAGE, "research": RESEARCH}, config)
    found = lint(after, "SEC101", "SEC104")
    assert [(f["rule"], f.get("agent")) for f in found] == [("SEC101", "triage"), ("SEC104", None)]
    unused = next(f for f in found if f["rule"] == "SEC104")
    assert (unused["file"], unused["line"]) == ("quiver.toml", 5)
    assert "server `github` has no tool `add_issue_coment`" in unused["message"]


def test_a_bad_override_value_is_a_config_error_naming_its_line(corpus: Path, tmp_path: Path) -> None:
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE}, "[servers.github]\ncapabilities = { private = false }\n")
    result = CliRunner().invoke(cli, ["compile", "-C", str(root)])
    assert result.exit_code == 2
    assert "quiver.toml:2" in result.stderr and "one of untrusted_input" in result.stderr
    assert "Traceback" not in result.stderr


def test_explain_flows_draws_the_flow_and_gives_every_label_its_reason(corpus: Path, tmp_path: Path) -> None:
    config = "[servers.github]\ncapabilities = { untrusted_input = false }\n"
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE, "research": RESEARCH}, config)
    text = CliRunner().invoke(cli, ["explain", "research", "--flows", "-C", str(root)])
    assert text.exit_code == 0, text.output
    assert "fetch/fetch (untrusted input)  ->  filesystem/read_text_file (private data)  ->  fetch/fetch" in text.stdout
    assert "parameter `url`" in text.stdout and "break it: " in text.stdout
    silenced = CliRunner().invoke(cli, ["explain", "triage", "--flows", "--format", "json", "-C", str(root)])
    document = json.loads(silenced.stdout)
    assert document["flows"] == []
    read = next(t for t in document["tools"] if t["name"] == "github/issue_read")
    assert [c["label"] for c in read["cleared"]] == ["untrusted_input"]
    assert read["cleared"][0]["origin"] == "override" and "quiver.toml:2" in read["cleared"][0]["reason"]
    refused = CliRunner().invoke(cli, ["explain", "triage", "github/issue_read", "--flows", "-C", str(root)])
    assert refused.exit_code == 2 and "--flows" in refused.stderr


def test_the_manifest_records_labels_and_flows_and_the_budget_page_marks_the_agent(
    corpus: Path, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE, "local": LOCAL}, "[flows]\nenforce = true\n")
    assert CliRunner().invoke(cli, ["compile", "-C", str(root)]).exit_code == 0
    manifest = json.loads((root / "build" / "quiver" / "triage.json").read_text(encoding="utf-8"))
    assert manifest["flows"]["enforce"] is True
    (flow,) = manifest["flows"]["found"]
    assert flow["witness"]["exfiltration"] == "github/add_issue_comment"
    comment = next(t for t in manifest["tools"] if t["name"] == "add_issue_comment")
    assert comment["capabilities"] == ["exfiltration"]
    local = json.loads((root / "build" / "quiver" / "local.json").read_text(encoding="utf-8"))
    assert local["flows"]["found"] == []
    page = tmp_path / "budget.html"
    assert CliRunner().invoke(cli, ["budget", "-C", str(root), "--html", str(page)]).exit_code == 0
    html = page.read_text(encoding="utf-8")
    assert html.count('class="flow toxic"') == 2  # the table row and the agent's section, for triage only
    assert "quiver explain triage --flows" in html and "quiver explain local --flows" not in html


@pytest.mark.parametrize("agent", ["triage", "research"])
def test_flows_are_the_same_run_after_run(corpus: Path, tmp_path: Path, agent: str) -> None:
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE, "research": RESEARCH})
    runs = [CliRunner().invoke(cli, ["explain", agent, "--flows", "-C", str(root)]).stdout for _ in range(2)]
    assert runs[0] == runs[1] and runs[0]


def test_the_label_cache_gives_the_same_manifests_and_a_garbled_one_is_recomputed(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    root = project(tmp_path / "p", corpus, {"triage": TRIAGE, "research": RESEARCH})
    manifest = root / "build" / "quiver" / "triage.json"
    cache = root / ".quiver" / "cache" / "capabilities.json"
    assert CliRunner().invoke(cli, ["compile", "-C", str(root)]).exit_code == 0
    first = manifest.read_bytes()
    entries = json.loads(cache.read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 5  # the tools the two agents carry, each once
    assert CliRunner().invoke(cli, ["compile", "-C", str(root)]).exit_code == 0
    assert manifest.read_bytes() == first
    garbled = {k: "not a list" for k in entries}
    cache.write_text(json.dumps({"version": json.loads(cache.read_text())["version"], "entries": garbled}))
    assert CliRunner().invoke(cli, ["compile", "-C", str(root)]).exit_code == 0
    assert manifest.read_bytes() == first
