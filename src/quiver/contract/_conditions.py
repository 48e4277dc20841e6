"""`if`/`then`/`else` in the walk: a conditional of `b` that some value of `a` fails.

A value passes `{if: I, then: T, else: E}` when it is in I and T, or outside I and in E. When `a` has a
conditional with the same `if`, the branches are compared as schemas (a changed `then` reports what changed in
it). Any other conditional of `b` is checked on the regions of `a`: `a`'s own conditionals split its values
into "took `then`" (inside their `if`) and "took `else`" (outside it); on each region, the values inside I
must pass T and those outside I must pass E. A region a probe proves empty there (its `if` inside I, or I
inside the `if` it is outside of) or proves to pass is fine; when every region is, the change is silent (a
condition widened to no effect, a `dependentRequired` written as `if: {required}`). Otherwise it is a
constraint change whose candidates come from the failing regions, for jsonschema to confirm.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from quiver.contract.schema import Shape, accepted_types, merge, shape_of
from quiver.errors import InputError
from quiver.model import JSON

if TYPE_CHECKING:
    from quiver.contract._change import Change, Frame
    from quiver.contract._walker import Seen, Walker

Condition = tuple[JSON, JSON, JSON]
MAX_SPLIT = 3  # conditionals of `a` that split it into regions (2^3 regions); the rest are left out (wider)


def conditions(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> None:
    """Every conditional of `b` that `a` does not have: compared branch by branch, or region by region."""
    for cond in b.conditions:
        if cond in a.conditions:
            continue
        same = next((c for c in a.conditions if c[0] == cond[0]), None)
        if same is not None:
            _branches(w, a, b, cond, same, frames, seen)
            continue
        found = failing(w, a, cond, frames, seen)
        if found is not None:

            def candidates(found: list[Change] = found) -> list[JSON]:
                return [*w.lifted(found, frames), *w.base(_plain(a), _plain(b)), *w.everything(a, b)]

            w.emit("constraint", "added", frames, candidates, keyword="if/then/else")


def _branches(
    w: Walker, a: Shape, b: Shape, cond: Condition, same: Condition, frames: tuple[Frame, ...], seen: Seen
) -> None:
    """The same `if` on both sides: what each changed branch rejects, beyond what the node already does."""
    for index in (1, 2):
        if same[index] == cond[index]:
            continue
        plain_a, plain_b = _plain(a), _plain(b)
        if index == 1:  # values that take the `then` branch satisfy the `if`: sample them so
            plain_a, plain_b = merge(plain_a, shape_of(cond[0], w.a)), merge(plain_b, shape_of(cond[0], w.b))
        known = {change.key for change in w.probe(plain_a, plain_b, frames, seen)}
        a_part = merge(plain_a, shape_of(True if same[index] is None else same[index], w.a))
        b_part = merge(plain_b, shape_of(True if cond[index] is None else cond[index], w.b))
        w.changes.extend(c for c in w.probe(a_part, b_part, frames, seen) if c.key not in known)


def failing(w: Walker, a: Shape, cond: Condition, frames: tuple[Frame, ...], seen: Seen) -> list[Change] | None:
    """None when every region of `a` passes `cond` (proven); else the changes that show where it may fail
    (the conditional's schemas are read in document b)."""
    try:
        test = shape_of(cond[0], w.b)
        then = None if cond[1] is None else shape_of(cond[1], w.b)
        other = None if cond[2] is None else shape_of(cond[2], w.b)
        return _check(w, a, test, then, other, frames, seen)
    except InputError:  # a region mixes both documents' `$ref`s: not proven, and no candidate to offer
        return []


def _check(
    w: Walker,
    a: Shape,
    test: Shape,
    then: Shape | None,
    other: Shape | None,
    frames: tuple[Frame, ...],
    seen: Seen,
) -> list[Change] | None:
    failing: list[Change] = []
    proven = True
    for region, outside in _regions(w, a):
        if then is not None:
            inside = merge(region, test)
            if not _empty(w, inside, outside, frames, seen) and (found := w.probe(inside, then, frames, seen)):
                proven = False
                failing += found + [c for n in outside for c in w.probe_a(inside, n, frames, seen)]
        escapes = [] if other is None else w.probe(region, test, frames, seen)
        if other is not None and escapes and (found := w.probe(region, other, frames, seen)):
            proven = False
            failing += escapes + found + [c for n in outside for c in w.probe_a(region, n, frames, seen)]
    return None if proven else failing


def _regions(w: Walker, a: Shape) -> list[tuple[Shape, tuple[Shape, ...]]]:
    """`a` split by its own conditionals: (values that took each branch, the `if`s they are outside of)."""
    regions: list[tuple[Shape, tuple[Shape, ...]]] = [(replace(a, conditions=()), ())]
    for test_raw, then_raw, other_raw in a.conditions[:MAX_SPLIT]:
        test = shape_of(test_raw, w.a)
        then = shape_of(True if then_raw is None else then_raw, w.a)
        other = shape_of(True if other_raw is None else other_raw, w.a)
        regions = [
            part
            for shape, outside in regions
            for part in ((merge(merge(shape, test), then), outside), (merge(shape, other), (*outside, test)))
        ]
    return [(shape, outside) for shape, outside in regions if not _nothing(shape)]


def _empty(w: Walker, shape: Shape, outside: tuple[Shape, ...], frames: tuple[Frame, ...], seen: Seen) -> bool:
    """True when no value is in `shape` and outside every `if` of `outside` (`shape` inside one of them)."""
    return _nothing(shape) or any(not w.probe_a(shape, test, frames, seen) for test in outside)


def _nothing(shape: Shape) -> bool:
    return shape.never or accepted_types(shape) == frozenset()


def _plain(shape: Shape) -> Shape:
    return replace(shape, conditions=(), branches=(), branch_kind=None)
