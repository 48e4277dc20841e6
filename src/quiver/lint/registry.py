"""Every lint rule: the modules the findings catalog names under `quiver.lint`, loaded in catalog order.

Nothing registers itself by import side effect: the catalog (quiver/findings/catalog.py) lists every code
and the module declaring it; each rule module exports `RULES`, and a test keeps the two in step.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Collection
from types import ModuleType

from quiver.findings.catalog import CATALOG
from quiver.findings.rule import Rule

LINT_PACKAGE = "quiver.lint."


def rule_modules() -> tuple[ModuleType, ...]:
    """The lint rule modules, each once, in catalog order."""
    names = dict.fromkeys(e.module for e in CATALOG if e.module.startswith(LINT_PACKAGE))
    return tuple(importlib.import_module(name) for name in names)


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """Every lint rule, sorted by code."""
    rules: list[Rule] = [rule for module in rule_modules() for rule in module.RULES]
    return tuple(sorted(rules, key=lambda r: r.code))


def lint_codes() -> tuple[str, ...]:
    """Every lint rule code, from the catalog (no rule module imported)."""
    return tuple(sorted(e.code for e in CATALOG if e.module.startswith(LINT_PACKAGE)))


def rules_with(codes: Collection[str]) -> tuple[Rule, ...]:
    """The lint rules of `codes`, sorted by code, importing only the modules that declare them (a `--select`ed
    run loads the modules it runs)."""
    names = dict.fromkeys(e.module for e in CATALOG if e.module.startswith(LINT_PACKAGE) and e.code in codes)
    rules = [r for name in names for r in importlib.import_module(name).RULES if r.code in codes]
    return tuple(sorted(rules, key=lambda r: r.code))


def rules_of(prefix: str) -> tuple[Rule, ...]:
    """The lint rules of one prefix (`AGT`, `ROUTE`, ...)."""
    return tuple(r for r in all_rules() if r.prefix == prefix)
