"""Deciding, without jsonschema, that a shallow schema node or a `default` is valid (shared helpers; no rules).

Importing jsonschema costs about 50 ms of start-up and its meta-schema check 0.1-4 ms a node; nearly every
node of a real tool schema uses a handful of keywords whose meta-schema constraints are simple types. These
functions answer only "certainly valid" (True) or "ask jsonschema" (False): a keyword they do not model, a
dialect before draft-06, a value they are unsure of all fall back, so the verdict and the explanation of an
invalid schema stay jsonschema's. `tests/lint/test_schema_fast.py` checks them against jsonschema.

Dialects are named by their jsonschema validator class (`Draft202012Validator`), so no class is needed to
choose one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from quiver.model import JSON

DEFAULT_DIALECT = "Draft202012Validator"  # MCP's default when `$schema` is absent
# `$schema` URIs as jsonschema normalises them (its URIDict: `urlsplit(uri).geturl()`, so an empty `#` goes)
KNOWN_URIS: Mapping[str, str] = {
    "http://json-schema.org/draft-03/schema": "Draft3Validator",
    "http://json-schema.org/draft-04/schema": "Draft4Validator",
    "http://json-schema.org/draft-06/schema": "Draft6Validator",
    "http://json-schema.org/draft-07/schema": "Draft7Validator",
    "https://json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "https://json-schema.org/draft/2020-12/schema": "Draft202012Validator",
}
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")


def known_dialect(declared: str) -> str | None:
    """The dialect a `$schema` URI names, when it is one of the published drafts (None: ask jsonschema)."""
    try:
        return KNOWN_URIS.get(urlsplit(declared).geturl())
    except ValueError:
        return None


def _number(v: JSON) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _count(v: JSON) -> bool:  # nonNegativeInteger: jsonschema's "integer" takes 2.0 too
    return _number(v) and float(v).is_integer() and v >= 0


def _string(v: JSON) -> bool:
    return isinstance(v, str)


def _boolean(v: JSON) -> bool:
    return isinstance(v, bool)


def _schema(v: JSON) -> bool:  # a subschema: `_shallow` made it `{}`, or a boolean schema
    return isinstance(v, dict | bool)


def _schemas(v: JSON) -> bool:  # schemaArray: a non-empty array of schemas
    return isinstance(v, list) and bool(v) and all(isinstance(s, dict | bool) for s in v)


def _schema_map(v: JSON) -> bool:  # `_shallow` dropped the object entries; what is left must be booleans
    return isinstance(v, dict) and all(isinstance(s, bool | dict) for s in v.values())


def _regex(v: JSON) -> bool:
    if not isinstance(v, str):
        return False
    try:
        re.compile(v)
    except re.error:
        return False
    return True


def _pattern_map(v: JSON) -> bool:
    return _schema_map(v) and all(_regex(k) for k in v)


def _type(v: JSON) -> bool:
    if isinstance(v, str):
        return v in _SIMPLE_TYPES
    return (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(t, str) and t in _SIMPLE_TYPES for t in v)
        and len(set(v)) == len(v)
    )


def _string_array(v: JSON) -> bool:  # stand-ins keep string equality, so distinct means unique
    return isinstance(v, list) and all(isinstance(s, str) for s in v) and len(set(v)) == len(v)


def _array(v: JSON) -> bool:
    return isinstance(v, list)


def _anything(v: JSON) -> bool:
    return True


def _uri_reference(v: JSON) -> bool:  # `format: uri-reference` is asserted only with extra packages: stay plain
    return isinstance(v, str) and _URI_CHARS.fullmatch(v) is not None


def _items_draft7(v: JSON) -> bool:
    return _schema(v) or _schemas(v)


def _dialect_uri(v: JSON) -> bool:
    return isinstance(v, str) and known_dialect(v) is not None


def _id(v: JSON) -> bool:  # 2019-09 on: no fragment but an empty one
    return _uri_reference(v) and "#" not in v[:-1]


Check = Callable[[JSON], bool]
_DRAFT6: Mapping[str, Check] = {
    "type": _type,
    "enum": _array,
    "const": _anything,
    "default": _anything,
    "examples": _array,
    "required": _string_array,
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), _number),
    "multipleOf": lambda v: _number(v) and v > 0,
    **dict.fromkeys(("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"), _count),
    "uniqueItems": _boolean,
    "pattern": _regex,
    **dict.fromkeys(("format", "title", "description"), _string),
    "$ref": _uri_reference,
    "$schema": _dialect_uri,
    "$id": _id,
    **dict.fromkeys(("properties", "definitions"), _schema_map),
    "patternProperties": _pattern_map,
    "items": _items_draft7,
    **dict.fromkeys(("additionalProperties", "additionalItems", "not", "propertyNames", "contains"), _schema),
    **dict.fromkeys(("anyOf", "allOf", "oneOf"), _schemas),
}
_DRAFT7: Mapping[str, Check] = {
    **_DRAFT6,
    **dict.fromkeys(("$comment", "contentEncoding", "contentMediaType"), _string),
    "readOnly": _boolean,
    **dict.fromkeys(("if", "then", "else"), _schema),
}
_2019: Mapping[str, Check] = {
    **_DRAFT7,
    **dict.fromkeys(("writeOnly", "deprecated"), _boolean),
    **dict.fromkeys(("$defs", "dependentSchemas"), _schema_map),
    **dict.fromkeys(("unevaluatedItems", "unevaluatedProperties", "contentSchema"), _schema),
    **dict.fromkeys(("minContains", "maxContains"), _count),
}
_2020: Mapping[str, Check] = {
    **{k: v for k, v in _2019.items() if k != "additionalItems"},
    "items": _schema,
    "prefixItems": _schemas,
}
# Every keyword some meta-schema constrains: one of these not modelled above means "ask jsonschema";
# any other key is an unknown keyword, which every dialect allows.
_CONSTRAINED = frozenset(
    {
        *_2019,
        *_2020,
        "$schema",
        "$id",
        "id",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveAnchor",
        "$recursiveRef",
        "$vocabulary",
        "dependencies",
        "dependentRequired",
        "disallow",
        "extends",
        "divisibleBy",
    }
)
TABLES: Mapping[str, Mapping[str, Check]] = {
    "Draft6Validator": _DRAFT6,
    "Draft7Validator": _DRAFT7,
    "Draft201909Validator": _2019,
    "Draft202012Validator": _2020,
}


def shallow_valid(dialect: str, node: Mapping[str, JSON]) -> bool:
    """True when `node` (as `schema_walk._shallow` leaves it) certainly satisfies `dialect`'s meta-schema."""
    table = TABLES.get(dialect)
    if table is None:
        return False
    for key, value in node.items():
        check = table.get(key)
        if check is None:
            if key in _CONSTRAINED:
                return False  # a keyword of some dialect that is not modelled here (or `$schema`, `$id`)
            continue
        if not check(value):
            return False
    return True


