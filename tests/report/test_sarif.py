from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from report_cases import AGENT, RULES, UNKNOWN_TOOL, context, diff_findings, lint_findings

from quiver import __version__
from quiver.model import Location
from quiver.report.render import render

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"


def _uri(value: object) -> bool:
    return not isinstance(value, str) or (bool(urlsplit(value).scheme) and " " not in value)


def _uri_reference(value: object) -> bool:
    return not isinstance(value, str) or not any(c in value for c in ' "<>\\^`{|}')


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    formats = jsonschema.FormatChecker()
    formats.checks("uri")(_uri)  # the optional rfc3987 checker is not installed; check the essentials
    formats.checks("uri-reference")(_uri_reference)
    return jsonschema.Draft4Validator(schema, format_checker=formats)


def _sarif(findings: list[Any], root: Path, **overrides: Any) -> dict[str, Any]:
    out = render(findings, "sarif", context(root, **overrides))
    assert out.endswith("}\n")
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def test_sarif_output_is_valid_against_the_official_schema(
    project: Path, validator: jsonschema.Draft4Validator
) -> None:
    for log in (
        _sarif(lint_findings(), project),
        _sarif(diff_findings(), project, tool="diff"),
        _sarif([], project),
    ):
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def test_sarif_schema_rejects_a_broken_log(validator: jsonschema.Draft4Validator, project: Path) -> None:
    log = _sarif(lint_findings(), project)
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert not validator.is_valid(log)


def test_sarif_describes_each_rule_that_appears_once_with_its_metadata(project: Path) -> None:
    log = _sarif(lint_findings() + lint_findings(), project)
    driver = log["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("quiver", __version__)
    assert "informationUri" not in driver  # quiver has no web site: no link that does not resolve
    assert [r["id"] for r in driver["rules"]] == ["AGT008", "AGT012", "MCP012"]
    first = driver["rules"][0]
    rule = RULES["AGT008"]
    assert first["name"] == "unknown-tool-reference"
    assert first["shortDescription"] == {"text": "Flags a tools entry that names no known tool."}
    assert first["fullDescription"] == {
        "text": "Flags a tools entry that names no known tool. It is a test rule.\n\nIt costs."
    }
    assert first["help"]["markdown"] == rule.doc.strip()
    assert "##" not in first["help"]["text"] and "`" not in first["help"]["text"]
    assert "helpUri" not in first  # the doc travels in `help` instead
    assert first["defaultConfiguration"] == {"level": "error"}
    assert first["properties"]["tags"] == ["lint", "AGT"]
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == ["error", "note", "warning"]


def test_sarif_results_carry_location_fingerprint_and_rule_index(project: Path) -> None:
    findings = lint_findings()
    log = _sarif(findings, project)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    results = log["runs"][0]["results"]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == [r["ruleId"] for r in results]
    first = results[0]
    assert first["level"] == "error"
    assert first["message"]["text"] == (
        "`github/serch_issues` matches no built-in tool and no tool of any visible server\n"
        "hint: did you mean `github/search_issues`?"
    )
    assert first["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": AGENT, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 30},
            }
        }
    ]
    assert [r["partialFingerprints"]["quiverFingerprint/v1"] for r in results] == [f.fingerprint for f in findings]
    assert all(re.fullmatch(r"[0-9a-f]+:\d+", r["partialFingerprints"]["primaryLocationLineHash"]) for r in results)
    assert results[0]["properties"] == {"agent": "triage"}
    assert results[2]["properties"] == {"server": "notion"}


def test_sarif_contract_results_carry_tool_and_witness_and_taxonomy_tags(project: Path) -> None:
    log = _sarif(diff_findings(), project, tool="diff")
    run = log["runs"][0]
    tags = {r["id"]: r["properties"]["tags"] for r in run["tool"]["driver"]["rules"]}
    assert tags == {
        "CTR004": ["diff", "CTR", "tool", "description", "changed"],
        "CTR020": ["diff", "CTR", "input", "required", "added"],
    }
    first = run["results"][0]
    assert first["properties"] == {
        "server": "github",
        "tool": "issue_read",
        "witness": {"arguments": {"issueNumber": 1, "owner": "a"}},
    }
    # a finding on line 0 names its file but no region
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "quiver.lock.json", "uriBaseId": "%SRCROOT%"}
    }


def test_sarif_leaves_out_locations_it_does_not_have_and_encodes_uris(
    project: Path, validator: jsonschema.Draft4Validator
) -> None:
    nowhere = UNKNOWN_TOOL.finding(location=None, ref="x", guess="y")
    odd = UNKNOWN_TOOL.finding(location=Location("agents/my agent#1.md", 2), ref="x", guess="y")
    log = _sarif([nowhere, odd], project)
    first, second = log["runs"][0]["results"]
    assert "locations" not in first
    physical = second["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "agents/my%20agent%231.md"
    assert physical["region"] == {"startLine": 2}
    assert validator.is_valid(log)


def test_a_result_without_a_location_of_its_own_gets_the_fallback_code_scanning_requires(
    project: Path, validator: jsonschema.Draft4Validator
) -> None:
    nowhere = UNKNOWN_TOOL.finding(location=None, ref="x", guess="y")
    log = _sarif([nowhere], project, tool="diff", fallback=Location("quiver.lock.json", 1, 1))
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "quiver.lock.json", "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 1, "startColumn": 1}}  # fmt: skip
    assert validator.is_valid(log)
