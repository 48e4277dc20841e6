"""The budget table printed by `quiver compile`, and `quiver explain`'s text."""

from __future__ import annotations

from collections.abc import Sequence

from quiver.compile import Budget
from quiver.resolve import ResolvedAgent

HEADERS = ("agent", "search", "preloaded", "deferred", "tokens up front", "all preloaded", "saving")


def budget_table(rows: Sequence[tuple[ResolvedAgent, Budget]]) -> str:
    """A plain, aligned table (one line per agent) with a total line."""
    body = []
    for resolved, b in rows:
        pct = f"{b.saving_tokens / b.baseline_tokens:.0%}" if b.baseline_tokens else "-"
        body.append(
            (
                resolved.agent.id,
                "on" if resolved.tool_search.active else "off",
                str(b.preloaded_tools),
                str(b.deferred_tools),
                f"{b.initial_tokens:,}",
                f"{b.baseline_tokens:,}",
                f"{b.saving_tokens:,} ({pct})",
            )
        )
    if len(rows) > 1:
        total_initial = sum(b.initial_tokens for _, b in rows)
        total_base = sum(b.baseline_tokens for _, b in rows)
        pct = f"{(total_base - total_initial) / total_base:.0%}" if total_base else "-"
        body.append(
            (
                f"total ({len(rows)} agents)",
                "",
                str(sum(b.preloaded_tools for _, b in rows)),
                str(sum(b.deferred_tools for _, b in rows)),
                f"{total_initial:,}",
                f"{total_base:,}",
                f"{total_base - total_initial:,} ({pct})",
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(HEADERS)]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells[1:], widths[1:], strict=True))]
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(HEADERS), line(["-" * w for w in widths]), *(line(r) for r in body)]) + "\n"


def explain(resolved: ResolvedAgent, budget: Budget, tool: str | None = None) -> str:
    """Why each tool is preloaded or deferred, with the file:line that decided."""
    agent = resolved.agent
    out = []
    if tool is None:
        out.append(f"agent `{agent.id}` ({agent.path})")
        out.append(f"tool search: {'on' if resolved.tool_search.active else 'off'} ({resolved.tool_search.reason})")
        out.append(
            f"budget: {budget.initial_tokens:,} tokens up front, {budget.baseline_tokens:,} if all preloaded "
            f"({budget.saving_tokens:,} saved)"
        )
        for b in resolved.builtins:
            out.append(f"  preloaded  {b.canonical:<40} rule 1: built-in ({b.location})")
    for item in resolved.tools:
        full = f"{item.server}/{item.tool.name}"
        if tool is not None and tool not in (full, item.tool.name):
            continue
        source = f" ({item.decision.source})" if item.decision.source else ""
        rule = f"rule {item.decision.rule}" if item.decision.rule else "no rule"
        out.append(f"  {item.load:<10} {full:<40} {rule}: {item.decision.text}{source}")
    return "\n".join(out) + "\n"
