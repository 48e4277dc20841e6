"""`quiver route-test [CASES]`: rank each routing case, print recall@1/@3/@5 and MRR, compare with a baseline.

Exit codes: 0 when every case ranks within its `k` (and, with `--baseline`, no case ranks worse and the MRR
did not drop); 1 otherwise; 2 for a malformed cases or baseline file (through the CLI's error funnel).
`--update-baseline` writes the current ranks to `--baseline` and exits 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from quiver._search._scope import agent_docs, project_docs, project_index
from quiver.commands.outcome import Outcome
from quiver.errors import InputError, Position, UsageError
from quiver.jsonout import pretty
from quiver.model import JSON
from quiver.project import load_project
from quiver.resolve import resolve_agent
from quiver.routes import (
    RECALL_AT,
    CaseResult,
    Regression,
    RouteCase,
    RouteReport,
    baseline_json,
    compare,
    evaluate,
    parse_baseline,
    parse_cases,
    scopes,
)
from quiver.search import SearchIndex
from quiver.sources.files import read_text, write_output
from quiver.suggest import did_you_mean


@dataclass(frozen=True, slots=True)
class RouteCheck:
    """A route-test run: the ranked cases and, with a baseline, what got worse."""

    file: str
    report: RouteReport
    baseline: str | None = None
    regressions: tuple[Regression, ...] = ()
    mrr_before: float | None = None

    @property
    def mrr_dropped(self) -> bool:
        return self.mrr_before is not None and round(self.report.mrr, 4) < self.mrr_before

    @property
    def ok(self) -> bool:
        return not self.report.failures and not self.regressions and not self.mrr_dropped


@dataclass(frozen=True, slots=True)
class RouteTestOptions:
    root: Path
    cases: Path | None = None  # the cases file; None: the `routes` config key
    fmt: str = "text"
    baseline: Path | None = None  # also fail when a case ranks worse than in it, or the MRR dropped
    update_baseline: bool = False  # write the current ranks to `baseline` instead; exit 0
    lexical: bool = False


def run(options: RouteTestOptions) -> Outcome:
    """The report on the cases, and exit 1 when a case misses (or is worse than in the baseline), else 0."""
    o = options
    if o.update_baseline and o.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE", hint="name the file to write")
    routes = check_routes(o.root, o.cases, baseline=None if o.update_baseline else o.baseline, lexical=o.lexical)
    text = render(routes, o.fmt)
    if o.update_baseline and o.baseline is not None:
        write_output(o.baseline, pretty(baseline_json(routes.report)), root=o.root)
        return Outcome(text if o.fmt == "json" else f"{text}wrote {o.baseline}\n")
    return Outcome(text, code=0 if routes.ok else 1)


def check_routes(root: Path, cases: Path | None, *, baseline: Path | None, lexical: bool = False) -> RouteCheck:
    """Load the project and the cases, rank each case in its scope, and compare with `baseline` if given."""
    project = load_project(root)
    path = cases if cases is not None else root / project.config.routes
    shown = _shown(root, path)
    if not path.is_file():
        raise InputError(
            "routing cases file not found",
            position=Position(shown),
            hint="write cases as `- query: ...` / `expect: server/tool` (see `quiver route-test --help`)",
        )
    loaded = parse_cases(read_text(path, shown), shown)
    if project.lock is None:
        raise InputError(
            "no lock file: quiver does not know the servers' tools yet",
            position=Position(project.config.lock),
            hint="run `quiver snapshot` to capture them",
        )
    by_id = {a.id: a for a in project.agents}
    indexes: dict[str | None, SearchIndex] = {}
    for scope in scopes(loaded):
        if scope is None:
            indexes[None] = project_index(project, project_docs(project), lexical=lexical)
            continue
        if scope not in by_id:
            first = next(c for c in loaded if c.agent == scope)
            raise InputError(
                f"no agent `{scope}`",
                position=first.position,
                hint=did_you_mean(scope, by_id, "run `quiver compile` to list the agents"),
            )
        resolved = resolve_agent(by_id[scope], project)
        indexes[scope] = project_index(project, agent_docs(resolved, project.config.examples), lexical=lexical)
    report = evaluate(loaded, indexes)
    if baseline is None:
        return RouteCheck(shown, report)
    base_shown = _shown(root, baseline)
    if not baseline.is_file():
        raise InputError(
            "routes baseline not found",
            position=Position(base_shown),
            hint="create it with `quiver route-test --baseline FILE --update-baseline`",
        )
    try:
        data: JSON = json.loads(read_text(baseline, base_shown))
    except ValueError:
        raise InputError(
            "not a quiver routes baseline", position=Position(base_shown), hint="recreate it with --update-baseline"
        ) from None
    stored = parse_baseline(data, base_shown)
    worse, _ = compare(report, stored)
    return RouteCheck(shown, report, base_shown, tuple(worse), stored.mrr)


def _shown(root: Path, path: Path) -> str:
    """A path as messages show it: relative to the project when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def render(check: RouteCheck, fmt: str) -> str:
    if fmt == "json":
        return pretty(_json(check))
    return _text(check)


