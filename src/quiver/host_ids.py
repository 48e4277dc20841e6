"""The ids of the hosts quiver resolves agents for: a bottom-layer enum, so that the command line can offer
`--host` choices without importing the host model (`quiver.hosts.model` re-exports it)."""

from __future__ import annotations

from enum import StrEnum


class HostId(StrEnum):
    """The hosts quiver resolves agents for (the `host` values of quiver.toml, `--host`, the manifest)."""

    COPILOT_CLI = "copilot-cli"
    VSCODE = "vscode"
    CLAUDE_CODE = "claude-code"
    GITHUB_CODING_AGENT = "github-coding-agent"
    ANTHROPIC_API = "anthropic-api"
    OPENAI_API = "openai-api"


HOST_IDS = tuple(h.value for h in HostId)
AGENT_HOSTS = tuple(
    h.value for h in (HostId.COPILOT_CLI, HostId.VSCODE, HostId.CLAUDE_CODE, HostId.GITHUB_CODING_AGENT)
)  # the hosts that run agent files (the model APIs do not)
