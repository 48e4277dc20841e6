from __future__ import annotations

from pathlib import Path

from projects import agent_text, make_project, stdio, tool, tools
from quiver.lint.agt.tool_references import reference_findings
from quiver.lint.agt.unverifiable_tool_references import unverified_findings
from quiver.model import Finding
from quiver.project import load_project
from quiver.resolve import ResolvedAgent, resolve_project

# These tests pin quiver's own gateway rules (quiver.hosts.gateway: what `quiver serve` exposes directly);
# each host's split is tested in tests/hosts/.


def findings_of(r: ResolvedAgent) -> list[Finding]:
    """What lint and compile report about one agent's resolution, in their order."""
    return [*reference_findings(r), *unverified_findings(r)]


def resolve(root: Path) -> dict[str, ResolvedAgent]:
    return {r.agent.id: r for r in resolve_project(load_project(root))}


def one_agent(
    tmp_path: Path,
    frontmatter: str,
    *,
    n: int = 40,
    server: dict | None = None,
    config: str | None = None,
    extra_catalogs: dict | None = None,
) -> ResolvedAgent:
    catalogs = {"big": tools("op", n), **(extra_catalogs or {})}
    servers = {"big": server or stdio(), **{k: stdio() for k in (extra_catalogs or {})}}
    make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text(frontmatter)},
        mcp={"mcpServers": servers},
        catalogs=catalogs,
        config=config,
    )
    return resolve(tmp_path)["a"]


