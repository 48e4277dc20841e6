"""The findings layer on its own: selection, severity, suppressions, baseline and order, with no lint run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver.errors import InputError, UsageError
from quiver.findings import suppress
from quiver.findings.baseline import split_baselined
from quiver.findings.order import sort_findings
from quiver.findings.select import per_file_ignored, selected_codes
from quiver.findings.severity import apply_severity, at_or_above
from quiver.model import Finding, Location
from quiver.sources.baseline import read_baseline, render_baseline

AMONG = ["AGT001", "AGT015", "MCP005", "TOOL003"]


def finding(rule: str, file: str = "a.md", line: int = 1, severity: str = "warning") -> Finding:
    return Finding(
        rule=rule, name=rule.lower(), severity=severity, message=f"{rule} here", location=Location(file, line, 1)
    )  # type: ignore[arg-type]


def test_select_takes_codes_prefixes_and_names_and_ignore_wins() -> None:
    assert selected_codes(AMONG, ["AGT"], []) == {"AGT001", "AGT015"}
    assert selected_codes(AMONG, ["duplicate-tool-reference", "TOOL003"], []) == {"AGT015", "TOOL003"}
    assert selected_codes(AMONG, [], ["MCP", "missing-description"]) == {"AGT015", "TOOL003"}
    assert selected_codes(AMONG, ["ALL"], ["TOOL"]) == {"AGT001", "AGT015", "MCP005"}


def test_an_unknown_rule_in_select_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UsageError, match="unknown rule or prefix `AGT0155` in select") as caught:
        selected_codes(AMONG, ["AGT0155"], [])
    assert caught.value.hint is not None and "did you mean" in caught.value.hint


def test_severity_overrides_by_code_or_name_and_the_fail_on_threshold() -> None:
    found = [finding("AGT001"), finding("AGT015")]
    raised = apply_severity(found, {"duplicate-tool-reference": "error", "AGT001": "info"})
    assert [(f.rule, f.severity) for f in raised] == [("AGT001", "info"), ("AGT015", "error")]
    assert [f.rule for f in at_or_above(raised, "warning")] == ["AGT015"]
    assert at_or_above(raised, "never") == []
    with pytest.raises(UsageError, match="unknown rule `AGT999`"):
        apply_severity(found, {"AGT999": "error"})


def test_per_file_ignores_match_globs_against_codes_prefixes_and_names() -> None:
    assert per_file_ignored(finding("AGT015", "legacy/x.md"), {"legacy/*": ["AGT"]})
    assert per_file_ignored(finding("AGT015", "legacy/x.md"), {"legacy/*": ["duplicate-tool-reference"]})
    assert not per_file_ignored(finding("AGT015", "src/x.md"), {"legacy/*": ["AGT"]})


def test_a_suppression_covers_its_line_and_an_unused_one_is_returned() -> None:
    text = "---\ndescription: x  # quiver: ignore[AGT015]\n# quiver: ignore[duplicate-tool-reference]\ntools: [a]\n"
    found = [finding("AGT015", line=2), finding("AGT015", line=4), finding("AGT001", line=2)]
    kept, unused, suppressed = suppress.apply(found, suppress.parse("a.md", text))
    assert [(f.rule, f.location.line if f.location else 0) for f in kept] == [("AGT001", 2)]
    assert suppressed == 2 and unused == []
    kept, unused, _ = suppress.apply([], suppress.parse("a.md", text))
    assert [u.line for u in unused] == [2, 4]


def test_a_baseline_hides_recorded_fingerprints_even_when_lines_move(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(render_baseline([finding("AGT015", line=3)]), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8"))["baselineVersion"] == 1
    shown, hidden = split_baselined([finding("AGT015", line=9), finding("AGT001")], read_baseline(path))
    assert [f.rule for f in shown] == ["AGT001"] and hidden == 1
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a quiver baseline"):
        read_baseline(path)


def test_findings_sort_by_file_and_position_and_duplicates_drop() -> None:
    found = [finding("AGT015", "b.md", 1), finding("AGT001", "a.md", 5), finding("AGT001", "a.md", 5)]
    assert [(f.location.file, f.rule) for f in sort_findings(found) if f.location] == [
        ("a.md", "AGT001"),
        ("b.md", "AGT015"),
    ]
