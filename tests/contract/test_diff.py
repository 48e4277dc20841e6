"""diff_tool and diff_catalogs, one family of rules at a time: code, severity, message and witness."""

from __future__ import annotations

from typing import Any

import pytest

from quiver.contract.diff import diff_agent_tools, diff_catalogs, diff_tool
from quiver.contract.witness import is_valid
from quiver.model import Finding, Location

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
N: dict[str, Any] = {"type": "number"}


def tool(
    props: dict[str, Any] | None = None, required: tuple[str, ...] = (), *, name: str = "t", **schema: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "object", "properties": props or {}, **schema}
    if required:
        body["required"] = list(required)
    return {"name": name, "description": "Do a thing.", "inputSchema": body}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[Finding]:
    return diff_tool(old, new, server="github")


def one(findings: list[Finding], code: str) -> Finding:
    hits = [f for f in findings if f.rule == code]
    assert len(hits) == 1, [(f.rule, f.message) for f in findings]
    return hits[0]


def assert_input_witness(finding: Finding, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    assert finding.witness is not None, finding.message
    arguments = finding.witness["arguments"]
    assert is_valid(old["inputSchema"], arguments)
    assert not is_valid(new["inputSchema"], arguments)
    return arguments  # type: ignore[no-any-return]  # JSON witness


# -- tools, catalogs, agents ---------------------------------------------------------------------------


def test_a_removed_tool_is_an_error_and_an_added_one_info() -> None:
    old = {"a_tool": {"name": "a_tool", "description": "A.", "inputSchema": {"type": "object"}}}
    new = {"b_thing": {"name": "b_thing", "description": "Totally different.", "inputSchema": {"type": "string"}}}
    findings = diff_catalogs(old, new, server="s", locations={"a_tool": Location("quiver.lock", 3, 5)})
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR001", "error", "tool `s/a_tool` was removed"),
        ("CTR003", "info", "tool `s/b_thing` was added"),
    ]
    assert findings[0].location == Location("quiver.lock", 3, 5)
    assert findings[0].server == "s" and findings[0].tool == "a_tool"


def test_a_near_identical_added_tool_turns_the_removal_into_a_rename() -> None:
    workflow = {
        "description": "List workflows of a repository.",
        "inputSchema": tool({"owner": S}, ("owner",))["inputSchema"],
    }
    old = {"list_workflows": {"name": "list_workflows", **workflow}}
    new = {"actions_list": {"name": "actions_list", **workflow}}
    findings = diff_catalogs(old, new, server="github")
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR002", "error", "tool `github/list_workflows` was removed; renamed to `actions_list`"),
    ]
    assert findings[0].hint == (
        "serve `list_workflows` as an alias of `actions_list` until every caller has moved; the alias must keep "
        "accepting the old arguments (the schema is compatible)"
    )


def test_a_description_change_is_info_with_a_route_test_hint_and_whitespace_is_ignored() -> None:
    old = tool()
    finding = one(diff(old, {**old, "description": "Do another thing."}), "CTR004")
    assert finding.severity == "info"
    assert "quiver route-test" in (finding.hint or "")
    assert diff(old, {**old, "description": "Do  a\nthing. "}) == []


def test_an_agent_that_loses_a_tool_gets_a_warning_per_tool() -> None:
    findings = diff_agent_tools(["gh/a", "gh/b", "gh/c"], ["gh/b"], agent="reviewer", wildcard=["gh/c"])
    assert [(f.rule, f.severity, f.agent, f.server, f.tool, f.message) for f in findings] == [
        ("CTR070", "warning", "reviewer", "gh", "a", "agent `reviewer` lost tool `gh/a`"),
        ("CTR070", "info", "reviewer", "gh", "c", "agent `reviewer` lost tool `gh/c`"),
    ]


# -- annotations ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "code", "severity"),
    [
        ({"readOnlyHint": True}, {"readOnlyHint": False}, "CTR010", "error"),
        ({"destructiveHint": False}, {}, "CTR011", "error"),
        ({"idempotentHint": True}, {}, "CTR012", "warning"),
        ({"openWorldHint": False}, {"openWorldHint": True}, "CTR013", "warning"),
    ],
)
def test_weakened_safety_hints_are_reported(old: dict[str, Any], new: dict[str, Any], code: str, severity: str) -> None:
    findings = diff({**tool(), "annotations": old}, {**tool(), "annotations": new})
    assert [(f.rule, f.severity) for f in findings] == [(code, severity)]


