"""The JSON Schemas in `schemas/` (DESIGN §8) against every file quiver reads or writes: the demo, the corpus,
compile and lint outputs, and hand-broken documents that must fail."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.compile import Budget
from quiver.config import CAPABILITY_LABELS, KEYS, SERVER_KEYS, TOOL_KEYS
from quiver.metatools import META_TOOL_NAMES
from quiver.model import Edit, Finding, Location
from quiver.names import HOSTS
from quiver.policy import APPROVALS, DEFAULT_RETRY, POLICY_KEYS, SIDE_EFFECTS
from quiver.sources._json import parse_json
from quiver.sources.agents import read_agent
from quiver.validation import check_schemas, load_schema, schema_names, validate
from test_output_schemas import OUTPUT_SCHEMAS

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
PACKAGE_SCHEMAS = ROOT / "src" / "quiver" / "schemas"
SCHEMAS = tuple(
    sorted(
        (
            "agent-frontmatter",
            "baseline",
            "emit",
            "index",
            "lock",
            "manifest",
            "mcp-config",
            "quiver-config",
            "report",
            *OUTPUT_SCHEMAS,  # the other --format json outputs (tests/test_output_schemas.py)
        )
    )
)
DEMO_AGENTS = 4
# Corpus agents whose frontmatter breaks the schema, and the `mcp-servers` entry at fault: each defines an
# http server (`url`) without the `tools` allow-list that the Copilot cloud agent and CLI require.
CORPUS_FAILURES = {
    "cast-imaging-impact-analysis.agent.md": "imaging-impact-analysis",
    "cast-imaging-structural-quality-advisor.agent.md": "imaging-structural-quality",
}


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo compiled once, with both host exports: the output directory."""
    base = tmp_path_factory.mktemp("compiled")
    project = base / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns("build"))
    out = base / "out"
    code, output = run_cli(
        "compile", "--project", str(project), "--out", str(out), "--emit", "anthropic", "--emit", "openai", "-q"
    )
    assert code == 0, output
    return out


def corpus_frontmatters(corpus: Path) -> dict[str, dict[str, Any]]:
    root = corpus / "awesome-copilot"
    return {
        path.name: dict(read_agent(root, path.relative_to(root).as_posix()).frontmatter)
        for path in sorted((root / "agents").glob("*.md"))
    }


# ---------------------------------------------------------------- the schemas themselves


def test_every_schema_is_a_valid_2020_12_schema_with_id_title_and_description() -> None:
    check_schemas()
    assert schema_names() == SCHEMAS


