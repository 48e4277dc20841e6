"""JSON Schema helpers for contract diff: `$ref` resolution and one normalized view (`Shape`) of a schema node.

MCP tools use 2020-12 and draft-07 style schemas. `shape_of` resolves `$ref` chains (bounded, cycles
included), folds `allOf` into one node, turns `type` lists, `nullable`, `anyOf`-with-null unions and `const`
into type sets and enums, and keeps every other keyword the diff compares. The view is an approximation
used to find candidate changes; every breaking verdict is confirmed with jsonschema on the real schemas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from quiver.contract._json_type import json_type
from quiver.contract.document import REF_HINT, Document, RemoteRef
from quiver.errors import InputError
from quiver.model import JSON, canonical_json

MAX_REF_HOPS = 64  # a chain of `$ref` to `$ref` longer than this is a cycle with no schema in it
TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
NUMERIC_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
LENGTH_KEYS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
# Keywords whose change the diff does not analyse for variance: a change is named, never dropped.
NOT_ANALYSED = (
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "unevaluatedItems",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
)
# Keywords the walk compares for variance (structure, applicators, assertions), in every dialect's spelling.
ANALYSED = (
    *("$schema", "$id", "id", "$ref", "$anchor", "$defs", "definitions"),
    *("allOf", "anyOf", "oneOf", "not", "if", "then", "else"),
    *("properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames"),
    *("required", "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties"),
    *("items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains"),
    *("minItems", "maxItems", "uniqueItems", "type", "enum", "const", "nullable", "format"),
    *("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength"),
    *("pattern", "default", "description"),
)
# Annotations with no effect on validity: analysed, and invariant (`description` and `default` are reported).
ANNOTATIONS = ("title", "$comment", "deprecated", "readOnly", "writeOnly", "examples", "example")

Kind = Literal["anyOf", "oneOf"]


@dataclass(frozen=True, slots=True)
class Shape:
    """A normalized schema node. `types` None means any type; `enum` None means any value."""

    types: frozenset[str] | None = None
    enum: tuple[JSON, ...] | None = None
    const: bool = False
    never: bool = False
    numeric: Mapping[str, float] = field(default_factory=dict)
    lengths: Mapping[str, int] = field(default_factory=dict)
    unique: bool = False
    patterns: tuple[str, ...] = ()
    format: str | None = None
    properties: Mapping[str, JSON] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    additional: JSON = None  # None: absent (open); True, False or a schema
    pattern_properties: Mapping[str, JSON] = field(default_factory=dict)
    items: JSON = None  # None: absent; True, False or a schema
    prefix_items: tuple[JSON, ...] = ()
    branches: tuple[JSON, ...] = ()
    branch_kind: Kind | None = None
    dependent_required: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dependent_schemas: Mapping[str, JSON] = field(default_factory=dict)
    has_default: bool = False
    default: JSON = None
    description: str | None = None
    ref: str | None = None  # the last `$ref` followed to reach this node (cycle detection)
    unresolved: str | None = None  # a remote `$ref` that was not followed: the node is not compared
    unchecked: Mapping[str, JSON] = field(default_factory=dict)  # NOT_ANALYSED keywords present
    contains: JSON = None  # None: absent
    min_contains: int | None = None
    max_contains: int | None = None
    excluded: tuple[JSON, ...] = ()  # `not` subschemas
    conditions: tuple[tuple[JSON, JSON, JSON], ...] = ()  # (`if`, `then`, `else`), None where absent
    property_names: JSON = None  # None: absent


ANY = Shape()
NEVER = Shape(never=True)


def shape_of(node: JSON, doc: Document, *, hops: int = 0) -> Shape:
    """Normalize one schema node (resolving `$ref`, folding `allOf`, collapsing null unions)."""
    if node is True or node is None:
        return ANY
    if node is False:
        return NEVER
    if not isinstance(node, dict):
        raise InputError(
            f"schema must be a JSON object or boolean, not {json_type(node)}",
            hint="every subschema (properties, items, anyOf branches...) must be an object or true/false",
        )
    if hops > MAX_REF_HOPS:
        raise InputError("`$ref` chain never reaches a schema (cycle)", hint=REF_HINT)
    if "$ref" in node:
        try:
            found = doc.lookup(node["$ref"], doc.base_of(node))
        except RemoteRef:
            return Shape(unresolved=str(node["$ref"]))
        target = shape_of(found, doc, hops=hops + 1)
        target = replace(target, ref=str(node["$ref"]))
        rest = {k: v for k, v in node.items() if k != "$ref"}
        if not doc.siblings_apply or not rest:
            return target
        return merge(shape_of(rest, doc, hops=hops + 1), target)
    if node.get("not") in ({}, True):
        return NEVER
    shape = _own(node, doc)
    for part in node.get("allOf", ()) or ():
        shape = merge(shape, shape_of(part, doc, hops=hops + 1))
    return _collapse_null(shape, doc, hops)


def branch_shapes(shape: Shape, doc: Document) -> tuple[Shape, ...]:
    """The alternatives of an `anyOf`/`oneOf` node, each merged with the node's own keywords."""
    base = replace(shape, branches=(), branch_kind=None, ref=None)
    return tuple(merge(base, shape_of(raw, doc)) for raw in shape.branches)


