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


# The keyword a change of each kind is about, where its value names none (`bound`, `constraint`... do).
_KEYWORD = {
    "type": "type",
    "enum": "enum",
    "const": "const",
    "pattern": "pattern",
    "format": "format",
    "required": "required",
    "additional-properties": "additionalProperties",
    "items": "items",
    "dependent-required": "dependentRequired",
    "dependent-schema": "dependentSchemas",
    "default": "default",
    "description": "description",
}


def pointer(change: Change, schema_key: str) -> tuple[str | int, ...]:
    """The JSON pointer, in the Tool object, of what `change` is about (`inputSchema/properties/q/maxLength`):
    its node, then the keyword. A file that lacks part of it is placed at the deepest part it has."""
    out: list[str | int] = [schema_key]
    for frame in change.frames:
        kind, key = frame.segment
        if kind == "prop":
            out += ["properties", str(key)]
        elif kind == "extra":
            out.append("additionalProperties")
        else:
            out += ["items"] if key is None else ["prefixItems", int(key)]
    keyword = _KEYWORD.get(change.kind) or change.values.get("keyword", "")
    if keyword:
        out.append(keyword.split("/")[0])  # `if/then/else` is about `if`
    return tuple(out)
