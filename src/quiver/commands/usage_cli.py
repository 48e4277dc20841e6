"""`quiver stats`, `quiver advise`, `quiver budget`: the click side of the usage commands."""

from __future__ import annotations

from pathlib import Path

import click

from quiver.commands._options import format_option, host_option, project_option, sessions_since_option
from quiver.commands._options import root as _root
from quiver.commands.outcome import render


@click.command("stats")
@project_option
@sessions_since_option
@format_option
def stats_command(project: Path, since: str | None, fmt: str) -> int:
    """Figures of the recorded gateway sessions (.quiver/usage/), per agent and per tool."""
    from quiver.commands.stats import StatsOptions, run

    return render(run(StatsOptions(root=_root(project), since=since, fmt=fmt)))


@click.command("advise")
@project_option
@click.option(
    "--shadow",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help='Advise from a JSON-lines log of calls made without quiver: {"session", "tool": "server/tool", "timestamp"}.',
)
@click.option("--agent", default=None, help="Advise only this agent (with --shadow: the agent that made the calls).")
@sessions_since_option
@click.option("--min-sessions", type=click.IntRange(min=1), default=10, show_default=True, help="Fewer: no advice.")
@click.option(
    "--patch",
    "patch_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the config change to this file (atomically) as a patch for `git apply` or `patch -p1`.",
)
@format_option
def advise_command(
    project: Path,
    shadow: Path | None,
    agent: str | None,
    since: str | None,
    min_sessions: int,
    patch_out: Path | None,
    fmt: str,
) -> int:
    """Which tools each agent should preload or defer, from recorded use, and the config change as a patch."""
    from quiver.commands.advise import AdviseOptions, run

    options = AdviseOptions(
        root=_root(project),
        shadow=shadow,
        fmt=fmt,
        patch_out=patch_out,
        agent=agent,
        since=since,
        min_sessions=min_sessions,
    )
    return render(run(options))


@click.command("budget")
@project_option
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a self-contained HTML report (charts, largest schemas, advice) to this file.",
)
@format_option
@host_option
def budget_command(project: Path, html_out: Path | None, fmt: str, host: str | None) -> int:
    """The compiled manifests' token budget per agent; --html writes a report to look at."""
    from quiver.commands.budget import BudgetOptions, run

    return render(run(BudgetOptions(root=_root(project), html_out=html_out, fmt=fmt, host=host)))
