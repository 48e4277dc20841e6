"""Walk two schemas side by side and list where `a` accepts a value that `b` rejects.

The walk is one-sided: call it with (old, new) to find narrowings and with (new, old) for widenings;
`diff.py` maps each `Change` to a rule by direction. With `declarations=True` it also reports changes
that are not about validity (a property added or no longer listed, a default added, removed or changed, a
description changed) and what it did not judge: a changed keyword it does not analyse, a part behind a
remote `$ref` or deeper than MAX_DEPTH. Recursion through `$ref` ends by cycle detection, not by depth.
The scalar keyword families live in `_scalars.py`, the applicators (`not`, `if`, `contains`, `anyOf`/
`oneOf`...) in `_constraints.py`; they take the walker as the `Walker` protocol of `_walker.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial

from quiver.contract import _candidates as cand
from quiver.contract import _conditions as conditional
from quiver.contract import _constraints as applicators
from quiver.contract import _scalars as scalars
from quiver.contract._change import Change, Frame, render_path
from quiver.contract._dependencies import dependencies
from quiver.contract._keywords import keywords_accept
from quiver.contract._sample import NoSample, first_sample, property_schema, sample
from quiver.contract.document import Document
from quiver.contract.schema import (
    ANY,
    TYPES,
    Shape,
    accepted_types,
    activated,
    branch_shapes,
    covers,
    describe_types,
    merge,
    shape_of,
    show,
    type_allows,
    value_key,
    without_branches,
)
from quiver.contract.taxonomy import Action, Kind
from quiver.contract.witness import embed
from quiver.errors import InputError
from quiver.model import JSON

MAX_DEPTH = 64  # nesting levels compared; a deeper part is reported as not compared, never skipped silently
EXTRA_KEY = "quiver_extra"  # the undeclared property a witness sends to a closed object


class Walker:
    """Collects the changes between the schema documents `a` and `b` (see module doc)."""

    def __init__(self, a: Document, b: Document, *, root: str, witnesses: bool, declarations: bool) -> None:
        self.a, self.b, self.root = a, b, root
        self.witnesses, self.declarations = witnesses, declarations
        self.changes: list[Change] = []

    def run(self) -> list[Change]:
        self._shapes(shape_of(self.a.root, self.a), shape_of(self.b.root, self.b), (), frozenset())
        unique: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], Change] = {}
        for change in self.changes:
            known = unique.get(change.key)
            unique[change.key] = (
                change if known is None else replace(known, candidates=known.candidates + change.candidates)
            )
        return list(unique.values())

    # -- structure ---------------------------------------------------------------------------------

    def node(self, a_raw: JSON, b_raw: JSON, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]) -> None:
        self._shapes(shape_of(a_raw, self.a), shape_of(b_raw, self.b), frames, seen)

    def _shapes(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]) -> None:
        if a.never:
            return
        unresolved = a.unresolved or b.unresolved
        if unresolved or len(frames) > MAX_DEPTH:
            if self.declarations:
                reason = (
                    f"remote `$ref` `{unresolved}` is not followed"
                    if unresolved
                    else (f"nested more than {MAX_DEPTH} levels deep")
                )
                self.emit("subschema", "not-compared", frames, None, _DECLARATION, reason=reason)
            return
        if a.ref is not None or b.ref is not None:
            pair = (a.ref or "", b.ref or "")
            if pair in seen:  # a recursive definition met again: assume the same answer as above
                return
            seen = seen | {pair}
        if self.declarations:
            self._declared(a, b, frames)
        if b.never:
            self.emit(
                "type", "narrowed", frames, lambda: self.base(a, ANY), a=describe_types(accepted_types(a)), b="nothing"
            )
            return
        parts = branch_shapes(a, self.a) if a.branches else (a,)
        if not b.branches:
            for part in parts:
                self.plain(part, b, frames, seen)
            return
        # b's own keywords first (a property declared in a branch of b is not gone), then its alternatives
        declared = frozenset(name for branch in branch_shapes(b, self.b) for name in branch.properties)
        for part in parts:
            self.plain(part, without_branches(b), frames, seen, declared)
        applicators.composition(self, a, parts, b, frames, seen)
        if b.branch_kind == "oneOf" and not (a.branch_kind == "oneOf" and a.branches == b.branches):
            applicators.overlap(self, a, b, frames)

    def probe(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]) -> list[Change]:
        """The changes between `a` and `b` at `frames`, without reporting them."""
        child = Walker(self.a, self.b, root=self.root, witnesses=self.witnesses, declarations=False)
        child._shapes(a, b, frames, seen)
        return child.changes

    def reverse_probe(
        self, b: Shape, a: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]
    ) -> list[Change]:
        """Like `probe` with the documents swapped: where `b` (of document b) accepts what `a` rejects."""
        child = Walker(self.b, self.a, root=self.root, witnesses=False, declarations=False)
        child._shapes(b, a, frames, seen)
        return child.changes

    def probe_a(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]) -> list[Change]:
        """Like `probe` for two shapes of document a (one of its own conditions against a region of it)."""
        child = Walker(self.a, self.a, root=self.root, witnesses=self.witnesses, declarations=False)
        child._shapes(a, b, frames, seen)
        return child.changes

    def plain(
        self,
        a: Shape,
        b: Shape,
        frames: tuple[Frame, ...],
        seen: frozenset[tuple[str, str]],
        declared: frozenset[str] = frozenset(),
    ) -> None:
        ta, tb = accepted_types(a), accepted_types(b)
        listed = TYPES if ta is None else tuple(t for t in TYPES if t in ta)
        missing = [t for t in listed if not covers(tb, t)]
        if missing:
            self.emit(
                "type",
                "narrowed",
                frames,
                lambda: [v for t in missing for v in cand.of_type(a, t, self.a)],
                a=describe_types(ta),
                b=describe_types(tb),
            )
        common = {t for t in listed if covers(tb, t)} | ({"integer"} if tb and "integer" in tb else set())
        if ta is not None and "integer" not in ta and "number" not in ta:
            common -= {"integer"}
        if b.enum is not None:
            scalars.enum(self, a, b, frames)
        if b.excluded:
            applicators.excluded(self, a, b, frames, seen)
        if b.conditions:
            conditional.conditions(self, a, b, frames, seen)
        listed_values: list[JSON] = []
        if a.enum is not None:  # only the listed values matter: compare keywords only if b rejects one
            listed_values = [v for v in a.enum if type_allows(b.types, v) and not keywords_accept(b, v)]
            if not listed_values:
                return
        if common & {"integer", "number"}:
            scalars.numbers(self, a, b, frames, listed_values, integer="number" not in common)
        if "string" in common:
            scalars.strings(self, a, b, frames, listed_values)
        if a.enum is not None:
            return
        if "array" in common:
            self._array(a, b, frames, seen)
        if "object" in common:
            self._object(a, b, frames, seen, declared)

    # -- keyword families --------------------------------------------------------------------------

    def _array(self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]]) -> None:
        limits = (b.lengths.get("minItems"), b.lengths.get("maxItems"))
        sizes = [n + d for n in limits if n is not None for d in (-1, 1)]
        scalars.lengths(self, a, b, frames, "Items", lambda: cand.arrays(a, sizes, self.a, self.base(a, b)))
        if b.unique and not a.unique:
            self.emit(
                "bound",
                "tightened",
                frames,
                lambda: cand.arrays(a, [2], self.a, []),
                keyword="uniqueItems",
                a="false",
                b="true",
            )
        applicators.contains(self, a, b, frames, seen)
        parent = (merge(a, b), a)
        for index in range(max(len(a.prefix_items), len(b.prefix_items))):
            a_item = a.prefix_items[index] if index < len(a.prefix_items) else a.items
            b_item = b.prefix_items[index] if index < len(b.prefix_items) else b.items
            if a_item is False:
                return
            if b_item is False:
                self._items_closed(a, b, frames, index)
                return
            self.node(a_item, b_item, (*frames, Frame(("item", index), *parent)), seen)
        if b.items is False and a.items is not False:
            self._items_closed(a, b, frames, len(b.prefix_items))
        elif a.items is not False and b.items is not None:
            self.node(a.items, b.items, (*frames, Frame(("item", None), *parent)), seen)

    def _items_closed(self, a: Shape, b: Shape, frames: tuple[Frame, ...], index: int) -> None:
        self.emit(
            "items", "closed", frames, lambda: cand.arrays(a, [index + 1], self.a, self.base(a, b)), value=str(index)
        )

    def _object(
        self, a: Shape, b: Shape, frames: tuple[Frame, ...], seen: frozenset[tuple[str, str]], declared: frozenset[str]
    ) -> None:
        a = activated(a, self.a)  # what the old object's own dependencies require counts as required
        parent = (merge(a, b), a)
        gone = [n for n in a.properties if n not in b.properties and n not in declared]
        for name in b.required:
            if name not in a.required:
                was = next((g for g in gone if _similar(g, name)), None)
                self.emit(
                    "required",
                    "became-required" if name in a.properties else "added",
                    frames,
                    partial(self._without, a, b, name),
                    child=name,
                    was=f" (renamed from `{was}`?)" if was else "",
                )
        for name in gone:
            closed = _closed(b, name)
            sub = (*frames, Frame(("prop", name), *parent))
            if closed:
                self.emit(
                    "property",
                    "removed",
                    frames,
                    partial(self.with_property, a, b, name, a.properties[name]),
                    child=name,
                )
            elif (schema := property_schema(b, name)) is not True:
                self.node(a.properties[name], schema, sub, seen)
            if self.declarations:
                flags = {"a-required"} if name in a.required else set()
                self.emit("property", "unlisted", sub, None, frozenset(flags | ({"b-closed"} if closed else set())))
        for name in b.properties:
            sub = (*frames, Frame(("prop", name), *parent))
            if name in a.properties:
                self.node(a.properties[name], b.properties[name], sub, seen)
            elif self.declarations:
                self.emit("property", "added", sub, None, frozenset({"b-required"} if name in b.required else ()))
        self._additional(a, b, frames, seen, parent)
        applicators.pattern_properties(self, a, b, frames, seen, parent)
        applicators.property_names(self, a, b, frames, seen)
        scalars.lengths(
            self, a, b, frames, "Properties", lambda: [*self.base(a, ANY), *self.everything(a, b, extra=True)]
        )
        dependencies(self, a, b, frames, seen)

    def _additional(
        self,
        a: Shape,
        b: Shape,
        frames: tuple[Frame, ...],
        seen: frozenset[tuple[str, str]],
        parent: tuple[Shape, Shape],
    ) -> None:
        if a.additional is False or b.additional is None or b.additional is True:
            return
        sub = (*frames, Frame(("extra", EXTRA_KEY), *parent))
        if b.additional is False:
            extra = True if a.additional is None else a.additional
            self.emit("additional-properties", "closed", frames, lambda: self.with_property(a, b, EXTRA_KEY, extra))
        else:
            self.node(True if a.additional is None else a.additional, b.additional, sub, seen)

    def _declared(self, a: Shape, b: Shape, frames: tuple[Frame, ...]) -> None:
        for keyword in sorted(set(a.unchecked) | set(b.unchecked)):
            if value_key(a.unchecked.get(keyword)) != value_key(b.unchecked.get(keyword)):
                self.emit("keyword", "changed", frames, None, _DECLARATION, keyword=keyword)
        if not frames:
            return
        if frames[-1].segment[0] == "prop" and _words(a.description) != _words(b.description):
            self.emit("description", "changed", frames, None, _DECLARATION)
        kind, name = frames[-1].segment
        if kind == "prop" and name in frames[-1].fallback.required:
            return  # every old caller sends the property: no default (added, changed or removed) reaches them
        if a.has_default and b.has_default and value_key(a.default) != value_key(b.default):
            self.emit("default", "changed", frames, None, _DECLARATION, a=show(a.default), b=show(b.default))
        elif a.has_default != b.has_default:
            old, new = (show(a.default), "none") if a.has_default else ("none", show(b.default))
            self.emit("default", "removed" if a.has_default else "added", frames, None, _DECLARATION, a=old, b=new)

    # -- witnesses ---------------------------------------------------------------------------------

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
    ) -> None:
        """Record a change at `frames` (candidates are values there); `child` names a property below it."""
        if kind == "property" and action in ("unlisted", "added"):
            flags = flags | {"declaration"}
        found = tuple(cand.first(candidates())) if candidates and self.witnesses else ()
        path = render_path(self.root, frames)
        if child is not None:
            path = child if not frames else f"{path}.{child}"
        self.changes.append(Change(kind, action, path, frames, {"path": path, **values}, found, flags))

    def base(self, a: Shape, b: Shape) -> list[JSON]:
        """Starting values of `a`: one that also satisfies `b` when found, then one of `a` alone."""
        both, alone = first_sample((merge(a, b),), self.a), first_sample((a,), self.a)
        return both + [v for v in alone if v not in both]

    def _without(self, a: Shape, b: Shape, *names: str, add: str | None = None) -> list[JSON]:
        out: list[JSON] = []
        for base in self.base(a, b):
            if not isinstance(base, dict):
                continue
            value = {k: v for k, v in base.items() if k not in names}
            if add is not None and add not in value:
                out.extend(self.with_property(a, b, add, property_schema(a, add), start=value))
            else:
                out.append(value)
        return out

    def with_property(self, a: Shape, b: Shape, name: str, schema: JSON, *, start: JSON = None) -> list[JSON]:
        bases = [start] if start is not None else self.base(a, b)
        try:
            value = sample(shape_of(schema, self.a), self.a)
        except NoSample:
            return []
        return [{**base, name: value} for base in bases if isinstance(base, dict)]

    def lifted(self, changes: Iterable[Change], frames: tuple[Frame, ...]) -> list[JSON]:
        """The candidates of changes a probe at `frames` found (at `frames` or below), as values at `frames`."""
        out: list[JSON] = []
        for change in changes:
            below = change.frames[len(frames) :]
            for local in change.candidates:
                try:
                    out.append(embed(below, local, self.a))
                except (NoSample, InputError):
                    continue
        return out

    def everything(self, a: Shape, b: Shape, *, extra: bool = False) -> list[JSON]:
        """The base object with every property `a` declares (and one undeclared key, when `extra`)."""
        values = self.base(a, b)
        for name, schema in a.properties.items():
            values = [v for base in values for v in self.with_property(a, b, name, schema, start=base)]
        if extra and a.additional is not False:
            extra_schema = True if a.additional is None else a.additional
            values += [v for base in values for v in self.with_property(a, b, EXTRA_KEY, extra_schema, start=base)]
        return values


_DECLARATION = frozenset({"declaration"})


def _closed(shape: Shape, name: str) -> bool:
    """True when `shape` rejects property `name` whatever its value."""
    return name not in shape.properties and property_schema(shape, name) is False


def _similar(a: str, b: str) -> bool:
    return a.replace("_", "").replace("-", "").lower() == b.replace("_", "").replace("-", "").lower()


def _words(text: str | None) -> str:
    return " ".join((text or "").split())
