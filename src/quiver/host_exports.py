"""Host API `tools` arrays (`quiver compile --emit anthropic|openai`): the manifest's load decision as each
API takes it, and what each host shows the model up front.

Anthropic: one function per tool (`defer_loading` when deferred) after the BM25 tool-search tool; a
deferred tool costs nothing until found. OpenAI (Responses API): the `tool_search` tool, then one
`namespace` per server holding that server's functions (`strict` true only when the input schema fits
strict mode, see `strict_schema`); OpenAI still shows the model the name and description of a deferred
function, so its budget counts them. A server whose name, or one of whose tool names, is not a valid API
name (`[A-Za-z0-9_-]{1,64}`) keeps flat `server__tool` functions instead of a namespace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the CLI reads EMITTERS at start-up, so this module imports nothing of quiver
    from quiver.model import JSON
    from quiver.sources.token_cache import TokenCache

EMITTERS = ("anthropic", "openai")  # `quiver compile --emit` choices
ANTHROPIC_SEARCH: dict[str, JSON] = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
OPENAI_SEARCH: dict[str, JSON] = {"type": "tool_search"}
_API_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# OpenAI strict mode (structured outputs): the keywords it accepts, per the documented subset
_STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
        "$ref", "$defs", "definitions", "description", "title", "pattern", "format", "multipleOf",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
    }
)  # fmt: skip
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_STRICT_MAX_DEPTH = 10
_STRICT_MAX_PROPERTIES = 5000


def emit(manifest: Mapping[str, Any], host: str, cache: TokenCache | None = None) -> dict[str, JSON]:
    """The export document: agent id, host, the `tools` array, and (given a cache) the host's budget."""
    tools = anthropic_tools(manifest) if host == "anthropic" else openai_tools(manifest)
    document: dict[str, JSON] = {"agent": manifest["agent"]["id"], "host": host, "tools": tools}
    if cache is not None:
        document["budget"] = host_budget(tools, host, cache)
    return document


def anthropic_tools(manifest: Mapping[str, Any]) -> list[JSON]:
    entries = manifest["tools"]
    tools: list[JSON] = [dict(ANTHROPIC_SEARCH)] if _any_deferred(entries) else []
    for t in entries:
        d = t["definition"]
        entry: dict[str, JSON] = {"name": t["names"]["api"], "input_schema": d.get("inputSchema", {"type": "object"})}
        if d.get("description"):
            entry["description"] = d["description"]
        if _gateway_load(t) == "deferred":
            entry["defer_loading"] = True
        tools.append(entry)
    return tools


def openai_tools(manifest: Mapping[str, Any]) -> list[JSON]:
    entries = manifest["tools"]
    tools: list[JSON] = [dict(OPENAI_SEARCH)] if _any_deferred(entries) else []
    descriptions = {str(s["name"]): str(s.get("description") or "") for s in manifest.get("servers", [])}
    by_server: dict[str, list[Mapping[str, Any]]] = {}
    for t in entries:
        by_server.setdefault(str(t["server"]), []).append(t)
    for server, items in by_server.items():
        if _API_NAME.match(server) and all(_API_NAME.match(str(t["name"])) for t in items):
            namespace: dict[str, JSON] = {
                "type": "namespace",
                "name": server,
                "description": descriptions.get(server) or f"Tools of the `{server}` MCP server.",
                "tools": [_openai_function(t, str(t["name"])) for t in items],
            }
            tools.append(namespace)
        else:
            tools.extend(_openai_function(t, str(t["names"]["api"])) for t in items)
    return tools


def _openai_function(t: Mapping[str, Any], name: str) -> dict[str, JSON]:
    d = t["definition"]
    parameters = d.get("inputSchema", {"type": "object"})
    entry: dict[str, JSON] = {
        "type": "function",
        "name": name,
        "parameters": parameters,
        "strict": strict_schema(parameters),
    }
    if d.get("description"):
        entry["description"] = d["description"]
    if _gateway_load(t) == "deferred":
        entry["defer_loading"] = True
    return entry


