"""The OpenAI Responses API, for `quiver compile --emit openai`: the caller decides what to defer.

Docs: developers.openai.com "Tool search" and the Agents SDK: `tool_search` hosted or client-side,
`defer_loading` on functions, namespaces and MCP servers (gpt-5.4 and later); the model still sees the
names and descriptions of searchable items; `tool_choice` cannot name a deferred-only tool. Function names
match `^[a-zA-Z0-9_-]{1,64}$`. quiver's gateway rules (hosts/gateway.py) decide the `defer_loading` flags.
"""

from __future__ import annotations

from quiver.hosts.base import Host, api_behind_gateway
from quiver.hosts.copilot_cli import builtin as copilot_builtin
from quiver.hosts.model import HostId

DOCS = "docs: developers.openai.com tools-tool-search"


HOST = Host(
    id=HostId.OPENAI_API,
    name="OpenAI API",
    version="",
    basis=DOCS,
    names_key="api",
    description_limit=None,
    settings=frozenset({"model"}),
    builtin=copilot_builtin,
    split=None,
    behind_gateway=api_behind_gateway,
)
