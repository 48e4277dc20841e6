"""Lint rules: budget family (being written)."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.rules import Rule

RULES: tuple[Rule, ...] = ()


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from ()
