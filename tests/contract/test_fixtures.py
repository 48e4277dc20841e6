"""Per-case contract fixtures: tests/fixtures/contract/cases/<name>/case.json (issue 16: the gaps the diff used
to pass over in silence). Each holds a `kind`, a `bad` and a `good` old/new pair, and the `rule` the bad pair
must report; `good_silent` means the good pair is proven safe and reports nothing at all.

The per-rule fixtures (`tests/fixtures/contract/<CODE>/{bad,good}/`) are the rule harness's
(tests/findings/test_rules.py). Here too the bad pair's findings are compared whole against expected.json,
and `QUIVER_REGEN=1` rewrites it; review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rule_harness import assert_witnesses_hold, check_snapshot, contract_findings

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "contract" / "cases"
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", CASE_NAMES)
def test_each_case_reports_its_finding_and_its_good_side_does_not(name: str) -> None:
    with (CASES / name / "case.json").open(encoding="utf-8") as handle:
        case = json.load(handle)
    kind = case["kind"]
    findings = [f.to_json() for f in contract_findings({"kind": kind, **case["bad"]})]
    check_snapshot(name, findings, CASES / name / "expected.json")
    assert case["rule"] in {f["rule"] for f in findings}
    assert all("could not be confirmed" not in f["message"] for f in findings if f["rule"] == case["rule"])
    good = contract_findings({"kind": kind, **case["good"]})
    assert case["rule"] not in {f.rule for f in good}
    if case.get("good_silent"):
        assert [f.message for f in good] == []
    if kind == "tool":
        for side in ("bad", "good"):
            pair = {"kind": kind, **case[side]}
            assert_witnesses_hold(pair["old"], pair["new"], contract_findings(pair))