# What a `default` is checked against (TOOL016): annotations, and assertions on scalars.
_ANNOTATIONS = frozenset(
    {"title", "description", "$comment", "examples", "readOnly", "writeOnly", "deprecated", "format", "default"}
    | {"contentEncoding", "contentMediaType", "$schema", "$id"}
)
_TYPES: Mapping[str, Callable[[JSON], bool]] = {
    "string": _string,
    "boolean": _boolean,
    "null": lambda v: v is None,
    "number": _number,
    "integer": lambda v: _number(v) and float(v).is_integer(),
    "array": _array,
    "object": lambda v: isinstance(v, dict),
}


def default_valid(dialect: str, node: Mapping[str, JSON]) -> bool:
    """True when `node["default"]` certainly satisfies `node` (`instance_valid`; False: ask jsonschema)."""
    return "default" in node and instance_valid(dialect, node, node["default"])


def instance_valid(dialect: str, schema: JSON, value: JSON) -> bool:
    """True when `value` certainly satisfies `schema` (a schema that passed its meta-schema) under `dialect`,
    as `cls(schema).is_valid(value)` would say (formats not asserted); False: ask jsonschema. Objects and
    arrays are checked member by member (`properties`, `required`, `additionalProperties`, `items`, sizes);
    the gateway's argument check (runtime/gateway.py) asks this first."""
    if dialect not in TABLES:
        return False
    return _satisfies(schema, value, 0)


