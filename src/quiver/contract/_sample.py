"""Minimal instances of a schema node: the starting point of every witness.

A sample is a best effort (jsonschema confirms every witness built from one). It respects types,
enum/const, required properties, numeric and length bounds, `multipleOf`, simple patterns and formats.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from quiver.contract.document import Document
from quiver.contract.schema import Shape, activated, branch_shapes, merge, shape_of, type_allows
from quiver.errors import InputError
from quiver.model import JSON

MAX_DEPTH = 12
_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "regex": "a",
    "json-pointer": "/a",
}
PLAIN_STRINGS = ("x", "a", "0", "A", "abc", "x-1", "", " ", "!", "quiver")


class NoSample(Exception):
    """The node admits no value the sampler can build."""


def sample(shape: Shape, doc: Document, *, depth: int = 0) -> JSON:
    """A small value accepted by `shape` (raise NoSample when none is found)."""
    if depth > MAX_DEPTH or shape.never:
        raise NoSample
    if shape.conditions:  # a value taking the `then` branch satisfies the conditional; else try `else`
        (test, then, other), rest = shape.conditions[0], replace(shape, conditions=shape.conditions[1:])
        taken = merge(merge(rest, shape_of(test, doc)), shape_of(True if then is None else then, doc))
        for option in (taken, merge(rest, shape_of(True if other is None else other, doc))):
            try:
                return sample(option, doc, depth=depth + 1)
            except (NoSample, InputError):
                continue
        raise NoSample
    if shape.enum is not None:
        for value in shape.enum:
            if type_allows(shape.types, value):
                return value
        raise NoSample
    if shape.branches:
        for branch in branch_shapes(shape, doc):
            try:
                return sample(branch, doc, depth=depth + 1)
            except NoSample:
                continue
        raise NoSample
    for kind in preferred_types(shape):
        try:
            return sample_type(shape, kind, doc, depth=depth)
        except NoSample:
            continue
    raise NoSample


def first_sample(shapes: Iterable[Shape], doc: Document) -> list[JSON]:
    """A sample of the first shape that has one: [value], or [] when none does.

    Callers pass a merged view (both schemas at once) before the accepting side alone. A merged view may hold
    `$ref`s written for the other document; one that does not resolve in `doc` means "use the next shape",
    not a broken input (both documents were checked by `Document.load`).
    """
    for shape in shapes:
        try:
            return [sample(shape, doc)]
        except (NoSample, InputError):
            continue
    return []


def sample_schema(node: JSON, doc: Document, *, depth: int = 0) -> JSON:
    return sample(shape_of(node, doc), doc, depth=depth)


def preferred_types(shape: Shape) -> tuple[str, ...]:
    """The types to try, most informative first (inferred from keywords when `type` is absent)."""
    if shape.types is not None:
        return tuple(t for t in _ORDER if t in shape.types)
    hinted: list[str] = []
    if shape.properties or shape.required or shape.additional is not None:
        hinted.append("object")
    if shape.items is not None or shape.prefix_items:
        hinted.append("array")
    if shape.patterns or shape.format or {"minLength", "maxLength"} & set(shape.lengths):
        hinted.append("string")
    if shape.numeric:
        hinted.append("number")
    return tuple(dict.fromkeys([*hinted, "string", "integer", "boolean", "null", "object", "array"]))


def sample_type(shape: Shape, kind: str, doc: Document, *, depth: int = 0) -> JSON:
    if kind == "null":
        return None
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return sample_number(shape, integer=True) if kind == "integer" else sample_number(shape, integer=False)
    if kind == "string":
        for text in string_candidates(shape):
            if string_ok(shape, text):
                return text
        raise NoSample
    if kind == "array":
        return _sample_array(shape, doc, depth)
    if kind == "object":
        return _sample_object(shape, doc, depth)
    raise NoSample


def sample_number(shape: Shape, *, integer: bool) -> int | float:
    """The number nearest 0 inside the bounds, a multiple of `multipleOf` when one is set."""
    num = shape.numeric
    low = max(num.get("minimum", -math.inf), num.get("exclusiveMinimum", -math.inf))
    high = min(num.get("maximum", math.inf), num.get("exclusiveMaximum", math.inf))
    step = num.get("multipleOf", 1 if integer else 0)
    start = min(max(0.0, low), high)
    for raw in (start, math.floor(start) + 1, low + 1, low + 0.5, high - 1, high - 0.5, high):
        if not math.isfinite(raw):
            continue
        if step:
            raw = math.ceil(raw / step) * step
        value: int | float = int(raw) if float(raw).is_integer() else raw
        if integer and not float(value).is_integer():
            continue
        if number_ok(shape, value):
            return value
    raise NoSample


def number_ok(shape: Shape, value: float) -> bool:
    num = shape.numeric
    return (
        value >= num.get("minimum", -math.inf)
        and value > num.get("exclusiveMinimum", -math.inf)
        and value <= num.get("maximum", math.inf)
        and value < num.get("exclusiveMaximum", math.inf)
        and (not num.get("multipleOf") or float(value / num["multipleOf"]).is_integer())
    )


def string_ok(shape: Shape, text: str) -> bool:
    if len(text) < shape.lengths.get("minLength", 0) or len(text) > shape.lengths.get("maxLength", math.inf):
        return False
    return all(_search(p, text) for p in shape.patterns)


def string_candidates(shape: Shape) -> Iterable[str]:
    """Strings worth trying for a string node, before length padding."""
    seeds: list[str] = []
    if shape.format in FORMAT_SAMPLES:
        seeds.append(FORMAT_SAMPLES[shape.format])
    seeds.extend(text for p in shape.patterns if (text := regex_sample(p)) is not None)
    seeds.extend(PLAIN_STRINGS)
    low = shape.lengths.get("minLength", 0)
    for seed in seeds:
        yield seed
        if len(seed) < low:
            yield seed + (seed[-1:] or "x") * (low - len(seed))
            yield "x" * low


def _sample_array(shape: Shape, doc: Document, depth: int) -> list[JSON]:
    out = [sample_schema(item, doc, depth=depth + 1) for item in shape.prefix_items]
    low = shape.lengths.get("minItems", 0)
    if len(out) < low:
        if shape.items is False:
            raise NoSample
        filler = sample_schema(shape.items, doc, depth=depth + 1)
        out.extend([filler] * (low - len(out)))
    if len(out) > shape.lengths.get("maxItems", math.inf):
        raise NoSample
    return out


def _sample_object(shape: Shape, doc: Document, depth: int) -> dict[str, JSON]:
    shape = activated(shape, doc)
    out: dict[str, JSON] = {}
    for name in shape.required:
        out[name] = sample_schema(property_schema(shape, name), doc, depth=depth + 1)
    for name in shape.properties:
        if len(out) >= shape.lengths.get("minProperties", 0):
            break
        out.setdefault(name, sample_schema(shape.properties[name], doc, depth=depth + 1))
    return out


def property_schema(shape: Shape, name: str) -> JSON:
    """The schema a property value must match: declared, pattern or additional properties."""
    if name in shape.properties:
        return shape.properties[name]
    for pattern, node in shape.pattern_properties.items():
        if _search(pattern, name):
            return node
    return True if shape.additional is None else shape.additional


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True  # a pattern Python cannot read is left to jsonschema's confirmation


def regex_sample(pattern: str) -> str | None:
    """A short string matching a simple regular expression, or None."""
    try:
        parsed = importlib.import_module("re._parser").parse(pattern)
        text = _emit(parsed)
    except (re.error, _Unsupported, RecursionError):
        return None
    return text if _search(pattern, text) else None


class _Unsupported(Exception):
    pass


def _emit(items: Any) -> str:  # Any: re._parser's private token lists have no type stubs
    return "".join(_emit_one(str(op), arg) for op, arg in items)


def _emit_one(op: str, arg: Any) -> str:
    if op == "LITERAL":
        return chr(arg)
    if op == "ANY":
        return "a"
    if op == "AT":
        return ""
    if op == "IN":
        return _emit_class(arg)
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = arg
        return _emit(body) * int(low or min(1, high))
    if op == "SUBPATTERN":
        return _emit(arg[-1])
    if op == "ATOMIC_GROUP":
        return _emit(arg)
    if op == "BRANCH":
        return _emit(arg[1][0])
    if op == "CATEGORY":
        return _CATEGORY.get(str(arg), "a")
    raise _Unsupported(op)


_CATEGORY = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_WORD": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_NOT_SPACE": "a",
}


def _emit_class(members: Any) -> str:
    if members and str(members[0][0]) == "NEGATE":
        for char in "a0-_A ":
            if re.fullmatch(_class_regex(members), char):
                return char
        raise _Unsupported("NEGATE")
    op, arg = members[0]
    if str(op) == "LITERAL":
        return chr(arg)
    if str(op) == "RANGE":
        return chr(arg[0])
    if str(op) == "CATEGORY":
        return _CATEGORY.get(str(arg), "a")
    raise _Unsupported(str(op))


def _class_regex(members: Any) -> str:
    parts = []
    for op, arg in members[1:]:
        if str(op) == "LITERAL":
            parts.append(re.escape(chr(arg)))
        elif str(op) == "RANGE":
            parts.append(f"{re.escape(chr(arg[0]))}-{re.escape(chr(arg[1]))}")
        elif str(op) == "CATEGORY":
            parts.append({"CATEGORY_DIGIT": r"\d", "CATEGORY_WORD": r"\w", "CATEGORY_SPACE": r"\s"}.get(str(arg), ""))
    return f"[^{''.join(parts)}]" if parts else "."
