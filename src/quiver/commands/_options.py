"""Options and helpers shared by the click commands, each declared once: project root, `--format`, report
output, rule selection, baselines, `--changed-only`, `--lexical`, `--since`, `--host`; color."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

project_option = click.option(
    "--project",
    "-C",
    "project",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Project root (where .github/, .mcp.json and quiver.lock.json live).",
)


def color(output: Path | None) -> bool:
    """Color on a terminal; NO_COLOR turns it off, FORCE_COLOR on (https://no-color.org); FORCE_COLOR empty,
    `0` or `false` forces nothing (as Node's supports-color reads it), so the terminal decides."""

    if output is not None or os.environ.get("NO_COLOR"):
        return False
    forced = os.environ.get("FORCE_COLOR", "").strip().lower() not in ("", "0", "false")
    return forced or sys.stdout.isatty()


def root(project: Path) -> Path:
    if not project.is_dir():
        raise click.BadParameter(f"directory `{project}` does not exist", param_hint="--project")
    return project.resolve()


def _format_option(formats: Sequence[str]) -> Decorator:
    return click.option("--format", "fmt", type=click.Choice(formats), default="text", show_default=True)


format_option = _format_option(["text", "json"])  # every command with a report but lint and diff


def report_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--format` (every report format) and `--fail-on`, as lint and diff share them."""
    from quiver.report import FORMATS

    function = click.option(
        "--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="error", show_default=True
    )(function)
    return _format_option(FORMATS)(function)


output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file (atomically) instead of stdout.",
)


def selection_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--select` and `--ignore`: rules to check or skip; repeatable, each also a comma list (`split`)."""
    for name, verb in (("ignore", "skip"), ("select", "check")):
        text = f"Rule ids, prefixes or names to {verb} (repeatable, or comma list)."
        function = click.option(f"--{name}", name, multiple=True, help=text)(function)
    return function


def split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeatable options that also take comma lists: `--select AGT,MCP --select SEC`."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def baseline_options(use: str, written: str) -> Decorator:
    """`--baseline FILE` (what the command does with it: `use`) and `--update-baseline` (writes `written`)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        update = click.option("--update-baseline", is_flag=True, help=f"Write {written} to --baseline and exit 0.")
        file = click.Path(dir_okay=False, path_type=Path)
        return click.option("--baseline", type=file, default=None, help=use)(update(function))

    return decorate


def changed_only_option(what: str) -> Decorator:
    """`--changed-only`: only what is on lines changed against a base (`what` says which base, and what)."""
    return click.option("--changed-only", is_flag=True, help=what)


lexical_option = click.option(
    "--lexical",
    is_flag=True,
    help='Rank by words alone, without the embedding model (as `search = "lexical"` in config).',
)
sessions_since_option = click.option(
    "--since", default=None, help="Only sessions started since a duration ago (90s, 30m, 12h, 7d, 2w) or an ISO date."
)


def host_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--host`: resolve every agent for this host (a what-if), instead of the one its file or the config names."""
    from quiver.host_ids import HostId

    return click.option(
        "--host",
        type=click.Choice([h.value for h in HostId]),
        default=None,
        help="Resolve every agent for this host (a what-if), not the one its file or quiver.toml names.",
    )(func)
