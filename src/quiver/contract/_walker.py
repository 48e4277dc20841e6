"""What the keyword families of the walk (`_scalars`, `_constraints`, `_conditions`, `_dependencies`) use of
the `Walker` that calls them (walk.py): both documents, the changes so far, probes, samples and `emit`.

A protocol below walk.py: the families name the walker's type without importing the module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from quiver.contract._change import Change, Frame
from quiver.contract.document import Document
from quiver.contract.schema import Shape
from quiver.contract.taxonomy import Action, Kind
from quiver.model import JSON

Seen = frozenset[tuple[str, str]]


class Walker(Protocol):
    a: Document
    b: Document
    declarations: bool
    changes: list[Change]

    def node(self, a_raw: JSON, b_raw: JSON, frames: tuple[Frame, ...], seen: Seen) -> None: ...

    def probe(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> list[Change]: ...

    def reverse_probe(self, b: Shape, a: Shape, frames: tuple[Frame, ...], seen: Seen) -> list[Change]: ...

    def probe_a(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen) -> list[Change]: ...

    def plain(
        self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: Seen, declared: frozenset[str] = frozenset()
    ) -> None: ...

    def emit(
        self,
        kind: Kind,
        action: Action,
        frames: tuple[Frame, ...],
        candidates: Callable[[], Iterable[JSON]] | None,
        flags: frozenset[str] = frozenset(),
        *,
        child: str | None = None,
        **values: str,
    ) -> None: ...

    def base(self, a: Shape, b: Shape) -> list[JSON]: ...

    def with_property(self, a: Shape, b: Shape, name: str, schema: JSON, *, start: JSON = None) -> list[JSON]: ...

    def lifted(self, changes: Iterable[Change], frames: tuple[Frame, ...]) -> list[JSON]: ...

    def everything(self, a: Shape, b: Shape, *, extra: bool = False) -> list[JSON]: ...
