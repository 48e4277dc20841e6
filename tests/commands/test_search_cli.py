"""`quiver search`: ranked tools over the project's servers or one agent's tool set, as a table or JSON.

The tests drive `quiver.commands.search.search_tools`, the function the click command's `run` calls with its
parsed options (`root, query, agent, limit, fmt`); errors are QuiverErrors, which the CLI's funnel turns into
exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver.commands.search import search_tools as run
from quiver.errors import InputError, QuiverError, UsageError
from quiver.project import load_project
from quiver.resolve import resolve_agent


def test_search_ranks_every_server_of_the_project_best_first(demo: Path) -> None:
    out = run(demo, "create a pull request", None, 3, "text")
    lines = out.splitlines()
    assert lines[0].split() == ["#", "score", "tool", "matched", "description"]
    assert lines[1].split()[2] == "github/create_pull_request"
    assert len(lines) == 4


def test_search_json_lists_server_tool_score_matched_fields_and_description(demo: Path) -> None:
    rows = json.loads(run(demo, "what is the current time in UTC", None, 2, "json"))
    assert [(r["server"], r["tool"]) for r in rows] == [("time", "get_current_time"), ("time", "convert_time")]
    first = rows[0]
    assert set(first) == {"server", "tool", "score", "matched", "description"}
    assert first["score"] > rows[1]["score"]
    assert "name" in first["matched"] and "description" in first["matched"]
    assert first["description"] == "Get current time in a specific timezone"


def test_search_with_an_agent_ranks_only_the_tools_that_agent_resolves_to(demo: Path) -> None:
    project = load_project(demo)
    agent = next(a for a in project.agents if a.id == "release-notes")
    carried = {(t.server, t.tool.name) for t in resolve_agent(agent, project).tools}
    rows = json.loads(run(demo, "pull request", "release-notes", 10, "json"))
    assert rows and {(r["server"], r["tool"]) for r in rows} <= carried
    everywhere = json.loads(run(demo, "pull request", None, 10, "json"))
    assert len({(r["server"], r["tool"]) for r in everywhere} - carried) > 0


def test_the_limit_caps_the_number_of_results(demo: Path) -> None:
    assert len(json.loads(run(demo, "browser page", None, 4, "json"))) == 4


def test_a_query_nothing_matches_says_so_and_json_is_an_empty_list(demo: Path) -> None:
    assert run(demo, "zzqx vvkq", None, 5, "text") == "no tool matches `zzqx vvkq` among the project's 212 tools\n"
    assert json.loads(run(demo, "zzqx vvkq", None, 5, "json")) == []


def test_an_unknown_agent_is_a_usage_error_with_a_suggestion(demo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run(demo, "pull request", "researchr", 5, "text")
    assert caught.value.message == "no agent `researchr`"
    assert caught.value.hint == "did you mean `researcher`?"
    assert caught.value.exit_code == 2


def test_an_empty_query_is_a_usage_error(demo: Path) -> None:
    with pytest.raises(UsageError):
        run(demo, "   ", None, 5, "text")


def test_a_project_without_a_lock_file_is_an_input_error_that_says_to_snapshot(demo: Path) -> None:
    (demo / "quiver.lock.json").unlink()
    with pytest.raises(InputError) as caught:
        run(demo, "pull request", None, 5, "text")
    assert isinstance(caught.value, QuiverError)
    assert caught.value.hint == "run `quiver snapshot` to capture them"


def test_the_cli_search_and_route_test_commands_on_the_demo() -> None:
    from click.testing import CliRunner

    from quiver.cli import cli

    demo = Path(__file__).resolve().parents[2] / "examples" / "demo"
    found = CliRunner().invoke(cli, ["search", "merge a pull request", "--project", str(demo), "--format", "json"])
    assert found.exit_code == 0
    hits = json.loads(found.stdout)
    assert hits[0]["server"] == "github" and hits[0]["tool"] == "merge_pull_request"
    assert {"server", "tool", "score", "matched"} <= set(hits[0])
    routes = CliRunner().invoke(cli, ["route-test", "--project", str(demo)])
    assert routes.exit_code == 0 and "MRR" in routes.stdout
    unknown = CliRunner().invoke(cli, ["search", "x", "--agent", "opz", "--project", str(demo)])
    assert unknown.exit_code == 2 and "did you mean `ops`?" in unknown.stderr


# ---------------------------------------------------------------------------------------------------------
# The gateway's search_tools, through a real `quiver serve`


def _serve_search(root: Path, manifest: Path, *queries: str) -> list[list[str]]:
    import os
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k != "QUIVER_NO_CACHE"}  # serve start-up writes the cache
    argv = ["-m", "quiver", "serve", str(manifest), "--no-ledger"]
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(root))

    async def ask() -> list[list[str]]:
        found = []
        with anyio.fail_after(60):
            async with stdio_client(params) as streams, ClientSession(*streams) as session:
                await session.initialize()
                for query in queries:
                    result = await session.call_tool("search_tools", {"query": query, "limit": 3})
                    assert not result.is_error
                    found.append([t["name"] for t in json.loads(result.content[0].text)["tools"]])  # type: ignore[union-attr]
        return found

    return anyio.run(ask)


def test_search_tools_in_a_real_gateway_is_semantic_and_warms_the_cache_unless_config_says_lexical(
    demo: Path,
) -> None:
    from click.testing import CliRunner

    from quiver.cli import cli

    assert CliRunner().invoke(cli, ["compile", "--project", str(demo), "--quiet"]).exit_code == 0
    manifest = demo / "build" / "quiver" / "researcher.json"
    query = "yesterday's headlines about rockets"  # no word of it names a tool; the meaning does
    assert not (demo / ".quiver" / "cache" / "vectors").exists()  # compile ran with caches off
    assert _serve_search(demo, manifest, query)[0][0] == "tavily__tavily_search"
    assert list((demo / ".quiver" / "cache" / "vectors").glob("*.f32"))
    config = demo / "quiver.toml"
    example = "quokka census spreadsheet"
    tables = f'\n[tools."notion/API-query-data-source"]\nexamples = ["{example}"]\n'
    config.write_text('search = "lexical"\n' + config.read_text(encoding="utf-8") + tables, encoding="utf-8")
    by_words, by_example = _serve_search(demo, manifest, query, example)
    assert by_words[0] != "tavily__tavily_search"
    assert by_example[0] == "notion__API-query-data-source"  # the config's examples reach the gateway


@pytest.mark.parametrize("lexical", [False, True])
def test_explain_shows_shares_and_moves_that_add_up_to_each_score(demo: Path, lexical: bool) -> None:
    rows = json.loads(run(demo, "git_log", None, 3, "json", lexical=lexical, explain=True))
    assert (rows[0]["server"], rows[0]["tool"]) == ("git", "git_log")
    assert rows[0]["explain"]["moves"]["exact"] > 0
    for row in rows:
        parts = row["explain"]
        assert abs(parts["words"] + parts["meaning"] + sum(parts["moves"].values()) - row["score"]) < 1e-4
        assert (parts["cosine"] is None) == lexical and (parts["meaning"] == 0.0 or not lexical)
    text = run(demo, "git_log", None, 2, "text", lexical=lexical, explain=True).splitlines()
    assert text[2].split()[:2] == ["words", f"{rows[0]['explain']['words']:+.2f}"]
    assert ("meaning" in text[2]) != lexical and "exact +" in text[2]
