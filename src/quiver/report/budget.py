"""The budget table printed by `quiver compile` and `quiver budget`, and `quiver explain`'s text, each
also as JSON (`--format json`): one shape for both budget tables, sorted keys, a final newline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from quiver.compile import Budget
from quiver.host_exports import openai_strict_of
from quiver.model import JSON
from quiver.resolve import ResolvedAgent

TOTAL_KEYS = ("preloaded_tools", "deferred_tools", "initial_tokens", "baseline_tokens", "saving_tokens")

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
        if tool is not None:  # one tool asked about: also how the OpenAI export declares it
            out.append(f"  {'openai':<10} {full:<40} {openai_strict_of(item.tool.definition).explain()}")
    return "\n".join(out) + "\n"


def budget_row(agent: str, tool_search: Mapping[str, Any], budget: Mapping[str, Any]) -> dict[str, JSON]:
    """One agent of the JSON budget table: id, tool-search decision and reason, the manifest's budget."""
    return {
        "agent": agent,
        "tool_search": {"active": bool(tool_search.get("active")), "reason": str(tool_search.get("reason") or "")},
        "budget": dict(budget),
    }


def budget_json(rows: Sequence[Mapping[str, JSON]]) -> str:
    """`{"agents": [...], "total": {...}}`: the rows of `budget_row` by agent id, and their sums."""
    rows = sorted(rows, key=lambda row: str(row["agent"]))
    total: dict[str, JSON] = {"agents": len(rows)}
    for key in TOTAL_KEYS:
        total[key] = sum(int(b.get(key) or 0) for row in rows if isinstance(b := row["budget"], dict))
    document = {"agents": list(rows), "total": total}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def compile_rows(rows: Sequence[tuple[ResolvedAgent, Budget]]) -> list[dict[str, JSON]]:
    return [
        budget_row(r.agent.id, {"active": r.tool_search.active, "reason": r.tool_search.reason}, b.to_json())
        for r, b in rows
    ]


def _strict_json(definition: Mapping[str, Any]) -> dict[str, JSON]:
    """Whether `--emit openai` declares the tool `strict`, and why (`host_exports.StrictVerdict`)."""
    verdict = openai_strict_of(definition)
    return {
        "strict": verdict.strict,
        "why": verdict.reason or "; ".join(verdict.changes) or "fits strict mode as it is",
    }


def explain_json(resolved: ResolvedAgent, budget: Budget, tool: str | None = None) -> str:
    """`quiver explain --format json`: the agent, its tool-search decision, budget, and each tool's load
    decision with the rule and the file:line that made it (only `tool` when given)."""
    agent = resolved.agent
    tools: list[JSON] = []
    for item in resolved.tools:
        full = f"{item.server}/{item.tool.name}"
        if tool is not None and tool not in (full, item.tool.name):
            continue
        tools.append(
            {
                "server": item.server,
                "tool": item.tool.name,
                "load": item.load,
                "rule": item.decision.rule,
                "code": item.decision.code,
                "reason": item.decision.text,
                "source": str(item.decision.source) if item.decision.source else None,
                "openai_strict": _strict_json(item.tool.definition),
            }
        )
    document: dict[str, JSON] = {
        "agent": agent.id,
        "source": agent.path,
        "tool_search": {"active": resolved.tool_search.active, "reason": resolved.tool_search.reason},
        "budget": budget.to_json(),
        "builtins": [{"canonical": b.canonical, "source": str(b.location)} for b in resolved.builtins],
        "tools": tools,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
