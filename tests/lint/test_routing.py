"""The routing rule family (ROUTE): per-rule fixture projects built from real corpus descriptions, the rule docs,
and the word helpers that explain each verdict.

Fixture projects are built from the specs below with tools, server descriptions and agent descriptions taken
verbatim from /work/shared/corpus (catalogs, github-mcp-server snapshots, awesome-copilot agents): `SPECS`,
which the rule harness (tests/findings/test_rules.py) checks against the committed `tests/fixtures/lint/ROUTE*/`
(QUIVER_REGEN=1 rewrites them). The tests here run the family directly (as `quiver lint` runs it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from quiver.findings.order import sort_findings
from quiver.lint.engine import LintContext, run_checks
from quiver.lint.registry import all_rules, rules_of
from quiver.lint.route import shadowed_tool as _route_shadow
from quiver.lint.route import tool_pairs as _route_pairs
from quiver.lint.support.route_words import contrasting, difference, meaning, negated, said, shared_prefix
from quiver.model import Finding
from quiver.project import load_project
from quiver.resolve import resolve_project
from quiver.search import SearchDoc, SearchIndex
from rule_harness import AGENT, Case, Spec, materialize

FIELDS = ("rule", "severity", "file", "line", "column", "message", "hint")
# Tool names picked from the corpus catalogs and github-mcp-server releases.
GITHUB_MIX = ("assign_copilot_to_issue", "assign_copilot_to_issue_with_intent", "create_branch", "list_tags", "get_me")
SCANNING = ("get_code_scanning_alert", "list_code_scanning_alerts", "get_secret_scanning_alert")
GITHUB_WORK = ("list_issues", "issue_read", "issue_write", "search_issues", "list_pull_requests", "pull_request_read")
GITHUB_MORE = ("create_pull_request", "merge_pull_request", "get_file_contents", "list_commits", "create_branch")
GITHUB_V030 = ("actions_get", "actions_list", "actions_run_trigger", "add_comment_to_pending_review", "create_gist")
GITHUB_V020 = ("add_comment_to_pending_review", "create_branch", "create_issue", "create_or_update_file")
DEFERRING = "threshold = 1\n"  # tool search on for every agent: tools reached through a wildcard are deferred

# ---------------------------------------------------------------------------------------------------------
# Real texts from the corpus


@cache
def _catalog(corpus: Path, server: str) -> dict[str, Any]:
    for folder in ("catalogs", "catalogs-livemcpbench"):
        path = corpus / folder / f"{server}.json"
        if path.is_file():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
    raise AssertionError(f"no catalog `{server}` in the corpus")


def real(corpus: Path, server: str, *names: str) -> list[dict[str, Any]]:
    """Tools of a corpus catalog, verbatim (every tool when no name is given)."""
    tools_by_name = {t["name"]: t for t in _catalog(corpus, server)["tools"]}
    picked = [tools_by_name[n] for n in names] if names else list(tools_by_name.values())
    return [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in picked]


def described(corpus: Path, server: str) -> str:
    """A corpus server's own description."""
    return str(_catalog(corpus, server)["description"])


def snap(corpus: Path, version: str, *names: str) -> list[dict[str, Any]]:
    """github-mcp-server tools as a release served them."""
    folder = corpus / "github-mcp-server" / version
    return [json.loads((folder / f"{n}.snap").read_text(encoding="utf-8")) for n in names]


def agent_description(corpus: Path, agent_id: str) -> str:
    text = (corpus / "awesome-copilot" / "agents" / f"{agent_id}.agent.md").read_text(encoding="utf-8")
    line = next(ln for ln in text.split("---", 2)[1].splitlines() if ln.startswith("description:"))
    value = line.split(":", 1)[1].strip()
    return str(json.loads(value)) if value.startswith('"') else value.strip("'")


def agent_file(tools_field: str, description: str = "Works on the team's repositories and pages.") -> str:
    return f"---\ndescription: {json.dumps(description)}\ntools: {tools_field}\n---\nDo the work.\n"


