"""Contract diff: what changed between two versions of an MCP server's tools, and whether callers break."""

from __future__ import annotations

from quiver.contract.diff import diff_agent_loads, diff_agent_tools, diff_catalogs, diff_tool
from quiver.contract.rules import CONTRACT_RULES
from quiver.contract.taxonomy import WAIVERS

__all__ = ["CONTRACT_RULES", "WAIVERS", "diff_agent_loads", "diff_agent_tools", "diff_catalogs", "diff_tool"]
