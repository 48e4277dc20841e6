"""The budget table printed by `quiver compile` and `quiver budget`, and `quiver explain`'s text, each
also as JSON (`--format json`): one shape for both budget tables, sorted keys, a final newline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from quiver.compile import Budget, host_json
from quiver.host_exports import openai_strict_of
from quiver.model import JSON
from quiver.resolve import ResolvedAgent

TOTAL_KEYS = ("preloaded_tools", "deferred_tools", "initial_tokens", "baseline_tokens", "saving_tokens")

HEADERS = ("agent", "host", "search", "preloaded", "deferred", "tokens up front", "all preloaded", "saving")


class TableRow(NamedTuple):
    """One agent of the budget table: its id, host, the host's tool-search decision, and its budget."""

    agent: str
    host: str
    search: bool
    budget: Mapping[str, Any]


def rows_of(rows: Sequence[tuple[ResolvedAgent, Budget]]) -> list[TableRow]:
    return [TableRow(r.agent.id, r.host.id.value, r.tool_search.active, b.to_json()) for r, b in rows]


def manifest_rows(manifests: Sequence[Mapping[str, Any]]) -> list[TableRow]:
    """The table rows of compiled manifests (`quiver budget`)."""
    out = []
    for m in manifests:
        host: Mapping[str, Any] = m["host"] if isinstance(m.get("host"), dict) else {}
        search = (m.get("tool_search") or {}).get("active")
        out.append(TableRow(str(m["agent"]["id"]), str(host.get("id") or "-"), bool(search), m.get("budget") or {}))
    return out


