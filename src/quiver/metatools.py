"""The gateway's meta-tools: the only schemas a model carries for the deferred long tail.

Shared by compile (to count their tokens) and the runtime (to serve them). Descriptions are short,
stable and discriminating; changing them changes every manifest's budget.
"""

from __future__ import annotations

from quiver.model import JSON

_STR = {"type": "string"}
# describe_tool and call_tool take a tool by the `name` search_tools returned, or by `server` and `tool`
_NAME = _STR

META_TOOLS: tuple[dict[str, JSON], ...] = (
    {
        "name": "search_tools",
        "description": "Find tools by what you want to do. Returns name, server, tool and a one-line description; "
        "pass the name to describe_tool or call_tool.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The task in plain words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_servers",
        "description": "List the MCP servers behind this gateway with what each is for and its tool count.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "list_tools",
        "description": "List one server's tools: names and one-line descriptions, no schemas.",
        "inputSchema": {
            "type": "object",
            "properties": {"server": {**_STR, "description": "Server name from list_servers"}},
            "required": ["server"],
            "additionalProperties": False,
        },
    },
    {
        "name": "describe_tool",
        "description": "Show one tool's full input and output schema; the tool becomes callable directly.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": _NAME, "server": _STR, "tool": _STR},
            "additionalProperties": False,
        },
    },
    {
        "name": "call_tool",
        "description": "Call any tool of any server by name with its arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": _NAME,
                "server": _STR,
                "tool": _STR,
                "arguments": {"type": "object"},
                "idempotency_key": {
                    **_STR,
                    "description": "Reuse the same key to retry safely: a repeated call returns the first outcome",
                },
            },
            "additionalProperties": False,
        },
    },
)
META_TOOL_NAMES = tuple(str(t["name"]) for t in META_TOOLS)
