from __future__ import annotations

import json
from pathlib import Path

from report_cases import context, diff_findings, lint_findings

from quiver.report.render import render


def test_json_is_the_array_of_finding_objects_with_sorted_keys_and_a_final_newline(project: Path) -> None:
    findings = lint_findings()
    out = render(findings, "json", context(project))
    assert json.loads(out) == [f.to_json() for f in findings]
    assert out == json.dumps([f.to_json() for f in findings], indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_json_round_trips_witnesses_and_fingerprints(project: Path) -> None:
    findings = diff_findings()
    parsed = json.loads(render(findings, "json", context(project, tool="diff")))
    assert [p["witness"] for p in parsed if "witness" in p] == [f.witness for f in findings if f.witness is not None]
    assert [p["fingerprint"] for p in parsed] == [f.fingerprint for f in findings]


def test_json_of_no_findings_is_an_empty_array(project: Path) -> None:
    assert render([], "json", context(project)) == "[]\n"
