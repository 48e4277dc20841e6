"""The applicator keywords the walk compares beyond types and bounds: `not`, `contains`
(`minContains`, `maxContains`), `propertyNames`, `patternProperties` and overlapping `oneOf` branches.

Each function takes the `Walker` and reports through it, like the walker's own keyword families: a change
where the `b` side rejects something the `a` side accepts, with candidate values for a witness.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from quiver.contract import _candidates as cand
from quiver.contract._sample import NoSample, first_sample, property_schema, regex_sample, sample
from quiver.contract.schema import ANY, Shape, accepted_types, branch_shapes, merge, shape_of, without_branches
from quiver.model import JSON

if TYPE_CHECKING:
    from quiver.contract._change import Change, Frame
    from quiver.contract._walker import Seen, Walker

_STRING = Shape(types=frozenset({"string"}))
_SPECULATIVE = frozenset({"speculative"})
_DECLARATION = frozenset({"declaration"})


def excluded(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> None:
    """A new `not X` breaks iff X accepts a value that `a` accepts; an old `not Y` with X inside Y is safe."""
    for node in b.excluded:
        if node in a.excluded:
            continue
        shape = shape_of(node, w.b)
        overlap = merge(a, shape)
        if overlap.never or accepted_types(overlap) == frozenset():
            continue  # X and the old schema share no type or value: proven safe
        if any(not w.reverse_probe(shape, shape_of(old, w.a), frames, seen) for old in a.excluded):
            continue  # X accepts nothing that the old `not Y` let through: proven safe

        def candidates(shape: Shape = shape) -> list[JSON]:
            return [*first_sample((merge(a, shape),), w.a), *first_sample((shape,), w.b)]

        w.emit("constraint", "added", frames, candidates, keyword="not")


def contains(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> None:
    """`contains` with `minContains`/`maxContains`: each new or stricter part is a constraint added."""
    if b.contains is None:
        return
    b_min = 1 if b.min_contains is None else b.min_contains
    if a.contains is None:
        if b_min > 0 or b.max_contains is not None:
            w.emit(
                "constraint",
                "added",
                frames,
                lambda: cand.arrays(a, [0, 1, 2], w.a, w.base(a, ANY)),
                keyword="contains",
            )
        return
    a_min = 1 if a.min_contains is None else a.min_contains
    a_item = shape_of(a.contains, w.a)

    def filled(count: int) -> list[JSON]:
        try:
            return [[sample(a_item, w.a)] * count]
        except NoSample:
            return []

    if a.contains != b.contains:
        found = w.probe(a_item, shape_of(b.contains, w.b), frames, seen)
        if found:
            local = [[c] for ch in found if len(ch.frames) == len(frames) for c in ch.candidates]
            w.emit("constraint", "added", frames, lambda: [*local, *filled(a_min)], keyword="contains")
    if b_min > a_min:
        w.emit("constraint", "added", frames, lambda: filled(a_min), keyword="minContains")
    if b.max_contains is not None and (a.max_contains is None or b.max_contains < a.max_contains):
        w.emit("constraint", "added", frames, lambda: filled((b.max_contains or 0) + 1), keyword="maxContains")


def property_names(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> None:
    """A new or stricter `propertyNames` breaks when some name the old object accepted is now refused."""
    if b.property_names is None or b.property_names == a.property_names:
        return
    old = _STRING if a.property_names is None else merge(_STRING, shape_of(a.property_names, w.a))
    found = w.probe(old, shape_of(b.property_names, w.b), frames, seen)
    if not found:
        return

    def candidates() -> list[JSON]:
        names = [*a.properties, *(c for ch in found for c in ch.candidates if isinstance(c, str))]
        return [v for name in names for v in w.with_property(a, b, name, property_schema(a, name))]

    w.emit("constraint", "added", frames, candidates, keyword="propertyNames")


def pattern_properties(
    w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen, parent: tuple[Shape, Shape]
) -> None:
    """Each pattern of `b`: an undeclared key matching it must still accept what `a` accepted there."""
    from quiver.contract._change import Frame

    for pattern, schema in b.pattern_properties.items():
        key = regex_sample(pattern)
        if key is None:
            if w.declarations and a.pattern_properties.get(pattern) != schema:
                w.emit("keyword", "changed", frames, None, _DECLARATION, keyword="patternProperties")
            continue
        if key in a.properties or key in b.properties:
            continue
        w.node(property_schema(a, key), schema, (*frames, Frame(("extra", key), *parent)), seen)
    for pattern, schema in a.pattern_properties.items():  # keys the old patterns governed, now governed by b
        key = regex_sample(pattern)
        if pattern in b.pattern_properties or key is None or key in a.properties or key in b.properties:
            continue
        w.node(schema, property_schema(b, key), (*frames, Frame(("extra", key), *parent)), seen)


def overlap(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...]) -> None:
    """Two `oneOf` branches of `b` that accept one value reject it together: a candidate, kept if confirmed."""
    parts = branch_shapes(b, w.b)
    for i, j in combinations(range(len(parts)), 2):
        both = merge(parts[i], parts[j])
        if both.never or accepted_types(both) == frozenset() or _exclusive(parts[i], parts[j]):
            continue

        def candidates(both: Shape = both) -> list[JSON]:
            return [*first_sample((merge(a, both),), w.a), *first_sample((both,), w.b)]

        w.emit("composition", "overlap", frames, candidates, _SPECULATIVE, value=f"{i} and #{j}")


def composition(
    w: Walker, a: Shape, parts: tuple[Shape, ...], b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]
) -> None:
    """Each alternative of `a` must fit some branch of `b` (beyond what `b`'s own keywords already said)."""
    base, b_parts = without_branches(b), branch_shapes(b, w.b)
    for index, part in enumerate(parts):
        known = {change.key for change in w.probe(part, base, frames, seen)}
        probes = [[c for c in w.probe(part, other, frames, seen) if c.key not in known] for other in b_parts]
        if any(not found for found in probes):
            continue
        partner = _partner(index, part, parts, b_parts)
        if partner is not None:
            w.plain(part, b_parts[partner], frames, seen)
            continue

        def candidates(part: Shape = part, probes: list[list[Change]] = probes) -> list[JSON]:
            return [*w.base(part, base), *(c for found in probes for ch in found for c in ch.candidates)]

        w.emit(
            "composition",
            "branch-removed" if a.branches else "added",
            frames,
            candidates,
            keyword=b.branch_kind or "anyOf",
            value=str(index),
        )


def _partner(index: int, part: Shape, parts: tuple[Shape, ...], others: tuple[Shape, ...]) -> int | None:
    """The branch of `others` that `part` most likely became: the same index when both have as many
    alternatives, else the only one with the same types."""
    if len(parts) == len(others) > 1:
        return index
    kinds = accepted_types(part)
    same = [i for i, other in enumerate(others) if accepted_types(other) == kinds]
    return same[0] if len(same) == 1 else None


def _exclusive(x: Shape, y: Shape) -> bool:
    """True when no object can match both: one requires a property the other forbids (a closed object, or
    `not: {required: [...]}`, the usual way to write "exactly one of")."""
    both = merge(x, y)
    if any(
        isinstance(n, dict) and set(n) == {"required"} and set(n["required"]) <= set(both.required)
        for n in both.excluded
    ):
        return True
    return any(
        name not in one.properties and property_schema(one, name) is False
        for one, other in ((x, y), (y, x))
        for name in other.required
    )
