"""The values of a tool's execution policy that `quiver compile` checks and the gateway runs by, below both:
the `reconcile` table (`ReconcileSpec`, read by `quiver.runtime.reconcile`) and the `transient_errors`
patterns (`check_patterns`, matched by `quiver.runtime.transient`). Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from quiver.model import JSON


@dataclass(frozen=True, slots=True)
class ReconcileSpec:
    """A policy's `reconcile` table, checked (what each key means: `quiver.runtime.reconcile`)."""

    tool: str
    arguments: Mapping[str, JSON]
    succeeded_when: str
    equals: JSON = None
    has_equals: bool = False
    tool_sha256: str | None = None  # written by `quiver compile` from the lock; never "" (see from_mapping)

    @classmethod
    def from_mapping(cls, value: JSON) -> ReconcileSpec:
        if not isinstance(value, Mapping):
            raise ValueError("reconcile must be a table with `tool`, `arguments` and `succeeded_when`")
        unknown = set(value) - {"tool", "arguments", "succeeded_when", "equals", "tool_sha256"}
        if unknown:
            raise ValueError(f"unknown reconcile key `{sorted(unknown)[0]}`")
        tool, arguments, when = value.get("tool"), value.get("arguments", {}), value.get("succeeded_when")
        if not isinstance(tool, str) or not tool:
            raise ValueError("reconcile.tool must name a read tool of the same server")
        if not isinstance(arguments, Mapping):
            raise ValueError("reconcile.arguments must be a table")
        if not isinstance(when, str) or not when.startswith("$"):
            raise ValueError("reconcile.succeeded_when must be a path such as `$.structuredContent.found`")
        pin = value.get("tool_sha256")
        if pin is not None and (not isinstance(pin, str) or not pin):
            raise ValueError("reconcile.tool_sha256 must be the reconcile tool's pin (quiver compile writes it)")
        return cls(tool, dict(arguments), when, value.get("equals"), "equals" in value, pin)


def check_patterns(value: JSON) -> tuple[str, ...]:
    """The configured list as a tuple, each compiled once; raises ValueError naming a bad one."""
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(p, str) for p in value):
        raise ValueError('transient_errors must be a list of regular expressions, e.g. ["(?i)rate limit"]')
    for pattern in value:
        try:
            compiled_pattern(pattern)
        except re.error as exc:
            raise ValueError(f"transient_errors pattern `{pattern}` is not a regular expression: {exc}") from None
    return tuple(value)


@lru_cache(maxsize=512)
def compiled_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
