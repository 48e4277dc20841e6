"""The agents rule family: fixtures, the registry audit, the real awesome-copilot corpus, scale (bench: timings)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.lint import agents
from quiver.lint.run import run
from quiver.rules import DOC_HEADINGS, Rule

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
CODES = sorted(rule.code for rule in agents.RULES)
FIELDS = ("rule", "severity", "file", "line", "column", "message", "hint")
HEADINGS = (*DOC_HEADINGS, "## Options", "## References")


def findings_of(root: Path, code: str) -> list[dict[str, object]]:
    """The findings of one rule over a fixture project, as expected.json stores them."""
    return [{k: f.to_json().get(k) for k in FIELDS} for f in run(root, select=[code]).findings if f.rule == code]


def compare_with_expected(code: str) -> None:
    bad = FIXTURES / code / "bad"
    expected = bad / "expected.json"
    got = findings_of(bad, code)
    if os.environ.get("QUIVER_REGEN") == "1":
        expected.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got, f"{code}: the bad fixture gives no finding"
    assert got == json.loads(expected.read_text(encoding="utf-8"))


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_gives_exactly_the_expected_findings(code: str) -> None:
    compare_with_expected(code)


@pytest.mark.parametrize("code", CODES)
def test_good_fixture_gives_no_finding_of_its_rule(code: str) -> None:
    assert findings_of(FIXTURES / code / "good", code) == []


@pytest.mark.parametrize("rule", agents.RULES, ids=lambda r: r.code)
def test_every_agent_rule_has_its_doc_headings_in_order_and_both_fixtures(rule: Rule) -> None:
    positions = [rule.doc.find(h + "\n") for h in HEADINGS]
    required = positions[: len(DOC_HEADINGS)]
    assert all(p >= 0 for p in required), f"{rule.code}: missing a required heading"
    present = [p for p in positions if p >= 0]
    assert present == sorted(present), f"{rule.code}: headings out of order"
    assert "Use instead:" in rule.doc.split("## Example", 1)[1].split("\n## ", 1)[0]
    assert rule.code.startswith("AGT") and rule.code not in {"AGT008", "AGT009", "AGT010", "AGT011"}
    assert (FIXTURES / rule.code / "bad" / "expected.json").is_file()
    assert (FIXTURES / rule.code / "good").is_dir()


def test_agent_rule_codes_and_names_are_unique() -> None:
    assert len({r.code for r in agents.RULES}) == len(agents.RULES)
    assert len({r.name for r in agents.RULES}) == len(agents.RULES)


def test_only_the_documented_rules_offer_fixes() -> None:
    assert {r.code for r in agents.RULES if r.fixable} == {"AGT005", "AGT013"}


@pytest.fixture
def corpus_repo(corpus: Path, tmp_path: Path) -> Path:
    shutil.copytree(corpus / "awesome-copilot" / "agents", tmp_path / "repo" / ".github" / "agents")
    return tmp_path / "repo"


def test_the_awesome_copilot_corpus_reports_the_known_anomalies(corpus_repo: Path) -> None:
    findings = run(corpus_repo).findings
    by_rule: dict[str, set[str]] = {}
    for f in findings:
        assert f.location is not None and f.location.line > 0, f
        by_rule.setdefault(f.rule, set()).add(f.location.file.rsplit("/", 1)[-1])
    assert by_rule["AGT006"] == {"pimcore-expert.agent.md"}
    assert by_rule["MCP004"] == {
        "cast-imaging-impact-analysis.agent.md",
        "cast-imaging-structural-quality-advisor.agent.md",
    }
    assert by_rule["MCP007"] == by_rule["MCP004"]  # `${input:imaging-key}` in cloud-agent YAML
    assert "comet-opik.agent.md" in by_rule["MCP008"]  # bare COPILOT_MCP_* values
    assert "pagerduty-incident-responder.agent.md" in by_rule["MCP018"]  # `auth: {type: oauth}`
    assert "AGT001" not in by_rule and "MCP005" not in by_rule


def test_lint_over_the_corpus_through_the_cli_exits_1_without_a_traceback(corpus_repo: Path) -> None:
    result = CliRunner().invoke(cli, ["lint", "--project", str(corpus_repo), "--format", "json"])
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert result.exit_code == 1
    rules = {item["rule"] for item in json.loads(result.stdout)}
    assert {"AGT006", "MCP004"} <= rules


def test_a_thousand_agents_each_get_their_own_findings(corpus: Path, tmp_path: Path) -> None:
    """Scale without timing (bench/lint.py prints the wall time of this case): nothing merged or lost."""
    sources = sorted((corpus / "awesome-copilot" / "agents").glob("*.agent.md"))
    target = tmp_path / ".github" / "agents"
    target.mkdir(parents=True)
    for i in range(1000):
        source = sources[i % len(sources)]
        shutil.copyfile(source, target / f"{i:04d}-{source.name}")
    findings = run(tmp_path, select=["AGT", "MCP0"]).findings
    assert sum(1 for f in findings if f.rule == "AGT006") == sum(
        1 for i in range(1000) if "pimcore" in sources[i % len(sources)].name
    )


def test_a_non_ascii_letter_in_an_agent_file_name_is_reported(tmp_path: Path) -> None:
    path = tmp_path / ".github" / "agents" / "revisi\u00f3n.agent.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ndescription: A non-ASCII letter in the file name.\n---\n", encoding="utf-8")
    assert [f.rule for f in run(tmp_path, select=["AGT007"]).findings] == ["AGT007"]
