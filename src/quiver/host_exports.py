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
from dataclasses import dataclass
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
_STRICT_MAX_ENUM_VALUES = 1000
# Keywords OpenAI has no use for that do not change what a schema accepts: dropped from a strict export.
_DROPPED_KEYWORDS = frozenset({"$schema", "$comment"})
_DROPPABLE_DIALECTS = frozenset(
    f"{scheme}://json-schema.org/{name}"
    for scheme in ("http", "https")
    for name in ("draft/2020-12/schema", "draft/2019-09/schema", "draft-07/schema", "draft-07/schema#",
                 "draft-06/schema", "draft-06/schema#")
)  # fmt: skip


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
    verdict = openai_strict_of(d)
    entry: dict[str, JSON] = {
        "type": "function",
        "name": name,
        "parameters": verdict.parameters,
        "strict": verdict.strict,
    }
    if d.get("description"):
        entry["description"] = d["description"]
    if _gateway_load(t) == "deferred":
        entry["defer_loading"] = True
    return entry


@dataclass(frozen=True, slots=True)
class StrictVerdict:
    """Whether OpenAI takes a tool's input schema with `strict: true`, and the `parameters` to export.

    `parameters` is the tool's schema as it is when not strict; when strict, with what OpenAI has no use for
    dropped (`$schema`, `$comment`) and every object without `additionalProperties` closed: a narrowing
    (every closed instance is valid under the open schema), so strict decoding never yields arguments the
    server rejects. `changes` says what was done; `reason` why not strict (a JSON path and the rule)."""

    strict: bool
    parameters: JSON
    reason: str = ""
    changes: tuple[str, ...] = ()

    def explain(self) -> str:
        """One line for `quiver explain`: the choice and why."""
        if not self.strict:
            return f"strict: false ({self.reason})"
        return "strict: true" + (f" ({'; '.join(self.changes)})" if self.changes else "")


def openai_strict(schema: Any) -> StrictVerdict:
    """The strict-mode verdict for input schema `schema` (see `StrictVerdict`). Strict mode's documented
    subset: an object root that is not an `anyOf`; every object closed with every property required; only
    its keywords and string formats; at most 10 levels of nesting, 5,000 properties and 1,000 enum values.
    Anything else, or anything unsure, is not strict."""
    walk = _StrictWalk()
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return StrictVerdict(False, schema, 'the root is not `"type": "object"`')
    if "anyOf" in schema:
        return StrictVerdict(False, schema, "the root is an `anyOf`")
    dialect = schema.get("$schema")
    if dialect is not None and dialect not in _DROPPABLE_DIALECTS:
        return StrictVerdict(False, schema, f"`$schema` is `{dialect}`, whose keywords mean other things")
    walk.draft07 = dialect is not None and "draft-0" in str(dialect)
    out = walk.node(schema, "$", 0)
    if out is None:
        return StrictVerdict(False, schema, walk.reason)
    if walk.properties > _STRICT_MAX_PROPERTIES or walk.enum_values > _STRICT_MAX_ENUM_VALUES:
        return StrictVerdict(False, schema, "more properties or enum values than strict mode takes")
    changes = []
    if walk.dropped:
        changes.append("dropped " + ", ".join(f"`{k}`" for k in sorted(walk.dropped)))
    if walk.closed:
        changes.append(f"closed {walk.closed} object{'s' if walk.closed != 1 else ''} (`additionalProperties: false`)")
    return StrictVerdict(True, out, changes=tuple(changes))


def openai_strict_of(definition: Mapping[str, Any]) -> StrictVerdict:
    """The verdict for an MCP Tool object's input schema (an object schema when it has none)."""
    return openai_strict(definition.get("inputSchema", {"type": "object"}))


def strict_schema(schema: Any) -> bool:
    """Whether OpenAI accepts `schema` with `strict: true` once exported (see `openai_strict`)."""
    return openai_strict(schema).strict


