"""The contract rule registry: the rules of the modules findings/catalog.py names under `quiver.contract`, in
code order (oasdiff's `GetAllRules`).

Each rule module declares its rules beside what raises them and exports `RULES`; the catalog line of a code
names that module, so a code is one hop from its declaration, and this registry keeps no list of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from quiver.contract import _rules_gaps, _rules_input, _rules_input_safe, _rules_output, _rules_surface, _rules_tool
from quiver.contract.taxonomy import WAIVERS, Cell, UnknownCell
from quiver.findings.rule import Rule

# The modules findings/catalog.py names under `quiver.contract` (tests/findings/test_catalog.py keeps the two in
# step), imported by name so the layer graph sees them.
RULE_MODULES = (_rules_tool, _rules_input, _rules_input_safe, _rules_output, _rules_gaps, _rules_surface)
CONTRACT_RULES: tuple[Rule, ...] = tuple(sorted((r for m in RULE_MODULES for r in m.RULES), key=lambda r: r.code))

RULES_BY_CELL: Mapping[Cell, Rule] = {(r.direction or "", r.kind or "", r.action or ""): r for r in CONTRACT_RULES}


def rule_for(direction: str, kind: str, action: str) -> Rule | None:
    """The rule for one taxonomy cell; None when the cell is waived (see taxonomy.WAIVERS).

    A cell with neither a rule nor a waiver raises UnknownCell: the walker produced a change nobody decided
    about, which is a bug to fix, not a change to drop."""
    cell = (direction, kind, action)
    rule = RULES_BY_CELL.get(cell)
    if rule is None and cell not in WAIVERS:
        raise UnknownCell(f"contract change {direction}/{kind}/{action} has no rule and no waiver")
    return rule
