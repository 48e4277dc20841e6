"""`quiver budget [--html FILE]`: the compiled manifests' token budget, and a self-contained HTML report.

The report adds the advice of `quiver advise` when usage was recorded under `.quiver/usage/`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quiver.commands.stats import Output, load_usage
from quiver.errors import QuiverError

HEADERS = ("agent", "search", "preloaded", "deferred", "tokens up front", "all preloaded", "saving")


def run(root: Path, html_out: Path | None, fmt: str = "text") -> Output:
    from quiver.commands.advise import load_manifests

    manifests = load_manifests(root)
    messages: list[str] = []
    if html_out is not None:
        from quiver.report.html import render_html
        from quiver.sources.files import write_output

        advice, usage, patch, notes = _advice(root, manifests)
        messages += notes
        write_output(html_out, render_html(manifests, advice=advice, usage=usage, patch=patch), root=root)
        messages.append(f"wrote {html_out}")
    if fmt == "json":
        from quiver.report.budget import budget_json, budget_row

        rows = [budget_row(str(m["agent"]["id"]), m.get("tool_search") or {}, m.get("budget") or {}) for m in manifests]
        return Output(budget_json(rows), tuple(messages))
    return Output(budget_text(manifests), tuple(messages))


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
    rows = []
    for m in manifests:
        b = m.get("budget") or {}
        base = int(b.get("baseline_tokens") or 0)
        saving = int(b.get("saving_tokens") or 0)
        rows.append(
            (
                str(m["agent"]["id"]),
                "on" if (m.get("tool_search") or {}).get("active") else "off",
                str(b.get("preloaded_tools", 0)),
                str(b.get("deferred_tools", 0)),
                f"{int(b.get('initial_tokens') or 0):,}",
                f"{base:,}",
                f"{saving:,} ({saving / base:.0%})" if base else "0",
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(HEADERS), line(["-" * w for w in widths]), *(line(r) for r in rows)]) + "\n"
