"""Host exports as each SDK types them (mypy against the `openai` and `anthropic` packages), OpenAI strict
mode and namespaces, and the up-front budget each host really shows the model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from quiver.host_exports import host_budget, openai_strict, strict_schema
from quiver.sources.token_cache import TokenCache

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("demo") / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns("build", ".quiver"))
    emit = ["--emit", "anthropic", "--emit", "openai"]
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "-C", str(project), *emit],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return project / "build" / "quiver"


def _tools(path: Path) -> list[Any]:
    tools: list[Any] = json.loads(path.read_text(encoding="utf-8"))["tools"]
    return tools


_NOT_TYPES = ("resources.*", "_client", "lib.*", "cli.*")
_SCHEMA_KEYS = ("parameters", "input_schema")  # typed `Dict[str, object]` inside by both SDKs


def _typed_view(value: Any) -> Any:
    """`value` with each tool schema's property and definition bodies emptied: both SDKs type what lies inside
    as `object`, so mypy reads the same verdict from a literal a tenth the size (half the test's run)."""
    if isinstance(value, list):
        return [_typed_view(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in _SCHEMA_KEYS and isinstance(item, dict):
            item = {
                k: ({n: {} for n in v} if k in ("properties", "$defs") and isinstance(v, dict) else v)
                for k, v in item.items()
            }
            out[key] = item
        else:
            out[key] = _typed_view(item)
    return out


def test_both_exports_of_every_demo_agent_type_check_against_the_sdks(exported: Path, tmp_path: Path) -> None:
    lines = [
        "from anthropic.types import ToolUnionParam",
        "from openai.types.responses import FunctionToolParam, ToolParam",
        "",
        "# the control: a function without `strict`, which the openai SDK requires",
        "broken: FunctionToolParam = {'type': 'function', 'name': 'f', 'parameters': {}}",
    ]
    files = sorted(exported.glob("*.*.json"))
    assert len(files) >= 2
    for i, path in enumerate(files):
        kind = "ToolUnionParam" if path.name.endswith(".anthropic.json") else "ToolParam"
        lines.append(f"tools_{i}: list[{kind}] = {_typed_view(_tools(path))!r}")
    checked = tmp_path / "exports_typed.py"
    checked.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # The SDKs' clients and resources are not the tool types checked here: skipping them halves the run.
    skipped = ",".join(f"{sdk}.{part}" for sdk in ("openai", "anthropic") for part in _NOT_TYPES)
    config = f"[mypy]\nstrict = True\n[mypy-{skipped}]\nfollow_imports = skip\n"
    (tmp_path / "mypy.ini").write_text(config, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "mypy.ini", checked.name],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, proc.stdout[-3000:]
    assert errors[0].startswith("exports_typed.py:5:") and '"strict"' in errors[0]


def test_openai_groups_each_servers_functions_in_a_namespace(exported: Path) -> None:
    manifest = json.loads((exported / "researcher.json").read_text(encoding="utf-8"))
    tools = _tools(exported / "researcher.openai.json")
    assert tools[0] == {"type": "tool_search"}
    namespaces = {t["name"]: t for t in tools[1:]}
    servers = {s["name"]: s["description"] for s in manifest["servers"]}
    assert set(namespaces) == {t["server"] for t in manifest["tools"]}
    for name, namespace in namespaces.items():
        assert namespace["type"] == "namespace" and namespace["description"] == servers[name]
        expected = [t["name"] for t in manifest["tools"] if t["server"] == name]
        assert [f["name"] for f in namespace["tools"]] == expected


def test_openai_budget_counts_names_and_descriptions_of_deferred_functions(exported: Path) -> None:
    openai = json.loads((exported / "researcher.openai.json").read_text(encoding="utf-8"))
    anthropic = json.loads((exported / "researcher.anthropic.json").read_text(encoding="utf-8"))
    manifest = json.loads((exported / "researcher.json").read_text(encoding="utf-8"))
    deferred = [t for t in manifest["tools"] if t["gateway"]["load"] == "deferred"]  # quiver's rules decide
    assert openai["budget"]["deferred_tools"] == anthropic["budget"]["deferred_tools"] == len(deferred) > 0
    assert anthropic["budget"]["deferred_visible_tokens"] == 0
    shown = [{"name": t["name"], "description": t["definition"]["description"]} for t in deferred]
    assert openai["budget"]["deferred_visible_tokens"] == TokenCache(None).count_json(shown)
    assert openai["budget"]["initial_tokens"] > anthropic["budget"]["initial_tokens"]
    # deferred functions are not loaded: far less than all of them in full
    assert openai["budget"]["initial_tokens"] < manifest["budget"]["baseline_tokens"] / 3


def test_host_budget_counts_loaded_tools_in_full() -> None:
    loaded = {"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}
    deferred = {**loaded, "name": "g", "description": "Gets a thing.", "defer_loading": True}
    cache = TokenCache(None)
    budget = host_budget([loaded, deferred], "openai", cache)
    assert budget["loaded_tokens"] == cache.count_json([loaded])
    assert budget["deferred_visible_tokens"] == cache.count_json([{"name": "g", "description": "Gets a thing."}])
    assert host_budget([loaded, deferred], "anthropic", cache)["initial_tokens"] == budget["loaded_tokens"]


CLOSED = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "query"},
        "when": {"type": ["string", "null"], "format": "date"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3},
        "page": {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
            "additionalProperties": False,
        },
        "either": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/num"}]},
    },
    "required": ["q", "when", "tags", "page", "either"],
    "additionalProperties": False,
    "$defs": {"num": {"type": "number"}},
}


def _without(schema: dict[str, Any], path: list[str], key: str) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(schema))
    node = copy
    for part in path:
        node = node[part]
    del node[key]
    return copy


