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

Pure: values in, frozen dataclasses out; the case file is read by `sources/route_cases.py`, other files by the
command (`commands/route_test.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from quiver.errors import InputError, Position
from quiver.model import JSON
from quiver.search import SearchIndex
from quiver.sources.route_cases import DEFAULT_K as DEFAULT_K
from quiver.sources.route_cases import DEPTH, RouteCase
from quiver.sources.route_cases import parse_cases as parse_cases
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

RECALL_AT = (1, 3, 5)
BASELINE_VERSION = 1


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
