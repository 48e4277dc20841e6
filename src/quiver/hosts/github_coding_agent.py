"""GitHub Copilot's coding agent on github.com (`target: github-copilot`).

Not run here. Its docs (github/docs `reference/custom-agents-configuration.md`, "MCP server configuration")
describe the `tools` allow-list, the `mcp-servers` key and the built-in `github` and `playwright` servers,
and no tool search: quiver counts every tool it is given as up front.
"""

from __future__ import annotations

from quiver.hosts.base import Host
from quiver.hosts.copilot_cli import builtin as copilot_builtin
from quiver.hosts.model import Decision, HostId, HostSplit, SplitJob, ToolSearch

DOCS = "docs: github/docs reference/custom-agents-configuration.md (no tool search documented)"


def split(job: SplitJob) -> HostSplit:
    count = len(job.tools)
    reason = "the coding agent on github.com documents no tool search: every tool is up front"
    decision = Decision(0, "all-up-front", reason, None, HostId.GITHUB_CODING_AGENT.value, DOCS)
    return HostSplit(
        tool_search=ToolSearch(False, reason, count, 0, ""),
        loads=tuple(("preloaded", decision) for _ in job.tools),
        builtins_up=tuple(dict.fromkeys(name for b in job.builtins for name in (b.sent or (b.canonical,)))),
    )


def behind_gateway() -> str:
    return "the coding agent sends quiver serve's tools up front, like every MCP tool"


HOST = Host(
    id=HostId.GITHUB_CODING_AGENT,
    name="Copilot coding agent (github.com)",
    version="",
    basis=DOCS,
    names_key="copilot_cli",
    description_limit=None,
    settings=frozenset({"model"}),
    builtin=copilot_builtin,
    split=split,
    behind_gateway=behind_gateway,
    builtin_servers=frozenset({"github", "playwright"}),
)