def without_branches(shape: Shape) -> Shape:
    return replace(shape, branches=(), branch_kind=None)


def merge(a: Shape, b: Shape) -> Shape:
    """Both constraints at once (`allOf`): intersect types and enums, keep the stricter bound of each kind."""
    if a.never or b.never:
        return NEVER
    types = a.types if b.types is None else b.types if a.types is None else _meet(a.types, b.types)
    enum = a.enum if b.enum is None else b.enum
    if a.enum is not None and b.enum is not None:
        keys = {value_key(v) for v in b.enum}
        enum = tuple(v for v in a.enum if value_key(v) in keys)
    numeric = dict(a.numeric)
    for key, value in b.numeric.items():
        old = numeric.get(key)
        if old is None or key == "multipleOf":
            numeric[key] = value
        else:
            numeric[key] = max(old, value) if key in ("minimum", "exclusiveMinimum") else min(old, value)
    lengths = dict(a.lengths)
    for key, n in b.lengths.items():
        if key not in lengths:
            lengths[key] = n
        else:
            lengths[key] = max(lengths[key], n) if key.startswith("min") else min(lengths[key], n)
    branches, kind = a.branches or b.branches, a.branch_kind or b.branch_kind
    if a.branches and b.branches:
        branches = tuple({"allOf": [x, y]} for x in a.branches for y in b.branches)
        kind = "anyOf"
    return Shape(
        types=types,
        enum=enum,
        const=(a.const or b.const) and enum is not None and len(enum) == 1,
        numeric=numeric,
        lengths=lengths,
        unique=a.unique or b.unique,
        patterns=a.patterns + tuple(p for p in b.patterns if p not in a.patterns),
        format=a.format or b.format,
        properties=_join(a.properties, b.properties),
        required=a.required + tuple(r for r in b.required if r not in a.required),
        additional=_meet_schema(a.additional, b.additional),
        pattern_properties=_join(a.pattern_properties, b.pattern_properties),
        items=_meet_schema(a.items, b.items),
        prefix_items=_zip_schemas(a.prefix_items, b.prefix_items),
        branches=branches,
        branch_kind=kind,
        dependent_required={**b.dependent_required, **a.dependent_required},
        dependent_schemas=_join(a.dependent_schemas, b.dependent_schemas),
        has_default=a.has_default or b.has_default,
        default=a.default if a.has_default else b.default,
        description=a.description if a.description is not None else b.description,
        ref=a.ref or b.ref,
        unresolved=a.unresolved or b.unresolved,
        unchecked={**b.unchecked, **a.unchecked},
        contains=a.contains if b.contains is None else b.contains if a.contains is None else a.contains,
        min_contains=a.min_contains if a.min_contains is not None else b.min_contains,
        max_contains=a.max_contains if a.max_contains is not None else b.max_contains,
        excluded=a.excluded + tuple(x for x in b.excluded if x not in a.excluded),
        conditions=a.conditions + tuple(c for c in b.conditions if c not in a.conditions),
        property_names=_meet_schema(a.property_names, b.property_names),
    )


