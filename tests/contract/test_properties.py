"""Property tests: known-breaking mutations give an input error with a true witness; known-safe ones never do."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.contract.diff import diff_tool
from quiver.contract.witness import is_valid
from quiver.model import Finding

Schema = dict[str, Any]
INPUT_ERRORS = {f"CTR0{n}" for n in range(20, 39)} | {"CTR081", "CTR083"}
NAMES = st.sampled_from(["owner", "repo", "state", "page", "query", "limit", "filter", "tags"])
WORDS = st.sampled_from(["open", "closed", "all", "asc", "desc", "draft", "merged"])
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def bounded_numbers(draw: st.DrawFn, kind: str) -> Schema:
    schema: Schema = {"type": kind}
    low = draw(st.none() | st.integers(-50, 50))
    if low is not None:
        schema["minimum"] = low
    if draw(st.booleans()):
        schema["maximum"] = (low if low is not None else 0) + draw(st.integers(2, 100))
    return schema


@st.composite
def strings(draw: st.DrawFn) -> Schema:
    schema: Schema = {"type": "string"}
    low = draw(st.none() | st.integers(0, 5))
    if low is not None:
        schema["minLength"] = low
    if draw(st.booleans()):
        schema["maxLength"] = (low or 0) + draw(st.integers(2, 20))
    return schema


def leaves() -> st.SearchStrategy[Schema]:
    enums = st.lists(WORDS, min_size=2, max_size=4, unique=True).map(lambda e: {"type": "string", "enum": e})
    arrays = st.builds(
        lambda n: {"type": "array", "items": {"type": "string"}, **n},
        st.sampled_from([{}, {"maxItems": 3}, {"minItems": 1, "maxItems": 4}]),
    )
    return st.one_of(
        strings(),
        bounded_numbers("integer"),
        bounded_numbers("number"),
        st.just({"type": "boolean"}),
        enums,
        arrays,
        st.just({"type": ["string", "null"]}),
    )


@st.composite
def objects(draw: st.DrawFn, depth: int = 0) -> Schema:
    children = leaves() if depth >= 1 else st.one_of(leaves(), objects(depth=depth + 1))
    props = draw(st.dictionaries(NAMES, children, min_size=1, max_size=4))
    schema: Schema = {"type": "object", "properties": props}
    required = [name for name in props if draw(st.booleans())]
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


def object_nodes(schema: Schema) -> list[Schema]:
    """The root object and every nested object, in a stable order."""
    nodes = [schema]
    for sub in schema["properties"].values():
        if sub.get("type") == "object":
            nodes.extend(object_nodes(sub))
    return nodes


def tool(schema: Schema) -> dict[str, Any]:
    return {"name": "t", "description": "Generated.", "inputSchema": schema}


# -- mutations: each edits `node` (an object of the copy) and returns False when it does not apply ----------


def add_required(node: Schema) -> bool:
    node["properties"]["zz_new"] = {"type": "string"}
    node["required"] = [*node.get("required", []), "zz_new"]
    return True


def make_required(node: Schema) -> bool:
    optional = [n for n in node["properties"] if n not in node.get("required", [])]
    if not optional:
        return False
    node["required"] = [*node.get("required", []), optional[0]]
    return True


def remove_enum_value(node: Schema) -> bool:
    for sub in node["properties"].values():
        if len(sub.get("enum", [])) >= 2:
            sub["enum"] = sub["enum"][1:]
            return True
    return False


def tighten_maximum(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") in ("integer", "number"):
            sub["maximum"] = sub["maximum"] - 1 if "maximum" in sub else sub.get("minimum", 0)
            return True
    return False


def tighten_min_length(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") == "string" and "enum" not in sub:
            sub["minLength"] = sub.get("minLength", 0) + 1
            return True
    return False


def close_and_remove(node: Schema) -> bool:
    if node.get("additionalProperties") is False or len(node["properties"]) < 2:
        return False
    removed = sorted(node["properties"])[-1]
    del node["properties"][removed]
    node["required"] = [n for n in node.get("required", []) if n != removed]
    node["additionalProperties"] = False
    return True


def narrow_type(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") == "number":
            sub["type"] = "integer"
            return True
        if sub.get("type") == ["string", "null"]:
            sub["type"] = "string"
            return True
    return False


def tighten_max_items(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") == "array" and sub.get("maxItems", 1) >= 1:
            sub["maxItems"] = sub["maxItems"] - 1 if "maxItems" in sub else 0
            sub.pop("minItems", None)
            return True
    return False


def add_optional(node: Schema) -> bool:
    node["properties"]["zz_new"] = {"type": "integer", "description": "New."}
    return True


def widen_enum(node: Schema) -> bool:
    for sub in node["properties"].values():
        if "enum" in sub:
            sub["enum"] = [*sub["enum"], "zz_value"]
            return True
    return False


def loosen_bounds(node: Schema) -> bool:
    for sub in node["properties"].values():
        for key, step in (("maximum", 10), ("maxLength", 3), ("maxItems", 2)):
            if key in sub:
                sub[key] += step
                return True
        for key, step in (("minimum", -10), ("minLength", -1)):
            if sub.get(key):
                sub[key] = max(sub[key] + step, 0) if key == "minLength" else sub[key] + step
                return True
    return False


def describe(node: Schema) -> bool:
    node["description"] = "Now documented."
    for sub in node["properties"].values():
        sub["description"] = "A property."
    return True


def make_optional(node: Schema) -> bool:
    if not node.get("required"):
        return False
    node["required"] = node["required"][1:]
    return True


def widen_type(node: Schema) -> bool:
    for sub in node["properties"].values():
        if "enum" in sub:
            continue
        if sub.get("type") == "integer":
            sub["type"] = "number"
            return True
        if sub.get("type") == "string":
            sub["type"] = ["string", "null"]
            return True
    return False


def open_object(node: Schema) -> bool:
    if node.get("additionalProperties") is not False:
        return False
    del node["additionalProperties"]
    return True


def forbid_by_not(node: Schema) -> bool:
    for sub in node["properties"].values():
        if isinstance(sub.get("type"), str):
            sub["not"] = {"type": sub["type"]}
            return True
    return False


def require_contained(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") == "array":
            sub["contains"] = {"const": "zz_needle"}
            return True
    return False


def restrict_property_names(node: Schema) -> bool:
    node["propertyNames"] = {"maxLength": 1}
    return True


def forbid_another_type(node: Schema) -> bool:
    for sub in node["properties"].values():
        if sub.get("type") in ("string", "integer", "number", "array"):
            sub["not"] = {"type": "boolean"}
            return True
    return False


Mutation = Callable[[Schema], bool]
BREAKING: list[Mutation] = [
    add_required,
    make_required,
    remove_enum_value,
    tighten_maximum,
    tighten_min_length,
    close_and_remove,
    narrow_type,
    tighten_max_items,
    forbid_by_not,
    require_contained,
    restrict_property_names,
]
SAFE: list[Mutation] = [
    add_optional,
    widen_enum,
    loosen_bounds,
    describe,
    make_optional,
    widen_type,
    open_object,
    forbid_another_type,
]


def mutate(data: st.DataObject, schema: Schema, mutations: list[Mutation]) -> Schema | None:
    new = copy.deepcopy(schema)
    node = data.draw(st.sampled_from(object_nodes(new)))
    mutation = data.draw(st.sampled_from(mutations))
    return new if mutation(node) else None


def assert_witnesses_hold(findings: list[Finding], old: Schema, new: Schema) -> None:
    for finding in findings:
        if finding.witness is not None:
            arguments = finding.witness["arguments"]
            assert is_valid(old, arguments), finding.message
            assert not is_valid(new, arguments), finding.message


@SETTINGS
@given(objects(), st.data())
def test_a_breaking_mutation_gives_an_input_error_with_a_confirmed_witness(old: Schema, data: st.DataObject) -> None:
    new = mutate(data, old, BREAKING)
    if new is None:
        return
    findings = diff_tool(tool(old), tool(new), server="s")
    errors = [f for f in findings if f.severity == "error" and f.rule in INPUT_ERRORS]
    assert errors, [(f.rule, f.severity, f.message) for f in findings]
    assert all(f.witness is not None for f in errors)
    assert_witnesses_hold(findings, old, new)


@SETTINGS
@given(objects(), st.data())
def test_a_safe_mutation_gives_no_error_and_no_warning(old: Schema, data: st.DataObject) -> None:
    new = mutate(data, old, SAFE)
    if new is None:
        return
    findings = diff_tool(tool(old), tool(new), server="s")
    assert all(f.severity == "info" for f in findings), [(f.rule, f.severity, f.message) for f in findings]


@SETTINGS
@given(objects())
def test_a_schema_compared_with_itself_has_no_findings(schema: Schema) -> None:
    assert diff_tool(tool(schema), tool(copy.deepcopy(schema)), server="s") == []


OUTPUT_BREAKING: list[Mutation] = [make_optional, widen_type, widen_enum, loosen_bounds, open_object]


@SETTINGS
@given(objects(), st.data())
def test_an_output_widening_is_reported_with_a_result_valid_under_new_only(old: Schema, data: st.DataObject) -> None:
    new = mutate(data, old, OUTPUT_BREAKING)
    if new is None:
        return
    before = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": old}
    after = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": new}
    findings = diff_tool(before, after, server="s")
    serious = [f for f in findings if f.severity != "info"]
    assert serious, [(f.rule, f.message) for f in findings]
    assert all(f.witness is not None for f in serious), [f.message for f in serious]
    for finding in serious:
        assert is_valid(new, finding.witness["result"]) and not is_valid(old, finding.witness["result"])