def strict_schema(schema: Any) -> bool:
    """Whether OpenAI accepts `schema` with `strict: true`: an object root; every object closed
    (`additionalProperties: false`) with every property required; only supported keywords and formats;
    at most 10 levels of nesting and 5,000 properties. Anything else (or unsure) is False."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object" or "anyOf" in schema:
        return False
    counted = [0]
    return _strict_node(schema, 0, counted) and counted[0] <= _STRICT_MAX_PROPERTIES


def _strict_node(node: Any, depth: int, counted: list[int]) -> bool:
    if not isinstance(node, Mapping) or depth > _STRICT_MAX_DEPTH or not set(node) <= _STRICT_KEYWORDS:
        return False
    if "format" in node and node["format"] not in _STRICT_FORMATS:
        return False
    types = node.get("type")
    type_list = types if isinstance(types, list) else [types]
    if "object" in type_list or "properties" in node:
        properties = node.get("properties", {})
        if not isinstance(properties, Mapping) or node.get("additionalProperties") is not False:
            return False
        if sorted(node.get("required", [])) != sorted(properties):
            return False
        counted[0] += len(properties)
        if not all(_strict_node(p, depth + 1, counted) for p in properties.values()):
            return False
    elif "additionalProperties" in node or "required" in node:
        return False
    children: list[Any] = []
    if "items" in node:
        children.append(node["items"])
    children.extend(node.get("anyOf", []))
    for key in ("$defs", "definitions"):
        defs = node.get(key, {})
        if not isinstance(defs, Mapping):
            return False
        children.extend(defs.values())
    if types is None and not any(k in node for k in ("anyOf", "$ref", "enum", "const")):
        return False  # an untyped schema accepts anything: strict mode cannot express it
    return all(_strict_node(c, depth + 1, counted) for c in children)


def host_budget(tools: Sequence[JSON], host: str, cache: TokenCache) -> dict[str, JSON]:
    """Tokens the host shows the model before the first call: everything loaded, and of each deferred
    function what the host still lists (OpenAI: name and description; Anthropic: nothing)."""
    loaded: list[JSON] = []
    deferred_visible: list[JSON] = []
    deferred = 0
    for tool in tools:
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            inner = tool.get("tools")
            shell = {k: v for k, v in tool.items() if k != "tools"}
            kept, shown, n = _split(inner if isinstance(inner, list) else [], host)
            loaded.append({**shell, "tools": kept})
            deferred_visible.extend(shown)
            deferred += n
        else:
            kept, shown, n = _split([tool], host)
            loaded.extend(kept)
            deferred_visible.extend(shown)
            deferred += n
    loaded_tokens = cache.count_json(loaded) if loaded else 0
    visible_tokens = cache.count_json(deferred_visible) if deferred_visible else 0
    return {
        "deferred_tools": deferred,
        "deferred_visible_tokens": visible_tokens,
        "initial_tokens": loaded_tokens + visible_tokens,
        "loaded_tokens": loaded_tokens,
    }


def _split(tools: Sequence[JSON], host: str) -> tuple[list[JSON], list[JSON], int]:
    kept: list[JSON] = []
    shown: list[JSON] = []
    n = 0
    for tool in tools:
        if isinstance(tool, dict) and tool.get("defer_loading"):
            n += 1
            if host == "openai":
                shown.append({k: tool[k] for k in ("name", "description") if k in tool})
        else:
            kept.append(tool)
    return kept, shown, n


def _any_deferred(entries: Sequence[Mapping[str, Any]]) -> bool:
    return any(_gateway_load(t) == "deferred" for t in entries)


def _gateway_load(tool: Mapping[str, JSON]) -> str:
    """What quiver's rules decide for a tool (the API caller defers what quiver would keep behind its
    meta-tools): the manifest's `gateway.load` (a version 1 manifest's `load`)."""
    gateway = tool.get("gateway")
    return str((gateway if isinstance(gateway, dict) else tool).get("load"))
