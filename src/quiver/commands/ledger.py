"""`quiver ledger list|show|approve|deny|resolve|export`: read the execution ledger and settle actions.

The ledger is `--ledger PATH|URL`, else `QUIVER_LEDGER_URL`, else `ledger` in the project config
(default `.quiver/ledger.db`): a SQLite path (or `sqlite:///relative.db` / `sqlite:////absolute.db`;
relative paths are under the project root) or a PostgreSQL URL (`postgresql://...`, see
`quiver.runtime.ledger_open`; its schema comes from `quiver ledger migrate`). `--since` takes an ISO
date or time (UTC unless it says otherwise) or an age: `90s`, `30m`, `24h`, `7d`, `2w` (`quiver.since`, shared
with `quiver stats`).

approve / deny act on `awaiting_approval` actions: approve makes it `validated` (approved), and the
caller's next call with the same idempotency key dispatches it once; deny ends it `failed_final`.
resolve settles an `unknown_outcome` action as `succeeded` or `failed_final` after an operator checked
the target. Each returns the text to print; expected failures raise UsageError / InputError (exit 2).
"""

from __future__ import annotations

import getpass
import json
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

import anyio

from quiver.commands.outcome import Outcome
from quiver.errors import ConfigError, InputError, UsageError
from quiver.jsonout import pretty
from quiver.model import JSON
from quiver.runtime.ledger import (
    STATES,
    Action,
    ActionFilter,
    LedgerDamaged,
    LedgerError,
    LedgerStore,
    StateConflict,
    UnknownAction,
    canonical_json,
    iso_time,
)
from quiver.runtime.ledger_doctor import Salvage, check, salvage
from quiver.runtime.ledger_open import LedgerTarget, migrate, open_ledger, resolve_ledger
from quiver.runtime.states import RESOLVED_STATES
from quiver.since import parse_since

Ledger = Path | LedgerTarget  # a SQLite file, or any resolved ledger location
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerOptions:
    """What every ledger subcommand takes (`check`, `doctor` and `migrate` nothing more)."""

    root: Path
    ledger: str | None = None  # --ledger PATH|URL; None: QUIVER_LEDGER_URL, else `ledger` in config

    def where(self) -> Ledger:
        return ledger_path(self.root, self.ledger, os.environ)


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerExportOptions(LedgerOptions):
    states: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # `tool` or `server/tool`
    since: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerListOptions(LedgerExportOptions):
    limit: int | None = None
    fmt: str = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerActionOptions(LedgerOptions):
    """`show`, `approve` and `deny` (`by` is who approves or denies)."""

    action_id: str
    by: str | None = None
    fmt: str = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerResolveOptions(LedgerActionOptions):
    state: str  # succeeded or failed_final
    note: str | None = None


def run_list(o: LedgerListOptions) -> Outcome:
    return Outcome(list_actions(o.where(), states=o.states, tools=o.tools, since=o.since, limit=o.limit, fmt=o.fmt))


def run_show(o: LedgerActionOptions) -> Outcome:
    return Outcome(show_action(o.where(), o.action_id, fmt=o.fmt))


def run_approve(o: LedgerActionOptions) -> Outcome:
    return Outcome(approve(o.where(), o.action_id, by=o.by, fmt=o.fmt))


def run_deny(o: LedgerActionOptions) -> Outcome:
    return Outcome(deny(o.where(), o.action_id, by=o.by, fmt=o.fmt))


def run_resolve(o: LedgerResolveOptions) -> Outcome:
    return Outcome(resolve(o.where(), o.action_id, o.state, note=o.note, by=o.by, fmt=o.fmt))


def run_export(o: LedgerExportOptions) -> Outcome:
    return Outcome("".join(export(o.where(), states=o.states, tools=o.tools, since=o.since)))


def run_migrate(o: LedgerOptions) -> Outcome:
    return Outcome(migrate(resolve_ledger(o.root, o.ledger, os.environ)) + "\n")


def run_check(o: LedgerOptions) -> Outcome:
    text, code = check_ledger(o.where())
    return Outcome(text, code=code)


def run_doctor(o: LedgerOptions) -> Outcome:
    """The salvaged actions stream to stdout as they are read (the one ledger command that prints: a damaged
    ledger can be large); the summary follows on stderr."""
    import click

    lines, summary = doctor(o.where())
    for line in lines:
        click.echo(line, nl=False)
    return Outcome(notes=(summary(),))


def ledger_path(root: Path, ledger: str | None, environ: Mapping[str, str]) -> Ledger:
    """Where the ledger is: --ledger, else QUIVER_LEDGER_URL, else config `ledger`. A SQLite ledger is its
    file's Path; a PostgreSQL one a LedgerTarget."""
    try:
        target = resolve_ledger(root, ledger, environ)
    except ConfigError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    return target.path if target.kind == "sqlite" else target


