"""TOOL015-017, values inside tool schemas: repeated enum values, defaults that fail their own schema,
local `$ref`s that point nowhere. Run by the one schema pass of tool/schema.py (its `check`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from quiver.findings.rule import Rule
from quiver.lint.support.schema_walk import ALL, Node, resolve_pointer, validator_class, walk
from quiver.lint.support.text import as_json, shown, where
from quiver.lint.tool.schema import check
from quiver.model import JSON, Finding
from quiver.schema_fast import default_valid

_LISTED = 6
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


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


RULES: tuple[Rule, ...] = (DUPLICATE_ENUM_VALUE, INVALID_DEFAULT, UNRESOLVED_SCHEMA_REF)