def activated(shape: Shape, doc: Document, present: tuple[str, ...] = ()) -> Shape:
    """`shape` for objects that hold its required properties and `present`: the dependencies those trigger
    applied (`dependentRequired {a: [b]}` with `a` required requires `b`; `dependentSchemas {a: S}` merges
    `S`), until nothing changes. The walk and the sampler both see dependencies this way, so that
    `dependentRequired`, `dependentSchemas` and `if: {required}` rewrites of one rule compare equal."""
    if not (shape.dependent_required or shape.dependent_schemas or present):
        return shape
    required = tuple(dict.fromkeys((*shape.required, *present)))
    applied: set[str] = set()
    for _ in range(MAX_REF_HOPS):
        closure = list(required)
        for name in closure:
            closure.extend(n for n in shape.dependent_required.get(name, ()) if n not in closure)
        required = tuple(closure)
        pending = [n for n in required if n in shape.dependent_schemas and n not in applied]
        if not pending:
            break
        for name in pending:
            applied.add(name)
            shape = merge(shape, shape_of(shape.dependent_schemas[name], doc))
        required = tuple(dict.fromkeys((*required, *shape.required)))
    return replace(shape, required=required)


def accepted_types(shape: Shape) -> frozenset[str] | None:
    """The JSON types some value of the node may have (None: all). `integer` is listed apart from `number`."""
    if shape.never:
        return frozenset()
    if shape.enum is not None:
        return frozenset(json_type(v) for v in shape.enum if type_allows(shape.types, v))
    return shape.types


def type_allows(types: frozenset[str] | None, value: JSON) -> bool:
    if types is None:
        return True
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def covers(types: frozenset[str] | None, kind: str) -> bool:
    """True when a node with `types` accepts every value of JSON type `kind`."""
    return types is None or kind in types or (kind == "integer" and "number" in types)