def test_schema_files_have_sorted_keys_two_space_indent_and_a_final_newline() -> None:
    for name in SCHEMAS:
        text = (PACKAGE_SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")
        canonical = json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        assert text == canonical, name


def test_shapes_repeated_across_schemas_are_identical() -> None:
    """Each schema stands alone (editors fetch one file), so shared `$defs` are copies: keep them equal."""
    shared = {
        "server": ("agent-frontmatter", "mcp-config", "quiver-config"),
        "filterMode": ("agent-frontmatter", "mcp-config", "quiver-config"),
        "serverEntry": ("mcp-config", "quiver-config"),
        "tool": ("lock", "manifest"),
        "budget": ("manifest", "index", "budget", "explain"),
        "toolSearch": ("budget", "explain"),
        "action": ("ledger-list", "ledger-show", "ledger-action"),
        "attempt": ("ledger-show", "ledger-export"),
        "event": ("ledger-show", "ledger-export"),
    }
    for definition, names in shared.items():
        copies = [load_schema(name)["$defs"][definition] for name in names]
        assert all(c == copies[0] for c in copies), definition
    # explain's host block is the manifest's `host` (one builder, compile.host_json, writes both)
    assert load_schema("explain")["$defs"]["host"] == load_schema("manifest")["properties"]["host"]


def test_the_top_level_schemas_symlink_points_at_the_package_schemas() -> None:
    link = ROOT / "schemas"
    assert link.is_symlink()
    assert os.readlink(link) == "src/quiver/schemas"
    assert link.resolve() == PACKAGE_SCHEMAS.resolve()
    assert sorted(p.name for p in link.iterdir()) == sorted(p.name for p in PACKAGE_SCHEMAS.iterdir())
    assert sorted(p.name for p in link.iterdir()) == sorted(f"{n}.schema.json" for n in SCHEMAS)


def test_load_schema_accepts_the_name_with_or_without_suffix_and_reads_once() -> None:
    assert load_schema("lock") is load_schema("lock.schema.json")
    assert load_schema("lock")["$id"] == "urn:agent-quiver:schema:lock"


def test_an_unknown_schema_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no schema named"):
        load_schema("nope")


def test_importing_validation_does_not_import_jsonschema() -> None:
    code = "import sys, quiver.validation; sys.exit('jsonschema' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------- schemas agree with the code


def test_the_config_schema_describes_every_key_the_config_reader_accepts() -> None:
    schema = load_schema("quiver-config")
    assert set(KEYS) <= set(schema["properties"])
    policy = schema["$defs"]["policy"]
    assert set(policy["properties"]) == set(SERVER_KEYS)
    assert set(schema["$defs"]["toolPolicy"]["properties"]) == set(TOOL_KEYS)
    assert set(schema["$defs"]["capabilities"]["properties"]) == set(CAPABILITY_LABELS)
    assert set(policy["properties"]["retry"]["properties"]) == set(DEFAULT_RETRY)
    assert policy["properties"]["approval"]["enum"] == list(APPROVALS)
    assert policy["properties"]["side_effect"]["enum"] == list(SIDE_EFFECTS)


def test_the_manifest_schema_names_every_budget_field_host_and_meta_tool() -> None:
    schema = load_schema("manifest")
    budget = Budget(1, 2, 3, 4, 5, 6, 7).to_json()
    assert set(schema["$defs"]["budget"]["required"]) == set(budget)
    assert set(schema["$defs"]["manifestTool"]["properties"]["names"]["required"]) == set(HOSTS)
    assert schema["properties"]["meta_tools"]["items"]["enum"] == list(META_TOOL_NAMES)
    assert set(schema["$defs"]["policy"]["properties"]) == {*POLICY_KEYS, "idempotent"}


def test_budget_fields_are_integers_except_the_saving_ratio() -> None:
    props = load_schema("manifest")["$defs"]["budget"]["properties"]
    assert {k for k, v in props.items() if v["type"] != "integer"} == {"saving_ratio"}
    assert props["saving_ratio"]["type"] == "number"


# ---------------------------------------------------------------- what quiver writes


def test_every_compiled_manifest_of_the_demo_validates(compiled: Path) -> None:
    manifests = sorted(p for p in compiled.glob("*.json") if p.name.count(".") == 1 and p.name != "index.json")
    assert len(manifests) == DEMO_AGENTS
    for path in manifests:
        assert validate(json.loads(path.read_text(encoding="utf-8")), "manifest") == [], path.name


def test_the_compiled_index_of_the_demo_validates(compiled: Path) -> None:
    index = json.loads((compiled / "index.json").read_text(encoding="utf-8"))
    assert len(index["agents"]) == DEMO_AGENTS
    assert validate(index, "index") == []


def test_every_emitted_host_tools_array_of_the_demo_validates(compiled: Path) -> None:
    emitted = sorted(compiled.glob("*.*.json"))
    assert len(emitted) == 2 * DEMO_AGENTS
    hosts = set()
    for path in emitted:
        document = json.loads(path.read_text(encoding="utf-8"))
        hosts.add(document["host"])
        assert validate(document, "emit") == [], path.name
    assert hosts == {"anthropic", "openai"}


def test_the_lint_json_report_of_the_demo_validates() -> None:
    code, output = run_cli("lint", "--format", "json", "--project", str(DEMO))
    assert code == 0, output
    assert validate(json.loads(output), "report") == []


def test_a_lint_json_report_with_findings_and_its_baseline_validate(demo: Path) -> None:
    agent = demo / ".github" / "agents" / "broken.agent.md"
    agent.write_text("---\ndescription: Broken on purpose.\ntools: [github/no_such_tool, nosuchserver/*]\n---\nGo.\n")
    code, output = run_cli("lint", "--format", "json", "--fail-on", "never", "--project", str(demo))
    assert code == 0, output
    report = json.loads(output)
    assert report and {f["agent"] for f in report if "agent" in f} >= {"broken"}
    assert validate(report, "report") == []
    baseline = demo / "baseline.json"
    code, output = run_cli(
        "lint", "--project", str(demo), "--baseline", str(baseline), "--update-baseline", "--fail-on", "never"
    )
    assert code == 0, output
    document = json.loads(baseline.read_text(encoding="utf-8"))
    assert len(document["findings"]) == len(report)
    assert validate(document, "baseline") == []


def test_a_finding_with_every_optional_field_validates() -> None:
    finding = Finding(
        rule="CTR020",
        name="input-required-added",
        severity="error",
        message="`search_code` now requires `query`",
        location=Location("quiver.lock.json", 12, 13, 12, 30),
        hint="make it optional",
        server="github",
        tool="search_code",
        agent="researcher",
        witness={"q": "x"},
        fixes=(Edit("quiver.lock.json", 12, 13, 12, 30, ""),),
    )
    bare = Finding(rule="QVR001", name="config-unknown-key", severity="warning", message="unknown key")
    assert validate([finding.to_json(), bare.to_json()], "report") == []


# ---------------------------------------------------------------- what quiver reads


def test_the_demo_lock_file_validates() -> None:
    lock = json.loads((DEMO / "quiver.lock.json").read_text(encoding="utf-8"))
    assert validate(lock, "lock") == []


def test_the_demo_mcp_configs_validate_in_both_dialects() -> None:
    mcp = json.loads((DEMO / ".mcp.json").read_text(encoding="utf-8"))
    vscode = parse_json((DEMO / ".vscode/mcp.json").read_text(encoding="utf-8"), ".vscode/mcp.json", jsonc=True).value
    assert "mcpServers" in mcp and "servers" in vscode
    assert validate(mcp, "mcp-config") == []
    assert validate(vscode, "mcp-config") == []


def test_the_mcp_servers_list_form_validates() -> None:
    document = {"mcp_servers": [{"name": "github", "preload": False, "preload_tools": ["search_pull_requests"]}]}
    assert validate(document, "mcp-config") == []


def test_the_demo_quiver_toml_validates_at_top_level_and_nested_under_tool_quiver() -> None:
    table = tomllib.loads((DEMO / "quiver.toml").read_text(encoding="utf-8"))
    assert validate(table, "quiver-config") == []
    assert validate({"tool": {"quiver": table}}, "quiver-config") == []
    assert validate({"tool": {"quiver": {"threshold": -1}}}, "quiver-config") != []


def test_a_config_with_server_and_tool_policies_in_temporal_names_validates() -> None:
    table: dict[str, Any] = {
        "tool_search": "always",
        "servers": {"github": {"approval": "irreversible", "timeout_ms": 10_000}},
        "tools": {
            "github/create_issue": {
                "side_effect": "irreversible_write",
                "reconcile": {
                    "tool": "search_issues",
                    "arguments": {"query": "$.arguments.title"},
                    "succeeded_when": "$.structuredContent.total_count",
                },
                "idempotency_key_argument": "client_id",
                "retry": {
                    "initial_interval": 0.5,
                    "backoff_coefficient": 2.0,
                    "maximum_interval": 10.0,
                    "maximum_attempts": 5,
                    "non_retryable_errors": ["ValidationError"],
                },
            }
        },
        "severity": {"AGT008": "warning"},
        "per_file_ignores": {".github/agents/legacy-*.md": ["AGT"]},
    }
    assert validate(table, "quiver-config") == []
    table["tools"]["github/create_issue"]["retry"]["max_attempts"] = 5  # not Temporal's name
    assert validate(table, "quiver-config") != []


def test_every_demo_agent_frontmatter_validates() -> None:
    paths = sorted(
        p.relative_to(DEMO).as_posix() for p in [*DEMO.glob(".github/agents/*.md"), *DEMO.glob(".claude/agents/*.md")]
    )
    assert len(paths) == DEMO_AGENTS
    for rel in paths:
        assert validate(dict(read_agent(DEMO, rel).frontmatter), "agent-frontmatter") == [], rel


def test_every_corpus_agent_frontmatter_validates_except_the_servers_without_a_tools_list(corpus: Path) -> None:
    frontmatters = corpus_frontmatters(corpus)
    assert len(frontmatters) == 112
    failures = {name: validate(fm, "agent-frontmatter") for name, fm in frontmatters.items()}
    failures = {name: errors for name, errors in failures.items() if errors}
    assert set(failures) == set(CORPUS_FAILURES)
    for name, server in CORPUS_FAILURES.items():
        assert len(failures[name]) == 1 and server in failures[name][0] and "tools" in failures[name][0]
        entry = frontmatters[name]["mcp-servers"][server]
        assert "url" in entry and "tools" not in entry
        fixed = copy.deepcopy(frontmatters[name])
        fixed["mcp-servers"][server]["tools"] = ["*"]
        assert validate(fixed, "agent-frontmatter") == []


def test_unknown_frontmatter_keys_and_overlay_servers_are_not_schema_errors() -> None:
    frontmatter = {
        "description": "Triage issues.",
        "mode": "subagent",
        "tools": "Read, Grep, github/*",
        "model": ["GPT-5.4", "Claude Sonnet 4.6"],
        "mcp-servers": {"github": {"preload_tools": ["search_issues"]}},
    }
    assert validate(frontmatter, "agent-frontmatter") == []


# ---------------------------------------------------------------- broken documents fail


def test_a_manifest_without_budget_fails(compiled: Path) -> None:
    manifest = json.loads((compiled / "researcher.json").read_text(encoding="utf-8"))
    del manifest["budget"]
    errors = validate(manifest, "manifest")
    assert len(errors) == 1 and "budget" in errors[0]


def test_a_lock_tool_without_sha256_fails() -> None:
    lock = json.loads((DEMO / "quiver.lock.json").read_text(encoding="utf-8"))
    del lock["servers"]["git"]["tools"][0]["sha256"]
    errors = validate(lock, "lock")
    assert len(errors) == 1 and "sha256" in errors[0] and errors[0].startswith("$.servers.git.tools[0]")


def test_a_config_with_tool_search_sometimes_fails() -> None:
    errors = validate({"tool_search": "sometimes"}, "quiver-config")
    assert len(errors) == 1 and errors[0].startswith("$.tool_search:")


def _mutate(path: str, key: str, value: Any) -> Callable[[Any], None]:
    def apply(document: Any) -> None:
        target = document
        for part in path.split("/") if path else []:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is _DELETE:
            del target[key]
        else:
            target[key] = value

    return apply


_DELETE = object()
BROKEN_OUTPUTS = {
    "manifest tool with an unknown load": ("researcher.json", "manifest", _mutate("tools/0", "load", "lazy")),
    "manifest tool without a quiver name": ("researcher.json", "manifest", _mutate("tools/0/names", "quiver", _DELETE)),
    "manifest with an unexpected key": ("researcher.json", "manifest", _mutate("", "extra", 1)),
    "manifest budget with fractional tokens": ("ops.json", "manifest", _mutate("budget", "baseline_tokens", 1.5)),
    "index without agents": ("index.json", "index", _mutate("", "agents", _DELETE)),
    "anthropic tool with defer_loading false": (
        "researcher.anthropic.json",
        "emit",
        _mutate("tools/1", "defer_loading", False),
    ),
    "openai tool without parameters": (
        "researcher.openai.json",
        "emit",
        _mutate("tools/1/tools/0", "parameters", _DELETE),
    ),
    "openai tool without strict": ("researcher.openai.json", "emit", _mutate("tools/1/tools/0", "strict", _DELETE)),
}


@pytest.mark.parametrize("case", sorted(BROKEN_OUTPUTS))
def test_a_broken_compile_output_fails(compiled: Path, case: str) -> None:
    file_name, schema, mutate = BROKEN_OUTPUTS[case]
    document = json.loads((compiled / file_name).read_text(encoding="utf-8"))
    mutate(document)
    assert validate(document, schema) != []


BROKEN_INPUTS: dict[str, tuple[Any, str]] = {
    "frontmatter without description": ({"name": "x", "tools": ["read"]}, "agent-frontmatter"),
    "frontmatter with a numeric tools field": ({"description": "x", "tools": 3}, "agent-frontmatter"),
    "frontmatter with an unknown target": ({"description": "x", "target": "cursor"}, "agent-frontmatter"),
    "mcp config with two dialects": ({"mcpServers": {}, "servers": {}}, "mcp-config"),
    "mcp config with no dialect": ({"servers_": {}}, "mcp-config"),
    "mcp server of type remote": ({"mcpServers": {"a": {"type": "remote", "url": "https://x"}}}, "mcp-config"),
    "stdio server without command": ({"servers": {"a": {"type": "stdio", "args": []}}}, "mcp-config"),
    "deferTools sometimes": ({"mcpServers": {"a": {"command": "x", "deferTools": "sometimes"}}}, "mcp-config"),
    "list entry without name": ({"mcp_servers": [{"preload": False}]}, "mcp-config"),
    "config threshold as text": ({"threshold": "30"}, "quiver-config"),
    "config policy with an unknown key": ({"servers": {"github": {"retries": 3}}}, "quiver-config"),
    "config tool policy not keyed server/tool": ({"tools": {"create_issue": {"approval": "always"}}}, "quiver-config"),
    "report finding with severity fatal": (
        [{"rule": "X", "name": "x", "severity": "fatal", "message": "m", "fingerprint": "0" * 32}],
        "report",
    ),
    "baseline without version": ({"findings": []}, "baseline"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_INPUTS))
def test_a_broken_document_fails(case: str) -> None:
    document, schema = BROKEN_INPUTS[case]
    errors = validate(document, schema)
    assert errors and errors == sorted(errors) and all(e.startswith("$") for e in errors)
