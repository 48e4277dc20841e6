"""The tools rule family: per-rule fixture projects, the registry audit, the fast meta-schema check.

Fixture projects are built from the `Spec`s below (the committed fixture-building script: agent files,
`.mcp.json`, `quiver.toml`, and `quiver.lock.json` written by `render_lock`). With QUIVER_REGEN=1 the
tests rewrite the fixture directories and `bad/expected.json`; otherwise they read what is committed and
check it still matches its spec. test_security.py and test_budget.py import this machinery.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from quiver.findings.rule import DOC_HEADINGS, Rule
from quiver.lint.registry import rules_of
from quiver.lint.run import run
from quiver.sources.lock import ServerCatalog, render_lock

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
FIELDS = ("rule", "severity", "file", "line", "column", "message")
HEADINGS = (*DOC_HEADINGS, "## Options", "## References")
REGEN = os.environ.get("QUIVER_REGEN") == "1"
AGENT = ".github/agents/dev.agent.md"

# ---------------------------------------------------------------------------------------------------------
# Fixture projects (shared with test_security.py and test_budget.py)


def tool(name: str, description: str | None = None, **fields: Any) -> dict[str, Any]:
    """A clean tool: a real description, a documented parameter, read-only annotations; `fields` override."""
    out: dict[str, Any] = {
        "name": name,
        "description": f"Return the {name.replace('_', ' ')} record for the given identifier."
        if description is None
        else description,
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Identifier of the record."}},
            "required": ["id"],
        },
        "annotations": {"readOnlyHint": True},
    }
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def agent(tools_field: str = "['srv/*']", description: str = "Works on the project's records.") -> str:
    return f"---\ndescription: {description}\ntools: {tools_field}\n---\nDo the work.\n"


@dataclass(frozen=True)
class Spec:
    """One fixture project."""

    catalogs: Mapping[str, Sequence[Mapping[str, Any]]]
    agents: Mapping[str, str] = field(default_factory=lambda: {AGENT: agent()})
    servers: Mapping[str, Mapping[str, Any]] | None = None  # .mcp.json `mcpServers`; default: one per catalog
    config: str | None = None
    instructions: Mapping[str, str] = field(default_factory=dict)
    edit_lock: Callable[[str], str] | None = None  # for locks render_lock refuses to write (duplicates)

    def files(self) -> dict[str, str]:
        servers = self.servers
        if servers is None:
            servers = {name: {"type": "stdio", "command": name, "tools": ["*"]} for name in self.catalogs}
        out = dict(self.agents)
        out[".mcp.json"] = json.dumps({"mcpServers": servers}, indent=2) + "\n"
        if self.config is not None:
            out["quiver.toml"] = self.config
        return out

    def lock(self) -> str:
        catalogs = (
            ServerCatalog(name, {"name": name, "version": "1.0.0"}, self.instructions.get(name), None, tuple(t))
            for name, t in self.catalogs.items()
        )
        text = render_lock(catalogs)
        return self.edit_lock(text) if self.edit_lock else text


@dataclass(frozen=True)
class Case:
    code: str
    bad: Spec
    good: Spec


def materialize(spec: Spec, root: Path) -> None:
    """Write the spec's project to `root`, replacing what is there except `expected.json` (test_rules.py's)."""
    expected = root / "expected.json"
    kept = expected.read_bytes() if expected.is_file() else None
    if root.exists():
        shutil.rmtree(root)
    if kept is not None:
        root.mkdir(parents=True)
        expected.write_bytes(kept)
    for rel, text in spec.files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "quiver.lock.json").write_text(spec.lock(), encoding="utf-8")


def matches_spec(spec: Spec, root: Path) -> bool:
    """The committed files are what the spec writes (the lock compared by its tool definitions)."""
    for rel, text in spec.files().items():
        if (root / rel).read_text(encoding="utf-8") != text:
            return False
    committed = json.loads((root / "quiver.lock.json").read_text(encoding="utf-8"))["servers"]
    wanted = {name: sorted((dict(t) for t in ts), key=lambda t: str(t["name"])) for name, ts in spec.catalogs.items()}
    got = {name: [entry["tool"] for entry in body["tools"]] for name, body in committed.items()}
    if spec.edit_lock is None and got != wanted:
        return False
    return {n: b.get("instructions") for n, b in committed.items()} == {n: spec.instructions.get(n) for n in wanted}


def findings_of(root: Path, code: str) -> list[dict[str, object]]:
    """The findings of one rule over a fixture project, as expected.json stores them."""
    return [{k: f.to_json().get(k) for k in FIELDS} for f in run(root, select=[code]).findings if f.rule == code]


def check_bad(case: Case) -> None:
    """The committed bad project is what its spec writes (test_rules.py compares its findings)."""
    root = FIXTURES / case.code / "bad"
    if REGEN:
        materialize(case.bad, root)
    assert matches_spec(case.bad, root), f"{case.code}: fixture differs from its spec; run with QUIVER_REGEN=1"


def check_good(case: Case) -> None:
    """The committed good project is what its spec writes (test_rules.py checks it gives no finding)."""
    root = FIXTURES / case.code / "good"
    if REGEN:
        materialize(case.good, root)
    assert matches_spec(case.good, root), f"{case.code}: fixture differs from its spec; run with QUIVER_REGEN=1"


def audit(rule: Rule, prefix: str) -> None:
    """Doc headings present and in order, an example with "Use instead:", and both fixture directories."""
    positions = [rule.doc.find(h + "\n") for h in HEADINGS]
    assert all(p >= 0 for p in positions[: len(DOC_HEADINGS)]), f"{rule.code}: missing a required heading"
    assert positions[-1] >= 0, f"{rule.code}: no References"
    present = [p for p in positions if p >= 0]
    assert present == sorted(present), f"{rule.code}: headings out of order"
    assert "Use instead:" in rule.doc.split("## Example", 1)[1].split("\n## ", 1)[0]
    assert rule.code.startswith(prefix)
    assert (FIXTURES / rule.code / "bad" / "expected.json").is_file()
    assert (FIXTURES / rule.code / "good" / "quiver.lock.json").is_file()


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
BY_CODE = {case.code: case for case in CASES}


# ---------------------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("code", sorted(BY_CODE))
def test_bad_fixture_is_what_its_spec_writes(code: str) -> None:
    check_bad(BY_CODE[code])


@pytest.mark.parametrize("code", sorted(BY_CODE))
def test_good_fixture_is_what_its_spec_writes(code: str) -> None:
    check_good(BY_CODE[code])


@pytest.mark.parametrize("rule", rules_of("TOOL"), ids=lambda r: r.code)
def test_every_tool_rule_has_its_doc_headings_in_order_and_both_fixtures(rule: Rule) -> None:
    audit(rule, "TOOL")


def test_every_tool_rule_has_a_fixture_case() -> None:
    assert sorted(BY_CODE) == sorted(r.code for r in rules_of("TOOL"))


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
