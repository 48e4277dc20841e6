"""Lint rules about the JSON Schemas of tool definitions: validity, root type, parameters, `required`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import ToolCheckCache
from quiver.lint.support.schema_walk import MetaChecker, Node, resolve_pointer, walk
from quiver.lint.support.text import as_json, listed, shown, tool_values, where
from quiver.model import JSON, Finding, LockedTool

SCHEMA_FIELDS = ("inputSchema", "outputSchema")
_LISTED = 6
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_JSON_TYPES: dict[type, str] = {str: "string", int: "number", float: "number", list: "array", type(None): "null"}


class SchemaChecks:
    """Schema checks for many tools; keeps the meta-schema memo and the jsonschema import across tools."""

    def __init__(self) -> None:
        self._meta: MetaChecker | None = None
        self._defaults: dict[str, str | None] = {}  # memo of `default` checks, by dialect + node

    @property
    def meta(self) -> MetaChecker:
        if self._meta is None:
            self._meta = MetaChecker()
        return self._meta

    def check(self, tool: LockedTool) -> Iterator[Finding]:
        base = tool_values(tool)
        definition = tool.definition
        yield from _root(definition.get("inputSchema"), base)
        yield from _parameters(definition.get("inputSchema"), base)
        for field in SCHEMA_FIELDS:
            if field not in definition:
                continue
            schema = definition[field]
            if isinstance(schema, bool):
                continue
            if not isinstance(schema, dict):
                kind = _JSON_TYPES.get(type(schema), "value")
                problem = f"is a JSON {kind}, not a schema object"
                detail = "a schema is a JSON object, or `true`/`false`"
                yield INVALID_JSON_SCHEMA.finding(**base, field=field, problem=problem, detail=detail)
                continue
            dialect = self.meta.dialect_of(schema)
            nodes = walk(schema, self.meta.applicators(dialect))
            finding = self._validity(schema, dialect, nodes, field, base)
            if finding is not None:
                yield finding
            yield from _required(nodes, field, base)
            from quiver.lint.tool import schema_values as _tool_values  # it imports this module's `check`

            yield from _tool_values.refs(schema, nodes, field, base)
            if finding is None and dialect is not None:
                yield from _tool_values.enums(nodes, field, base)
                yield from _tool_values.defaults(nodes, dialect, field, base, self._defaults)

    def _validity(
        self, schema: Mapping[str, JSON], dialect: str | None, nodes: list[Node], field: str, base: dict[str, Any]
    ) -> Finding | None:
        if dialect is None:
            problem = f"declares `$schema` `{shown(str(schema.get('$schema')))}`, a dialect quiver cannot check"
            finding = INVALID_JSON_SCHEMA.finding(
                **base,
                severity="warning",
                field=field,
                problem=problem,
                detail="omit `$schema` (2020-12 is the MCP default) or name a published JSON Schema draft",
            )
            return finding
        found = self.meta.problem(schema, dialect, nodes)
        if found is None:
            return None
        at = f"at `{'.'.join(found.path)}`" if found.path else "at its root"
        problem = f"is not a valid JSON Schema ({found.dialect}) {at}"
        detail = f"jsonschema says: {shown(found.detail, 200)}"
        return INVALID_JSON_SCHEMA.finding(**base, field=field, problem=problem, detail=detail)


def _root(schema: JSON, base: dict[str, Any]) -> Iterator[Finding]:
    if schema is None:
        problem = "is missing"
    elif not isinstance(schema, dict):
        problem = "is not a JSON object"
    elif "type" not in schema:
        problem = 'does not say `"type": "object"` at its root'
    elif schema["type"] != "object":
        problem = f'has root `type` `{as_json(schema["type"])}`, not `"object"`'
    else:
        return
    yield INPUT_SCHEMA_NOT_OBJECT.finding(**base, problem=problem)


def _parameters(schema: JSON, base: dict[str, Any]) -> Iterator[Finding]:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return
    missing = []
    for name, prop in schema["properties"].items():
        if not isinstance(prop, dict):
            continue
        described = prop.get("description")
        if not (isinstance(described, str) and described.strip()):
            target = resolve_pointer(schema, prop["$ref"]) if isinstance(prop.get("$ref"), str) else None
            described = target.get("description") if isinstance(target, dict) else None
        if not (isinstance(described, str) and described.strip()):
            missing.append(name)
    if missing:
        yield UNDOCUMENTED_PARAMETERS.finding(**base, params=listed(missing))


def _required(nodes: list[Node], field: str, base: dict[str, Any]) -> Iterator[Finding]:
    for path, node in nodes:
        required = node.get("required")
        properties = node.get("properties")
        if not isinstance(required, list) or not isinstance(properties, dict):
            continue
        patterns = node.get("patternProperties")
        undeclared = [
            name
            for name in required
            if isinstance(name, str) and name not in properties and not _matches_pattern(name, patterns)
        ]
        if undeclared:
            yield REQUIRED_PROPERTY_UNDECLARED.finding(**base, path=where(field, path), names=listed(undeclared))


def _matches_pattern(name: str, patterns: JSON) -> bool:
    if not isinstance(patterns, dict):
        return False
    from quiver.regex_budget import PatternTimeout, search

    for pattern in patterns:
        try:
            if search(pattern, name):  # bounded: the lock's patterns come from upstream servers
                return True
        except re.error:
            continue  # an invalid pattern is TOOL007's finding; it declares nothing here
        except PatternTimeout:
            return True  # too slow to tell: no finding rather than a wrong one
    return False


def check(ctx: LintContext) -> Iterator[Finding]:
    """Every schema rule over every served tool; results cached per tool sha256 (support/cache.py)."""
    schemas = SchemaChecks()
    cache = ToolCheckCache(ctx.project.root)
    for tool in ctx.locked_tools():
        yield from cache.findings(tool, schemas.check)
    cache.save()


UNDOCUMENTED_PARAMETERS = Rule(
    code="TOOL006",
    name="undocumented-parameters",
    severity="warning",
    check=check,
    message="parameters of `{server}/{shown_name}` have no description: {params}",
    hint="describe each parameter: meaning, format and an example value",
    doc="""\