def test_hints_equal_to_their_defaults_may_be_dropped_or_added() -> None:
    old = {**tool(), "annotations": {"title": "T", "readOnlyHint": False}}
    new = {**tool(), "annotations": {"title": "T", "destructiveHint": True}}
    assert diff(old, new) == []


def test_destructive_and_idempotent_hints_do_not_matter_for_read_only_tools() -> None:
    old = {**tool(), "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}}
    new = {**tool(), "annotations": {"readOnlyHint": True}}
    assert diff(old, new) == []


def test_the_read_only_message_names_the_old_and_new_values() -> None:
    finding = one(diff({**tool(), "annotations": {"readOnlyHint": True}}, tool()), "CTR010")
    assert finding.message == (
        "tool `github/t`: `readOnlyHint` went from true to absent (default false): "
        "the tool may now modify its environment"
    )


# -- input: required and properties -------------------------------------------------------------------


def test_a_new_required_property_is_an_error_whose_witness_omits_it() -> None:
    old, new = tool({"owner": S}, ("owner",)), tool({"owner": S, "repo": S}, ("owner", "repo"))
    finding = one(diff(old, new), "CTR020")
    assert finding.severity == "error"
    assert finding.message == "tool `github/t`: new required property `repo`"
    assert assert_input_witness(finding, old, new) == {"owner": "x"}


def test_a_required_rename_names_the_likely_old_property() -> None:
    old = tool({"issueNumber": N}, ("issueNumber",))
    new = tool({"issue_number": N}, ("issue_number",))
    findings = diff(old, new)
    assert (
        one(findings, "CTR020").message
        == "tool `github/t`: new required property `issue_number` (renamed from `issueNumber`?)"
    )
    assert one(findings, "CTR023").severity == "warning"


def test_an_optional_property_that_becomes_required_is_an_error() -> None:
    old, new = tool({"a": S, "b": S}, ("a",)), tool({"a": S, "b": S}, ("a", "b"))
    finding = one(diff(old, new), "CTR021")
    assert (finding.severity, finding.message) == ("error", "tool `github/t`: property `b` became required")
    assert_input_witness(finding, old, new)
    assert [f.rule for f in diff(new, old)] == ["CTR044"]


def test_a_removed_property_is_an_error_for_a_closed_object_and_a_warning_for_an_open_one() -> None:
    closed_old = tool({"q": S, "page": INT}, additionalProperties=False)
    closed_new = tool({"q": S}, additionalProperties=False)
    finding = one(diff(closed_old, closed_new), "CTR022")
    assert finding.severity == "error"
    assert assert_input_witness(finding, closed_old, closed_new) == {"page": 0}
    opened = diff(tool({"q": S, "page": INT}), tool({"q": S}))
    assert [(f.rule, f.severity, f.witness) for f in opened] == [("CTR023", "warning", None)]


def test_an_optional_property_added_is_info_at_most() -> None:
    findings = diff(tool({"owner": S}), tool({"owner": S, "after": S}))
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR040", "info", "tool `github/t`: optional property `after` added")
    ]


def test_nested_changes_name_the_json_path() -> None:
    old = tool({"filter": {"type": "object", "properties": {"state": {"enum": ["open", "closed", "all"]}}}})
    new = tool({"filter": {"type": "object", "properties": {"state": {"enum": ["open", "closed"]}}}})
    finding = one(diff(old, new), "CTR025")
    assert finding.message == 'tool `github/t`: `filter.state`: enum value "all" removed'
    assert assert_input_witness(finding, old, new) == {"filter": {"state": "all"}}


def test_array_items_are_compared_under_a_bracket_path() -> None:
    item = {"type": "object", "properties": {"path": S}, "required": ["path"]}
    old = tool({"files": {"type": "array", "items": item}})
    new = tool({"files": {"type": "array", "items": {**item, "properties": {"path": INT}}}})
    finding = one(diff(old, new), "CTR024")
    assert finding.message == "tool `github/t`: `files[].path`: type narrowed from `string` to `integer`"
    assert assert_input_witness(finding, old, new) == {"files": [{"path": "x"}]}


