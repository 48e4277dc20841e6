"""What the walk reports: a `Change` at a path of `Frame`s (each a step down with the shapes to sample from)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from quiver.contract.schema import Shape
from quiver.contract.taxonomy import Action, Kind
from quiver.model import JSON

Segment = tuple[str, str | int | None]  # ("prop", name) | ("item", index or None) | ("extra", name)


@dataclass(frozen=True, slots=True)
class Frame:
    """One step down from a parent node: the segment, and the parent's shapes to sample siblings from."""

    segment: Segment
    parent: Shape  # a and b together: siblings valid on both sides
    fallback: Shape  # a alone


@dataclass(frozen=True, slots=True)
class Change:
    """One difference. `action` reads from a to b ("narrowed": b accepts less); values fill messages.

    Flags: "declaration" (not about validity: reported once, without a witness), "speculative" (a candidate
    change, such as overlapping `oneOf` branches, dropped unless a witness confirms it)."""

    kind: Kind
    action: Action
    path: str
    frames: tuple[Frame, ...]
    values: Mapping[str, str]
    candidates: tuple[JSON, ...] = ()
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def key(self) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        return (self.kind, self.action, self.path, tuple(sorted(self.values.items())))


def render_path(root: str, frames: Iterable[Frame]) -> str:
    text = ""
    for frame in frames:
        kind, key = frame.segment
        if kind == "item":
            text += "[]" if key is None else f"[{key}]"
        else:
            text += ("." if text else "") + (str(key) if kind == "prop" else "*")
    return text or root