def budget_table(rows: Sequence[TableRow]) -> str:
    """A plain, aligned table (one line per agent, sorted by id) with a total line: each agent's budget as
    its host loads its tools."""
    body = []
    for row in sorted(rows, key=lambda r: r.agent):
        b = row.budget
        base, initial = int(b.get("baseline_tokens") or 0), int(b.get("initial_tokens") or 0)
        pct = f"{(base - initial) / base:.0%}" if base else "-"
        body.append(
            (
                row.agent,
                row.host,
                "on" if row.search else "off",
                str(b.get("preloaded_tools", 0)),
                str(b.get("deferred_tools", 0)),
                f"{initial:,}",
                f"{base:,}",
                f"{base - initial:,} ({pct})",
            )
        )
    if len(rows) > 1:
        total_initial = sum(int(r.budget.get("initial_tokens") or 0) for r in rows)
        total_base = sum(int(r.budget.get("baseline_tokens") or 0) for r in rows)
        pct = f"{(total_base - total_initial) / total_base:.0%}" if total_base else "-"
        body.append(
            (
                f"total ({len(rows)} agents)",
                "",
                "",
                str(sum(int(r.budget.get("preloaded_tools") or 0) for r in rows)),
                str(sum(int(r.budget.get("deferred_tools") or 0) for r in rows)),
                f"{total_initial:,}",
                f"{total_base:,}",
                f"{total_base - total_initial:,} ({pct})",
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(HEADERS)]

    def line(cells: Sequence[str]) -> str:
        left = 2  # agent and host are left-aligned, numbers right-aligned
        parts = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(parts).rstrip()

    return "\n".join([line(HEADERS), line(["-" * w for w in widths]), *(line(r) for r in body)]) + "\n"


def explain(resolved: ResolvedAgent, budget: Budget, tool: str | None = None) -> str:
    """Why each tool is up front or deferred on the agent's host, with the rule, the host version it was
    measured on and the file:line that decided; then what quiver serve does with it."""
    agent = resolved.agent
    host = resolved.host
    out = []
    if tool is None:
        out.append(f"agent `{agent.id}` ({agent.path})")
        out.append(f"host: {host.label} ({resolved.host_reason}; rules {host.basis})")
        model = resolved.model or "the host's default"
        out.append(f"model: {model} ({resolved.model_source})")
        out.append(f"tool search: {'on' if resolved.tool_search.active else 'off'} ({resolved.tool_search.reason})")
        out.append(
            f"budget: {budget.initial_tokens:,} tokens up front, {budget.baseline_tokens:,} if all preloaded "
            f"({budget.saving_tokens:,} saved)"
        )
        split = resolved.split
        if split is not None and (split.builtins_up or split.builtins_deferred):
            out.append(f"  host tools up front: {', '.join(split.builtins_up) or '-'}")
            if split.builtins_deferred:
                out.append(f"  host tools deferred: {', '.join(split.builtins_deferred)}")
        for b in resolved.builtins:
            if b.kind == "disallowed":
                out.append(f"  removed    {b.ref:<40} `disallowedTools` ({b.location})")
            elif b.note:
                out.append(f"  not sent   {b.ref:<40} {b.note} ({b.location})")
            elif b.canonical != "*":
                sent = f" (sent as {', '.join(b.sent)})" if b.sent and b.sent != (b.canonical,) else ""
                out.append(f"  built-in   {b.ref:<40} the host's own tool{sent} ({b.location})")
    for item in resolved.tools:
        full = f"{item.server}/{item.tool.name}"
        if tool is not None and tool not in (full, item.tool.name):
            continue
        d = item.decision
        source = f" ({d.source})" if d.source else ""
        rule = f"{d.host}: {d.code}" if d.host else f"rule {d.rule}"
        out.append(f"  {item.load:<10} {full:<40} {rule}: {d.text}{source} [{d.basis or host.basis}]")
        if tool is not None:  # one tool asked about: also how the OpenAI export declares it
            out.append(f"  {'openai':<10} {full:<40} {openai_strict_of(item.tool.definition).explain()}")
    if tool is None and resolved.tools:
        gateway = resolved.gateway_search
        direct = sum(1 for t in resolved.tools if t.gateway_load == "preloaded")
        out.append(
            f"through quiver serve: {direct} exposed directly, {len(resolved.tools) - direct} behind its meta-tools"
            + (f" ({gateway.reason})" if gateway is not None else "")
        )
        out.append(f"  {host.behind_gateway()}")
    elif tool is not None:
        for item in resolved.tools:
            if tool in (f"{item.server}/{item.tool.name}", item.tool.name) and item.gateway_decision is not None:
                g = item.gateway_decision
                where = f" ({g.source})" if g.source else ""
                out.append(f"  gateway    {'direct' if item.gateway_load == 'preloaded' else 'behind meta-tools':<40} "
                           f"rule {g.rule}: {g.text}{where}")  # fmt: skip
    return "\n".join(out) + "\n"


def budget_row(
    agent: str, tool_search: Mapping[str, Any], budget: Mapping[str, Any], host: str = ""
) -> dict[str, JSON]:
    """One agent of the JSON budget table: id, host, the host's tool-search decision and reason, the budget."""
    return {
        "agent": agent,
        "host": host,
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
        budget_row(
            r.agent.id, {"active": r.tool_search.active, "reason": r.tool_search.reason}, b.to_json(), r.host.id.value
        )
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
        gateway = item.gateway_decision
        tools.append(
            {
                "server": item.server,
                "tool": item.tool.name,
                "load": item.load,
                "rule": item.decision.rule,
                "code": item.decision.code,
                "host": item.decision.host,
                "basis": item.decision.basis,
                "reason": item.decision.text,
                "source": str(item.decision.source) if item.decision.source else None,
                "gateway": {
                    "load": item.gateway_load,
                    "rule": gateway.rule if gateway else 0,
                    "code": gateway.code if gateway else "",
                    "reason": gateway.text if gateway else "",
                    "source": str(gateway.source) if gateway and gateway.source else None,
                },
                "openai_strict": _strict_json(item.tool.definition),
            }
        )
    document: dict[str, JSON] = {
        "agent": agent.id,
        "source": agent.path,
        "host": host_json(resolved),
        "tool_search": {"active": resolved.tool_search.active, "reason": resolved.tool_search.reason},
        "budget": budget.to_json(),
        "builtins": [
            {"canonical": b.canonical, "sent": list(b.sent), "note": b.note, "source": str(b.location)}
            for b in resolved.builtins
        ],
        "skills": [
            {"name": s.id, "source": s.path, "body": "up_front" if s in resolved.named_skills else "deferred"}
            for s in resolved.skills
        ],
        "tools": tools,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