def _with(schema: dict[str, Any], path: list[str], key: str, value: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(schema))
    node = copy
    for part in path:
        node = node[part]
    node[key] = value
    return copy


def test_strict_is_true_only_for_schemas_inside_openais_strict_subset() -> None:
    assert strict_schema(CLOSED)
    assert openai_strict(CLOSED).parameters == CLOSED and openai_strict(CLOSED).changes == ()
    broken = {
        "root not an object": {"type": "string"},
        "root anyOf": {"anyOf": [CLOSED]},
        "open by choice": _with(CLOSED, [], "additionalProperties", True),
        "optional property": _with(CLOSED, [], "required", ["q"]),
        "minLength": _with(CLOSED, ["properties", "q"], "minLength", 1),
        "default": _with(CLOSED, ["properties", "q"], "default", "x"),
        "unsupported format": _with(CLOSED, ["properties", "q"], "format", "uri"),
        "allOf": _with(CLOSED, ["properties", "q"], "allOf", [{"type": "string"}]),
        "untyped property": _with(CLOSED, ["properties"], "q", {"description": "anything"}),
        "bad nested anyOf branch": _with(CLOSED, ["$defs", "num"], "uniqueItems", True),
        "draft-04 boolean exclusiveMinimum": _with(
            _with(CLOSED, [], "$schema", "http://json-schema.org/draft-04/schema#"),
            ["properties", "page", "properties", "n"], "exclusiveMinimum", True,
        ),
        "draft-04": _with(CLOSED, [], "$schema", "http://json-schema.org/draft-04/schema#"),
        "draft-07 $ref with siblings": _with(
            _with(CLOSED, [], "$schema", "http://json-schema.org/draft-07/schema#"),
            ["$defs", "num"], "$ref", "#/$defs/other",
        ),
    }  # fmt: skip
    verdicts = {name: openai_strict(schema) for name, schema in broken.items()}
    assert {name: v.strict for name, v in verdicts.items()} == dict.fromkeys(broken, False)
    assert all(v.parameters == broken[name] for name, v in verdicts.items())  # exported as they are
    assert verdicts["optional property"].explain() == (
        "strict: false (`$.properties.when`: optional, and strict mode requires every property)"
    )
    assert verdicts["default"].reason == "`$.properties.q`: `default` is not a keyword of strict mode"
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        deep = {"type": "object", "properties": {"x": deep}, "required": ["x"], "additionalProperties": False}
    assert not strict_schema(deep)


