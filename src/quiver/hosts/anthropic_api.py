"""The Anthropic Messages API, for `quiver compile --emit anthropic`: the caller decides what to defer.

Docs: platform.claude.com, "Tool search tool": `defer_loading: true` per tool, at least one tool not
deferred, up to 10,000 tools, `tool_search_tool_regex_20251119` (Python `re`, patterns up to 200 characters)
and `tool_search_tool_bm25_20251119` return 3-5 `tool_reference` blocks. Function names match
`^[a-zA-Z0-9_-]{1,64}$`. quiver's gateway rules (hosts/gateway.py) decide the `defer_loading` flags.
"""

from __future__ import annotations

from quiver.hosts.base import Host, api_behind_gateway
from quiver.hosts.copilot_cli import builtin as copilot_builtin
from quiver.hosts.model import HostId

DOCS = "docs: platform.claude.com tool-search-tool"


HOST = Host(
    id=HostId.ANTHROPIC_API,
    name="Anthropic API",
    version="",
    basis=DOCS,
    names_key="api",
    description_limit=None,
    settings=frozenset({"model"}),
    builtin=copilot_builtin,
    split=None,
    behind_gateway=api_behind_gateway,
)
