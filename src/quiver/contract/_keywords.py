"""Numeric bounds as comparable values, and the local keyword check behind enum-value comparisons."""

from __future__ import annotations

import math
from collections.abc import Callable

from quiver.contract._sample import number_ok, string_ok
from quiver.contract.schema import Shape, show
from quiver.model import JSON


def lower_bound(shape: Shape, integer: bool) -> tuple[float, bool]:
    inclusive = shape.numeric.get("minimum", -math.inf)
    exclusive = shape.numeric.get("exclusiveMinimum", -math.inf)
    if integer:
        return max(_finite(math.ceil, inclusive), _finite(_above, exclusive)), False
    return (exclusive, True) if exclusive >= inclusive and math.isfinite(exclusive) else (inclusive, False)


def upper_bound(shape: Shape, integer: bool) -> tuple[float, bool]:
    inclusive = shape.numeric.get("maximum", math.inf)
    exclusive = shape.numeric.get("exclusiveMaximum", math.inf)
    if integer:
        return min(_finite(math.floor, inclusive), _finite(_below, exclusive)), False
    return (exclusive, True) if exclusive <= inclusive and math.isfinite(exclusive) else (inclusive, False)


def _finite(round_: Callable[[float], float], value: float) -> float:
    return round_(value) if math.isfinite(value) else value


def stricter(new: tuple[float, bool], old: tuple[float, bool], *, lower: bool) -> bool:
    if new[0] == old[0]:
        return new[1] and not old[1]
    return new[0] > old[0] if lower else new[0] < old[0]


def bound_text(bound: tuple[float, bool], keyword: str) -> str:
    if not math.isfinite(bound[0]):
        return "none"
    sign = (">" if keyword == "minimum" else "<") + ("" if bound[1] else "=")
    return f"{sign} {show(bound[0])}"


def keywords_accept(shape: Shape, value: JSON) -> bool:
    """Whether the numeric or string keywords of `shape` accept `value` (types and enum aside)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_ok(shape, value)
    if isinstance(value, str):
        return string_ok(shape, value)
    return True


def _above(value: float) -> float:
    """The least integer strictly above `value`."""
    return math.floor(value) + 1


def _below(value: float) -> float:
    """The greatest integer strictly below `value`."""
    return math.ceil(value) - 1