# -- input: values --------------------------------------------------------------------------------------


def test_type_narrowing_and_widening() -> None:
    old, new = tool({"id": N}), tool({"id": INT})
    narrowed = one(diff(old, new), "CTR024")
    assert (narrowed.severity, narrowed.message) == (
        "error",
        "tool `github/t`: `id`: type narrowed from `number` to `integer`",
    )
    assert assert_input_witness(narrowed, old, new) == {"id": 0.5}
    widened = one(diff(new, old), "CTR041")
    assert (widened.severity, widened.witness) == ("info", None)


def test_enum_restrictions_and_const_changes() -> None:
    restricted = one(diff(tool({"d": S}), tool({"d": {"type": "string", "enum": ["asc", "desc"]}})), "CTR026")
    assert restricted.message == 'tool `github/t`: `d`: values now restricted to ["asc","desc"]'
    assert restricted.witness is not None
    old, new = tool({"k": {"const": "v1"}}, ("k",)), tool({"k": {"const": "v2"}}, ("k",))
    const = one(diff(old, new), "CTR027")
    assert const.message == 'tool `github/t`: `k`: const changed from "v1" to "v2"'
    assert assert_input_witness(const, old, new) == {"k": "v1"}
    added = one(diff(tool({"s": {"enum": ["a"]}}), tool({"s": {"enum": ["a", "b"]}})), "CTR042")
    assert added.severity == "info"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            {"type": "number", "maximum": 100},
            {"type": "number", "maximum": 50},
            "`maximum` tightened from <= 100 to <= 50",
        ),
        (
            {"type": "number", "minimum": 0},
            {"type": "number", "exclusiveMinimum": 0},
            "`exclusiveMinimum` tightened from >= 0 to > 0",
        ),
        ({"type": "integer"}, {"type": "integer", "multipleOf": 5}, "`multipleOf` tightened from none to 5"),
        ({"type": "string"}, {"type": "string", "minLength": 1}, "`minLength` tightened from none to 1"),
        ({"type": "string", "maxLength": 10}, {"type": "string", "maxLength": 3}, "`maxLength` tightened from 10 to 3"),
        (
            {"type": "array", "items": S},
            {"type": "array", "items": S, "maxItems": 2},
            "`maxItems` tightened from none to 2",
        ),
        (
            {"type": "array", "items": S},
            {"type": "array", "items": S, "minItems": 1},
            "`minItems` tightened from none to 1",
        ),
        (
            {"type": "array", "items": S},
            {"type": "array", "items": S, "uniqueItems": True},
            "`uniqueItems` tightened from false to true",
        ),
    ],
)
def test_tightened_bounds_are_errors_with_a_value_between_the_bounds(
    old: dict[str, Any], new: dict[str, Any], message: str
) -> None:
    before, after = tool({"v": old}), tool({"v": new})
    finding = one(diff(before, after), "CTR028")
    assert (finding.severity, finding.message) == ("error", f"tool `github/t`: `v`: {message}")
    assert_input_witness(finding, before, after)


def test_draft04_boolean_exclusive_bounds_and_integer_only_equivalents() -> None:
    old = tool({"n": {"type": "integer", "minimum": 1}})
    same = tool({"n": {"type": "integer", "exclusiveMinimum": 0}})
    assert diff(old, same) == []
    dialect = {"$schema": "http://json-schema.org/draft-04/schema#"}
    draft04 = tool({"n": {"type": "number", "minimum": 5, "exclusiveMinimum": True}}, **dialect)
    finding = one(diff(tool({"n": N}, **dialect), draft04), "CTR028")
    assert finding.message == "tool `github/t`: `n`: `exclusiveMinimum` tightened from none to > 5"
    # `$schema` decides: the boolean form in a 2020-12 (or unnamed) schema is not read as draft-04
    modern = tool({"n": {"type": "number", "minimum": 5, "exclusiveMinimum": True}})
    unread = one(diff(tool({"n": N}), modern), "CTR080")
    assert "`exclusiveMinimum` is a boolean, which only draft-04 allows, but the schema is 2020-12" in unread.message


