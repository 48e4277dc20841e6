"""VS Code (GitHub Copilot Chat): how it loads a custom agent's or chat mode's tools.

Not run here (no screen, no VS Code): these rules encode its docs, microsoft/vscode-docs
`blogs/2026/04/24/solving-mcp-tool-overload.md` and the settings reference
(`github.copilot.chat.virtualTools.threshold`):
- On models that support tool search (Claude 4.5 and later, GPT-5.4 and later) about 30 core tools are sent
  first and the rest, every MCP tool among them, go out with `defer_loading`, found by a client-side
  embedding `tool_search`.
- On other models, above `virtualTools.threshold` tools (default and maximum 128, 0 turns it off) tools are
  grouped behind `activate_*` virtual tools; at most 128 tools go in one request.
- There is no per-server control over deferral (vscode #294055).
"""

from __future__ import annotations

import re

from quiver.hosts.base import Host
from quiver.hosts.copilot_cli import builtin as copilot_builtin
from quiver.hosts.model import Decision, HostId, HostSplit, SplitJob, ToolSearch
from quiver.model import JSON, Load

DOCS = "docs: vscode-docs blogs/2026/04/24/solving-mcp-tool-overload.md"
VIRTUAL_THRESHOLD = 128
MODELS = (
    r"claude[-_ ]?(sonnet|opus|haiku)[-_ ]?([5-9]|\d\d|4[-_.]?([5-9]|\d\d))",
    r"claude[-_ ]?([5-9]|\d\d|4[-_.]([5-9]|\d\d))[-_ ]?(sonnet|opus|haiku)",
    r"gpt-?(5\.([4-9]|\d\d)|([6-9]|\d\d)(\.\d+)?)",
)


def supports(model: str | None) -> bool:
    return model is None or any(re.search(p, model, re.IGNORECASE) for p in MODELS)


def _threshold(value: JSON) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= VIRTUAL_THRESHOLD:
        return value
    return VIRTUAL_THRESHOLD


def split(job: SplitJob) -> HostSplit:
    count = len(job.tools)
    host = HostId.VSCODE.value
    builtins = tuple(dict.fromkeys(name for b in job.builtins for name in (b.sent or (b.canonical,))))
    if supports(job.model):
        why = "unset" if job.model is None else f"`{job.model}`"
        ts = ToolSearch(count > 0, f"model {why} supports VS Code's tool search: MCP tools are deferred", count, 0, "")
        decision = Decision(
            0, "mcp-deferred", "an MCP tool: VS Code defers it behind its tool search", None, host, DOCS
        )
        load: Load = "deferred"
    else:
        threshold = _threshold(job.settings.get("virtual_tools_threshold"))
        total = count + len(builtins)
        active = threshold > 0 and total > threshold
        verb = ">" if active else "<="
        reason = f"model `{job.model}` has no tool search; {total} tools {verb} virtual-tools threshold {threshold}"
        ts = ToolSearch(active, reason, count, threshold, "tools", total)
        code, text = (
            ("virtual-tools", "grouped behind an `activate_*` virtual tool") if active else ("all-up-front", reason)
        )
        decision = Decision(0, code, text, None, host, DOCS)
        load = "deferred" if active else "preloaded"
    return HostSplit(
        tool_search=ts,
        loads=tuple((load, decision) for _ in job.tools),
        builtins_up=builtins,
        search_tool="tool_search" if ts.active and supports(job.model) else None,
    )


def behind_gateway() -> str:
    return "VS Code defers quiver serve's tools like any MCP server's on models with tool search"


HOST = Host(
    id=HostId.VSCODE,
    name="VS Code",
    version="",
    basis=DOCS,
    names_key="copilot_cli",
    description_limit=None,
    settings=frozenset({"model", "virtual_tools_threshold"}),
    builtin=copilot_builtin,
    split=split,
    behind_gateway=behind_gateway,
    builtin_servers=frozenset({"github"}),
    config_files=frozenset({".vscode/mcp.json", ".mcp.json"}),
    project_config=".vscode/mcp.json",
    config_basis="docs: vscode-docs agents/reference/mcp-configuration.md (.vscode/mcp.json, and .mcp.json)",
)
