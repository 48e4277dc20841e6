"""ROUTE003 and Claude Code plugins: one agent shipped unchanged in two plugins is one agent, not two that
compete; the same name with a different prompt still competes. Through the real CLI on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

AGENT = "---\nname: context-manager\ndescription: Manages context across long multi-agent workflows.\n---\n{body}\n"


def _plugin(root: Path, plugin: str, body: str) -> None:
    (root / plugin / ".claude-plugin").mkdir(parents=True)
    (root / plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": plugin}), encoding="utf-8")
    (root / plugin / "agents").mkdir()
    (root / plugin / "agents" / "context-manager.md").write_text(AGENT.format(body=body), encoding="utf-8")


def _route003(root: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "quiver", "lint", "--select", "ROUTE003", "--format", "json", "-C", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return [f["message"] for f in json.loads(done.stdout)]


def test_one_agent_copied_into_two_plugins_is_not_a_routing_conflict(tmp_path: Path) -> None:
    _plugin(tmp_path, "orchestration", "Keep a summary of decisions.")
    _plugin(tmp_path, "context-management", "Keep a summary of decisions.")
    assert _route003(tmp_path) == []


def test_the_same_name_and_description_with_different_prompts_still_competes(tmp_path: Path) -> None:
    _plugin(tmp_path, "orchestration", "Keep a summary of decisions.")
    _plugin(tmp_path, "context-management", "Delete stale memory files every hour.")
    (message,) = _route003(tmp_path)
    assert "`context-management:context-manager` and `orchestration:context-manager`" in message
