"""The hosts that run agents, one module each, and which host runs an agent (docs/hosts.md).

`host(id)` gives a host's record; `infer(agent)` the host an agent's file is written for; `choose` applies
quiver.toml's `host`, `[agent_hosts]` and the command line's `--host` on top.
"""

from __future__ import annotations

from collections.abc import Mapping

from quiver.host_ids import AGENT_HOSTS, HOST_IDS
from quiver.hosts import anthropic_api, claude_code, copilot_cli, github_coding_agent, openai_api, vscode
from quiver.hosts.base import Host
from quiver.hosts.model import HostId
from quiver.model import Agent

HOSTS: Mapping[HostId, Host] = {
    h.id: h
    for h in (
        copilot_cli.HOST,
        vscode.HOST,
        claude_code.HOST,
        github_coding_agent.HOST,
        anthropic_api.HOST,
        openai_api.HOST,
    )
}


def host(ident: HostId | str) -> Host:
    return HOSTS[HostId(ident)]


def infer(agent: Agent) -> tuple[HostId, str]:
    """The host an agent file is written for, and why (where and how it is defined)."""
    if agent.kind == "claude":
        return HostId.CLAUDE_CODE, "a Claude Code subagent"
    if agent.kind == "chatmode":
        return HostId.VSCODE, "a VS Code chat mode"
    if agent.target == "vscode":
        return HostId.VSCODE, "`target: vscode`"
    if agent.target == "github-copilot":
        return HostId.GITHUB_CODING_AGENT, "`target: github-copilot`"
    return HostId.COPILOT_CLI, "a Copilot custom agent without `target` (read by Copilot CLI, VS Code and github.com)"


def choose(
    agent: Agent, project_host: str | None, agent_hosts: Mapping[str, str], forced: str | None = None
) -> tuple[HostId, str]:
    """The host quiver resolves an agent for: `--host`, then `[agent_hosts]`, then `host`, then `infer`."""
    if forced:
        return HostId(forced), f"`--host {forced}`"
    if agent.id in agent_hosts:
        return HostId(agent_hosts[agent.id]), f"`[agent_hosts] {agent.id}` in the quiver config"
    if project_host:
        return HostId(project_host), "`host` in the quiver config"
    return infer(agent)


__all__ = ["AGENT_HOSTS", "HOSTS", "HOST_IDS", "Host", "HostId", "choose", "host", "infer"]
