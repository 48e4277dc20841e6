"""The shape every keyword value must have before the diff reads a schema (the part of the metaschemas the
walk relies on), checked without jsonschema: a malformed tool is one CTR080 finding naming the keyword and
its JSON pointer, never a crash that aborts the catalog."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.contract._json_type import json_type
from quiver.errors import InputError
from quiver.model import JSON

_SCHEMA = (
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_NUMBERS = (
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)
_STRINGS = ("pattern", "format", "$ref", "$anchor")
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_HINT = "fix the schema so that it is valid JSON Schema in its `$schema` dialect"


def check(root: JSON, dialect: str) -> None:
    """Raise InputError at the first keyword whose value the diff cannot read."""
    for pointer, node in _schemas(root, ""):
        if not isinstance(node, (dict, bool)):
            _fail(f"a subschema must be a JSON object or boolean, not {json_type(node)}", pointer)
        if isinstance(node, dict):
            _check_node(node, pointer or "/", dialect)


def _check_node(node: dict[str, JSON], at: str, dialect: str) -> None:
    for key in _SCHEMA_MAPS:
        if key in node and not isinstance(node[key], dict):
            _fail(f"`{key}` must be an object of schemas, not {json_type(node[key])}", at)
    for key in _SCHEMA_LISTS:
        if key in node and not isinstance(node[key], list):
            _fail(f"`{key}` must be an array of schemas, not {json_type(node[key])}", at)
    for key in _NUMBERS:
        if key in node and not _number(node[key]):
            _fail(f"`{key}` must be a number, not {json_type(node[key])}", at)
    for key in _STRINGS:
        if key in node and not isinstance(node[key], str):
            _fail(f"`{key}` must be a string, not {json_type(node[key])}", at)
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        value = node.get(key)
        if isinstance(value, bool) and dialect != "draft-04":
            _fail(f"`{key}` is a boolean, which only draft-04 allows, but the schema is {dialect}", at)
        if key in node and not isinstance(value, bool) and not _number(value):
            _fail(f"`{key}` must be a number, not {json_type(value)}", at)
    kind = node.get("type")
    names = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else [None]
    if "type" in node and not all(isinstance(t, str) and t in _TYPES for t in names):
        _fail("`type` must be a JSON type name or an array of them", at)
    required = node.get("required")
    if "required" in node and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        _fail("`required` must be an array of property names", at)
    if "enum" in node and not isinstance(node["enum"], list):
        _fail(f"`enum` must be an array, not {json_type(node['enum'])}", at)
    for key in ("dependentRequired", "dependencies"):
        value = node.get(key)
        if key in node and not isinstance(value, dict):
            _fail(f"`{key}` must be an object, not {json_type(value)}", at)
        for name, needs in (value or {}).items() if isinstance(value, dict) else ():
            if isinstance(needs, list) and not all(isinstance(n, str) for n in needs):
                _fail(f"`{key}` of `{name}` must list property names", at)
            if key == "dependentRequired" and not isinstance(needs, list):
                _fail(f"`{key}` of `{name}` must be an array of property names", at)


def _schemas(node: JSON, pointer: str) -> Iterator[tuple[str, JSON]]:
    """Every subschema with its JSON pointer (values of data keywords such as `enum` are not schemas)."""
    yield pointer, node
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        here = f"{pointer}/{_escape(key)}"
        if key in _SCHEMA or (key == "items" and not isinstance(value, list)):
            yield from _schemas(value, here)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from _schemas(sub, f"{here}/{_escape(name)}")
        elif key == "dependencies" and isinstance(value, dict):
            for name, sub in value.items():
                if not isinstance(sub, list):
                    yield from _schemas(sub, f"{here}/{_escape(name)}")
        elif (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _schemas(sub, f"{here}/{index}")


def _fail(message: str, at: str) -> None:
    raise InputError(f"{message} (at `{at}`)", hint=_HINT)


def _number(value: JSON) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
