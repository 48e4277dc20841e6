"""Registry guards: every contract rule is complete, unique, documented, and the taxonomy has no silent gap."""

from __future__ import annotations

import re
import string

from quiver.contract.rules import CONTRACT_RULES, RULES_BY_CELL
from quiver.contract.taxonomy import CELLS, DIRECTIONS, SCHEMA_ACTIONS, WAIVERS

TEMPLATE_VALUES = {
    "server",
    "tool",
    "new_name",
    "agent",
    "path",
    "old",
    "new",
    "value",
    "keyword",
    "was",
    "prop",
    "before",
    "after",
    "reason",
    "accepts",
    "qualified",  # `server/tool`, or `tool` when the server has no name
}


def test_every_rule_has_every_field() -> None:
    for rule in CONTRACT_RULES:
        assert rule.code and rule.name and rule.message and rule.hint and rule.doc, rule.code
        assert rule.severity in ("error", "warning", "info"), rule.code
        assert rule.direction in DIRECTIONS, rule.code
        assert rule.kind and rule.action, rule.code


def test_codes_are_ctr_plus_three_digits_unique_and_sorted() -> None:
    codes = [rule.code for rule in CONTRACT_RULES]
    assert all(re.fullmatch(r"CTR\d{3}", code) for code in codes)
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)


def test_names_are_kebab_case_and_unique() -> None:
    names = [rule.name for rule in CONTRACT_RULES]
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) for name in names)
    assert len(set(names)) == len(names)
    assert not set(names) & {rule.code for rule in CONTRACT_RULES}


# The doc headings are the rule harness's (tests/rule_harness.py `audit`), the same for every rule.


def test_templates_use_only_values_the_diff_provides() -> None:
    for rule in CONTRACT_RULES:
        for template in (rule.message, rule.hint or ""):
            fields = {name for _, name, _, _ in string.Formatter().parse(template) if name}
            assert fields <= TEMPLATE_VALUES, (rule.code, fields - TEMPLATE_VALUES)
            assert "qualified" in fields or "agent" in fields or template is rule.hint, rule.code


def test_each_direction_kind_action_has_one_rule() -> None:
    cells = [(r.direction, r.kind, r.action) for r in CONTRACT_RULES]
    assert len(set(cells)) == len(cells)
    assert set(RULES_BY_CELL) == set(cells)


def test_every_taxonomy_cell_has_a_rule_or_a_written_waiver_but_not_both() -> None:
    for cell in CELLS:
        has_rule, waiver = cell in RULES_BY_CELL, WAIVERS.get(cell)
        assert has_rule != (waiver is not None), cell
        if waiver is not None:
            assert len(waiver.split()) >= 8, f"{cell}: write why the cell has no rule"


def test_rules_and_waivers_name_only_cells_of_the_taxonomy() -> None:
    assert set(RULES_BY_CELL) <= set(CELLS)
    assert set(WAIVERS) <= set(CELLS)


def test_the_brief_minimum_is_covered() -> None:
    names = {rule.name for rule in CONTRACT_RULES}
    assert {
        "tool-removed",
        "tool-renamed",
        "tool-added",
        "tool-description-changed",
        "read-only-hint-weakened",
        "destructive-hint-weakened",
        "idempotent-hint-weakened",
        "open-world-hint-weakened",
        "output-schema-added",
        "output-schema-removed",
        "input-required-property-added",
        "input-property-became-required",
        "input-property-removed",
        "input-property-unlisted",
        "input-type-narrowed",
        "input-enum-value-removed",
        "input-const-changed",
        "input-bound-tightened",
        "input-pattern-added",
        "input-pattern-changed",
        "input-format-added",
        "input-additional-properties-closed",
        "input-composition-branch-removed",
        "input-items-closed",
        "input-dependent-required-added",
        "input-dependent-schema-added",
        "input-default-changed",
        "input-type-widened",
        "input-enum-value-added",
        "output-property-became-optional",
        "output-type-widened",
        "output-enum-value-added",
        "output-required-property-removed",
    } <= names


def test_schema_kinds_pair_every_narrowing_with_its_widening() -> None:
    for kind, pairs in SCHEMA_ACTIONS.items():
        narrow = [n for n, _ in pairs]
        assert len(set(narrow)) == len(narrow), kind
