"""`quiver diff` through the CLI, one class of change at a time (issue 23): a real break is an error with a
witness that jsonschema confirms, a proven equivalence says nothing, and what a caller cannot act on is no
warning. Each side is a real tools/list file in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_diff import run

from quiver.contract.witness import is_valid

Schema = dict[str, Any]
PROPS: Schema = {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}, "x": {"type": "string"}}


def obj(**keywords: Any) -> Schema:
    return {"type": "object", "properties": PROPS, **keywords}


def diff(tmp_path: Path, old: Schema, new: Schema, **tool: Any) -> tuple[int, list[dict[str, Any]]]:
    """`quiver diff old.json new.json --format json` for one tool `t` whose inputSchema is old, then new."""
    for name, schema in (("old", old), ("new", new)):
        body = {"name": "t", "description": "Do a thing.", "inputSchema": schema, **tool.get(name, {})}
        (tmp_path / f"{name}.json").write_text(json.dumps({"tools": [body]}))
    code, out, err = run(tmp_path, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def confirmed(finding: dict[str, Any], old: Schema, new: Schema) -> dict[str, Any]:
    """The finding's witness, checked: valid under the old inputSchema, invalid under the new."""
    assert finding["severity"] == "error" and "witness" in finding, finding
    arguments: dict[str, Any] = finding["witness"]["arguments"]
    assert is_valid(old, arguments) and not is_valid(new, arguments), arguments
    return arguments


# -- 1. dependentRequired, dependentSchemas, if/then/else ----------------------------------------------


def test_a_longer_dependent_required_list_is_an_error_with_a_witness(tmp_path: Path) -> None:
    old, new = obj(dependentRequired={"a": ["b"]}), obj(dependentRequired={"a": ["b", "c"]})
    code, findings = diff(tmp_path, old, new)
    assert code == 1 and [f["rule"] for f in findings] == ["CTR037"]
    assert "sending `a` now also requires `c`" in findings[0]["message"]
    arguments = confirmed(findings[0], old, new)
    assert "a" in arguments and "b" in arguments and "c" not in arguments


def test_a_tighter_dependent_schema_is_an_error_with_a_witness(tmp_path: Path) -> None:
    old = obj(dependentSchemas={"a": {"properties": {"x": {"maxLength": 5}}}})
    new = obj(dependentSchemas={"a": {"properties": {"x": {"maxLength": 3}}}})
    code, findings = diff(tmp_path, old, new)
    assert code == 1 and [f["rule"] for f in findings] == ["CTR038"]
    assert len(confirmed(findings[0], old, new)["x"]) in (4, 5)


def test_a_widened_if_condition_is_an_error_with_a_witness(tmp_path: Path) -> None:
    def conditional(test: Schema) -> Schema:
        return obj(**{"if": {"properties": {"a": test}, "required": ["a"]}, "then": {"required": ["b"]}})

    old, new = conditional({"const": "x"}), conditional({"enum": ["x", "y"]})
    code, findings = diff(tmp_path, old, new)
    assert code == 1 and [f["rule"] for f in findings] == ["CTR083"]
    assert confirmed(findings[0], old, new) == {"a": "y"}
    code, findings = diff(tmp_path, new, old)  # narrowed back: the values it stops constraining were valid
    assert code == 0 and findings == []


def test_an_else_branch_added_is_an_error_with_a_witness(tmp_path: Path) -> None:
    old, new = obj(), obj(**{"if": {"required": ["a"]}, "else": {"required": ["b"]}})
    code, findings = diff(tmp_path, old, new)
    assert code == 1 and [f["rule"] for f in findings] == ["CTR083"]
    assert "b" not in confirmed(findings[0], old, new)


def test_one_dependency_written_in_another_keyword_family_is_no_finding(tmp_path: Path) -> None:
    spellings = [
        obj(dependentRequired={"a": ["b"]}),
        obj(dependentSchemas={"a": {"required": ["b"]}}),
        obj(dependencies={"a": ["b"]}),
        obj(**{"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
    ]
    for old in spellings:
        for new in spellings:
            code, findings = diff(tmp_path, old, new)
            assert (code, findings) == (0, []), (old, new, findings)


# -- 3. formats ----------------------------------------------------------------------------------------


def test_format_witnesses_need_no_optional_package(tmp_path: Path) -> None:
    def since(fmt: str) -> Schema:
        return {"type": "object", "properties": {"since": {"type": "string", "format": fmt}}}

    old, new = since("date"), since("date-time")
    code, findings = diff(tmp_path, old, new)
    assert code == 1 and [f["rule"] for f in findings] == ["CTR032"]
    assert confirmed(findings[0], old, new) == {"since": "2024-01-01"}
    plain: Schema = {"type": "object", "properties": {"since": {"type": "string"}}}
    for fmt in ("date", "date-time", "time", "email", "uri", "uuid", "ipv4", "ipv6"):
        code, findings = diff(tmp_path, plain, since(fmt))
        assert code == 1 and [f["rule"] for f in findings] == ["CTR031"], fmt
        confirmed(findings[0], plain, since(fmt))
    code, findings = diff(tmp_path, since("uri"), since("uri-reference"))  # every URI is a URI reference
    assert (code, findings) == (0, [])
