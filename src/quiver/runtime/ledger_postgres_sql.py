"""The PostgreSQL ledger's statements: the action columns, the one-statement transition (lock, move,
event, attempt), the attempt upsert, the lease lengths, and the row and text conversions."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Final

from quiver.model import JSON
from quiver.runtime.ledger import MUTABLE_FIELDS, Action, Attempt, State

IN_FLIGHT: Final[tuple[State, ...]] = ("proposed", "validated", "dispatching", "failed_retryable")

_ACTION_COLUMNS: Final = tuple(field.name for field in dataclasses.fields(Action))
_COLUMNS = ", ".join(_ACTION_COLUMNS)
_SELECT = f"SELECT {_COLUMNS} FROM quiver_actions"


def lease_seconds(action: Action, margin_s: float) -> tuple[float, float]:
    """(dispatch, backoff): how long a live executor may hold `action` in `dispatching` (its timeout plus
    the executor's grace; also used for `proposed` and `validated`, which it leaves at once) and in
    `failed_retryable` (the longest backoff wait), each plus the margin."""
    from quiver.runtime._exec_policy import DISPATCH_GRACE_S, ExecPolicy

    try:
        policy = ExecPolicy.from_mapping(action.policy_value())
    except (ValueError, TypeError, AttributeError):
        return margin_s, margin_s  # a malformed policy ends failed_final at once
    return policy.timeout_s + DISPATCH_GRACE_S + margin_s, policy.retry.cap + margin_s


_ATTEMPT_COLUMNS = tuple(field.name for field in dataclasses.fields(Attempt))
_ATTEMPT_VALUES = ", ".join(f"%(a_{column})s" for column in _ATTEMPT_COLUMNS)
# an attempt written `in_flight` before dispatch gets its ending (the start stays)
_ATTEMPT_UPSERT = " ON CONFLICT (action_id, number) DO UPDATE SET " + ", ".join(
    f"{column} = EXCLUDED.{column}" for column in ("ended_at", "outcome", "error_type", "error")
)
_INSERT_ATTEMPT = (
    f"INSERT INTO quiver_attempts ({', '.join(_ATTEMPT_COLUMNS)}) VALUES ({_ATTEMPT_VALUES}){_ATTEMPT_UPSERT}"
)
_ATTEMPT_CTE = (
    f", att AS (INSERT INTO quiver_attempts ({', '.join(_ATTEMPT_COLUMNS)}) SELECT {_ATTEMPT_VALUES} FROM upd"
    f"{_ATTEMPT_UPSERT})"
)


def _transition_statement(
    action_id: str,
    from_states: Sequence[State],
    to_state: State,
    *,
    at: float,
    detail: str | None,
    attempt: Attempt | None,
    fields: Mapping[str, JSON],
) -> tuple[str, dict[str, JSON]]:
    """One statement: lock the row, move it if it is in `from_states`, append the event (and attempt).
    Its one row is (moved, *the row after the move*) or (False, *the row as it is*); none: no such id.
    `fields` must have passed `check_fields` (their names are written into the SQL)."""
    names = tuple(sorted(fields))
    lease = "backoff" if to_state == "failed_retryable" else "dispatch" if to_state in IN_FLIGHT else "none"
    params: dict[str, JSON] = {
        "id": action_id,
        "from_states": list(from_states),
        "to_state": to_state,
        "at": at,
        "detail": _clean(detail),
        **{f"f_{name}": _clean(fields[name]) for name in names},
    }
    if attempt is not None:
        params.update(_attempt_params(attempt))
    return _transition_sql(names, lease, attempt is not None), params


@functools.lru_cache(maxsize=256)
def _transition_sql(names: tuple[str, ...], lease: str, with_attempt: bool) -> str:
    assert set(names) <= MUTABLE_FIELDS
    expires = {"backoff": "%(at)s + a.backoff_lease_s", "dispatch": "%(at)s + a.lease_s", "none": "NULL"}[lease]
    sets = ", ".join(
        [
            "state = %(to_state)s, updated_at = %(at)s, event_count = a.event_count + 1",
            f"lease_expires_at = {expires}",
            *(f"{name} = %(f_{name})s" for name in names),
        ]
    )
    return (
        f"WITH cur AS ({_SELECT} WHERE id = %(id)s FOR UPDATE),"
        f" upd AS (UPDATE quiver_actions AS a SET {sets} FROM cur"
        " WHERE a.id = cur.id AND cur.state = ANY(%(from_states)s)"
        f" RETURNING {', '.join(f'a.{column}' for column in _ACTION_COLUMNS)}, a.event_count),"
        " ev AS (INSERT INTO quiver_events (action_id, seq, at, from_state, to_state, detail)"
        " SELECT upd.id, upd.event_count, %(at)s, cur.state, %(to_state)s, %(detail)s FROM upd, cur)"
        f"{_ATTEMPT_CTE if with_attempt else ''}"
        f" SELECT true, {', '.join(f'upd.{column}' for column in _ACTION_COLUMNS)} FROM upd"
        f" UNION ALL SELECT false, {', '.join(f'cur.{column}' for column in _ACTION_COLUMNS)} FROM cur"
        " WHERE NOT EXISTS (SELECT 1 FROM upd)"
    )


def _attempt_params(attempt: Attempt) -> dict[str, JSON]:
    return {f"a_{field.name}": _clean(getattr(attempt, field.name)) for field in dataclasses.fields(Attempt)}


def _clean(value: JSON) -> JSON:
    """PostgreSQL text cannot hold NUL: replace it (only free text reaches here; ids and keys are checked)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _check_identity(value: str, what: str) -> None:
    if "\x00" in value:
        raise ValueError(f"the {what} contains a NUL character, which the PostgreSQL ledger cannot store")


def _action(row: Sequence[JSON]) -> Action:
    return Action(*row)