def list_actions(
    path: Ledger, *, states: Sequence[str] = (), tools: Sequence[str] = (), since: str | None = None,
    limit: int | None = None, fmt: str = "text", now: float | None = None,
) -> str:  # fmt: skip
    filters = _filters(states, tools, since, limit, now)
    actions = _with_store(path, lambda store: store.list(filters))
    if fmt == "json":
        return pretty([action.to_json() for action in actions])
    rows = [("ID", "CREATED", "STATE", "TOOL", "ATTEMPTS", "KEY")]
    rows += [
        (a.id, iso_time(a.created_at), a.state, f"{a.server}/{a.tool}", str(a.attempts), _short(a.idempotency_key))
        for a in actions
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def show_action(path: Ledger, action_id: str, *, fmt: str = "text") -> str:
    async def read(store: LedgerStore) -> dict[str, JSON]:
        action = await store.get(action_id)
        return {
            "action": action.to_json(),
            "attempts": [attempt.to_json() for attempt in await store.attempts(action_id)],
            "events": [event.to_json() for event in await store.events(action_id)],
        }

    record = _with_store(path, read)
    if fmt == "json":
        return pretty(record)
    action = record["action"]
    lines = [f"{name}: {_cell(action[name])}" for name in action if name not in ("arguments", "policy", "result")]
    lines += [f"arguments: {canonical_json(action['arguments'])}", f"policy: {canonical_json(action['policy'])}"]
    if action["result"] is not None:
        lines.append(f"result: {canonical_json(action['result'])}")
    lines.append("attempt log:")
    lines += [
        f"  {a['number']}  {a['started_at']}  {a['duration_ms']} ms  {a['outcome']}"
        + (f"  {a['error_type']}: {a['error']}" if a["error_type"] else "")
        for a in record["attempts"]
    ] or ["  (none)"]
    lines.append("events:")
    lines += [
        f"  {e['seq']}  {e['at']}  {e['from'] or '-'} -> {e['to']}" + (f"  ({e['detail']})" if e["detail"] else "")
        for e in record["events"]
    ]
    return "\n".join(lines) + "\n"


def approve(path: Ledger, action_id: str, *, by: str | None = None, fmt: str = "text", now: float | None = None) -> str:
    ref = f"cli:{by or _user()}"
    action = _settle(
        path, action_id, "awaiting_approval", "validated", now, approval="approved", approval_ref=ref, owner=None
    )
    text = (
        f"approved action {action.id} (`{action.server}/{action.tool}`); it runs when called again with "
        f"idempotency key `{action.idempotency_key}`\n"
    )
    return pretty(action.to_json()) if fmt == "json" else text


def deny(path: Ledger, action_id: str, *, by: str | None = None, fmt: str = "text", now: float | None = None) -> str:
    ref = f"cli:{by or _user()}"
    action = _settle(
        path, action_id, "awaiting_approval", "failed_final", now, approval="declined", approval_ref=ref,
        error_type="approval_declined", error=f"denied by {ref}",
    )  # fmt: skip
    return pretty(action.to_json()) if fmt == "json" else f"denied action {action.id}: it is failed_final\n"


def resolve(
    path: Ledger, action_id: str, state: str, *, note: str | None = None, by: str | None = None, fmt: str = "text",
    now: float | None = None,
) -> str:  # fmt: skip
    if state not in RESOLVED_STATES:
        raise UsageError(f"--state must be {' or '.join(RESOLVED_STATES)}, not `{state}`")
    target: Literal["succeeded", "failed_final"] = "succeeded" if state == "succeeded" else "failed_final"
    who = f"cli:{by or _user()}"
    summary = f"resolved {state} by {who}" + (f": {note}" if note else "")
    current = _with_store(path, lambda store: store.get(action_id))
    text = f"`{current.server}/{current.tool}` {summary} (action {current.id})"
    result = {
        "content": [{"type": "text", "text": text}],
        "isError": state != "succeeded",
        "_meta": {"io.quiver/action": {"id": current.id, "state": state, "idempotency_key": current.idempotency_key}},
    }
    fields: dict[str, JSON] = {"result": canonical_json(result), "error_type": None, "error": None}
    if state == "failed_final":
        fields.update(error_type="resolved_by_operator", error=summary)
    action = _settle(path, action_id, "unknown_outcome", target, now, detail=summary, **fields)
    return pretty(action.to_json()) if fmt == "json" else f"action {action.id} is now {action.state}\n"


def export(
    path: Ledger, *, states: Sequence[str] = (), tools: Sequence[str] = (), since: str | None = None,
    now: float | None = None,
) -> Iterator[str]:  # fmt: skip
    """One JSON line per action: the record plus its attempts and events."""
    filters = _filters(states, tools, since, None, now)

    async def read(store: LedgerStore) -> list[str]:
        lines = []
        for action in await store.list(filters):
            record = action.to_json()
            record["attempts"] = [attempt.to_json() for attempt in await store.attempts(action.id)]
            record["events"] = [event.to_json() for event in await store.events(action.id)]
            lines.append(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        return lines

    yield from _with_store(path, read)


# --- helpers ------------------------------------------------------------------------------------------


def _filters(
    states: Sequence[str], tools: Sequence[str], since: str | None, limit: int | None, now: float | None
) -> ActionFilter:
    unknown = [state for state in states if state not in STATES]
    if unknown:
        raise UsageError(f"unknown state `{unknown[0]}`", hint=f"use one of {', '.join(STATES)}")
    moment = None if since is None else parse_since(since, now=time.time() if now is None else now)
    return ActionFilter(states=tuple(states), tools=tuple(tools), since=moment, limit=limit)


def _settle(
    path: Ledger, action_id: str, from_state: Literal["awaiting_approval", "unknown_outcome"],
    to_state: Literal["validated", "succeeded", "failed_final"], now: float | None, *, detail: str | None = None,
    **fields: JSON,
) -> Action:  # fmt: skip
    at = time.time() if now is None else now

    async def move(store: LedgerStore) -> Action:
        try:
            return await store.transition(action_id, (from_state,), to_state, at=at, detail=detail, **fields)
        except StateConflict as conflict:
            raise UsageError(
                f"action {action_id} is {conflict.action.state}, not {from_state}",
                hint="see `quiver ledger show ID`",
            ) from None

    return _with_store(path, move, write=True)


def _with_store(where: Ledger, work: Callable[[LedgerStore], Awaitable[_T]], *, write: bool = False) -> _T:
    """Run `work` on the ledger; a read (`write=False`) opens it read-only and never writes to it."""
    target = where if isinstance(where, LedgerTarget) else LedgerTarget("sqlite", str(where))
    if target.kind == "sqlite" and not target.path.exists():
        raise InputError(
            f"no ledger at {target.path}",
            hint="`quiver serve` creates it on the first call; or pass --ledger / QUIVER_LEDGER_URL",
        )

    async def run() -> _T:
        try:
            store = open_ledger(target, readonly=not write)
        except LedgerDamaged as exc:  # its message names the file and what to do
            raise InputError(str(exc)) from None
        except (LedgerError, sqlite3.DatabaseError) as exc:
            raise InputError(f"cannot open ledger {target.display()}: {exc}") from None
        try:
            return await work(store)
        except UnknownAction as exc:
            raise UsageError(str(exc), hint="see `quiver ledger list`") from None
        except LedgerError as exc:  # the database went away mid-command
            raise InputError(f"ledger {target.display()}: {exc}") from None
        finally:
            store.close()

    return anyio.run(run)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _short(key: str) -> str:
    return key if len(key) <= 32 else key[:31] + "…"


def _cell(value: JSON) -> str:
    return "-" if value is None or value == "" else str(value)


def check_ledger(path: Ledger) -> tuple[str, int]:
    """`quiver ledger check`: (text, exit code): 0 sound, 1 damaged; not a ledger is an InputError (2)."""
    if isinstance(path, LedgerTarget):
        version = _with_store(path, _schema_version)
        return f"ledger {path.display()}: reachable, schema version {version} (PostgreSQL checks its own pages)\n", 0

    try:
        report = check(path)
    except LedgerError as exc:
        raise InputError(str(exc)) from None
    if not report.problems:
        return (
            f"ledger {path}: ok (integrity_check), schema version {report.schema_version}, "
            f"{report.actions} action(s)\n",
            0,
        )
    lines = [f"ledger {path} is damaged: SQLite's integrity_check found {len(report.problems)} problem(s):"]
    lines += [f"  {problem}" for problem in report.problems]
    lines.append(f"export what can be read: quiver ledger doctor --ledger {path} > salvaged.jsonl")
    return "\n".join(lines) + "\n", 1


async def _schema_version(store: LedgerStore) -> int:
    version = getattr(store, "schema_version", None)
    return int(version()) if callable(version) else 0


def doctor(path: Ledger) -> tuple[Iterator[str], Callable[[], str]]:
    """`quiver ledger doctor`: the JSON lines `export` writes, for every action a damaged SQLite ledger still
    holds, and a function giving the summary line once they are consumed. The file is opened read-only."""
    if isinstance(path, LedgerTarget):
        raise UsageError(
            "`quiver ledger doctor` reads a SQLite file", hint="a PostgreSQL ledger is read with `quiver ledger export`"
        )

    tally = Salvage()

    def lines() -> Iterator[str]:
        try:
            for action, attempts, events in salvage(path, tally):
                try:
                    record = action.to_json()
                except (ValueError, TypeError):  # arguments, policy or result not JSON any more
                    record = {"id": action.id, "idempotency_key": action.idempotency_key, "state": action.state,
                              "server": action.server, "tool": action.tool, "unreadable_fields": True}  # fmt: skip
                record["attempts"] = None if attempts is None else [a.to_json() for a in attempts]
                record["events"] = None if events is None else [e.to_json() for e in events]
                yield json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
        except LedgerError as exc:
            raise InputError(str(exc)) from None

    def summary() -> str:
        return (
            f"ledger doctor: {tally.actions} action(s) read from {path}, {tally.skipped} unreadable part(s) "
            "skipped; the file was not changed"
        )

    return lines(), summary
