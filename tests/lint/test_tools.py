"""The tools rule family: per-rule fixture projects, the registry audit, the fast meta-schema check.

Fixture projects are built from the `Spec`s below (`SPECS`: agent files, `.mcp.json`, `quiver.toml`, and
`quiver.lock.json` written by `render_lock`, the machinery in tests/rule_harness.py); the rule harness
(tests/findings/test_rules.py) checks the committed projects still match, and QUIVER_REGEN=1 rewrites them.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quiver.lint.registry import rules_of
from quiver.lint.run import run
from rule_harness import AGENT, Case, Spec, agent, tool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"

# ---------------------------------------------------------------------------------------------------------
# The cases

ID = {"type": "string", "description": "Identifier of the record."}


def obj(properties: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), **extra}


def _duplicate_search(text: str) -> str:
    return text.replace('"name": "search_copy"', '"name": "search"')


def _pair(server_a: str, tool_a: str, server_b: str, tool_b: str) -> Spec:
    return Spec(
        {server_a: [tool(tool_a)], server_b: [tool(tool_b)]},
        agents={AGENT: agent(f"['{server_a}/*', '{server_b}/*']")},
    )


LONG_SERVER = "acme-enterprise-knowledge-base-production"
LONG_TOOL = "search_documents_by_semantic_similarity"

CASES = (
    Case(
        "TOOL001",
        Spec({"srv": [tool("search issues"), tool("repo/search"), tool("x" * 130)]}),
        Spec({"srv": [tool("search_issues"), tool("admin.tools.list"), tool("DATA_EXPORT_v2"), tool("x" * 128)]}),
    ),
    Case(
        "TOOL002",
        Spec({"srv": [tool("search"), tool("search_copy"), tool("status")]}, edit_lock=_duplicate_search),
        Spec({"srv": [tool("search"), tool("search_copy"), tool("status")]}),
    ),
    Case(
        "TOOL003",
        Spec({"srv": [tool("sync", description=""), {"name": "push", "inputSchema": obj({"ref": ID})}]}),
        Spec({"srv": [tool("sync", "Push local commits to the remote branch and pull new ones.")]}),
    ),
    Case(
        "TOOL004",
        Spec({"srv": [tool("get_issue", "Gets it."), tool("get_date", "获取日期"), tool("close", "Close the page")]}),
        Spec(
            {
                "srv": [
                    tool("get_issue", "Get one GitHub issue by number: title, body, labels and state."),
                    tool("get_date", "获取当前日期\uff0c以上海时区为准\uff0c返回格式为年月日。"),
                ]
            }
        ),
    ),
    Case(
        "TOOL005",
        Spec(
            {
                "srv": [
                    tool("list_pull_request_review_comments", "List pull request review comments."),
                    tool("getUserProfile", "Gets the profile of a user", title="User profile"),
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool(
                        "list_pull_request_review_comments",
                        "List the inline review comments of a pull request, oldest first, with file and line.",
                    )
                ]
            }
        ),
    ),
    Case(
        "TOOL006",
        Spec(
            {
                "srv": [
                    tool(
                        "search_code",
                        inputSchema=obj(
                            {
                                "owner": {"type": "string"},
                                "repo": {"type": "string"},
                                "q": {"type": "string", "description": "Query"},
                            }
                        ),
                    )
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool(
                        "search_code",
                        inputSchema=obj(
                            {"q": {"type": "string", "description": "Query"}, "page": {"$ref": "#/$defs/Page"}},
                            **{"$defs": {"Page": {"type": "integer", "description": "Page number, from 1."}}},
                        ),
                    ),
                    tool("ping", inputSchema={"type": "object", "additionalProperties": False}),
                ]
            }
        ),
    ),
    Case(
        "TOOL007",
        Spec(
            {
                "srv": [
                    tool("limit_type", inputSchema=obj({"limit": {"type": "int", "description": "Max rows."}})),
                    tool("output_required", outputSchema={"type": "object", "required": "id"}),
                    tool(
                        "draft7_bool_minimum",
                        inputSchema=obj(
                            {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "description": "N."}},
                            **{"$schema": "http://json-schema.org/draft-07/schema#"},
                        ),
                    ),
                    tool("odd_dialect", inputSchema=obj({"id": ID}, **{"$schema": "https://example.com/my-dialect"})),
                    tool(
                        "bad_pattern", inputSchema=obj({"id": {"type": "string", "pattern": "(", "description": "Id."}})
                    ),
                    tool("text_schema", inputSchema="object"),
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool("plain", inputSchema=obj({"id": ID})),
                    tool(
                        "draft7",
                        inputSchema=obj(
                            {"n": {"type": "number", "exclusiveMinimum": 0, "description": "N."}},
                            **{"$schema": "http://json-schema.org/draft-07/schema#"},
                        ),
                    ),
                    tool(
                        "tuple", inputSchema=obj({"pair": {"type": "array", "prefixItems": [ID, ID], "items": False}})
                    ),
                    tool("structured", outputSchema={"type": "object", "properties": {"id": ID}, "required": ["id"]}),
                ]
            }
        ),
    ),
    Case(
        "TOOL008",
        Spec(
            {
                "srv": [
                    tool("no_schema", inputSchema=None),
                    tool("array_root", inputSchema={"type": "array", "items": ID}),
                    tool("untyped_root", inputSchema={"properties": {"id": ID}}),
                ]
            }
        ),
        Spec({"srv": [tool("ping", inputSchema={"type": "object", "additionalProperties": False}), tool("get")]}),
    ),
    Case(
        "TOOL009",
        Spec(
            {
                "srv": [
                    tool("search", inputSchema=obj({"query": ID}, required=["q"])),
                    tool(
                        "filter",
                        inputSchema=obj({"filter": obj({"state": ID}, required=["state", "labels", "sort"])}),
                    ),
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool("search", inputSchema=obj({"query": ID}, required=["query"])),
                    tool("any", inputSchema={"type": "object", "required": ["id"]}),
                    tool("pattern", inputSchema=obj({}, patternProperties={"^x-": ID}, required=["x-trace"])),
                ]
            }
        ),
    ),
    Case(
        "TOOL010",
        Spec(
            {
                "srv": [
                    tool("get_weather", annotations=None),
                    tool("send_message", annotations={"title": "Send a message", "openWorldHint": True}),
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool("get_weather"),
                    tool("edit_note", annotations={"destructiveHint": False}),
                    tool("get_forecast", annotations=None),
                ]
            },
            config='[tools."srv/get_forecast"]\nside_effect = "read_only"\n',
        ),
    ),
    Case(
        "TOOL011",
        Spec(
            {
                "srv": [
                    tool("delete_branch", annotations={"readOnlyHint": True}),
                    tool("label_write", title="Remove a label", annotations={"readOnlyHint": True}),
                    tool("cacheDrop", annotations={"readOnlyHint": True, "title": "Drop the cache"}),
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool("delete_branch", annotations={"readOnlyHint": False, "destructiveHint": True}),
                    tool("list_deleted_files", annotations={"readOnlyHint": True}),
                ]
            }
        ),
    ),
    Case(
        "TOOL012",
        Spec({"srv": [tool("get_report", annotations={"readOnlyHint": False, "destructiveHint": True})]}),
        Spec(
            {
                "srv": [
                    tool("get_report"),
                    tool("fetch_and_purge", annotations={"readOnlyHint": False, "destructiveHint": True}),
                    tool("list_jobs", annotations={"destructiveHint": True}),
                ]
            }
        ),
    ),
    Case("TOOL013", _pair("git-hub", "list", "git", "hub-list"), _pair("github", "list", "git", "hub-list")),
    Case(
        "TOOL014",
        Spec({LONG_SERVER: [tool(LONG_TOOL)]}, agents={AGENT: agent(f"['{LONG_SERVER}/*']")}),
        Spec({"kb": [tool(LONG_TOOL)]}, agents={AGENT: agent("['kb/*']")}),
    ),
    Case(
        "TOOL015",
        Spec(
            {
                "srv": [
                    tool(
                        "list_issues",
                        inputSchema=obj(
                            {
                                "state": {"enum": ["open", "closed", "open"], "description": "State."},
                                "n": {"enum": [1, 1.0, 2]},
                            }
                        ),
                    )
                ]
            }
        ),
        Spec({"srv": [tool("list_issues", inputSchema=obj({"state": {"enum": ["open", "closed", "all", 1, True]}}))]}),
    ),
    Case(
        "TOOL016",
        Spec(
            {
                "srv": [
                    tool(
                        "list_rows",
                        inputSchema=obj(
                            {
                                "limit": {"type": "integer", "default": "10", "description": "Rows."},
                                "cursor": {"type": "string", "default": None, "description": "Cursor."},
                                "order": {"enum": ["asc", "desc"], "default": "up", "description": "Order."},
                            }
                        ),
                    )
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool(
                        "list_rows",
                        inputSchema=obj(
                            {
                                "limit": {"type": "integer", "default": 10, "description": "Rows."},
                                "cursor": {"type": ["string", "null"], "default": None, "description": "Cursor."},
                                "page": {"$ref": "#/$defs/Page", "default": 1, "description": "Page."},
                            },
                            **{"$defs": {"Page": {"type": "integer", "minimum": 1}}},
                        ),
                    )
                ]
            }
        ),
    ),
    Case(
        "TOOL017",
        Spec(
            {
                "srv": [
                    tool(
                        "list_pages",
                        inputSchema=obj(
                            {
                                "page": {"$ref": "#/$defs/Page", "description": "Page."},
                                "sort": {"$ref": "#/definitions/Sort", "description": "Sort."},
                                "cursor": {"$ref": "#cursor", "description": "Cursor."},
                            }
                        ),
                    )
                ]
            }
        ),
        Spec(
            {
                "srv": [
                    tool(
                        "list_pages",
                        inputSchema=obj(
                            {
                                "page": {"$ref": "#/$defs/Page", "description": "Page."},
                                "cursor": {"$ref": "#cursor", "description": "Cursor."},
                                "geo": {"$ref": "https://geojson.org/schema/Point.json", "description": "Point."},
                                "self": {"$ref": "#", "description": "Nested."},
                            },
                            **{
                                "$defs": {
                                    "Page": {"type": "integer"},
                                    "Cursor": {"$anchor": "cursor", "type": "string"},
                                }
                            },
                        ),
                    )
                ]
            }
        ),
    ),
)
SPECS = {case.code: case for case in CASES}  # tests/findings/test_rules.py checks them


# ---------------------------------------------------------------------------------------------------------
# Tests


def test_rule_codes_and_names_are_unique_across_the_three_families() -> None:
    rules = (*rules_of("TOOL"), *rules_of("SEC"), *rules_of("BUD"))
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)


def test_the_demo_lock_file_has_no_tool_error(demo: Path) -> None:
    errors = [f for f in run(demo, select=["TOOL"]).findings if f.severity == "error"]
    assert errors == []


def _schemas(corpus: Path) -> list[Any]:
    out = []
    for path in sorted((corpus / "catalogs").glob("*.json")):
        out.extend(t["inputSchema"] for t in json.loads(path.read_text(encoding="utf-8"))["tools"])
    for path in sorted((corpus / "github-mcp-server" / "v0.30.0").glob("*.snap")):
        out.append(json.loads(path.read_text(encoding="utf-8"))["inputSchema"])
    return out


_DIALECTS = (
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
    None,
)
_BAD_VALUES = (5, "x", None, [], {}, -1, True, [1, 1], "(", {"type": "strin"}, [{}], 1.5, {"a": 5}, ["a", "a"])
_KEYWORDS = [
    "type",
    "required",
    "properties",
    "items",
    "minimum",
    "maxLength",
    "enum",
    "pattern",
    "additionalProperties",
    "anyOf",
    "allOf",
    "not",
    "format",
    "$ref",
    "description",
    "default",
    "const",
    "uniqueItems",
    "minItems",
    "prefixItems",
    "$defs",
    "definitions",
    "if",
    "then",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "exclusiveMinimum",
    "multipleOf",
    "title",
    "examples",
    "propertyNames",
    "$schema",
    "additionalItems",
    "unevaluatedProperties",
    "$anchor",
    "contentSchema",
    "patternProperties",
]


def _nodes(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *(n for v in value.values() for n in _nodes(v))]
    if isinstance(value, list):
        return [n for v in value for n in _nodes(v)]
    return []


def test_the_fast_meta_schema_check_agrees_with_check_schema_on_real_and_mutated_schemas(corpus: Path) -> None:
    import jsonschema
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for

    from quiver.lint.support.schema_walk import MetaChecker

    checker = MetaChecker()
    rng = random.Random(20260728)
    real = _schemas(corpus)
    samples = rng.sample(real, 60)
    for _ in range(240):
        schema = copy.deepcopy(rng.choice(real))
        schema.pop("$schema", None)
        dialect = rng.choice(_DIALECTS)
        if dialect:
            schema["$schema"] = dialect
        nodes = _nodes(schema)
        for _ in range(rng.randint(0, 2)):
            rng.choice(nodes)[rng.choice(_KEYWORDS)] = copy.deepcopy(rng.choice(_BAD_VALUES))
        samples.append(schema)
    invalid = 0
    for schema in samples:
        dialect = checker.dialect_of(schema)
        if dialect is None:
            continue  # a mutated `$schema` naming no dialect: reported as unknown, not checked
        declared = schema.get("$schema")
        named = getattr(jsonschema, dialect)
        reference = validator_for(schema, default=Draft202012Validator) if isinstance(declared, str) else named
        assert reference is named
        try:
            reference.check_schema(schema)
            expected_valid = True
        except SchemaError:
            expected_valid = False
            invalid += 1
        assert (checker.problem(schema, dialect) is None) == expected_valid, json.dumps(schema)[:300]
    assert 60 < invalid < len(samples) - 60  # both outcomes well represented


def test_an_invalid_schema_is_reported_with_its_path_and_the_real_values() -> None:
    from quiver.lint.support.schema_walk import MetaChecker

    checker = MetaChecker()
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["a", "a"],
    }
    problem = checker.problem(schema, checker.dialect_of(schema))  # type: ignore[arg-type]
    assert problem is not None and problem.dialect == "2020-12" and problem.path == ("required",)
    assert "'a'" in problem.detail  # not a memo stand-in


def test_the_three_families_import_neither_jsonschema_nor_the_tokenizer_without_a_lock(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / ".github" / "agents").mkdir(parents=True)
    (tmp_path / AGENT).write_text(agent("['read']"), encoding="utf-8")
    code = f"""
import sys
from pathlib import Path
from quiver.lint.registry import rules_of
from quiver.lint.engine import LintContext, run_checks
from quiver.project import load_project
from quiver.resolve import resolve_project
project = load_project(Path({str(tmp_path)!r}))
ctx = LintContext(project, tuple(resolve_project(project)))
before = {{m for m in ("jsonschema", "tiktoken") if m in sys.modules}}
for prefix in ("TOOL", "SEC", "BUD"):
    list(run_checks(ctx, rules_of(prefix)))
print(sorted({{m for m in ("jsonschema", "tiktoken") if m in sys.modules}} - before))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