## What it does
Flags a tool whose top-level `inputSchema.properties` include parameters without a `description`
(directly or on the `$ref` target). One finding per tool lists them all.

## Why is this bad?
The model fills arguments from the parameter names alone: it guesses formats (`date`: ISO or
"yesterday"?), units and identifiers, and the call fails validation or does the wrong thing.

## Example
```json
{"type": "object", "properties": {"q": {"type": "string"}}}
```
Use instead:
```json
{"type": "object", "properties": {"q": {"type": "string",
  "description": "Search query in GitHub search syntax, e.g. `repo:owner/name is:open`"}}}
```

## Fix
Add descriptions in the server. A parameter whose name says everything (`owner`, `repo`) still
benefits from an example value.

## References
MCP specification 2025-11-25, Tools: `inputSchema`.
""",
)


INVALID_JSON_SCHEMA = Rule(
    code="TOOL007",
    name="invalid-json-schema",
    severity="error",
    check=check,
    message="`{field}` of `{server}/{shown_name}` {problem}",
    hint="{detail}",
    doc="""\
## What it does
Checks `inputSchema` and `outputSchema` against the meta-schema of their dialect: the one `$schema`
names, else JSON Schema 2020-12 (the MCP default). A dialect quiver does not know is reported as a
warning, unchecked.

## Why is this bad?
Clients validate arguments with these schemas. An invalid schema makes strict hosts reject the whole
tool list, and lenient ones validate nothing, or the wrong thing.

## Example
```json
{"type": "object", "properties": {"limit": {"type": "int"}}}
```
Use instead:
```json
{"type": "object", "properties": {"limit": {"type": "integer"}}}
```

## Fix
Correct the schema at the reported path, in the server. The hint quotes jsonschema's explanation.

## References
MCP specification 2025-11-25, JSON Schema usage (SEP-1613); JSON Schema 2020-12 meta-schema.
""",
)


INPUT_SCHEMA_NOT_OBJECT = Rule(
    code="TOOL008",
    name="input-schema-not-object",
    severity="error",
    check=check,
    message="`inputSchema` of `{server}/{shown_name}` {problem}",
    hint='use `{{"type": "object", ...}}`; a tool without parameters: `{{"type": "object", '
    '"additionalProperties": false}}`',
    doc="""\
## What it does
Flags a tool whose `inputSchema` is missing, is not a JSON object, or does not say `"type": "object"`
at its root.

## Why is this bad?
Tool arguments are always a JSON object. Host APIs (Anthropic, OpenAI) reject a tool whose input
schema root is anything else, which fails every request that carries it.

## Example
```json
{"name": "ping", "inputSchema": {}}
```
Use instead:
```json
{"name": "ping", "inputSchema": {"type": "object", "additionalProperties": false}}
```

## Fix
Set the root `type` in the server.

## References
MCP specification 2025-11-25, Tools: `inputSchema`.
""",
)


REQUIRED_PROPERTY_UNDECLARED = Rule(
    code="TOOL009",
    name="required-property-undeclared",
    severity="error",
    check=check,
    message="`required` at `{path}` of `{server}/{shown_name}` names {names}, which `properties` does not declare",
    hint="declare the property, or drop it from `required` (often a rename upstream left it behind)",
    doc="""\
## What it does
Flags a schema object whose `required` list names a property that its own `properties` (and
`patternProperties`) do not declare. Objects without `properties` are left alone.

## Why is this bad?
The model never learns the property's type or meaning, yet every call without it fails validation.
It is usually a rename that missed `required`.

## Example
```json
{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["q"]}
```
Use instead:
```json
{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
```

## Fix
Make `required` and `properties` agree, in the server.

## References
JSON Schema 2020-12 validation, `required`.
""",
)


RULES: tuple[Rule, ...] = (
    UNDOCUMENTED_PARAMETERS,
    INVALID_JSON_SCHEMA,
    INPUT_SCHEMA_NOT_OBJECT,
    REQUIRED_PROPERTY_UNDECLARED,
)
