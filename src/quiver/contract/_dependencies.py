"""`dependentRequired` and `dependentSchemas` (draft-07 `dependencies`) in the walk.

An entry `{name: X}` of `b` is the conditional `if: {required: [name]}, then: X` (X a schema, or `required`
for a list), and is judged as one (`_conditions.failing`): it breaks iff some object of `a` holding `name`
fails X, with the dependencies and conditionals of `a` applied to it. A proven entry is silent, so an
equivalent rewrite across the families (`dependentRequired {a: [b]}` as `dependentSchemas {a: {required:
[b]}}` or `if: {required: [a]}, then: {required: [b]}`) is no finding. A failing one is reported with
candidates: the object with `name` and without the newly needed properties, then the values the probe found.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from quiver.contract._conditions import failing
from quiver.contract._sample import property_schema
from quiver.contract.schema import Shape, activated
from quiver.model import JSON

if TYPE_CHECKING:
    from quiver.contract._change import Change, Frame
    from quiver.contract._walker import Seen, Walker


def dependencies(w: Walker, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> None:
    """Each `dependentRequired`/`dependentSchemas` entry of `b` that some object of `a` holding its key fails."""
    for name, needs in b.dependent_required.items():
        if _never_sent(a, name):
            continue
        found = failing(w, a, ({"required": [name]}, {"required": list(needs)}, None), frames, seen)
        if found is None:
            continue
        present = activated(a, w.a, (name,))
        missing = tuple(n for n in needs if n not in present.required) or tuple(needs)
        w.emit(
            "dependent-required",
            "added",
            frames,
            partial(_candidates, w, present, b, found, frames, missing),
            prop=name,
            value=", ".join(f"`{m}`" for m in missing),
        )
    for name, schema in b.dependent_schemas.items():
        if a.dependent_schemas.get(name) == schema or _never_sent(a, name):
            continue
        found = failing(w, a, ({"required": [name]}, schema, None), frames, seen)
        if found is not None:
            present = activated(a, w.a, (name,))
            w.emit(
                "dependent-schema", "added", frames, partial(_candidates, w, present, b, found, frames, ()), prop=name
            )


def _candidates(
    w: Walker,
    present: Shape,
    b: Shape,
    found: list[Change],
    frames: tuple[Frame, ...],
    missing: tuple[str, ...],
) -> list[JSON]:
    """Objects of `a` holding the key (and what `a` requires with it) minus the newly needed properties; the
    probe's values lifted to the object; the object with every property sent."""
    objects = [value for value in w.base(present, b) if isinstance(value, dict)]
    without = [{k: v for k, v in value.items() if k not in missing} for value in objects] if missing else []
    return [*without, *w.lifted(found, frames), *objects, *w.everything(present, b)]


def _never_sent(shape: Shape, name: str) -> bool:
    """True when `shape` rejects property `name` whatever its value: its dependencies never apply."""
    return name not in shape.properties and property_schema(shape, name) is False
