"""Routing cases (`quiver route-test`): read them, rank each query with the tool search index, score, compare.

A case file (`.quiver/routes.yaml`, the `routes` config key) is a list of entries (or a mapping whose
`cases` key holds that list):

    - query: which pull requests were merged since the last release
      expect: github/list_pull_requests
      agent: release-notes   # optional: rank among this agent's tools (default: every server of the project)
      k: 3                   # optional: the case fails when the tool ranks below k (default 5)

Each query is ranked against the catalog `quiver compile` writes: an agent's resolved tools with its servers'
config descriptions, built into SearchDocs exactly as the gateway builds its index from a manifest; without
an agent, every locked server (cut by its allow-list). Scores: recall@1/@3/@5 (share of cases ranked at or
above n) and MRR (mean of 1/rank, 0 below `DEPTH`). A baseline stores each case's rank and the MRR, so a
description change that pushes a case down fails the check.

Pure: values in, frozen dataclasses out; reading and writing files is the command's (`commands/route_test.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from quiver.errors import InputError, Position
from quiver.model import JSON
from quiver.search import SearchIndex
from quiver.sources._yaml import YNode, parse_yaml
from quiver.suggest import did_you_mean

__all__ = [
    "BASELINE_VERSION",
    "DEFAULT_K",
    "DEPTH",
    "RECALL_AT",
    "Baseline",
    "CaseResult",
    "Regression",
    "RouteCase",
    "RouteReport",
    "baseline_json",
    "compare",
    "evaluate",
    "parse_baseline",
    "parse_cases",
    "scopes",
]

DEPTH = 10  # results read per query; a tool ranked lower has no rank and scores 0
DEFAULT_K = 5
RECALL_AT = (1, 3, 5)
BASELINE_VERSION = 1
_KEYS = ("query", "expect", "agent", "k")


@dataclass(frozen=True, slots=True)
class RouteCase:
    """One routing case: a request and the tool that should serve it."""

    query: str
    server: str
    tool: str
    agent: str | None
    k: int
    position: Position

    @property
    def expect(self) -> str:
        return f"{self.server}/{self.tool}"

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies a case across runs: agent, query and expected tool (not its line)."""
        return (self.agent or "", self.query, self.expect)


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: RouteCase
    rank: int | None  # 1-based; None when not in the first DEPTH results
    winner: str | None  # `server/tool` ranked first when it is not the expected tool

    @property
    def passed(self) -> bool:
        return self.rank is not None and self.rank <= self.case.k


@dataclass(frozen=True, slots=True)
class RouteReport:
    results: tuple[CaseResult, ...]

    def recall(self, n: int) -> float:
        if not self.results:
            return 0.0
        return sum(1 for r in self.results if r.rank is not None and r.rank <= n) / len(self.results)

    @property
    def mrr(self) -> float:
        if not self.results:
            return 0.0
        return sum(1.0 / r.rank for r in self.results if r.rank is not None) / len(self.results)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        return tuple(r for r in self.results if not r.passed)


@dataclass(frozen=True, slots=True)
class Baseline:
    ranks: Mapping[tuple[str, str, str], int | None]
    mrr: float


@dataclass(frozen=True, slots=True)
class Regression:
    """A case that ranks worse than its baseline."""

    case: RouteCase
    before: int | None
    after: int | None


def parse_cases(text: str, path: str) -> tuple[RouteCase, ...]:
    """The cases of a routes file; a malformed entry is an InputError at its file:line:col."""
    root = parse_yaml(text, path)
    if root.value is None:
        return ()
    entries = root
    if isinstance(root.value, dict) and "cases" in root.children:
        for key in root.children:
            if key != "cases":
                raise _error(path, root, f"unknown key `{key}` in a routes file", "keep the cases under `cases:`", key)
        entries = root.children["cases"]
    if not isinstance(entries.value, list):
        raise _error(path, entries, "a routes file is a list of cases", "start each case with `- query: ...`")
    return tuple(_case(item, path) for item in entries.items)


