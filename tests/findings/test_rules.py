"""Every rule of the catalog, lint and contract, through the one harness (tests/rule_harness.py).

Per code: the documentation demands, `bad/` gives exactly `bad/expected.json` and at least one finding of
the rule at its severity, `good/` gives none of the rule; a lint project built from a `Spec` is what the
spec writes; a contract witness is valid on one side and invalid on the other. `QUIVER_REGEN=1` rewrites the
snapshots and the spec-built projects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_harness import (
    CODES,
    ENTRIES,
    REGEN,
    RULES,
    Case,
    assert_witnesses_hold,
    audit,
    case_dir,
    check_snapshot,
    contract_case,
    contract_findings,
    family,
    fixture_codes,
    matches_spec,
    materialize,
    report,
    spec_makers,
)

SPECS = spec_makers()
CONTRACT_TOOL_CODES = [
    c for c in CODES if family(ENTRIES[c]) == "contract" and contract_case(case_dir(c, "bad"))["kind"] == "tool"
]


def test_every_catalog_rule_has_fixtures_and_every_fixture_names_a_rule() -> None:
    assert sorted(RULES) == CODES
    assert fixture_codes() == CODES
    assert all(case_dir(code, "bad").is_dir() for code in CODES)


@pytest.mark.parametrize("code", CODES)
def test_rule_doc_and_fixtures(code: str) -> None:
    audit(RULES[code])


@pytest.mark.parametrize("code", CODES)
def test_bad_case_gives_exactly_the_expected_findings(code: str) -> None:
    findings = report(code, "bad")
    check_snapshot(code, findings, case_dir(code, "bad") / "expected.json")
    hits = [f for f in findings if f["rule"] == code]
    assert hits, f"{code}: the bad case gives no finding of its rule"
    if family(ENTRIES[code]) == "contract":  # a lint finding may carry its own severity (TOOL007)
        assert all(f["severity"] == RULES[code].severity for f in hits), code
    assert all("could not be confirmed" not in f["message"] for f in hits), code


@pytest.mark.parametrize("code", CODES)
def test_good_case_gives_no_finding_of_its_rule(code: str) -> None:
    assert code not in {f["rule"] for f in report(code, "good")}


@pytest.mark.parametrize("side", ["bad", "good"])
@pytest.mark.parametrize("code", sorted(SPECS))
def test_spec_built_project_is_what_its_spec_writes(code: str, side: str, request: pytest.FixtureRequest) -> None:
    made = SPECS[code]
    case = made if isinstance(made, Case) else made(request.getfixturevalue("corpus"))
    spec, root = getattr(case, side), case_dir(code, side)
    if REGEN:
        materialize(spec, root)
    assert matches_spec(spec, root), f"{code}: the {side} project differs from its spec; run with QUIVER_REGEN=1"


def test_every_spec_names_a_lint_rule() -> None:
    assert all(family(ENTRIES[code]) == "lint" for code in SPECS)


@pytest.mark.parametrize("code", CONTRACT_TOOL_CODES)
def test_every_contract_witness_is_valid_on_one_side_and_invalid_on_the_other(code: str) -> None:
    for side in ("bad", "good"):
        case = contract_case(case_dir(code, side))
        assert_witnesses_hold(case["old"], case["new"], contract_findings(case))


def test_the_fixture_folder_is_the_family_of_the_declaring_module() -> None:
    assert {family(e) for e in ENTRIES.values()} == {"lint", "contract"}
    assert all(Path(case_dir(code, "bad")).parts[-3] == family(ENTRIES[code]) for code in CODES)