def test_patterns_and_formats() -> None:
    old, new = tool({"b": S}), tool({"b": {"type": "string", "pattern": "^[a-z]+$"}})
    finding = one(diff(old, new), "CTR029")
    assert finding.message == "tool `github/t`: `b`: pattern `^[a-z]+$` added"
    assert_input_witness(finding, old, new)
    changed_old = tool({"b": {"type": "string", "pattern": "^[a-z]+$"}})
    changed_new = tool({"b": {"type": "string", "pattern": "^[a-z]{4,}$"}})
    assert_input_witness(one(diff(changed_old, changed_new), "CTR030"), changed_old, changed_new)
    fmt_new = tool({"b": {"type": "string", "format": "email"}})
    assert_input_witness(one(diff(old, fmt_new), "CTR031"), old, fmt_new)


def test_an_unconfirmable_witness_turns_the_error_into_a_warning_that_says_so() -> None:
    # quiver asserts no `duration` format (contract/formats.py), so no string can be shown to fail it
    findings = diff(tool({"at": S}), tool({"at": {"type": "string", "format": "duration"}}))
    finding = one(findings, "CTR031")
    assert finding.severity == "warning"
    assert finding.message == "tool `github/t`: `at`: format `duration` added (witness could not be confirmed)"
    assert finding.witness is None


def test_default_changes_are_warnings_without_witness() -> None:
    finding = one(
        diff(tool({"d": {"type": "string", "default": "full"}}), tool({"d": {"type": "string", "default": "stats"}})),
        "CTR039",
    )
    assert (finding.severity, finding.message, finding.witness) == (
        "warning",
        'tool `github/t`: `d`: default changed from "full" to "stats"',
        None,
    )


def test_property_description_changes_are_info() -> None:
    findings = diff(
        tool({"p": {"type": "number", "description": "max 100"}}),
        tool({"p": {"type": "number", "description": "max 50"}}),
    )
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR045", "info", "tool `github/t`: `p`: description changed")
    ]


# -- input: objects, arrays, composition --------------------------------------------------------------


def test_closing_additional_properties_is_an_error_with_an_extra_key_witness() -> None:
    old, new = tool({"q": S}), tool({"q": S}, additionalProperties=False)
    finding = one(diff(old, new), "CTR033")
    assert finding.message == "tool `github/t`: `(arguments)`: undeclared properties are no longer accepted"
    assert assert_input_witness(finding, old, new) == {"quiver_extra": "x"}
    assert diff(new, old) == []


def test_items_closed_after_a_prefix() -> None:
    old = tool({"p": {"type": "array", "prefixItems": [N, N]}})
    new = tool({"p": {"type": "array", "prefixItems": [N, N], "items": False}})
    finding = one(diff(old, new), "CTR036")
    assert assert_input_witness(finding, old, new)["p"][:2] == [0, 0]


def test_an_any_of_branch_removed_is_an_error() -> None:
    old, new = tool({"id": {"anyOf": [S, INT, {"type": "boolean"}]}}), tool({"id": {"anyOf": [S, INT]}})
    finding = one(diff(old, new), "CTR034")
    assert finding.message == "tool `github/t`: `id`: old alternative #2 no longer fits any `anyOf` branch"
    assert assert_input_witness(finding, old, new) == {"id": False}
    assert diff(new, old) == []  # a new alternative widens the input: waived (taxonomy.WAIVERS)


def test_a_new_any_of_constraint_is_an_error_when_old_calls_fit_no_branch() -> None:
    old = tool({"body": S, "reaction": S})
    new = tool({"body": S, "reaction": S}, anyOf=[{"required": ["body"]}, {"required": ["reaction"]}])
    finding = one(diff(old, new), "CTR035")
    assert assert_input_witness(finding, old, new) == {}


def test_dependent_required_and_dependent_schemas_added() -> None:
    old = tool({"orderBy": S, "direction": S})
    new = tool({"orderBy": S, "direction": S}, dependentRequired={"orderBy": ["direction"]})
    finding = one(diff(old, new), "CTR037")
    assert finding.message == "tool `github/t`: `(arguments)`: sending `orderBy` now also requires `direction`"
    assert assert_input_witness(finding, old, new) == {"orderBy": "x"}
    schemas = tool({"body": S, "reaction": S}, dependentSchemas={"reaction": {"not": {"required": ["body"]}}})
    assert_input_witness(
        one(diff(tool({"body": S, "reaction": S}), schemas), "CTR038"), tool({"body": S, "reaction": S}), schemas
    )


