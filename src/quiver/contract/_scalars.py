"""The scalar keyword families of the walk: `enum`/`const`, numeric bounds and `multipleOf`, string lengths,
`pattern` (with the language-inclusion proof of `_regex_lang`) and `format`, and the length bounds shared with
arrays and objects. Functions of the `Walker`, reporting through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from quiver.contract import _candidates as cand
from quiver.contract._keywords import bound_text, lower_bound, stricter, upper_bound
from quiver.contract._regex_lang import counterexample
from quiver.contract._sample import string_ok
from quiver.contract.formats import IMPLIED_FORMATS
from quiver.contract.schema import ANY, Shape, show, type_allows, value_key
from quiver.model import JSON

if TYPE_CHECKING:
    from quiver.contract._change import Frame
    from quiver.contract._walker import Walker


def enum(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...]) -> None:
    allowed = b.enum or ()
    keys = {value_key(v) for v in allowed}
    if a.enum is None:
        w.emit(
            "enum",
            "added",
            frames,
            lambda: cand.outside_enum(a, allowed, w.a, w.base(a, ANY)),
            a="any",
            b=show(list(allowed)),
        )
    elif a.const and b.const and value_key(a.enum[0]) not in keys:
        value = a.enum[0]
        w.emit("const", "changed", frames, lambda: [value], a=show(value), b=show(allowed[0]))
    else:
        for value in a.enum:
            if type_allows(a.types, value) and type_allows(b.types, value) and value_key(value) not in keys:
                w.emit("enum", "value-removed", frames, partial(list, (value,)), value=show(value))


def numbers(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], listed: list[JSON], *, integer: bool) -> None:
    def pool() -> list[JSON]:
        return [*listed, *cand.numbers(a, b, integer=integer)]

    for side, keyword in ((lower_bound, "minimum"), (upper_bound, "maximum")):
        old, new = side(a, integer), side(b, integer)
        if stricter(new, old, lower=keyword == "minimum"):
            name = ("exclusiveM" + keyword[1:]) if new[1] else keyword
            w.emit(
                "bound",
                "tightened",
                frames,
                pool,
                keyword=name,
                a=bound_text(old, keyword),
                b=bound_text(new, keyword),
            )
    step_a, step_b = a.numeric.get("multipleOf"), b.numeric.get("multipleOf")
    if step_b and not (step_a and float(step_a / step_b).is_integer()):
        w.emit(
            "bound",
            "tightened",
            frames,
            pool,
            keyword="multipleOf",
            a=show(step_a) if step_a else "none",
            b=show(step_b),
        )


def strings(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], listed: list[JSON]) -> None:
    def make(rejects: Callable[[str], bool], first: tuple[str, ...] = ()) -> Callable[[], list[JSON]]:
        return lambda: [*first, *listed, *cand.strings(a, b, rejects, w.a, w.base(a, b))]

    lengths(w, a, b, frames, "Length", make(lambda s: not string_ok(replace(b, patterns=()), s)))
    for pattern in b.patterns:
        if pattern not in a.patterns:
            proofs = [counterexample(old, pattern) for old in a.patterns]
            if any(proof[0] for proof in proofs):
                continue  # an old pattern's language is inside the new one's: proven safe
            found = tuple(text for _, text in proofs if text is not None)
            w.emit(
                "pattern",
                "changed" if a.patterns else "added",
                frames,
                make(cand.pattern_rejects(pattern), found),
                a=a.patterns[0] if a.patterns else "none",
                b=pattern,
            )
    if b.format and b.format != a.format and (a.format, b.format) not in IMPLIED_FORMATS:
        w.emit(
            "format",
            "changed" if a.format else "added",
            frames,
            make(lambda s: True),
            a=a.format or "none",
            b=b.format,
        )


def lengths(
    w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], noun: str, pool: Callable[[], list[JSON]]
) -> None:
    for key in (f"min{noun}", f"max{noun}"):
        old, new = a.lengths.get(key), b.lengths.get(key)
        low = key.startswith("min")
        if new is not None and (old is None or (new > old if low else new < old)):
            w.emit("bound", "tightened", frames, pool, keyword=key, a="none" if old is None else str(old), b=str(new))
