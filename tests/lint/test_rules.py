"""Every lint rule of the catalog through one harness: its doc headings, `bad/` -> `bad/expected.json`,
`good/` -> no finding of the rule.

The fixtures are committed projects, `tests/fixtures/lint/<CODE>/{bad,good}/`, one per rule;
`QUIVER_REGEN=1 python -m pytest tests/lint/test_rules.py` rewrites every `bad/expected.json` from what
the rule reports (review the diff). tests/fixtures/lint/README.md says how the projects are built.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from quiver.findings.catalog import CATALOG
from quiver.findings.rule import DOC_HEADINGS
from quiver.lint.registry import all_rules
from quiver.lint.run import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
FIELDS = ("rule", "severity", "file", "line", "column", "message", "hint")
HEADINGS = (*DOC_HEADINGS, "## Options", "## References")
REGEN = os.environ.get("QUIVER_REGEN") == "1"
RULES = {r.code: r for r in all_rules()}
CODES = sorted(e.code for e in CATALOG if e.module.startswith("quiver.lint."))


def findings_of(root: Path, code: str) -> list[dict[str, object]]:
    """The findings of one rule over a fixture project, as expected.json stores them."""
    return [{k: f.to_json().get(k) for k in FIELDS} for f in run(root, select=[code]).findings if f.rule == code]


def test_the_harness_covers_every_lint_rule_and_every_fixture_is_a_lint_code() -> None:
    assert sorted(RULES) == CODES
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == CODES


@pytest.mark.parametrize("code", CODES)
def test_rule_doc_has_the_required_headings_in_order(code: str) -> None:
    doc = RULES[code].doc
    positions = [doc.find(h + "\n") for h in HEADINGS]
    assert all(p >= 0 for p in positions[: len(DOC_HEADINGS)]), f"{code}: missing a required heading"
    present = [p for p in positions if p >= 0]
    assert present == sorted(present), f"{code}: headings out of order"


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_gives_exactly_the_expected_findings(code: str) -> None:
    bad = FIXTURES / code / "bad"
    expected = bad / "expected.json"
    got = findings_of(bad, code)
    if REGEN:
        expected.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got, f"{code}: the bad fixture gives no finding"
    assert got == json.loads(expected.read_text(encoding="utf-8"))


@pytest.mark.parametrize("code", CODES)
def test_good_fixture_gives_no_finding_of_its_rule(code: str) -> None:
    assert findings_of(FIXTURES / code / "good", code) == []
