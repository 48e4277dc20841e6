"""Local witness candidates: values accepted by one schema node that another node may reject.

Each helper returns a short, deterministic list; the caller embeds each value in a whole instance and
jsonschema decides. Filters here only skip values that certainly fail the accepting side.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from quiver.contract._json_type import json_type
from quiver.contract._sample import (
    FORMAT_SAMPLES,
    PLAIN_STRINGS,
    NoSample,
    number_ok,
    regex_sample,
    sample,
    sample_schema,
    sample_type,
    string_ok,
)
from quiver.contract.document import Document
from quiver.contract.schema import Shape, type_allows, value_key
from quiver.model import JSON

MAX_CANDIDATES = 24
_GENERIC: tuple[JSON, ...] = ("quiver", "x", "", 0, 1, -1, 0.5, True, False, None, {}, [])


def first(values: Iterable[JSON], limit: int = MAX_CANDIDATES) -> list[JSON]:
    """Deduplicated, at most `limit` values, in order."""
    out: list[JSON] = []
    seen: set[str] = set()
    for value in values:
        key = value_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
        if len(out) >= limit:
            break
    return out


def try_sample(shape: Shape, doc: Document) -> list[JSON]:
    try:
        return [sample(shape, doc)]
    except NoSample:
        return []


def of_type(a: Shape, kind: str, doc: Document) -> list[JSON]:
    """Values of JSON type `kind` that `a` accepts ("number" means a non-integer number)."""
    if a.enum is not None:
        return [v for v in a.enum if json_type(v) == kind and type_allows(a.types, v)]
    if kind == "number":
        return [v for v in numbers_near(a) if not float(v).is_integer() and number_ok(a, v)][:3]
    try:
        return [sample_type(replace(a, types=frozenset({kind}), branches=()), kind, doc)]
    except NoSample:
        return []


def outside_enum(a: Shape, allowed: tuple[JSON, ...], doc: Document, base: list[JSON]) -> list[JSON]:
    keys = {value_key(v) for v in allowed}
    pool = [*base, *try_sample(a, doc), *_GENERIC, *(s + "_" for s in PLAIN_STRINGS), *numbers_near(a)]
    return [v for v in pool if value_key(v) not in keys and type_allows(a.types, v)]


def numbers_near(*shapes: Shape) -> list[float]:
    """Numbers around every bound of the shapes, then a few small ones."""
    points: list[float] = []
    for shape in shapes:
        for value in shape.numeric.values():
            points.extend([value - 1, value - 0.5, value, value + 0.5, value + 1])
        step = shape.numeric.get("multipleOf")
        if step:
            points.extend([step, step * 2, step + 1, step / 2])
    points.extend([0, 1, -1, 0.5, 2, 3])
    return [int(p) if float(p).is_integer() else p for p in points if math.isfinite(p)]


def numbers(a: Shape, b: Shape, *, integer: bool) -> list[JSON]:
    pool = numbers_near(a, b)
    return [v for v in pool if number_ok(a, v) and not number_ok(b, v) and (not integer or float(v).is_integer())]


def strings(a: Shape, b: Shape, rejects: Callable[[str], bool], doc: Document, base: list[JSON]) -> list[JSON]:
    """Strings `a` accepts and `rejects` flags (by length, pattern...)."""
    seeds = [s for s in base if isinstance(s, str)]
    seeds.extend(s for s in try_sample(a, doc) if isinstance(s, str))
    seeds.extend(text for p in a.patterns if (text := regex_sample(p)) is not None)
    seeds.extend([*PLAIN_STRINGS, *FORMAT_SAMPLES.values(), "not a " + (b.format or "value")])
    pool: list[str] = []
    lengths = {n for s in (a, b) for n in (s.lengths.get("minLength"), s.lengths.get("maxLength")) if n is not None}
    for seed in seeds:
        pool.extend([seed, seed + "!", "!" + seed, seed.upper(), seed * 2])
        for n in sorted(lengths):
            for size in (n - 1, n, n + 1):
                if size >= 0:
                    pool.append((seed or "x") * (size // max(len(seed), 1) + 1))
                    pool[-1] = pool[-1][:size]
    return [s for s in pool if string_ok(a, s) and rejects(s)]


def arrays(a: Shape, sizes: Iterable[int], doc: Document, base: list[JSON]) -> list[JSON]:
    """Arrays of the given sizes, grown from the base array with item samples or cut."""
    start = next((v for v in base if isinstance(v, list)), [])
    try:
        filler = sample_schema(True if a.items is None else a.items, doc)
    except NoSample:
        return []
    out: list[JSON] = []
    for size in sizes:
        if size >= 0:
            out.append(start[:size] + [filler] * max(0, size - len(start)))
    return out


def pattern_rejects(pattern: str) -> Callable[[str], bool]:
    from quiver.regex_budget import PatternTimeout, search

    def rejects(text: str) -> bool:
        try:
            return not search(pattern, text)  # bounded: upstream patterns
        except (re.error, PatternTimeout):
            return True

    return rejects
