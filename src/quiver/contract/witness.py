"""Witnesses: concrete instances that prove a breaking change, each confirmed with jsonschema.

For an input change a witness is an argument object valid under the old `inputSchema` and invalid under the
new; for an output change, a result valid under the new `outputSchema` and invalid under the old. A change
lists local candidate values at its path (see `walk.py`); `build_witness` embeds each in a whole instance
whose other parts are sampled from the schema, and keeps the first one jsonschema confirms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from quiver.contract._change import Change, Frame
from quiver.contract._sample import NoSample, first_sample, sample_schema
from quiver.contract.document import Document
from quiver.model import JSON

MAX_TRIES = 96


class Checker:
    """Validates instances against two whole schemas: the side that must accept and the side that must reject."""

    def __init__(self, accepting: JSON, rejecting: JSON) -> None:
        self._schemas = (accepting, rejecting)
        self._checks: tuple[Callable[[JSON], bool], Callable[[JSON], bool]] | None = None

    def _validators(self) -> tuple[Callable[[JSON], bool], Callable[[JSON], bool]]:
        """Built on the first witness check: a diff with no breaking candidate never imports jsonschema."""
        if self._checks is None:
            self._checks = (_validator(self._schemas[0]), _validator(self._schemas[1]))
        return self._checks

    def accepts(self, instance: JSON) -> bool:
        return self._validators()[0](instance)

    def confirms(self, instance: JSON) -> bool:
        """True when `instance` is valid on the accepting side and invalid on the rejecting side."""
        accepts, rejects = self._validators()
        return accepts(instance) and not rejects(instance)


def is_valid(schema: JSON, instance: JSON) -> bool:
    """jsonschema's verdict, with the schema's own dialect (2020-12 when none is named) and quiver's format
    checks (`contract/formats.py`: the same on every install)."""
    return _validator(schema)(instance)


def build_witness(change: Change, checker: Checker, doc: Document) -> JSON:
    """The first candidate of `change` that `checker` confirms, embedded in a whole instance; None if none is."""
    for merged in (True, False):
        for local in change.candidates[:MAX_TRIES]:
            try:
                instance = embed(change.frames, local, doc, merged=merged)
            except NoSample:
                continue
            if checker.confirms(instance):
                return instance
        if not change.frames:
            break
    return None


def embed(frames: Sequence[Frame], local: JSON, doc: Document, *, merged: bool = True) -> JSON:
    """Place `local` at the end of `frames`, sampling every enclosing object or array (raise NoSample).

    With `merged`, siblings are sampled to satisfy both schemas where possible (so the witness fails the
    rejecting side at `local`, not elsewhere); without, from the accepting schema alone.
    """
    value = local
    for frame in reversed(frames):
        parent = _parent_sample(frame, doc, merged)
        kind, key = frame.segment
        if kind in ("prop", "extra"):
            container = dict(parent) if isinstance(parent, dict) else {}
            container[str(key)] = value
            value = container
        else:
            items = list(parent) if isinstance(parent, list) else []
            prefix = frame.fallback.prefix_items
            index = len(prefix) if key is None else int(key)
            while len(items) < index:
                position = len(items)
                items.append(sample_schema(prefix[position] if position < len(prefix) else frame.fallback.items, doc))
            items[index : index + 1] = [value]
            value = items
    return value


def _parent_sample(frame: Frame, doc: Document, merged: bool) -> JSON:
    for value in first_sample((frame.parent, frame.fallback) if merged else (frame.fallback,), doc):
        return value
    raise NoSample


@functools.cache
def _formats() -> Any:  # Any: jsonschema's FormatChecker (no stubs)
    from quiver.contract.formats import format_checker

    return format_checker()


def _validator(schema: JSON) -> Callable[[JSON], bool]:
    from jsonschema import exceptions, validators  # lazy: keeps CLI start-up fast
    from referencing.exceptions import Unresolvable

    cls: Any = validators.validator_for(schema, default=validators.Draft202012Validator)
    checker = cls(schema, format_checker=_formats())

    def check(instance: JSON) -> bool:
        try:
            return bool(checker.is_valid(instance))
        except (exceptions.UnknownType, Unresolvable, re.error, RecursionError):
            return False  # jsonschema cannot judge this schema: the witness stays unconfirmed and says so

    return check
