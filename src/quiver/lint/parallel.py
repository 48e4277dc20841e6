"""Running the checks of a lint on the machine's cores: whole-project checks shared with forked workers.

The heavy routing checks (tool search queries, pair similarity) are whole-project checks whose findings
are cached as JSON (`lint/support/cache.py`, `ProjectCheck`), so a worker can compute one and hand back
exactly what a warm run would read. When such checks have no cache entry, lint forks up to `jobs - 1`
workers (Linux only, `QUIVER_JOBS` caps it; 1 means no worker). Workers and this process claim the
uncached project checks one at a time from a shared queue (one byte per check in a pipe: a read of one
byte is atomic), heaviest first; this process first runs every other check, then joins the queue. A
worker only computes and writes its findings to its own pipe; this process stores them in the cache,
and the findings come out in the checks' order whoever computed them: the report is byte-identical to
a one-process run. A worker that fails, or a platform without fork, leaves the work to this process.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence

from quiver.findings.rule import Check, Rule
from quiver.lint import engine
from quiver.lint.engine import LintContext, checks_of
from quiver.lint.support.cache import ProjectCheck, has_project_findings, store_project_findings
from quiver.model import Finding, finding_from_json

# Which project checks a worker may take, heaviest first (the order they are claimed in).
SHARED = ("route-shadowed", "route-pairs", "route-agents", "route-servers")
MAX_WORKERS = 3


def jobs() -> int:
    """Processes lint may use: the CPUs it may run on, capped by `QUIVER_JOBS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    wanted = os.environ.get("QUIVER_JOBS", "").strip()
    if wanted.isdigit() and int(wanted) >= 1:
        cpus = min(cpus, int(wanted))
    return max(1, cpus)


def run_checks(ctx: LintContext, rules: Sequence[Rule]) -> Iterator[Finding]:
    """Every finding of the checks behind `rules`, in check order, the uncached project checks shared."""
    checks = checks_of(rules)
    spare = jobs() - 1 if sys.platform == "linux" else 0
    shared = _shared(ctx, checks) if spare > 0 else []
    workers = min(len(shared), spare, MAX_WORKERS)
    if workers <= 0:
        yield from engine.run_checks(ctx, rules)
        return
    done = _share(ctx, checks, shared, workers)  # every check's findings
    for check in checks:
        yield from done[id(check)]


def _shared(ctx: LintContext, checks: Sequence[Check]) -> list[ProjectCheck]:
    project = [c for c in checks if isinstance(c, ProjectCheck) and c.name in SHARED]
    uncached = [c for c in project if not has_project_findings(ctx, c.name)]
    return sorted(uncached, key=lambda c: SHARED.index(c.name))


def _share(
    ctx: LintContext, checks: Sequence[Check], shared: list[ProjectCheck], workers: int
) -> dict[int, list[Finding]]:
    """Run `checks`, the `shared` ones claimed by this process and `workers` forked ones; findings by check."""
    queue_read, queue_write = os.pipe()
    os.write(queue_write, bytes(range(len(shared))))
    os.close(queue_write)  # the queue ends once every check is claimed: a read then returns b""
    children: list[tuple[int, int]] = []
    for _ in range(workers):
        result_read, result_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a worker: compute, write, leave without running this process's exit handlers
            os.close(result_read)
            _work(ctx, shared, queue_read, result_write)
        os.close(result_write)
        children.append((pid, result_read))
    done: dict[int, list[Finding]] = {}
    try:
        others = {id(c) for c in shared}
        for check in checks:
            if id(check) not in others:
                done[id(check)] = list(check(ctx))
        while claimed := os.read(queue_read, 1):
            check = shared[claimed[0]]
            done[id(check)] = list(check.compute(ctx))
    finally:
        os.close(queue_read)
        results = [_results(result_read, pid) for pid, result_read in children]  # reaps every worker
    for found in results:
        for name, items in found.items():
            check = next(c for c in shared if c.name == name)
            done[id(check)] = [finding_from_json(item) for item in items]
    for check in shared:
        if id(check) not in done:  # its worker failed before finishing it
            done[id(check)] = list(check.compute(ctx))
        store_project_findings(ctx, check.name, done[id(check)])
    ctx.finish()
    return done


def _work(ctx: LintContext, shared: list[ProjectCheck], queue_read: int, result_write: int) -> None:
    status = 1
    try:
        out: dict[str, list[object]] = {}
        while claimed := os.read(queue_read, 1):
            check = shared[claimed[0]]
            out[check.name] = [f.to_json() for f in check.compute(ctx)]
        data = json.dumps(out).encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(result_write, view) :]
        status = 0
    finally:
        os._exit(status)


def _results(result_read: int, pid: int) -> dict[str, list[dict[str, object]]]:
    chunks = []
    while chunk := os.read(result_read, 1 << 16):
        chunks.append(chunk)
    os.close(result_read)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        return {}
    try:
        data = json.loads(b"".join(chunks))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
