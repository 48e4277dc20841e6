"""Lint rules about the JSON Schemas of tool definitions: validity, root type, parameters, `required`, and the
values inside them (TOOL015-017): repeated enum values, defaults that fail their own schema, local `$ref`s that
point nowhere. One schema pass (`check`) runs them all."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import ToolCheckCache
from quiver.lint.support.schema_walk import ALL, MetaChecker, Node, resolve_pointer, validator_class, walk
from quiver.lint.support.text import as_json, listed, shown, tool_values, where
from quiver.model import JSON, Finding, LockedTool
from quiver.schema_fast import default_valid

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
            yield from refs(schema, nodes, field, base)
            if finding is None and dialect is not None:
                yield from enums(nodes, field, base)
                yield from defaults(nodes, dialect, field, base, self._defaults)

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


def defaults(
    nodes: list[Node], dialect: str, field: str, base: dict[str, Any], memo: dict[str, str | None]
) -> Iterator[Finding]:
    """TOOL016 for every node with a `default` (memo: shared across tools, by dialect and node)."""
    for path, node in nodes:
        if "default" not in node or _has_ref(node):
            continue
        key = dialect + repr(node)
        if key not in memo:
            memo[key] = None if default_valid(dialect, node) else _default_problem(dialect, node)
        detail = memo[key]
        if detail is not None:
            yield INVALID_DEFAULT.finding(
                **base, value=f"`{as_json(node['default'])}`", path=where(field, path), detail=detail
            )


def _default_problem(dialect: str, node: Mapping[str, JSON]) -> str | None:
    from jsonschema.exceptions import SchemaError, UnknownType, best_match
    from referencing.exceptions import Unresolvable

    from quiver.regex_budget import PatternTimeout, bounded_class

    schema = {k: v for k, v in node.items() if k not in ("default", "$schema", "$id")}
    validator = bounded_class(validator_class(dialect))(schema)  # the lock's patterns come from upstream servers
    try:
        if validator.is_valid(node["default"]):
            return None
        return f"jsonschema says: {shown(best_match(validator.iter_errors(node['default'])).message, 200)}"
    except (SchemaError, UnknownType, Unresolvable, PatternTimeout):
        return None  # a schema jsonschema cannot apply (or a pattern too slow to match): no finding here


def _has_ref(node: Mapping[str, JSON]) -> bool:
    return any(any(k in n for k in _REF_KEYS) for _, n in walk(node, ALL))


def enums(nodes: list[Node], field: str, base: dict[str, Any]) -> Iterator[Finding]:
    for path, node in nodes:
        values = node.get("enum")
        if not isinstance(values, list) or len(values) < 2:
            continue
        seen: set[str] = set()
        repeated: list[str] = []
        for value in values:
            key = json.dumps(_numbers(value), sort_keys=True)
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
        if repeated:
            shown_values = " and ".join(f"`{shown(r, 30)}`" for r in repeated[:3])
            yield DUPLICATE_ENUM_VALUE.finding(**base, path=where(field, path), value=shown_values)


def _numbers(value: JSON) -> JSON:
    """JSON equality: 1 and 1.0 are one number; true is not 1."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def refs(schema: Mapping[str, JSON], nodes: list[Node], field: str, base: dict[str, Any]) -> Iterator[Finding]:
    refs = [(p, n["$ref"]) for p, n in nodes if isinstance(n.get("$ref"), str) and n["$ref"].startswith("#")]
    if not refs:
        return
    if any(isinstance(n.get("$id"), str) and not n["$id"].startswith("#") for p, n in nodes if p):
        return  # a nested base URI: local references may be relative to it
    anchors = {
        str(n[k]).lstrip("#")
        for _, n in nodes
        for k in ("$anchor", "$dynamicAnchor", "$id")
        if isinstance(n.get(k), str)
    }
    for path, ref in refs:
        if ref == "#":
            continue
        fragment = ref[1:]
        if fragment.startswith("/"):
            if resolve_pointer(schema, ref) is not None:
                continue
        elif unquote(fragment) in anchors:
            continue
        yield UNRESOLVED_SCHEMA_REF.finding(**base, ref=shown(ref), path=where(field, path))


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


DUPLICATE_ENUM_VALUE = Rule(
    code="TOOL015",
    name="duplicate-enum-value",
    severity="warning",
    check=check,
    message="`enum` at `{path}` of `{server}/{shown_name}` lists {value} more than once",
    hint="list each value once",
    doc="""\
## What it does
Flags an `enum` that lists the same value twice (compared as JSON: `1` and `1.0` are the same).

## Why is this bad?
It costs tokens, often hides a typo (the value meant to be there is missing), and draft-04 validators
reject the schema.

## Example
```json
{"enum": ["open", "closed", "open"]}
```
Use instead:
```json
{"enum": ["open", "closed", "all"]}
```

## Fix
Remove the repeat, or restore the value it replaced.

## References
JSON Schema 2020-12 validation, `enum`.
""",
)


INVALID_DEFAULT = Rule(
    code="TOOL016",
    name="invalid-default",
    severity="warning",
    check=check,
    message="`default` {value} at `{path}` of `{server}/{shown_name}` does not match its own schema",
    hint="{detail}",
    doc="""\
## What it does
Validates each `default` against the schema it sits in (skipped for schemas with `$ref`, and for
schemas TOOL007 already rejects).

## Why is this bad?
Models copy defaults into calls. A default that fails its own schema (`null` for a plain string,
`"10"` for an integer) teaches the model an argument the server then rejects.

## Example
```json
{"type": "integer", "default": "10"}
```
Use instead:
```json
{"type": "integer", "default": 10}
```

## Fix
Fix the default, or widen the type (`["string", "null"]`) where `null` is meant.

## References
JSON Schema 2020-12 meta-data, `default`.
""",
)


UNRESOLVED_SCHEMA_REF = Rule(
    code="TOOL017",
    name="unresolved-schema-ref",
    severity="error",
    check=check,
    message="`$ref` `{ref}` at `{path}` of `{server}/{shown_name}` points to nothing in the schema",
    hint="add the missing definition under `$defs`, or fix the pointer",
    doc="""\
## What it does
Flags a local `$ref` (`#/$defs/...`, `#/definitions/...`, `#anchor`) that resolves to nothing inside
the tool's schema. Remote references and schemas with nested `$id`s are not followed.

## Why is this bad?
A validator raises on an unresolvable reference: the host drops the tool or fails the call, and the
model never sees the referenced shape.

## Example
```json
{"type": "object", "properties": {"page": {"$ref": "#/$defs/Page"}}}
```
Use instead:
```json
{"type": "object", "properties": {"page": {"$ref": "#/$defs/Page"}},
 "$defs": {"Page": {"type": "integer", "minimum": 1}}}
```

## Fix
Ship the definitions with the schema, in the server.

## References
JSON Schema 2020-12 core, `$ref` and JSON Pointer fragments.
""",
)


RULES: tuple[Rule, ...] = (
    UNDOCUMENTED_PARAMETERS,
    INVALID_JSON_SCHEMA,
    INPUT_SCHEMA_NOT_OBJECT,
    REQUIRED_PROPERTY_UNDECLARED,
    DUPLICATE_ENUM_VALUE,
    INVALID_DEFAULT,
    UNRESOLVED_SCHEMA_REF,
)
