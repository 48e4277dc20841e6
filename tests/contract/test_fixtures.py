"""Per-rule fixtures: tests/fixtures/contract/<CODE>/case.json holds a bad and a good case.

Per-case fixtures: tests/fixtures/contract/cases/<name>/case.json, the same layout plus the `rule` the bad case
must report (issue 16: the gaps the diff used to pass over in silence); `good_silent` means the good case is
proven safe and reports nothing at all.

The bad case must report the rule (with every finding compared whole against expected.json), the good case
must not, and every witness must be valid under the accepting schema and invalid under the other. Regenerate
expected.json only on purpose: `QUIVER_UPDATE_FIXTURES=1 python -m pytest tests/contract/test_fixtures.py`,
then review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from quiver.commands.diff import diff_sides, text_hazards
from quiver.contract.diff import diff_agent_loads, diff_agent_tools, diff_catalogs, diff_tool
from quiver.contract.rules import CONTRACT_RULES
from quiver.contract.sides import Side
from quiver.contract.witness import is_valid
from quiver.model import Finding, Location

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contract"
UPDATE = os.environ.get("QUIVER_UPDATE_FIXTURES") == "1"
CODES = [rule.code for rule in CONTRACT_RULES]


def run(kind: str, case: dict[str, Any]) -> list[Finding]:
    if kind == "tool":
        where = Location("quiver.lock", 7, 3)
        return diff_tool(case["old"], case["new"], server="github", location=where, scan=text_hazards)
    if kind == "catalog":
        return diff_catalogs(case["old"], case["new"], server="github")
    if kind == "servers":  # {server: {tool: Tool}} on each side: moves between servers
        return diff_sides(Side("old", case["old"]), Side("new", case["new"]))
    agent = {"agent": "reviewer", "location": Location("agents/r.agent.md", 2, 1)}
    if kind == "agent-loads":
        old = {(server, tool): load for server, tool, load in case["old"]}
        new = {(server, tool): load for server, tool, load in case["new"]}
        return diff_agent_loads(old, new, **agent, reasons={("github", "search_code"): "over the preload budget"})
    return diff_agent_tools(case["old"], case["new"], **agent)


def load(code: str) -> dict[str, Any]:
    with (FIXTURES / code / "case.json").open(encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]  # JSON fixture


CASES = FIXTURES / "cases"
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())


def test_every_rule_has_a_fixture_and_every_fixture_a_rule() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p != CASES) == CODES


@pytest.mark.parametrize("name", CASE_NAMES)
def test_each_case_reports_its_finding_and_its_good_side_does_not(name: str) -> None:
    with (CASES / name / "case.json").open(encoding="utf-8") as handle:
        case = json.load(handle)
    findings = [f.to_json() for f in run(case["kind"], case["bad"])]
    expected_path = CASES / name / "expected.json"
    if UPDATE:
        expected_path.write_text(json.dumps(findings, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    assert findings == json.loads(expected_path.read_text(encoding="utf-8"))
    assert case["rule"] in {f["rule"] for f in findings}
    assert all("could not be confirmed" not in f["message"] for f in findings if f["rule"] == case["rule"])
    good = run(case["kind"], case["good"])
    assert case["rule"] not in {f.rule for f in good}
    if case.get("good_silent"):
        assert [f.message for f in good] == []
    if case["kind"] == "tool":
        for side in ("bad", "good"):
            assert_witnesses_hold(case[side]["old"], case[side]["new"], run("tool", case[side]))


@pytest.mark.parametrize("code", CODES)
def test_the_bad_case_reports_the_rule_as_expected(code: str) -> None:
    case = load(code)
    findings = [f.to_json() for f in run(case["kind"], case["bad"])]
    expected_path = FIXTURES / code / "expected.json"
    if UPDATE:
        expected_path.write_text(json.dumps(findings, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    assert findings == expected
    hits = [f for f in findings if f["rule"] == code]
    assert hits
    rule = next(r for r in CONTRACT_RULES if r.code == code)
    assert all(f["severity"] == rule.severity and "could not be confirmed" not in f["message"] for f in hits)


@pytest.mark.parametrize("code", CODES)
def test_the_good_case_does_not_report_the_rule(code: str) -> None:
    case = load(code)
    assert code not in {f.rule for f in run(case["kind"], case["good"])}


@pytest.mark.parametrize("code", [c for c in CODES if load(c)["kind"] == "tool"])
def test_every_witness_is_valid_on_one_side_and_invalid_on_the_other(code: str) -> None:
    case = load(code)
    for side in ("bad", "good"):
        assert_witnesses_hold(case[side]["old"], case[side]["new"], run("tool", case[side]))


def assert_witnesses_hold(old: dict[str, Any], new: dict[str, Any], findings: list[Finding]) -> None:
    for finding in findings:
        if finding.witness is None:
            continue
        if "arguments" in finding.witness:
            valid, invalid, value = old["inputSchema"], new["inputSchema"], finding.witness["arguments"]
        else:
            valid, invalid, value = new["outputSchema"], old["outputSchema"], finding.witness["result"]
        assert is_valid(valid, value), finding.message
        assert not is_valid(invalid, value), finding.message
