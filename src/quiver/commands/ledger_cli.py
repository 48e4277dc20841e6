"""`quiver ledger ...`: the click side of the ledger commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from quiver.commands._options import project_option
from quiver.commands._options import root as _root
from quiver.runtime.states import RESOLVED_STATES, LedgerState

if TYPE_CHECKING:
    from quiver.runtime.ledger_open import LedgerTarget

_LEDGER_STATES = click.Choice([state.value for state in LedgerState])
ledger_option = click.option(
    "--ledger", "ledger", default=None, metavar="PATH|URL",
    help="Ledger: a SQLite file or a postgresql:// URL (default: $QUIVER_LEDGER_URL, else `ledger` in config: "
         ".quiver/ledger.db).",
)  # fmt: skip
ledger_format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
ledger_state_filter = click.option(
    "--state", "states", multiple=True, type=_LEDGER_STATES, help="Only actions in this state (repeatable)."
)
ledger_tool_filter = click.option("--tool", "tools", multiple=True, help="Only `tool` or `server/tool` (repeatable).")
ledger_since_filter = click.option(
    "--since", default=None, help="Created at or after: an ISO date/time (UTC) or an age (30m, 24h, 7d, 2w)."
)


def _ledger_path(project: Path, ledger: str | None) -> Path | LedgerTarget:
    import os

    from quiver.commands.ledger import ledger_path

    return ledger_path(_root(project), ledger, os.environ)


@click.group("ledger")
def ledger_group() -> None:
    """Inspect the execution ledger; approve, deny or resolve actions."""


@ledger_group.command("list")
@project_option
@ledger_option
@ledger_state_filter
@ledger_tool_filter
@ledger_since_filter
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many actions.")
@ledger_format_option
def ledger_list_command(
    project: Path,
    ledger: str | None,
    states: tuple[str, ...],
    tools: tuple[str, ...],
    since: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """List actions, oldest first."""
    from quiver.commands.ledger import list_actions

    path = _ledger_path(project, ledger)
    click.echo(list_actions(path, states=states, tools=tools, since=since, limit=limit, fmt=fmt), nl=False)


@ledger_group.command("show")
@project_option
@ledger_option
@click.argument("action_id")
@ledger_format_option
def ledger_show_command(project: Path, ledger: str | None, action_id: str, fmt: str) -> None:
    """Show one action with its attempts and state changes."""
    from quiver.commands.ledger import show_action

    click.echo(show_action(_ledger_path(project, ledger), action_id, fmt=fmt), nl=False)


@ledger_group.command("approve")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--by", default=None, help="Who approves (default: the login name).")
@ledger_format_option
def ledger_approve_command(project: Path, ledger: str | None, action_id: str, by: str | None, fmt: str) -> None:
    """Approve an action awaiting approval; the caller's next call with its key runs it once."""
    from quiver.commands.ledger import approve

    click.echo(approve(_ledger_path(project, ledger), action_id, by=by, fmt=fmt), nl=False)


@ledger_group.command("deny")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--by", default=None, help="Who denies (default: the login name).")
@ledger_format_option
def ledger_deny_command(project: Path, ledger: str | None, action_id: str, by: str | None, fmt: str) -> None:
    """Deny an action awaiting approval: it ends failed_final without running."""
    from quiver.commands.ledger import deny

    click.echo(deny(_ledger_path(project, ledger), action_id, by=by, fmt=fmt), nl=False)


@ledger_group.command("resolve")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--state", "state", required=True, type=click.Choice([state.value for state in RESOLVED_STATES]),
              help="What the operator found: it took effect, or it did not.")  # fmt: skip
@click.option("--note", default=None, help="Why (kept in the ledger's event log).")
@click.option("--by", default=None, help="Who resolves (default: the login name).")
@ledger_format_option
def ledger_resolve_command(
    project: Path, ledger: str | None, action_id: str, state: str, note: str | None, by: str | None, fmt: str
) -> None:
    """Settle an unknown_outcome action after checking the target."""
    from quiver.commands.ledger import resolve

    path = _ledger_path(project, ledger)
    click.echo(resolve(path, action_id, state, note=note, by=by, fmt=fmt), nl=False)


@ledger_group.command("export")
@project_option
@ledger_option
@ledger_state_filter
@ledger_tool_filter
@ledger_since_filter
def ledger_export_command(
    project: Path, ledger: str | None, states: tuple[str, ...], tools: tuple[str, ...], since: str | None
) -> None:
    """Write matching actions, with attempts and events, as JSON lines to stdout."""
    from quiver.commands.ledger import export

    for line in export(_ledger_path(project, ledger), states=states, tools=tools, since=since):
        click.echo(line, nl=False)


@ledger_group.command("migrate")
@project_option
@ledger_option
def ledger_migrate_command(project: Path, ledger: str | None) -> None:
    """Create or upgrade the ledger's schema (a PostgreSQL ledger needs it before `quiver serve`)."""
    import os

    from quiver.runtime.ledger_open import migrate, resolve_ledger

    click.echo(migrate(resolve_ledger(_root(project), ledger, os.environ)))


@ledger_group.command("check")
@project_option
@ledger_option
def ledger_check_command(project: Path, ledger: str | None) -> None:
    """Verify the ledger file (SQLite's full integrity check); exit 1 when it is damaged. Writes nothing."""
    from quiver.commands.ledger import check_ledger

    text, code = check_ledger(_ledger_path(project, ledger))
    click.echo(text, nl=False)
    if code:
        raise SystemExit(code)


@ledger_group.command("doctor")
@project_option
@ledger_option
def ledger_doctor_command(project: Path, ledger: str | None) -> None:
    """Export every action a damaged SQLite ledger still holds, as `export`'s JSON lines; the file is opened
    read-only and never changed."""
    from quiver.commands.ledger import doctor

    lines, summary = doctor(_ledger_path(project, ledger))
    for line in lines:
        click.echo(line, nl=False)
    click.echo(summary(), err=True)
