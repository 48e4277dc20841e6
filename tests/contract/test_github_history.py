"""The real contract history of github/github-mcp-server: tool snapshots at v0.20.0 and v0.30.0."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from quiver.contract.diff import diff_catalogs, diff_tool
from quiver.contract.witness import is_valid
from quiver.model import Finding

Catalog = dict[str, dict[str, Any]]


def load(folder: Path) -> Catalog:
    tools: Catalog = {}
    for path in sorted(folder.glob("*.snap")):
        with path.open(encoding="utf-8") as handle:
            tool = json.load(handle)
        tools[tool["name"]] = tool
    return tools


@pytest.fixture
def v20(corpus: Path) -> Catalog:
    return load(corpus / "github-mcp-server" / "v0.20.0")


@pytest.fixture
def v30(corpus: Path) -> Catalog:
    return load(corpus / "github-mcp-server" / "v0.30.0")


def by_tool(findings: list[Finding]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for finding in findings:
        out.setdefault(finding.tool or "", []).append((finding.rule, finding.severity))
    return out


def assert_witnesses_hold(findings: list[Finding], old: Catalog, new: Catalog) -> None:
    """Every witness: arguments valid under the old inputSchema and invalid under the new one."""
    for finding in findings:
        if finding.witness is None:
            continue
        arguments = finding.witness["arguments"]
        schema_old = old[finding.tool or ""]["inputSchema"]
        schema_new = new[finding.tool or ""]["inputSchema"]
        assert is_valid(schema_old, arguments), finding.message
        assert not is_valid(schema_new, arguments), finding.message


def test_the_snapshots_hold_63_and_101_tools(v20: Catalog, v30: Catalog) -> None:
    assert (len(v20), len(v30)) == (63, 101)


def test_no_tool_was_removed_and_38_were_added(v20: Catalog, v30: Catalog) -> None:
    findings = diff_catalogs(v20, v30, server="github")
    assert not [f for f in findings if f.rule in ("CTR001", "CTR002")]
    added = sorted(f.tool or "" for f in findings if f.rule == "CTR003")
    assert added == sorted(set(v30) - set(v20))
    assert len(added) == 38
    assert {"actions_list", "projects_get", "list_workflows", "create_gist"} <= set(added)


def test_the_only_breaking_changes_are_two_new_required_parameters(v20: Catalog, v30: Catalog) -> None:
    findings = diff_catalogs(v20, v30, server="github")
    serious = [(f.tool, f.rule, f.severity, f.message) for f in findings if f.severity != "info"]
    assert serious == [
        (
            "assign_copilot_to_issue",
            "CTR020",
            "error",
            "tool `github/assign_copilot_to_issue`: new required property `issue_number` (renamed from `issueNumber`?)",
        ),
        (
            "assign_copilot_to_issue",
            "CTR023",
            "warning",
            "tool `github/assign_copilot_to_issue`: property `issueNumber` was removed; calls that send it are "
            "accepted and it is silently ignored",
        ),
        (
            "dismiss_notification",
            "CTR021",
            "error",
            "tool `github/dismiss_notification`: property `state` became required",
        ),
    ]
    errors = [f for f in findings if f.severity == "error"]
    assert all(f.witness is not None for f in errors)
    assert_witnesses_hold(findings, v20, v30)
    witnesses = {f.tool: f.witness for f in errors}
    assert witnesses["dismiss_notification"] == {"arguments": {"threadID": "x"}}
    assert "issue_number" not in witnesses["assign_copilot_to_issue"]["arguments"]


def test_optional_parameters_and_description_edits_are_never_errors_or_warnings(v20: Catalog, v30: Catalog) -> None:
    findings = by_tool(diff_catalogs(v20, v30, server="github"))
    assert findings["list_projects"] == [
        ("CTR004", "info"),
        ("CTR040", "info"),
        ("CTR040", "info"),
        ("CTR045", "info"),
        ("CTR045", "info"),
    ]
    assert findings["list_project_fields"] == [("CTR040", "info"), ("CTR040", "info"), ("CTR045", "info")]
    assert findings["create_or_update_file"] == [("CTR004", "info"), ("CTR045", "info")]
    for name in ("list_project_items", "get_file_contents", "issue_write", "pull_request_read"):
        assert all(severity == "info" for _, severity in findings[name]), name


def test_whitespace_only_edits_and_default_valued_annotations_are_no_change(v20: Catalog, v30: Catalog) -> None:
    findings = by_tool(diff_catalogs(v20, v30, server="github"))
    # issue_read: only "issue. \nOptions are: \n" -> "issue.\nOptions are:\n" in `method`'s description
    assert "issue_read" not in findings
    # readOnlyHint: false dropped (the default), destructiveHint: true added (the default)
    for name in ("add_issue_comment", "create_branch", "delete_project_item"):
        assert name not in findings, name
    assert findings["merge_pull_request"] == [("CTR096", "info")]  # it gained `icons`, nothing else
    # push_files: `additionalProperties: false` dropped from the items: a widening, not reported
    assert "push_files" not in findings


def test_going_back_from_v0_30_to_v0_20_removes_38_tools_and_closes_push_files(v20: Catalog, v30: Catalog) -> None:
    findings = diff_catalogs(v30, v20, server="github")
    removed = [f for f in findings if f.rule == "CTR001"]
    assert len(removed) == 38 and all(f.severity == "error" for f in removed)
    closed = [f for f in findings if f.tool == "push_files"]
    assert [(f.rule, f.severity, f.message) for f in closed] == [
        ("CTR033", "error", "tool `github/push_files`: `files[]`: undeclared properties are no longer accepted"),
    ]
    assert closed[0].witness["arguments"]["files"][0]["quiver_extra"] == "x"
    assert_witnesses_hold(findings, v30, v20)
    lost = sorted(f.message for f in findings if f.tool == "list_projects" and f.rule == "CTR023")
    assert len(lost) == 2 and "`after`" in lost[0] and "`before`" in lost[1]


def test_list_issues_v0_11_enum_case_change_is_one_finding_per_property(v20: Catalog) -> None:
    # github-mcp-server 8aa3379f (v0.11.0): `state` open/closed/all -> OPEN/CLOSED, `direction` asc/desc ->
    # ASC/DESC, `page` and `sort` removed. Rebuilt here from the v0.20.0 snapshot (which has the new side).
    new = v20["list_issues"]
    old = copy.deepcopy(new)
    props = old["inputSchema"]["properties"]
    props["state"]["enum"] = ["open", "closed", "all"]
    props["direction"]["enum"] = ["asc", "desc"]
    props["page"] = {"type": "number", "minimum": 1}
    props["sort"] = {"type": "string", "enum": ["created", "updated", "comments"]}
    findings = diff_tool(old, new, server="github")
    changed = [(f.rule, f.message.split(": ", 1)[1]) for f in findings if f.rule in ("CTR025", "CTR103")]
    assert changed == [
        ("CTR025", '`state`: enum value "all" removed'),
        ("CTR103", '`direction`: enum values "asc", "desc" became "ASC", "DESC" (case changed)'),
        ("CTR103", '`state`: enum values "open", "closed" became "OPEN", "CLOSED" (case changed)'),
    ]
    assert not [f for f in findings if f.rule == "CTR042"]  # the new spellings are not additions of their own
    assert all(f.severity == "error" and f.witness for f in findings if f.rule in ("CTR025", "CTR103"))
    assert_witnesses_hold(findings, {"list_issues": old}, {"list_issues": new})
    assert sorted(f.message.split("`")[3] for f in findings if f.rule == "CTR023") == ["page", "sort"]


def test_issue_type_becoming_a_nullable_union_is_a_widening_plus_a_min_length(v30: Catalog) -> None:
    # github-mcp-server e7f7bb8b (v1.9.0): `type: string` -> anyOf [{string, minLength 1}, {null}]
    old = v30["issue_write"]
    new = copy.deepcopy(old)
    description = old["inputSchema"]["properties"]["type"]["description"]
    new["inputSchema"]["properties"]["type"] = {
        "anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}],
        "description": description,
    }
    findings = diff_tool(old, new, server="github")
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR028", "error", "tool `github/issue_write`: `type`: `minLength` tightened from none to 1"),
        ("CTR041", "info", "tool `github/issue_write`: `type`: type widened from `string` to `string | null`"),
    ]
    assert findings[0].witness["arguments"]["type"] == ""
    assert_witnesses_hold(findings, {"issue_write": old}, {"issue_write": new})