def _case(node: YNode, path: str) -> RouteCase:
    if not isinstance(node.value, dict):
        raise _error(path, node, "a case is a mapping", "write `- query: ...` with `expect: server/tool` under it")
    for key in node.children:
        if key not in _KEYS:
            raise _error(
                path, node, f"unknown key `{key}` in a case", did_you_mean(key, _KEYS, "keys: " + ", ".join(_KEYS)), key
            )
    query = node.get("query")
    if query is None or not isinstance(query.value, str) or not query.value.strip():
        raise _error(path, query or node, "a case needs a `query` (text)", "write the request as a user would")
    expect = node.get("expect")
    if expect is None or not isinstance(expect.value, str) or expect.value.count("/") < 1:
        raise _error(path, expect or node, "a case needs `expect: server/tool`", "name the server and the tool")
    server, tool = expect.value.strip().split("/", 1)
    if not server or not tool:
        raise _error(path, expect, f"`{expect.value}` is not `server/tool`", "name the server and the tool")
    agent = node.get("agent")
    if agent is not None and (not isinstance(agent.value, str) or not agent.value.strip()):
        raise _error(path, agent, "`agent` must be an agent id", "use the agent file's name without `.agent.md`")
    k = node.get("k")
    if k is not None and (not isinstance(k.value, int) or isinstance(k.value, bool) or not 1 <= k.value <= DEPTH):
        raise _error(path, k, f"`k` must be a whole number from 1 to {DEPTH}", f"the default is {DEFAULT_K}")
    return RouteCase(
        query=query.value.strip(),
        server=server,
        tool=tool,
        agent=agent.value.strip() if agent is not None and isinstance(agent.value, str) else None,
        k=k.value if k is not None and isinstance(k.value, int) else DEFAULT_K,
        position=Position(path, node.line, node.column),
    )


def _error(path: str, node: YNode, message: str, hint: str, key: str | None = None) -> InputError:
    line, column = node.key_positions.get(key, (node.line, node.column)) if key else (node.line, node.column)
    return InputError(message, position=Position(path, line, column), hint=hint)


def evaluate(cases: Sequence[RouteCase], indexes: Mapping[str | None, SearchIndex]) -> RouteReport:
    """Rank every case in its scope's index (`indexes[case.agent]`; None = the whole project)."""
    results: list[CaseResult] = []
    known: dict[str | None, set[tuple[str, str]]] = {}
    for case in cases:
        index = indexes[case.agent]
        names = known.setdefault(case.agent, {(d.server, d.tool) for d in index.docs})
        if (case.server, case.tool) not in names:
            scope = f"agent `{case.agent}`" if case.agent else "the project"
            choices = sorted(f"{s}/{t}" for s, t in names)
            raise InputError(
                f"`{case.expect}` is not a tool of {scope}",
                position=case.position,
                hint=did_you_mean(case.expect, choices, "run `quiver search` to list matching tools"),
            )
        hits = [(h.server, h.tool) for h in index.search(case.query, DEPTH)]
        target = (case.server, case.tool)
        rank = hits.index(target) + 1 if target in hits else None
        winner = f"{hits[0][0]}/{hits[0][1]}" if hits and rank != 1 else None
        results.append(CaseResult(case, rank, winner))
    return RouteReport(tuple(results))


def baseline_json(report: RouteReport) -> dict[str, JSON]:
    """What `--update-baseline` stores: each case's rank and the MRR (sorted, stable across runs)."""
    cases = sorted(
        (
            {"agent": r.case.agent, "query": r.case.query, "expect": r.case.expect, "rank": r.rank}
            for r in report.results
        ),
        key=lambda c: (str(c["agent"] or ""), str(c["query"]), str(c["expect"])),
    )
    return {"routesBaselineVersion": BASELINE_VERSION, "mrr": round(report.mrr, 4), "cases": cases}


def parse_baseline(data: JSON, path: str) -> Baseline:
    def bad() -> InputError:
        return InputError(
            "not a quiver routes baseline", position=Position(path), hint="recreate it with --update-baseline"
        )

    if not isinstance(data, dict) or data.get("routesBaselineVersion") != BASELINE_VERSION:
        raise bad()
    mrr, cases = data.get("mrr"), data.get("cases")
    if not isinstance(mrr, int | float) or not isinstance(cases, list):
        raise bad()
    ranks: dict[tuple[str, str, str], int | None] = {}
    for item in cases:
        if not isinstance(item, dict):
            raise bad()
        agent, query, expect, rank = item.get("agent"), item.get("query"), item.get("expect"), item.get("rank")
        if not isinstance(query, str) or not isinstance(expect, str) or not isinstance(agent, str | None):
            raise bad()
        if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool)):
            raise bad()
        ranks[(agent or "", query, expect)] = rank
    return Baseline(ranks, float(mrr))


def compare(report: RouteReport, baseline: Baseline) -> tuple[list[Regression], bool]:
    """Cases that rank worse than in the baseline (new cases are not compared), and whether the MRR dropped."""
    worse: list[Regression] = []
    for result in report.results:
        key = result.case.key
        if key not in baseline.ranks:
            continue
        before, after = baseline.ranks[key], result.rank
        if _worse(before, after):
            worse.append(Regression(result.case, before, after))
    return worse, round(report.mrr, 4) < baseline.mrr


def _worse(before: int | None, after: int | None) -> bool:
    if after is None:
        return before is not None
    return before is not None and after > before


def scopes(cases: Iterable[RouteCase]) -> list[str | None]:
    """The scopes the cases need: None (the whole project) and each agent, in first-use order."""
    return list(dict.fromkeys(case.agent for case in cases))