def test_an_all_of_is_folded_into_one_node() -> None:
    old = tool({"q": S})
    new = {**old, "inputSchema": {"allOf": [old["inputSchema"], {"required": ["q"]}]}}
    finding = one(diff(old, new), "CTR021")
    assert_input_witness(finding, old, new)


def test_null_unions_in_every_spelling_are_the_same_type() -> None:
    spellings = [
        {"type": ["string", "null"]},
        {"anyOf": [S, {"type": "null"}]},
        {"oneOf": [{"type": "null"}, S]},
        {"type": "string", "nullable": True},
    ]
    for a in spellings:
        for b in spellings:
            assert diff(tool({"v": a}), tool({"v": b})) == [], (a, b)
    finding = one(diff(tool({"v": spellings[1]}), tool({"v": S})), "CTR024")
    assert finding.message == "tool `github/t`: `v`: type narrowed from `string | null` to `string`"
    assert finding.witness == {"arguments": {"v": None}}


def test_a_nullable_union_keeps_its_keywords() -> None:
    # github-mcp-server e7f7bb8b: `issue_type` went from a string to anyOf [string minLength 1, null]
    old = tool({"issue_type": S})
    new = tool({"issue_type": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}})
    findings = diff(old, new)
    assert [(f.rule, f.severity) for f in findings] == [("CTR028", "error"), ("CTR041", "info")]
    assert assert_input_witness(findings[0], old, new) == {"issue_type": ""}


# -- $ref ------------------------------------------------------------------------------------------------


def test_refs_into_defs_and_definitions_are_followed() -> None:
    def with_defs(state: list[str], key: str) -> dict[str, Any]:
        return {
            "name": "t",
            "description": "",
            "inputSchema": {
                "type": "object",
                "properties": {"s": {"$ref": f"#/{key}/state"}},
                key: {"state": {"type": "string", "enum": state}},
            },
        }

    for key in ("$defs", "definitions"):
        old, new = with_defs(["a", "b"], key), with_defs(["a"], key)
        finding = one(diff(old, new), "CTR025")
        assert assert_input_witness(finding, old, new) == {"s": "b"}


def test_keywords_beside_a_ref_apply_in_2020_12_and_are_ignored_in_draft_07() -> None:
    def schema(dialect: str, extra: dict[str, Any]) -> dict[str, Any]:
        body = {
            "$schema": dialect,
            "type": "object",
            "properties": {"s": {"$ref": "#/definitions/s", **extra}},
            "definitions": {"s": {"type": "string"}},
        }
        return {"name": "t", "description": "", "inputSchema": body}

    modern, draft7 = "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"
    assert one(diff(schema(modern, {}), schema(modern, {"maxLength": 2})), "CTR028").severity == "error"
    assert diff(schema(draft7, {}), schema(draft7, {"maxLength": 2})) == []


def test_an_anchor_reference_is_followed() -> None:
    def schema(state: list[str]) -> dict[str, Any]:
        body = {
            "type": "object",
            "properties": {"s": {"$ref": "#state"}},
            "$defs": {"state": {"$anchor": "state", "enum": state}},
        }
        return {"name": "t", "description": "", "inputSchema": body}

    finding = one(diff(schema(["a", "b"]), schema(["a"])), "CTR025")
    assert assert_input_witness(finding, schema(["a", "b"]), schema(["a"])) == {"s": "b"}


