"""`quiver ledger ...`: the click side of the ledger commands."""

from __future__ import annotations

from pathlib import Path

import click

from quiver.commands._options import format_option, project_option
from quiver.commands._options import root as _root
from quiver.commands.outcome import render
from quiver.runtime.states import RESOLVED_STATES, LedgerState

_LEDGER_STATES = click.Choice([state.value for state in LedgerState])
ledger_option = click.option(
    "--ledger", "ledger", default=None, metavar="PATH|URL",
    help="Ledger: a SQLite file or a postgresql:// URL (default: $QUIVER_LEDGER_URL, else `ledger` in config: "
         ".quiver/ledger.db).",
)  # fmt: skip
ledger_state_filter = click.option(
    "--state", "states", multiple=True, type=_LEDGER_STATES, help="Only actions in this state (repeatable)."
)
ledger_tool_filter = click.option("--tool", "tools", multiple=True, help="Only `tool` or `server/tool` (repeatable).")
ledger_since_filter = click.option(
    "--since", default=None, help="Created at or after: an ISO date/time (UTC) or an age (30m, 24h, 7d, 2w)."
)


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
@format_option
def ledger_list_command(
    project: Path,
    ledger: str | None,
    states: tuple[str, ...],
    tools: tuple[str, ...],
    since: str | None,
    limit: int | None,
    fmt: str,
) -> int:
    """List actions, oldest first."""
    from quiver.commands.ledger import LedgerListOptions, run_list

    options = LedgerListOptions(
        root=_root(project), ledger=ledger, states=states, tools=tools, since=since, limit=limit, fmt=fmt
    )
    return render(run_list(options))


@ledger_group.command("show")
@project_option
@ledger_option
@click.argument("action_id")
@format_option
def ledger_show_command(project: Path, ledger: str | None, action_id: str, fmt: str) -> int:
    """Show one action with its attempts and state changes."""
    from quiver.commands.ledger import LedgerActionOptions, run_show

    return render(run_show(LedgerActionOptions(root=_root(project), ledger=ledger, action_id=action_id, fmt=fmt)))


@ledger_group.command("approve")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--by", default=None, help="Who approves (default: the login name).")
@format_option
def ledger_approve_command(project: Path, ledger: str | None, action_id: str, by: str | None, fmt: str) -> int:
    """Approve an action awaiting approval; the caller's next call with its key runs it once."""
    from quiver.commands.ledger import LedgerActionOptions, run_approve

    options = LedgerActionOptions(root=_root(project), ledger=ledger, action_id=action_id, by=by, fmt=fmt)
    return render(run_approve(options))


@ledger_group.command("deny")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--by", default=None, help="Who denies (default: the login name).")
@format_option
def ledger_deny_command(project: Path, ledger: str | None, action_id: str, by: str | None, fmt: str) -> int:
    """Deny an action awaiting approval: it ends failed_final without running."""
    from quiver.commands.ledger import LedgerActionOptions, run_deny

    options = LedgerActionOptions(root=_root(project), ledger=ledger, action_id=action_id, by=by, fmt=fmt)
    return render(run_deny(options))


@ledger_group.command("resolve")
@project_option
@ledger_option
@click.argument("action_id")
@click.option("--state", "state", required=True, type=click.Choice([state.value for state in RESOLVED_STATES]),
              help="What the operator found: it took effect, or it did not.")  # fmt: skip
@click.option("--note", default=None, help="Why (kept in the ledger's event log).")
@click.option("--by", default=None, help="Who resolves (default: the login name).")
@format_option
def ledger_resolve_command(
    project: Path, ledger: str | None, action_id: str, state: str, note: str | None, by: str | None, fmt: str
) -> int:
    """Settle an unknown_outcome action after checking the target."""
    from quiver.commands.ledger import LedgerResolveOptions, run_resolve

    options = LedgerResolveOptions(
        root=_root(project), ledger=ledger, action_id=action_id, state=state, note=note, by=by, fmt=fmt
    )
    return render(run_resolve(options))


@ledger_group.command("export")
@project_option
@ledger_option
@ledger_state_filter
@ledger_tool_filter
@ledger_since_filter
def ledger_export_command(
    project: Path, ledger: str | None, states: tuple[str, ...], tools: tuple[str, ...], since: str | None
) -> int:
    """Write matching actions, with attempts and events, as JSON lines to stdout."""
    from quiver.commands.ledger import LedgerExportOptions, run_export

    options = LedgerExportOptions(root=_root(project), ledger=ledger, states=states, tools=tools, since=since)
    return render(run_export(options))


@ledger_group.command("migrate")
@project_option
@ledger_option
def ledger_migrate_command(project: Path, ledger: str | None) -> int:
    """Create or upgrade the ledger's schema (a PostgreSQL ledger needs it before `quiver serve`)."""
    from quiver.commands.ledger import LedgerOptions, run_migrate

    return render(run_migrate(LedgerOptions(root=_root(project), ledger=ledger)))


@ledger_group.command("check")
@project_option
@ledger_option
def ledger_check_command(project: Path, ledger: str | None) -> int:
    """Verify the ledger file (SQLite's full integrity check); exit 1 when it is damaged. Writes nothing."""
    from quiver.commands.ledger import LedgerOptions, run_check

    return render(run_check(LedgerOptions(root=_root(project), ledger=ledger)))


@ledger_group.command("doctor")
@project_option
@ledger_option
def ledger_doctor_command(project: Path, ledger: str | None) -> int:
    """Export every action a damaged SQLite ledger still holds, as `export`'s JSON lines; the file is opened
    read-only and never changed."""
    from quiver.commands.ledger import LedgerOptions, run_doctor

    return render(run_doctor(LedgerOptions(root=_root(project), ledger=ledger)))
