"""Options and helpers shared by the click commands: project root, color, report output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

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
    import os

    if output is not None or os.environ.get("NO_COLOR"):
        return False
    forced = os.environ.get("FORCE_COLOR", "").strip().lower() not in ("", "0", "false")
    return forced or sys.stdout.isatty()


def root(project: Path) -> Path:
    if not project.is_dir():
        raise click.BadParameter(f"directory `{project}` does not exist", param_hint="--project")
    return project.resolve()


def report_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--format` and `--fail-on`, as lint and diff share them."""
    from quiver.report import FORMATS

    function = click.option(
        "--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="error", show_default=True
    )(function)
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)(function)


output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file (atomically) instead of stdout.",
)


def split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeatable options that also take comma lists: `--select AGT,MCP --select SEC`."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def host_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--host`: resolve every agent for this host (a what-if), instead of the one its file or the config names."""
    from quiver.hosts.model import HostId

    return click.option(
        "--host",
        type=click.Choice([h.value for h in HostId]),
        default=None,
        help="Resolve every agent for this host (a what-if), not the one its file or quiver.toml names.",
    )(func)