def test_29_mcp_tools_stay_below_the_threshold_and_everything_is_preloaded(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", n=29)
    assert not r.gateway_search.active
    assert r.gateway_search.reason == "29 MCP tools < threshold 30"
    assert {t.gateway_load for t in r.tools} == {"preloaded"}
    assert {t.gateway_decision.code for t in r.tools} == {"tool-search-inactive"}


def test_30_mcp_tools_reach_the_threshold_and_wildcard_tools_are_deferred(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", n=30)
    assert r.gateway_search.active
    assert r.gateway_search.reason == "30 MCP tools >= threshold 30"
    assert {t.gateway_load for t in r.tools} == {"deferred"}
    assert {t.gateway_decision.code for t in r.tools} == {"deferred"}
    assert r.tools[0].gateway_decision.source is not None and r.tools[0].gateway_decision.source.line == 3


def test_builtins_are_always_preloaded_rule_1(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['Bash', 'read', 'edit/editFiles', 'ms-python.python/x', 'big/*']")
    assert [(b.canonical, b.kind) for b in r.builtins] == [
        ("edit/editFiles", "qualified"),
        ("execute", "alias"),
        ("ms-python.python/x", "extension"),
        ("read", "alias"),
    ]
    (note,) = findings_of(r)  # an extension tool cannot be checked: one info, no error
    assert (note.rule, note.severity) == ("AGT022", "info")
    assert "`ms-python.python/x` (an extension tool" in note.message


def test_server_with_defer_tools_never_is_preloaded_rule_2(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", server=stdio(deferTools="never"))
    assert {(t.gateway_load, t.gateway_decision.rule, t.gateway_decision.code) for t in r.tools} == {
        ("preloaded", 2, "server-never-defers")
    }
    source = r.tools[0].gateway_decision.source
    assert source is not None and source.file == ".mcp.json" and source.line > 1


def test_server_with_preload_true_is_preloaded_rule_2(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", server=stdio(preload=True))
    assert {(t.gateway_decision.rule, t.gateway_decision.code) for t in r.tools} == {(2, "server-preloaded")}


def test_preload_tools_entry_is_preloaded_rule_3_and_the_rest_deferred(tmp_path: Path) -> None:
    config = '[[mcp_servers]]\nname = "big"\npreload_tools = ["op_07"]\n'
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", config=config)
    loads = {t.tool.name: (t.gateway_load, t.gateway_decision.rule) for t in r.tools}
    assert loads["op_07"] == ("preloaded", 3)
    assert loads["op_08"] == ("deferred", 5)


def test_named_tool_is_preloaded_rule_4_with_the_reference_position(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools:\n  - big/*\n  - big/op_03\n")
    named = r.tool("big", "op_03")
    assert named is not None and named.gateway_load == "preloaded" and named.gateway_decision.rule == 4
    assert named.gateway_decision.source is not None and (
        named.gateway_decision.source.line,
        named.gateway_decision.source.column,
    ) == (5, 5)
    assert r.tool("big", "op_04").load == "deferred"  # type: ignore[union-attr]


def test_deferred_tool_loading_defers_named_tools(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ndeferred-tool-loading: true\ntools: ['big/*', 'big/op_03']")
    named = r.tool("big", "op_03")
    assert (
        named is not None
        and named.gateway_load == "deferred"
        and named.gateway_decision.code == "deferred-tool-loading"
    )


def test_explicit_preload_false_defers_even_below_the_threshold(tmp_path: Path) -> None:
    config = '[[mcp_servers]]\nname = "big"\npreload = false\n'
    r = one_agent(
        tmp_path,
        "description: d\ntools: ['big/*', 'small/*']",
        n=3,
        config=config,
        extra_catalogs={"small": tools("s", 2)},
    )
    assert r.gateway_search.active
    assert {t.gateway_load for t in r.tools if t.server == "big"} == {"deferred"}
    assert {t.gateway_decision.code for t in r.tools if t.server == "big"} == {"server-not-preloaded"}
    assert {t.gateway_load for t in r.tools if t.server == "small"} == {"preloaded"}


def test_model_without_tool_search_support_loads_everything(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\nmodel: gpt-4.1\ntools: ['big/*']")
    assert not r.gateway_search.active
    assert "does not support tool search" in r.gateway_search.reason
    assert {t.gateway_load for t in r.tools} == {"preloaded"}


def test_supported_models_turn_tool_search_on(tmp_path: Path) -> None:
    for model in ("claude-sonnet-4.5", "Claude Opus 4.1 (copilot)", "gpt-5.4", "GPT-5.5 (copilot)", "sonnet"):
        r = one_agent(tmp_path, f"description: d\nmodel: {model}\ntools: ['big/*']")
        assert r.gateway_search.active, model
    for model in ("claude-haiku-4.5", "gpt-5", "gpt-4o", "claude-3-5-sonnet"):
        r = one_agent(tmp_path, f"description: d\nmodel: {model}\ntools: ['big/*']")
        assert not r.gateway_search.active, model


def test_config_tool_search_never_and_always(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", config='tool_search = "never"\n')
    assert not r.gateway_search.active and {t.gateway_load for t in r.tools} == {"preloaded"}
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", n=3, config='tool_search = "always"\n')
    assert r.gateway_search.active and {t.gateway_load for t in r.tools} == {"deferred"}


def test_unset_tools_means_every_tool_and_every_builtin(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d", n=5)
    assert len(r.tools) == 5
    assert [b.canonical for b in r.builtins] == ["*"]


def test_unknown_tool_reference_suggests_the_closest_name(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/op_1O']")
    (f,) = findings_of(r)
    assert (f.rule, f.severity) == ("AGT008", "error")
    assert f.hint is not None and "big/op_10" in f.hint
    assert f.location is not None and f.location.line == 3


def test_ambiguous_bare_name_is_an_error_and_unique_bare_name_resolves(tmp_path: Path) -> None:
    r = one_agent(  # VS Code resolves bare tool names (Copilot CLI does not: tests/hosts)
        tmp_path,
        "description: d\ntarget: vscode\ntools: ['dup', 'only_here']",
        extra_catalogs={"x": [tool("dup"), tool("only_here")], "y": [tool("dup")]},
    )
    assert [f.rule for f in findings_of(r)] == ["AGT009"]
    assert "`x`, `y`" in findings_of(r)[0].message
    assert r.tool("x", "only_here") is not None and r.tool("x", "only_here").named  # type: ignore[union-attr]


def test_unknown_server_and_host_server_references(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['bgi/*', 'github/*']")
    rules = {f.rule: f for f in findings_of(r)}
    assert rules["AGT010"].hint == "did you mean `big`?"
    assert rules["AGT011"].severity == "info"
    assert r.host_servers == ("github",)


def test_agent_mcp_servers_override_the_project_entry(tmp_path: Path) -> None:
    fm = (
        "description: d\ntools: ['big/*']\nmcp-servers:\n  big:\n    type: local\n    command: other\n"
        "    args: []\n    tools: ['op_01', 'op_02']\n"
    )
    r = one_agent(tmp_path, fm)
    assert [t.tool.name for t in r.tools] == ["op_01", "op_02"]
    assert r.servers[0].command == "other" and r.servers[0].dialect == "agent"


def test_comma_string_tools_keep_columns(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        agents={".claude/agents/c.md": agent_text("name: c\ndescription: d\ntools: Read, nope")},
        mcp={"mcpServers": {}},
    )
    r = resolve(tmp_path)["c"]
    assert r.agent.kind == "claude"
    (f,) = findings_of(r)
    assert f.location is not None and (f.location.line, f.location.column) == (4, 14)


def test_model_facing_names_are_recorded_per_host(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/op_01']", n=2)
    assert dict(r.tools[0].names) == {
        "api": "big__op_01",
        "claude": "mcp__big__op_01",
        "copilot_cli": "big-op_01",
        "quiver": "big__op_01",
    }


def test_one_mcp_tool_is_singular_in_the_reason(tmp_path: Path) -> None:
    r = one_agent(tmp_path, "description: d\ntools: ['big/*']", n=1)
    assert r.gateway_search.reason == "1 MCP tool < threshold 30"