def _satisfies(schema: JSON, value: JSON, depth: int) -> bool:
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict) or depth > 8:
        return False
    for key, rule in schema.items():
        if key in _ANNOTATIONS or key not in _CONSTRAINED:
            continue  # an annotation, or an unknown keyword: neither asserts anything
        if key in ("anyOf", "allOf") and isinstance(rule, list) and rule:
            passes = (_satisfies(sub, value, depth + 1) for sub in rule)
            if not (any(passes) if key == "anyOf" else all(passes)):
                return False
        elif isinstance(value, dict | list) and key in _MEMBERS:
            if not _members(key, rule, schema, value, depth):
                return False
        elif not _holds(key, rule, value):
            return False
    return True


# Keywords checked member by member for a non-empty object or array (instance checks only).
_MEMBERS = frozenset(
    {"properties", "required", "additionalProperties", "items", "minItems", "maxItems"}
    | {"minProperties", "maxProperties", "uniqueItems"}
)


def _members(key: str, rule: JSON, schema: dict[str, JSON], value: JSON, depth: int) -> bool:
    if isinstance(value, list):
        if key in _OBJECT_KEYWORDS:
            return True  # an object keyword asserts nothing on an array
        if key == "items":  # one schema for every item (2020-12; and draft-06 to 2019-09 without a list form)
            if not isinstance(rule, dict | bool) or "prefixItems" in schema or "additionalItems" in schema:
                return False
            return all(_satisfies(rule, item, depth + 1) for item in value)
        if key in ("minItems", "maxItems"):
            return _count(rule) and (len(value) >= rule if key == "minItems" else len(value) <= rule)
        if key == "uniqueItems":
            return rule is False or len(value) < 2  # equality of JSON values is jsonschema's to judge
        return False
    assert isinstance(value, dict)
    if key in _ARRAY_KEYWORDS:
        return True  # an array keyword asserts nothing on an object
    if "patternProperties" in schema:
        return False
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return False
    if key == "properties":
        return all(_satisfies(properties[k], v, depth + 1) for k, v in value.items() if k in properties)
    if key == "required":
        return isinstance(rule, list) and all(isinstance(k, str) and k in value for k in rule)
    if key == "additionalProperties":
        extra = [v for k, v in value.items() if k not in properties]
        return all(_satisfies(rule, v, depth + 1) for v in extra)
    if key in ("minProperties", "maxProperties"):
        return _count(rule) and (len(value) >= rule if key == "minProperties" else len(value) <= rule)
    return False


def _holds(key: str, rule: JSON, value: JSON) -> bool:
    if key == "type":
        names = [rule] if isinstance(rule, str) else rule
        return isinstance(names, list) and any(isinstance(n, str) and n in _TYPES and _TYPES[n](value) for n in names)
    if key in ("enum", "const"):
        options = rule if key == "enum" else [rule]
        # strings only: JSON equality of numbers and booleans is jsonschema's to judge
        return isinstance(value, str) and isinstance(options, list) and value in options
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if not _number(rule):
            return False
        if not _number(value):
            return not isinstance(value, int | float)  # a non-number passes; a bool or nan: ask jsonschema
        bound, v = float(rule), float(value)
        return {
            "minimum": v >= bound,
            "maximum": v <= bound,
            "exclusiveMinimum": v > bound,
            "exclusiveMaximum": v < bound,
        }[key]
    if key in ("minLength", "maxLength"):
        if not _count(rule) or not isinstance(value, str):
            return _count(rule) and not isinstance(value, str)
        return bool(len(value) >= rule if key == "minLength" else len(value) <= rule)
    if key == "pattern":
        if not _regex(rule):
            return False
        if not isinstance(value, str):
            return True
        from quiver.regex_budget import linear_search

        return linear_search(rule, value) is True  # None (only `re` can tell, maybe slowly): jsonschema's
    if key in _ARRAY_KEYWORDS:
        return not isinstance(value, list) or value == []
    if key in _OBJECT_KEYWORDS:
        return not isinstance(value, dict) or value == {}
    return False  # any other assertion (anyOf, multipleOf, if, ...): jsonschema's to judge


# Keywords that assert only on arrays (or objects). An array or object is checked member by member for
# `_MEMBERS`; the others pass an empty one (there is nothing for them to reject) and are jsonschema's otherwise.
_ARRAY_KEYWORDS = frozenset(
    {"items", "prefixItems", "additionalItems", "unevaluatedItems", "uniqueItems", "maxItems", "minItems"}
)
_OBJECT_KEYWORDS = frozenset(
    {"properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames"}
    | {"maxProperties", "minProperties", "required", "dependentRequired", "dependentSchemas", "dependencies"}
)
