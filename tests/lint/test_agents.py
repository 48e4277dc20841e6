"""The agents rule family: fixtures, the registry audit, the real awesome-copilot corpus, scale (bench: timings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.lint.agt import tool_references, unverifiable_tool_references
from quiver.lint.registry import rules_of
from quiver.lint.run import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
# AGT008-011 and AGT022 report what resolution could not honour; test_resolve.py covers them.
RESOLUTION_RULES = (*tool_references.RULES, *unverifiable_tool_references.RULES)
RULES = tuple(r for r in rules_of("AGT") if r not in RESOLUTION_RULES)
CODES = sorted(rule.code for rule in RULES)


# Docs and the bad/good fixtures of these rules are the rule harness's (tests/findings/test_rules.py).


def test_agent_rule_codes_and_names_are_unique() -> None:
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)


def test_only_the_documented_rules_offer_fixes() -> None:
    assert {r.code for r in RULES if r.fixable} == {"AGT005", "AGT013", "AGT023", "AGT026"}


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