class _StrictWalk:
    """One pass over a schema: the strict copy, or None and the first reason it cannot be strict."""

    def __init__(self) -> None:
        self.reason = ""
        self.draft07 = False
        self.properties = 0
        self.enum_values = 0
        self.closed = 0
        self.dropped: set[str] = set()

    def fail(self, path: str, why: str) -> None:
        self.reason = f"`{path}`: {why}"

    def node(self, node: Any, path: str, depth: int) -> dict[str, JSON] | None:
        if not isinstance(node, Mapping):
            self.fail(path, "not a schema object")
            return None
        if depth > _STRICT_MAX_DEPTH:
            self.fail(path, f"nested deeper than {_STRICT_MAX_DEPTH} levels")
            return None
        out: dict[str, JSON] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYWORDS:
                self.dropped.add(key)
            elif key not in _STRICT_KEYWORDS:
                self.fail(path, f"`{key}` is not a keyword of strict mode")
                return None
            else:
                out[key] = value
        if "$ref" in out and self.draft07 and len(set(out) - {"$ref", "description", "title"}) > 0:
            self.fail(path, "`$ref` beside other keywords, which draft-07 ignores and strict mode applies")
            return None
        if not self._scalars(out, path):
            return None
        types = out.get("type")
        type_list = types if isinstance(types, list) else [types]
        if "object" in type_list or "properties" in out:
            if not self._object(out, path, depth):
                return None
        elif "additionalProperties" in out or "required" in out:
            self.fail(path, "`additionalProperties`/`required` outside an object")
            return None
        if "items" in out:
            item = self.node(out["items"], f"{path}.items", depth + 1)
            if item is None:
                return None
            out["items"] = item
        if "anyOf" in out:
            branches = out["anyOf"]
            if not isinstance(branches, list):
                self.fail(path, "`anyOf` is not a list")
                return None
            kept = [self.node(b, f"{path}.anyOf[{i}]", depth + 1) for i, b in enumerate(branches)]
            if any(b is None for b in kept):
                return None
            out["anyOf"] = kept
        for key in ("$defs", "definitions"):
            if key in out:
                defs = out[key]
                if not isinstance(defs, Mapping):
                    self.fail(path, f"`{key}` is not an object")
                    return None
                done = {name: self.node(d, f"{path}.{key}.{name}", depth + 1) for name, d in defs.items()}
                if any(d is None for d in done.values()):
                    return None
                out[key] = done
        if types is None and not any(k in out for k in ("anyOf", "$ref", "enum", "const")):
            self.fail(path, "no `type`: it accepts anything, which strict mode cannot express")
            return None
        return out

    def _scalars(self, out: Mapping[str, JSON], path: str) -> bool:
        if "format" in out and out["format"] not in _STRICT_FORMATS:
            self.fail(path, f"format `{out['format']}` is not one strict mode knows")
            return False
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            value = out.get(key)
            if key in out and (isinstance(value, bool) or not isinstance(value, int | float)):
                self.fail(path, f"`{key}` is not a number")
                return False
        if "enum" in out:
            self.enum_values += len(out["enum"]) if isinstance(out["enum"], list) else 0
        return True

    def _object(self, out: dict[str, JSON], path: str, depth: int) -> bool:
        properties = out.get("properties", {})
        if not isinstance(properties, Mapping):
            self.fail(path, "`properties` is not an object")
            return False
        if "additionalProperties" not in out:
            out["additionalProperties"] = False  # a narrowing: what the model sends stays valid upstream
            self.closed += 1
        elif out["additionalProperties"] is not False:
            self.fail(path, "`additionalProperties` lets in keys the schema does not name")
            return False
        required = out.get("required", [])
        missing = [name for name in properties if not isinstance(required, list) or name not in required]
        if missing:
            self.fail(f"{path}.properties.{missing[0]}", "optional, and strict mode requires every property")
            return False
        self.properties += len(properties)
        done = {name: self.node(p, f"{path}.properties.{name}", depth + 1) for name, p in properties.items()}
        if any(p is None for p in done.values()):
            return False
        if "properties" in out:
            out["properties"] = done
        return True


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