def test_a_change_inside_a_recursive_definition_is_found_and_the_walk_ends() -> None:
    def tree(leaf: dict[str, Any]) -> dict[str, Any]:
        node = {
            "type": "object",
            "properties": {"value": leaf, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
        return {"name": "t", "description": "", "inputSchema": {"$ref": "#/$defs/node", "$defs": {"node": node}}}

    assert diff(tree(S), tree(S)) == []
    old, new = tree(S), tree({"type": "string", "maxLength": 2})
    finding = one(diff(old, new), "CTR028")
    assert assert_input_witness(finding, old, new)


def unreadable(findings: list[Finding]) -> str:
    """The reason of the one CTR080 finding that is the whole answer for the tool."""
    assert [f.rule for f in findings] == ["CTR080"], [(f.rule, f.message) for f in findings]
    assert findings[0].severity == "error" and findings[0].hint
    return findings[0].message


def test_a_ref_cycle_with_no_schema_in_it_is_one_unreadable_finding() -> None:
    looped = {
        "name": "t",
        "inputSchema": {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
    }
    assert "cycle" in unreadable(diff(looped, {**looped, "description": "x"}))


def test_an_unresolvable_ref_is_one_unreadable_finding_naming_the_ref() -> None:
    message = unreadable(diff(tool({"s": S}), tool({"s": {"$ref": "#/$defs/missing"}})))
    assert message.startswith("tool `github/t`: not compared: new `inputSchema`: ") and "`#/$defs/missing`" in message


def test_a_remote_ref_is_a_warning_on_its_path_and_the_rest_is_compared() -> None:
    old = tool({"s": {"$ref": "https://example.com/s.json"}, "n": N})
    new = tool({"s": {"$ref": "https://example.com/s.json"}, "n": INT})
    findings = diff(old, new)
    remote = one(findings, "CTR089")
    assert remote.severity == "warning"
    assert remote.message == (
        "tool `github/t`: `s`: not compared: remote `$ref` `https://example.com/s.json` is not followed"
    )
    one(findings, "CTR024")


def test_a_schema_that_is_not_an_object_or_boolean_is_one_unreadable_finding() -> None:
    assert "not array" in unreadable(diff(tool(), {"name": "t", "inputSchema": ["not", "a", "schema"]}))
    assert "not integer" in unreadable(diff(tool({"s": S}), tool({"s": 3})))
    repaired = diff(tool({"s": 3}), tool({"s": S}))  # broken before, readable now: a fix, not a failure
    assert [(f.rule, f.severity) for f in repaired] == [("CTR091", "info")]
    assert "old `inputSchema`: a subschema must be a JSON object or boolean, not integer" in repaired[0].message


# -- output ---------------------------------------------------------------------------------------------

OUT: dict[str, Any] = {"type": "object", "properties": {"id": INT, "url": S}, "required": ["id", "url"]}


def with_output(schema: dict[str, Any] | None) -> dict[str, Any]:
    return tool() if schema is None else {**tool(), "outputSchema": schema}


def test_output_schema_removed_is_an_error_and_added_info() -> None:
    assert [(f.rule, f.severity) for f in diff(with_output(OUT), with_output(None))] == [("CTR051", "error")]
    assert [(f.rule, f.severity) for f in diff(with_output(None), with_output(OUT))] == [("CTR050", "info")]


def test_output_is_covariant_and_its_witness_is_a_result_valid_under_new_only() -> None:
    old, new = with_output(OUT), with_output({**OUT, "required": ["id"]})
    finding = one(diff(old, new), "CTR053")
    assert finding.severity == "error"
    result = finding.witness["result"]
    assert is_valid(new["outputSchema"], result) and not is_valid(old["outputSchema"], result)
    assert diff(new, old) == []  # a result property that becomes required breaks no caller


def test_output_type_widening_is_an_error_and_narrowing_is_fine() -> None:
    wide = with_output({**OUT, "properties": {"id": {"type": ["integer", "null"]}, "url": S}})
    finding = one(diff(with_output(OUT), wide), "CTR054")
    assert finding.witness == {"result": {"id": None, "url": "x"}}
    assert diff(wide, with_output(OUT)) == []


# -- determinism ----------------------------------------------------------------------------------------


def test_findings_are_deterministic_and_sorted_by_tool_then_severity() -> None:
    old = {"b": tool({"x": S}, name="b"), "a": tool({"x": S, "y": S}, name="a")}
    new = {"b": tool({"x": S, "z": S}, name="b"), "a": tool({"x": INT, "w": S}, ("x", "w"), name="a")}
    first = diff_catalogs(old, new, server="s")
    assert first == diff_catalogs(dict(reversed(old.items())), dict(reversed(new.items())), server="s")
    assert [(f.tool, f.rule, f.severity) for f in first] == [
        ("a", "CTR020", "error"),  # w: new required property
        ("a", "CTR021", "error"),  # x: became required
        ("a", "CTR024", "error"),  # x: string -> integer
        ("a", "CTR023", "warning"),  # y: no longer listed, object open
        ("a", "CTR041", "info"),  # x: integer accepted now
        ("b", "CTR040", "info"),  # z: optional property added
    ]