def test_strict_drops_the_dialect_and_closes_open_objects_a_narrowing_the_server_accepts() -> None:
    """zod-to-json-schema's usual output: draft-07 `$schema`, objects without `additionalProperties`."""
    opened = _without(_without(CLOSED, [], "additionalProperties"), ["properties", "page"], "additionalProperties")
    schema = _with(opened, [], "$schema", "http://json-schema.org/draft-07/schema#")
    verdict = openai_strict(schema)
    assert verdict.strict
    assert verdict.explain() == "strict: true (dropped `$schema`; closed 2 objects (`additionalProperties: false`))"
    assert verdict.parameters == CLOSED
    ok = {"q": "x", "when": None, "tags": ["a"], "page": {"n": 2}, "either": 3}
    extra = {**ok, "page": {"n": 2, "unnamed": 1}}
    exported = jsonschema.Draft202012Validator(verdict.parameters)
    original = jsonschema.Draft7Validator(schema)
    assert exported.is_valid(ok) and original.is_valid(ok)
    assert not exported.is_valid(extra) and original.is_valid(extra)  # narrower, never wider
    assert schema["$schema"] and "additionalProperties" not in schema  # the manifest's copy is untouched


def test_strict_on_the_corpus_catalogs_drops_dialects_and_closes_objects_of_real_functions(corpus: Path) -> None:
    """On the real catalogs of the corpus: strict exports are valid 2020-12 schemas, real functions become
    strict only through the dropped `$schema` or the closing, and every function that is not strict says why."""
    tools = [t for p in sorted((corpus / "catalogs").glob("*.json")) for t in json.loads(p.read_text())["tools"]]
    verdicts = [openai_strict(t["inputSchema"]) for t in tools]
    strict = [v for v in verdicts if v.strict]
    assert len(tools) > 100
    assert any("dropped `$schema`" in " ".join(v.changes) for v in strict)
    assert any("closed" in " ".join(v.changes) for v in strict)
    assert all(v.reason for v in verdicts if not v.strict)
    for v in strict:
        jsonschema.Draft202012Validator.check_schema(v.parameters)
    print(f"strict: {len(strict)} of {len(tools)} corpus functions")


def test_the_sdks_the_exports_are_checked_against_are_the_current_majors() -> None:
    from importlib.metadata import version

    assert version("openai").split(".")[0] == "3"
    assert version("anthropic").split(".")[0] == "2"


def test_explain_says_per_tool_whether_the_openai_export_is_strict_and_why(exported: Path) -> None:
    project = exported.parents[1]
    done = subprocess.run([sys.executable, "-m", "quiver", "explain", "ops", "--format", "json", "-C", str(project)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    tools = {f"{t['server']}/{t['tool']}": t["openai_strict"] for t in json.loads(done.stdout)["tools"]}
    exported_strict = {}
    for entry in _tools(exported / "ops.openai.json"):
        for function in entry.get("tools", [entry]) if entry.get("type") == "namespace" else [entry]:
            if function.get("type") == "function":
                exported_strict[f"{entry['name']}/{function['name']}"] = function["strict"]
    assert exported_strict and {k: tools[k]["strict"] for k in exported_strict} == exported_strict
    assert all(v["why"] for v in tools.values())
    one = subprocess.run([sys.executable, "-m", "quiver", "explain", "ops", "github/issue_write", "-C", str(project)],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "  openai     github/issue_write" in one and "strict: false (`$.properties." in one