def _describe(case: RouteCase) -> str:
    agent = f" (agent `{case.agent}`)" if case.agent else ""
    return f'`{case.expect}` for "{case.query}"{agent}'


def _rank(rank: int | None) -> str:
    return f"rank {rank}" if rank is not None else "not in the top 10"


def _text(check: RouteCheck) -> str:
    report = check.report
    n = len(report.results)
    recall = "  ".join(f"recall@{k} {report.recall(k):.3f}" for k in RECALL_AT)
    lines = [f"{n} routing case{'s' if n != 1 else ''} in {check.file}", f"{recall}  MRR {report.mrr:.3f}"]
    missed = [r for r in report.results if r.rank != 1]
    if missed:
        lines.append("")
    for result in missed:
        lines.append(_miss_line(result))
    if check.baseline is not None:
        lines.append("")
        lines.append(f"baseline {check.baseline}: MRR {check.mrr_before:.3f} -> {report.mrr:.3f}")
        for reg in check.regressions:
            before, after = _rank(reg.before), _rank(reg.after)
            lines.append(f"{reg.case.position}: worse: {_describe(reg.case)}: {before} -> {after}")
    problems = []
    if report.failures:
        problems.append(f"{len(report.failures)} case(s) ranked below their k")
    if check.regressions:
        problems.append(f"{len(check.regressions)} case(s) rank worse than the baseline")
    if check.mrr_dropped:
        problems.append("the MRR dropped below the baseline")
    lines.append("")
    lines.append(f"fail: {'; '.join(problems)}" if problems else "ok")
    return "\n".join(lines) + "\n"


def _miss_line(result: CaseResult) -> str:
    case = result.case
    verdict = "miss" if not result.passed else "not first"
    winner = f"; `{result.winner}` came first" if result.winner else ""
    return f"{case.position}: {verdict}: {_describe(case)}: {_rank(result.rank)} (k {case.k}){winner}"


def _json(check: RouteCheck) -> dict[str, JSON]:
    report = check.report
    out: dict[str, JSON] = {
        "file": check.file,
        "cases": [
            {
                "query": r.case.query,
                "agent": r.case.agent,
                "expect": r.case.expect,
                "k": r.case.k,
                "rank": r.rank,
                "winner": r.winner,
                "passed": r.passed,
                "line": r.case.position.line,
                "column": r.case.position.column,
            }
            for r in report.results
        ],
        "mrr": round(report.mrr, 4),
        "failures": len(report.failures),
        "ok": check.ok,
    }
    for k in RECALL_AT:
        out[f"recall@{k}"] = round(report.recall(k), 4)
    if check.baseline is not None:
        out["baseline"] = {
            "file": check.baseline,
            "mrr": check.mrr_before,
            "mrr_dropped": check.mrr_dropped,
            "regressions": [
                {"query": r.case.query, "agent": r.case.agent, "expect": r.case.expect, "before": r.before,
                 "after": r.after}
                for r in check.regressions
            ],
        }  # fmt: skip
    return out