def servers(descriptions: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    """`.mcp.json` entries, with quiver's `description` where given."""
    out: dict[str, dict[str, Any]] = {}
    for name, text in descriptions.items():
        entry: dict[str, Any] = {"type": "stdio", "command": name, "tools": ["*"]}
        if text is not None:
            entry["description"] = text
        out[name] = entry
    return out


# ---------------------------------------------------------------------------------------------------------
# The cases: each builds a bad and a good project from the corpus


def route001(c: Path) -> Case:
    # The filesystem server's deprecated `read_file` and its replacement `read_text_file` say the same in their
    # first sentence: flagged by the embedding of their purposes, although their words differ enough.
    github = real(c, "github", *GITHUB_MIX, "search_code")
    filesystem = real(c, "filesystem")
    return Case(
        "ROUTE001",
        Spec({"github": github, "weather": real(c, "weather"), "filesystem": filesystem}),
        Spec(
            {
                "filesystem": [t for t in filesystem if t["name"] != "read_file"],
                "github": real(c, "github", *SCANNING, "list_secret_scanning_alerts"),
                "playwright": real(c, "playwright", "browser_mouse_down", "browser_mouse_up", "browser_click"),
            }
        ),
    )


def route002(c: Path) -> Case:
    # github.com (the current release) and a GitHub Enterprise Server pinned to an older one.
    shared = ("add_issue_comment", "add_project_item", "assign_copilot_to_issue")
    catalogs = {
        "github": snap(c, "v0.30.0", "get_team_members", *GITHUB_V030, *shared, "cancel_workflow_run", "create_branch"),
        "ghes": snap(c, "v0.20.0", "get_teams", *GITHUB_V020, *shared, "create_pull_request"),
    }
    both = {AGENT: agent_file("['github/*', 'ghes/*']")}
    one = {AGENT: agent_file("['github/*']"), ".github/agents/enterprise.agent.md": agent_file("['ghes/*']")}
    return Case("ROUTE002", Spec(catalogs, agents=both), Spec(catalogs, agents=one))


def route003(c: Path) -> Case:
    def team(*ids: str) -> dict[str, str]:
        return {f".github/agents/{i}.agent.md": agent_file("['srv/*']", agent_description(c, i)) for i in ids}

    catalogs = {"srv": real(c, "time")}
    return Case(
        "ROUTE003",
        Spec(catalogs, agents=team("csharp-dotnet-janitor", "dotnet-upgrade", "janitor")),
        Spec(catalogs, agents=team("csharp-dotnet-janitor", "janitor", "python-mcp-expert", "ruby-mcp-expert")),
    )


def route004(c: Path) -> Case:
    bad = {
        "mcp-deepwiki": described(c, "mcp-deepwiki"),
        "duckduckgo-search": described(c, "duckduckgo-search"),
        "acme": "Internal tools",
        "tavily": None,
    }
    catalogs = {name: real(c, name) for name in ("mcp-deepwiki", "duckduckgo-search", "tavily")}
    catalogs["acme"] = real(c, "time")
    good = {"tavily": described(c, "tavily"), "whois": described(c, "whois"), "git": described(c, "git"), "time": None}
    return Case(
        "ROUTE004",
        Spec(catalogs, agents={AGENT: agent_file("['tavily/*']")}, servers=servers(bad), config=DEFERRING),
        Spec(
            {name: real(c, name) for name in good},
            agents={AGENT: agent_file("['time/get_current_time']")},
            servers=servers(good),
            config=DEFERRING,
        ),
    )


def route005(c: Path) -> Case:
    github = real(c, "github", *GITHUB_WORK, *GITHUB_MORE)
    return Case(
        "ROUTE005",
        Spec(
            {"github": github, "filesystem": real(c, "filesystem")},
            servers=servers({"github": described(c, "github"), "filesystem": described(c, "filesystem")}),
        ),
        Spec(
            {"github": github, "memory": real(c, "memory")},
            servers=servers(
                {
                    "github": "GitHub: repositories, issues, pull requests, code search, commits and releases",
                    "memory": described(c, "memory"),
                }
            ),
        ),
    )


def route006(c: Path) -> Case:
    # Notion's real tools; "page" in the server's description lifts every sibling that says "page" in its name
    # above `API-patch-page` ("Update page properties"). With Notion's own description nothing is shadowed.
    notion = {"notion": real(c, "notion")}
    config = {"notion": "Notion: search, read and edit pages, databases and comments"}
    return Case(
        "ROUTE006",
        Spec(notion, servers=servers(config)),
        Spec(notion, servers=servers({"notion": described(c, "notion")})),
    )


def route007(c: Path) -> Case:
    pairs = {
        "notion": real(c, "notion", "API-get-user", "API-get-users", "API-post-search"),
        "git": real(c, "git"),
        "github": real(c, "github", "create_branch", "list_branches", *SCANNING[:2]),
    }
    return Case(
        "ROUTE007",
        Spec(pairs, agents={AGENT: agent_file("['git/*', 'github/*']")}),
        Spec(
            {"git": real(c, "git"), "github": pairs["github"]},
            agents={AGENT: agent_file("['git/*']"), ".github/agents/web.agent.md": agent_file("['github/*']")},
        ),
    )


def skill_file(name: str, description: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\nDo the work.\n"


# Skill descriptions as real repositories write them: a skill copied under a second name with its description
# barely reworded, next to skills that share a topic but say what sets them apart.
PDF_EXTRACT = (
    "Extract text and tables from PDF files. Use when the user works with PDF documents or asks for their text."
)
PDF_READER = (
    "Extract the text and the tables of PDF files. Use when the user works with PDF documents or asks for text."
)
PDF_FORMS = "Fill in, flatten and sign PDF forms. Use when the user asks to complete or sign a PDF form."
K8S_REVIEW = (
    "Review Kubernetes manifests for security issues, resource limits and probes. Use before deploying to a cluster."
)
# One template per cloud: near-identical, but each name's word (`aws`, `azure`) is said by its description alone.
AWS_REVIEW = "Review the Terraform of an AWS workload against the Well-Architected Framework and open issues."
AZURE_REVIEW = "Review the Terraform of an Azure workload against the Well-Architected Framework and open issues."
K8S_AUDIT = (
    "Review Kubernetes manifests for security issues, resource limits and probes. Use before deploying to clusters."
)


def route008(c: Path) -> Case:
    catalogs = {"srv": real(c, "time")}
    plugin = '{"name": "%s"}\n'
    bad = {
        AGENT: agent_file("['srv/*']"),
        ".claude/skills/pdf-extract/SKILL.md": skill_file("pdf-extract", PDF_EXTRACT),
        ".claude/skills/pdf-reader/SKILL.md": skill_file("pdf-reader", PDF_READER),
        "plugins/platform/.claude-plugin/plugin.json": plugin % "platform",
        "plugins/platform/skills/k8s-review/SKILL.md": skill_file("k8s-review", K8S_REVIEW),
        "plugins/platform/skills/k8s-audit/SKILL.md": skill_file("k8s-audit", K8S_AUDIT),
    }
    good = {
        AGENT: agent_file("['srv/*']"),
        ".claude/skills/pdf-extract/SKILL.md": skill_file("pdf-extract", PDF_EXTRACT),
        ".claude/skills/pdf-forms/SKILL.md": skill_file("pdf-forms", PDF_FORMS),
        # the model never picks a skill it is not shown
        ".claude/skills/pdf-reader/SKILL.md": skill_file("pdf-reader", PDF_READER, "disable-model-invocation: true\n"),
        ".github/skills/aws-review/SKILL.md": skill_file("aws-review", AWS_REVIEW),
        ".github/skills/azure-review/SKILL.md": skill_file("azure-review", AZURE_REVIEW),
        # two plugins' skills never share a listing
        "plugins/platform/.claude-plugin/plugin.json": plugin % "platform",
        "plugins/platform/skills/k8s-review/SKILL.md": skill_file("k8s-review", K8S_REVIEW),
        "plugins/security/.claude-plugin/plugin.json": plugin % "security",
        "plugins/security/skills/k8s-audit/SKILL.md": skill_file("k8s-audit", K8S_AUDIT),
    }
    return Case("ROUTE008", Spec(catalogs, agents=bad), Spec(catalogs, agents=good))


SPECS: dict[str, Callable[[Path], Case]] = {  # tests/findings/test_rules.py checks them
    "ROUTE001": route001,
    "ROUTE002": route002,
    "ROUTE003": route003,
    "ROUTE004": route004,
    "ROUTE005": route005,
    "ROUTE006": route006,
    "ROUTE007": route007,
    "ROUTE008": route008,
}

# ---------------------------------------------------------------------------------------------------------
# Running the family


def routing_findings(root: Path) -> list[Finding]:
    project = load_project(root)
    return sort_findings(run_checks(LintContext(project, tuple(resolve_project(project))), rules_of("ROUTE")))


def findings_of(root: Path, code: str) -> list[dict[str, object]]:
    return [{k: f.to_json().get(k) for k in FIELDS} for f in routing_findings(root) if f.rule == code]


# ---------------------------------------------------------------------------------------------------------
# Tests: fixtures and docs


def test_every_routing_rule_has_a_spec_and_the_rules_are_sorted_by_code() -> None:
    assert sorted(SPECS) == [r.code for r in rules_of("ROUTE")]


def test_routing_codes_and_names_are_unique_across_every_lint_family() -> None:
    rules = list(all_rules())
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)


def test_routing_rules_are_warnings_except_the_vocabulary_measure() -> None:
    assert {r.code: r.severity for r in rules_of("ROUTE") if r.severity != "warning"} == {"ROUTE005": "info"}


# ---------------------------------------------------------------------------------------------------------
# Tests: behaviour on real projects


def test_an_agent_seeing_git_and_github_is_told_both_create_branch_tools_overlap(demo: Path) -> None:
    found = [f for f in routing_findings(demo) if f.rule == "ROUTE007" and f.agent == "ops"]
    assert [f.message for f in found] == [
        "tool names `git/git_create_branch` and `github/create_branch` mean the same (`create branch`) and their "
        "descriptions read alike (similarity 0.78), and agent `ops` sees both"
    ]
    assert found[0].hint is not None and "`git/git_create_branch` alone says `base`" in found[0].hint


def test_no_tool_of_the_real_catalogs_is_shadowed_within_its_own_server(corpus: Path) -> None:
    for folder in ("catalogs", "catalogs-livemcpbench"):
        for path in sorted((corpus / folder).glob("*.json")):
            cat = json.loads(path.read_text(encoding="utf-8"))
            docs = [SearchDoc(cat["server"], t["name"], t.get("description") or "") for t in cat["tools"]]
            assert list(_route_shadow.shadowed(docs, range(len(docs)))) == [], cat["server"]


def test_a_server_supplied_description_is_judged_only_when_an_agent_defers_its_tools(
    corpus: Path, tmp_path: Path
) -> None:
    catalogs = {"mcp-deepwiki": real(corpus, "mcp-deepwiki")}
    quiet = Spec(catalogs, instructions={"mcp-deepwiki": described(corpus, "mcp-deepwiki")})
    materialize(quiet, tmp_path / "preloaded")
    assert findings_of(tmp_path / "preloaded", "ROUTE004") == []
    deferring = Spec(
        catalogs,
        agents={AGENT: agent_file("['mcp-deepwiki/*']")},
        instructions={"mcp-deepwiki": described(corpus, "mcp-deepwiki")},
        config=DEFERRING,
    )
    materialize(deferring, tmp_path / "deferred")
    found = findings_of(tmp_path / "deferred", "ROUTE004")
    assert [f["message"] for f in found] == [
        "server `mcp-deepwiki` has a vague description (its `instructions`; no `description` is set) that names "
        "nothing its tools work on: `This is an unofficial Deepwiki MCP Server`"
    ]


def test_near_duplicate_candidates_come_from_the_index_one_similar_call_per_tool(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    similar = SearchIndex.similar

    def counted(self: SearchIndex, doc_index: int, limit: int = 5) -> list[tuple[int, float]]:
        calls.append(doc_index)
        return similar(self, doc_index, limit)

    monkeypatch.setattr(SearchIndex, "similar", counted)
    docs = [
        SearchDoc(path.stem, t["name"], t.get("description") or "")
        for folder in ("catalogs", "catalogs-livemcpbench")
        for path in sorted((corpus / folder).glob("*.json"))
        for t in json.loads(path.read_text(encoding="utf-8"))["tools"]
    ]
    pairs = _route_pairs.candidate_pairs(SearchIndex.build(docs), _route_pairs.OVERLAP_MIN)
    assert sorted(calls) == list(range(len(docs)))
    assert 0 < len(pairs) <= len(docs) * _route_pairs.CANDIDATES


# ---------------------------------------------------------------------------------------------------------
# Tests: the words behind the hints


def test_the_hint_names_the_words_each_description_has_that_the_other_lacks() -> None:
    hint = difference(
        "git_create_branch",
        "Creates a new branch from an optional base branch",
        "create_branch",
        "Create a new branch in a GitHub repository",
    )
    assert hint == "`git_create_branch` alone says `base`; `create_branch` alone says `github`, `repository`"


def test_a_description_with_nothing_of_its_own_is_called_out() -> None:
    text = "Assign Copilot to a specific issue in a GitHub repository."
    hint = difference("assign", text, "assign_with_intent", text + " Prefer this tool over assign.")
    assert hint == "`assign` says nothing the other does not; `assign_with_intent` alone says `prefer`, `over`"


def test_names_mean_the_same_across_case_separators_order_plurals_and_synonyms() -> None:
    assert meaning("search_issues") == meaning("findIssue") == meaning("issue-query")
    assert meaning("get_user") == meaning("fetchUsers") == meaning("API-retrieve-user", frozenset({"api"}))
    assert meaning("git_create_branch", frozenset({"git"})) == meaning("create_branch")
    assert meaning("list_issues") != meaning("get_issue")
    assert said("git_create_branch", frozenset({"git"})) == "create branch"


def test_names_that_differ_by_a_contrasting_word_are_told_apart() -> None:
    assert contrasting(meaning("get_code_scanning_alert"), meaning("list_code_scanning_alerts"))
    assert contrasting(meaning("browser_mouse_down"), meaning("browser_mouse_up"))
    assert not contrasting(meaning("get_team_members"), meaning("get_teams"))
    drop = frozenset(("api",))  # notion's shared prefix
    assert contrasting(meaning("API-retrieve-page-markdown", drop), meaning("API-update-page-markdown", drop))
    assert contrasting(meaning("read_note"), meaning("delete_note"))
    assert not contrasting(meaning("update_page"), meaning("delete_block"))


def test_names_that_differ_only_by_a_negated_word_are_told_apart_by_nothing_else() -> None:
    drop = frozenset(("git",))
    assert negated(meaning("git_diff_staged", drop), meaning("git_diff_unstaged", drop))
    assert negated(meaning("list_verified_users"), meaning("list_unverified_users"))
    assert not negated(meaning("star_repository"), meaning("unstar_repository"))  # opposite actions say which
    assert not negated(meaning("lock_file"), meaning("unlock_file"))
    assert not negated(meaning("git_diff_staged", drop), meaning("git_diff", drop))


def test_a_shared_namespace_prefix_is_dropped_but_a_shared_verb_is_kept() -> None:
    assert shared_prefix(["browser_click", "browser_close", "browser_navigate"]) == {"browser"}
    assert shared_prefix(["API-get-user", "API-post-search"]) == {"api"}
    assert shared_prefix(["get_price_history", "get_news", "get_fear_greed_index"]) == frozenset()
    assert shared_prefix(["search_papers", "download_paper"]) == frozenset()