def value_key(value: JSON) -> str:
    """Equality as JSON Schema sees it: 1 == 1.0, but true != 1."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return canonical_json(value)


def describe_types(types: frozenset[str] | None) -> str:
    if types is None:
        return "any"
    if not types:
        return "nothing"
    return " | ".join([t for t in TYPES if t in types] + sorted(types - set(TYPES)))


def show(value: JSON) -> str:
    """A short JSON rendering of a value for messages."""
    text = canonical_json(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _own(node: Mapping[str, JSON], doc: Document) -> Shape:
    raw_type = node.get("type")
    types: frozenset[str] | None = None
    if isinstance(raw_type, str):
        types = frozenset({raw_type})
    elif isinstance(raw_type, list):
        types = frozenset(t for t in raw_type if isinstance(t, str))
    enum: tuple[JSON, ...] | None = None
    if "const" in node:
        enum = (node["const"],)
    elif isinstance(node.get("enum"), list):
        enum = tuple(node["enum"])
    if node.get("nullable") is True:
        types = None if types is None else types | {"null"}
        enum = None if enum is None else (*enum, None)
    numeric: dict[str, float] = {k: node[k] for k in NUMERIC_KEYS if _is_number(node.get(k))}
    if numeric.get("multipleOf", 1) <= 0:
        del numeric["multipleOf"]
    for flag, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and plain in numeric:  # draft-04 boolean form
            numeric[flag] = numeric.pop(plain)
    items, prefix = node.get("items"), node.get("prefixItems")
    if isinstance(items, list):  # draft-07 tuple form
        prefix, items = items, node.get("additionalItems")
    kind: Kind | None = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else None
    deps = dict(node.get("dependentRequired") or {})
    dep_schemas = dict(node.get("dependentSchemas") or {})
    for name, value in (node.get("dependencies") or {}).items():  # draft-04/06/07: both in one keyword
        if isinstance(value, list):
            deps.setdefault(name, value)
        else:
            dep_schemas.setdefault(name, value)
    condition = (node["if"], node.get("then"), node.get("else")) if "if" in node else None
    counts = {k: int(node[k]) for k in ("minContains", "maxContains") if _is_number(node.get(k))}
    return Shape(
        types=types,
        enum=enum,
        const="const" in node,
        numeric=numeric,
        lengths={k: int(node[k]) for k in LENGTH_KEYS if _is_number(node.get(k))},
        unique=node.get("uniqueItems") is True,
        patterns=(node["pattern"],) if isinstance(node.get("pattern"), str) else (),
        format=node["format"] if isinstance(node.get("format"), str) else None,
        properties=dict(node.get("properties") or {}),
        required=tuple(dict.fromkeys(r for r in node.get("required") or () if isinstance(r, str))),
        additional=node.get("additionalProperties", node.get("unevaluatedProperties")),
        pattern_properties=dict(node.get("patternProperties") or {}),
        items=items,
        prefix_items=tuple(prefix) if isinstance(prefix, list) else (),
        branches=tuple(node[kind]) if kind and isinstance(node[kind], list) else (),
        branch_kind=kind,
        dependent_required={k: tuple(v) for k, v in deps.items() if isinstance(v, list)},
        dependent_schemas=dep_schemas,
        has_default="default" in node,
        default=node.get("default"),
        description=node["description"] if isinstance(node.get("description"), str) else None,
        unchecked={k: node[k] for k in NOT_ANALYSED if k in node},
        contains=node.get("contains"),
        min_contains=counts.get("minContains"),
        max_contains=counts.get("maxContains"),
        excluded=(node["not"],) if "not" in node else (),
        conditions=(condition,) if condition else (),
        property_names=node.get("propertyNames"),
    )


def _collapse_null(shape: Shape, doc: Document, hops: int) -> Shape:
    """`anyOf: [X, {type: null}]` becomes X with null allowed, so a nullable field keeps its keywords."""
    if not shape.branches:
        return shape
    parts = [shape_of(b, doc, hops=hops + 1) for b in shape.branches]
    if any(p.never for p in parts):  # `{"not": {}}` branches accept nothing: drop them
        kept = tuple(raw for raw, p in zip(shape.branches, parts, strict=True) if not p.never)
        shape, parts = replace(shape, branches=kept), [p for p in parts if not p.never]
        if not kept:
            return NEVER
    values = tuple(v for p in parts for v in p.enum or () if type_allows(p.types, v))
    distinct = shape.branch_kind == "anyOf" or len({value_key(v) for v in values}) == len(values)
    if distinct and all(_only_values(raw, p) for raw, p in zip(shape.branches, parts, strict=True)):
        return merge(without_branches(shape), Shape(enum=values, const=len(values) == 1))
    nulls = [p for p in parts if accepted_types(p) == frozenset({"null"})]
    rest = [p for p in parts if accepted_types(p) != frozenset({"null"})]
    if not nulls or len(rest) != 1 or rest[0].branches:
        return shape
    base = merge(without_branches(shape), rest[0])
    if not type_allows(shape.types, None):
        return base
    return replace(
        base,
        types=None if base.types is None else base.types | {"null"},
        enum=None if base.enum is None else (*base.enum, None),
        const=False,
    )


_VALUE_KEYS = frozenset({"const", "enum", "type", "title", "description", "$comment"})


def _only_values(raw: JSON, part: Shape) -> bool:
    """A branch that only lists values (`{"const": x}`, `{"enum": [...]}`): an anyOf of them is one enum."""
    return isinstance(raw, dict) and part.enum is not None and not part.branches and set(raw) <= _VALUE_KEYS


def _meet(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    out = a & b
    if ("integer" in a and "number" in b) or ("integer" in b and "number" in a):
        out |= {"integer"}
    return out


def _meet_schema(a: JSON, b: JSON) -> JSON:
    if a is None or a is True:
        return b
    if b is None or b is True:
        return a
    if a is False or b is False:
        return False
    return {"allOf": [a, b]}


def _join(a: Mapping[str, JSON], b: Mapping[str, JSON]) -> dict[str, JSON]:
    out = dict(a)
    for key, value in b.items():
        out[key] = value if key not in out or out[key] == value else _meet_schema(out[key], value)
    return out


def _zip_schemas(a: tuple[JSON, ...], b: tuple[JSON, ...]) -> tuple[JSON, ...]:
    longest = max(len(a), len(b))
    return tuple(_meet_schema(a[i] if i < len(a) else None, b[i] if i < len(b) else None) for i in range(longest))


def _is_number(value: JSON) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
