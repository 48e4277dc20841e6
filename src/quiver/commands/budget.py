"""`quiver budget [--html FILE]`: the compiled manifests' token budget, and a self-contained HTML report.

The report adds the advice of `quiver advise` when usage was recorded under `.quiver/usage/`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quiver.commands.outcome import Outcome
from quiver.commands.stats import load_usage
from quiver.errors import QuiverError


@dataclass(frozen=True, slots=True)
class BudgetOptions:
    root: Path
    html_out: Path | None = None  # also write the HTML report to this file
    fmt: str = "text"
    host: str | None = None  # the budget `quiver compile --host HOST` would write (nothing is written)


def run(options: BudgetOptions) -> Outcome:
    from quiver.commands.advise import load_manifests

    root, html_out, host = options.root, options.html_out, options.host
    manifests = what_if(root, host) if host else load_manifests(root)
    messages: list[str] = []
    if html_out is not None:
        from quiver.report.html import render_html
        from quiver.sources.files import write_output

        advice, usage, patch, notes = _advice(root, manifests)
        messages += notes
        write_output(html_out, render_html(manifests, advice=advice, usage=usage, patch=patch), root=root)
        messages.append(f"wrote {html_out}")
    if options.fmt == "json":
        from quiver.report.budget import budget_json, budget_row

        rows = [
            budget_row(
                str(m["agent"]["id"]),
                m.get("tool_search") or {},
                m.get("budget") or {},
                str((m.get("host") or {}).get("id") or ""),
            )
            for m in manifests
        ]
        return Outcome(budget_json(rows), tuple(messages))
    return Outcome(budget_text(manifests), tuple(messages))


def what_if(root: Path, host: str) -> list[dict[str, Any]]:
    """The manifests `quiver compile --host HOST` would write, built in memory (nothing is written)."""

    from quiver.commands.compile import build
    from quiver.errors import InputErrors

    result = build(root, host=host)
    if result.errors:
        raise InputErrors(tuple(result.errors))
    return [json.loads(data) for rel, data in sorted(result.outputs.items()) if _is_manifest(rel)]


def _is_manifest(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name != "index.json" and name.count(".") == 1


def _advice(root: Path, manifests: Sequence[Mapping[str, Any]]) -> tuple[Any, Any, str, list[str]]:
    """Advice for the report when usage exists; a problem with it is a warning, never a failed report."""
    from quiver.advise import advise, manifest_view
    from quiver.commands.advise import patch_for, server_settings

    usage, messages = load_usage(root, None)
    if not usage.sessions:
        return None, None, "", list(messages)
    views = [manifest_view(m) for m in manifests]
    settings, notes = server_settings(root, views)
    advice = advise(usage, views, settings)
    try:
        patch = patch_for(root, advice)
    except QuiverError as exc:
        return advice, usage, "", [*messages, *notes, f"warning: no patch in the report: {exc.one_line()}"]
    return advice, usage, patch, [*messages, *notes]


def budget_text(manifests: Sequence[Mapping[str, Any]]) -> str:
    from quiver.report.budget import budget_table, manifest_rows

    return budget_table(manifest_rows(manifests))
