"""Every JSON Schema keyword (2020-12, 2019-09, draft-07/06/04, read from the metaschemas jsonschema ships)
is either analysed for variance or, when it changes, named in a warning: the diff is never silent."""

from __future__ import annotations

from typing import Any

import jsonschema_specifications
import pytest

from quiver.contract.diff import diff_tool
from quiver.contract.rules import rule_for
from quiver.contract.schema import ANALYSED, ANNOTATIONS, NOT_ANALYSED
from quiver.contract.taxonomy import ACTIONS, CELLS, KINDS, UnknownCell


def vocabulary() -> set[str]:
    registry = jsonschema_specifications.REGISTRY
    keywords: set[str] = set()
    for uri in registry:
        if "draft-03" not in uri:
            keywords |= set(registry.contents(uri).get("properties", {}))
    return keywords


def test_the_metaschemas_name_every_keyword_we_expect() -> None:
    assert {"contains", "minContains", "if", "not", "propertyNames", "dependencies", "$dynamicRef"} <= vocabulary()


def test_every_keyword_of_every_dialect_is_analysed_or_reported() -> None:
    judged = set(ANALYSED) | set(NOT_ANALYSED) | set(ANNOTATIONS)
    assert vocabulary() - judged == set()
    assert not set(ANALYSED) & set(NOT_ANALYSED)


def tool(prop: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "description": "", "inputSchema": {"type": "object", "properties": {"p": prop}}}


SCHEMAS: tuple[Any, Any] = ({"type": "string"}, {"type": "integer"})
VALUES = {"unevaluatedItems": SCHEMAS, "contentSchema": SCHEMAS, "$vocabulary": ({"a": True}, {"b": True})}


@pytest.mark.parametrize("keyword", NOT_ANALYSED)
def test_a_changed_keyword_that_is_not_analysed_is_a_warning_naming_it(keyword: str) -> None:
    one, two = VALUES.get(keyword, ("a", "b"))
    findings = diff_tool(tool({keyword: one}), tool({keyword: two}), server="s")
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        ("CTR087", "warning", f"tool `s/t`: changed `{keyword}` at `p`: not analysed, review by hand"),
    ]
    output = {"name": "t", "inputSchema": {"type": "object"}}
    old = {**output, "outputSchema": {"type": "object", keyword: one}}
    new = {**output, "outputSchema": {"type": "object", keyword: two}}
    assert [f.rule for f in diff_tool(old, new, server="s")] == ["CTR088"]


def test_annotations_are_invariant() -> None:
    for keyword in ANNOTATIONS:
        assert diff_tool(tool({keyword: "a"}), tool({keyword: "b"}), server="s") == [], keyword


def test_every_cell_is_spelled_with_the_typed_kinds_and_actions() -> None:
    for direction, kind, action in CELLS:
        assert kind in KINDS and action in ACTIONS, (direction, kind, action)


def test_a_change_with_no_rule_and_no_waiver_is_an_internal_error_not_a_silent_waiver() -> None:
    assert rule_for("input", "required", "removed") is None  # waived, with a written reason
    with pytest.raises(UnknownCell):
        rule_for("input", "keyword", "removed")
    with pytest.raises(UnknownCell):
        rule_for("output", "no-such-kind", "changed")


def test_a_part_deeper_than_the_walk_limit_is_a_warning_naming_its_path() -> None:
    from quiver.contract.walk import MAX_DEPTH

    def nested(leaf: dict[str, Any]) -> dict[str, Any]:
        node: dict[str, Any] = leaf
        for _ in range(MAX_DEPTH + 5):
            node = {"type": "object", "properties": {"n": node}}
        return {"name": "t", "inputSchema": node}

    findings = diff_tool(nested({"type": "number"}), nested({"type": "integer"}), server="s")
    assert [(f.rule, f.severity) for f in findings] == [("CTR089", "warning")]
    assert findings[0].message == "tool `s/t`: `" + ".".join(["n"] * (MAX_DEPTH + 1)) + (
        f"`: not compared: nested more than {MAX_DEPTH} levels deep"
    )


MALFORMED = [
    ("properties", 1, "`properties` must be an object of schemas, not integer (at `/properties/p`)"),
    ("required", True, "`required` must be an array of property names (at `/properties/p`)"),
    ("type", {}, "`type` must be a JSON type name or an array of them (at `/properties/p`)"),
    ("not", None, "a subschema must be a JSON object or boolean, not null (at `/properties/p/not`)"),
    ("dependencies", "x", "`dependencies` must be an object, not string (at `/properties/p`)"),
    ("patternProperties", [1], "`patternProperties` must be an object of schemas, not array (at `/properties/p`)"),
    ("minLength", "3", "`minLength` must be a number, not string (at `/properties/p`)"),
]


@pytest.mark.parametrize(("keyword", "value", "reason"), MALFORMED)
def test_a_malformed_keyword_is_one_unreadable_finding_naming_it(keyword: str, value: Any, reason: str) -> None:
    findings = diff_tool(tool({"type": "string"}), tool({"type": "string", keyword: value}), server="s")
    assert [(f.rule, f.message) for f in findings] == [
        ("CTR080", f"tool `s/t`: not compared: new `inputSchema`: {reason}"),
    ]
