"""The execution ledger: action records, the 8-state machine, and the store interface (DESIGN §7).

An *action* is one tool call the executor accepted. Its record is written **before** dispatch and
every change of state is checked against `TRANSITIONS` and appended to an event log, so a crash at any
point leaves a record that says how far the action got.

    proposed ──> validated ──> dispatching ──> succeeded
       │            │  ▲            │  ▲   └──> failed_final
       │            │  │            │  │   └──> unknown_outcome ──> succeeded | failed_final
       │            ▼  │            ▼  │
       │     awaiting_approval   failed_retryable ──> failed_final | unknown_outcome
       └──────────> failed_final (from proposed, validated, awaiting_approval)

`succeeded` and `failed_final` are terminal. `unknown_outcome` leaves only through a reconcile tool or
an operator (`quiver ledger resolve`); nothing re-sends it.

Action ids are ULID-like: 26 characters of Crockford base32, a 48-bit millisecond timestamp then 80
random bits, so ids sort by creation time (in lists, exports and SQL) and never collide in practice.

Timestamps are seconds since the epoch (floats) taken from the executor's injected clock; the store
never reads a clock. Arguments are stored as canonical JSON (sorted keys, no spaces, UTF-8 kept) with
its sha256, which is what "same arguments" means for an idempotency key.

The store interface is deliberately small, and two stores implement the `LedgerStore` protocol:
`quiver.runtime.ledger_sqlite.SqliteLedger` (the default, one file) and
`quiver.runtime.ledger_postgres.PostgresLedger` (one database shared by several gateway replicas);
`quiver.runtime.ledger_open` picks one from a path or URL.
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Literal, Protocol, get_args

from quiver.model import JSON
from quiver.runtime.states import LedgerState

# `LedgerState` for the type checker: mypy checks the state names the code writes against it (a test keeps
# the two lists equal)
State = Literal[
    "proposed",
    "validated",
    "awaiting_approval",
    "dispatching",
    "succeeded",
    "failed_retryable",
    "failed_final",
    "unknown_outcome",
]
STATES: tuple[State, ...] = tuple(state.value for state in LedgerState)  # mypy: each value is a State
TERMINAL: frozenset[State] = frozenset({"succeeded", "failed_final"})
Approval = Literal["pending", "approved", "declined"]

TRANSITIONS: Mapping[State, frozenset[State]] = MappingProxyType(
    {
        "proposed": frozenset({"validated", "failed_final"}),
        "validated": frozenset({"awaiting_approval", "dispatching", "failed_final"}),
        "awaiting_approval": frozenset({"validated", "failed_final"}),
        "dispatching": frozenset({"succeeded", "failed_retryable", "failed_final", "unknown_outcome"}),
        "failed_retryable": frozenset({"dispatching", "failed_final", "unknown_outcome"}),
        "unknown_outcome": frozenset({"succeeded", "failed_final"}),
        "succeeded": frozenset(),
        "failed_final": frozenset(),
    }
)
# Fields a transition may set besides the state (the columns that change after creation).
MUTABLE_FIELDS = frozenset({"attempts", "approval", "approval_ref", "result", "error_type", "error", "owner"})
MAX_ERROR_CHARS = 2000
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)  # every 10-bit value as 2 characters


class LedgerError(Exception):
    """Base of the ledger's errors."""


class InvalidTransition(LedgerError):
    """A transition the state machine does not allow: a bug in the caller, never a race."""

    def __init__(self, from_state: str, to_state: str) -> None:
        super().__init__(f"invalid ledger transition {from_state} -> {to_state}")
        self.from_state = from_state
        self.to_state = to_state


class StateConflict(LedgerError):
    """The action is no longer in any of the expected states (another executor moved it first)."""

    def __init__(self, action: Action, expected: Sequence[str]) -> None:
        super().__init__(f"action {action.id} is {action.state}, not {' or '.join(expected)}")
        self.action = action


class UnknownAction(LedgerError):
    """No action has this id."""

    def __init__(self, action_id: str) -> None:
        super().__init__(f"no action with id `{action_id}`")
        self.action_id = action_id


class SchemaVersionError(LedgerError):
    """The ledger file was written by a newer quiver."""


class LedgerUnavailable(LedgerError):
    """The store cannot be written or read right now: the database cannot be reached (or the connection broke
    mid-call), the disk is full, an I/O error, a lock held past the busy timeout. Nothing of the operation
    was recorded, so it may be tried again (the gateway answers with `LEDGER_UNAVAILABLE`)."""


class LedgerDamaged(LedgerError):
    """The ledger file is not a quiver ledger, or SQLite found it damaged: refused at open, never used."""


@dataclass(frozen=True, slots=True)
class Action:
    """One action record (DESIGN §7)."""

    id: str
    idempotency_key: str  # the caller's key, else the action id; sent upstream on every attempt
    session_id: str
    requester: str
    call_id: str | None
    server: str
    tool: str
    tool_sha256: str
    arguments: str  # canonical JSON
    args_sha256: str
    side_effect: str
    policy: str  # canonical JSON of the policy the action ran under
    state: State
    created_at: float
    updated_at: float
    attempts: int = 0
    approval: Approval | None = None
    approval_ref: str | None = None
    result: str | None = None  # JSON of the CallToolResult returned (and replayed for the key)
    error_type: str | None = None
    error: str | None = None
    owner: str | None = None  # executor instance that last moved it: "host/pid/token"

    def arguments_value(self) -> dict[str, JSON]:
        value: dict[str, JSON] = json.loads(self.arguments)
        return value

    def policy_value(self) -> dict[str, JSON]:
        value: dict[str, JSON] = json.loads(self.policy)
        return value

    def result_value(self) -> dict[str, JSON] | None:
        if self.result is None:
            return None
        value: dict[str, JSON] = json.loads(self.result)
        return value

    def to_json(self) -> dict[str, JSON]:
        """The record as JSON (CLI `--format json`, export): parsed arguments, policy and result; ISO times."""
        return {
            "id": self.id,
            "idempotency_key": self.idempotency_key,
            "session_id": self.session_id,
            "requester": self.requester,
            "call_id": self.call_id,
            "server": self.server,
            "tool": self.tool,
            "tool_sha256": self.tool_sha256,
            "arguments": self.arguments_value(),
            "args_sha256": self.args_sha256,
            "side_effect": self.side_effect,
            "policy": self.policy_value(),
            "state": self.state,
            "attempts": self.attempts,
            "approval": self.approval,
            "approval_ref": self.approval_ref,
            "result": self.result_value(),
            "error_type": self.error_type,
            "error": self.error,
            "owner": self.owner,
            "created_at": iso_time(self.created_at),
            "updated_at": iso_time(self.updated_at),
        }


AttemptOutcome = Literal["in_flight", "ok", "tool_error", "error"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One dispatch attempt: timing and how it ended (`ok`, `tool_error`, or `error` with its class).

    The executor writes it `in_flight` (with `ended_at == started_at`) in the same transaction that
    moves the action to `dispatching`, before anything is sent, and rewrites it when the attempt ends:
    a gateway killed mid-call leaves the `in_flight` row behind."""

    action_id: str
    number: int
    started_at: float
    ended_at: float
    outcome: AttemptOutcome
    error_type: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, JSON]:
        in_flight = self.outcome == "in_flight"
        return {
            "number": self.number,
            "started_at": iso_time(self.started_at),
            "duration_ms": None if in_flight else round((self.ended_at - self.started_at) * 1000, 3),
            "outcome": self.outcome,
            "error_type": self.error_type,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class Event:
    """One appended state change; `from_state` is None for the creation event."""

    action_id: str
    seq: int
    at: float
    from_state: State | None
    to_state: State
    detail: str | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "seq": self.seq,
            "at": iso_time(self.at),
            "from": self.from_state,
            "to": self.to_state,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class ActionFilter:
    """`list` filters; empty tuples match everything. `tools` entries are `tool` or `server/tool`."""

    states: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    since: float | None = None  # created at or after
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Recovered:
    """What recovery did to one orphaned action."""

    action: Action
    from_state: State


class LedgerStore(Protocol):
    """Durable storage of actions. Every method is one short transaction; all are multi-process safe."""

    async def create_action(
        self, action: Action, *, then: Sequence[State] = (), attempt: Attempt | None = None
    ) -> tuple[Action, bool]:
        """Insert `action` (state `proposed`) and its creation event; atomic claim of its idempotency key.

        With `then`, the new action moves on through those states in the same transaction (one event
        each, every step checked: `creation_path`) and is stored in the last one with `action`'s other
        fields (the caller sets attempts and owner for `dispatching`), with `attempt` written too: the
        executor's propose -> validate -> dispatch in one write. Returns (stored action, True), or (the
        existing action, False, nothing changed) when its key already exists."""
        ...

    async def transition(
        self,
        action_id: str,
        from_states: Sequence[State],
        to_state: State,
        *,
        at: float,
        detail: str | None = None,
        attempt: Attempt | None = None,
        **fields: JSON,
    ) -> Action:
        """Move the action to `to_state` if it is in one of `from_states` and set `fields` (see MUTABLE_FIELDS),
        appending the state event and, when given, the attempt row (which replaces a row with the same
        action and number: an `in_flight` attempt gets its ending): one transaction.

        Raises InvalidTransition (not allowed by TRANSITIONS), StateConflict (it is in another state),
        UnknownAction."""
        ...

    async def record_attempt(self, attempt: Attempt) -> None:
        """Write an attempt row, replacing one with the same number (the action's `attempts` count is set by
        the transition to dispatching)."""
        ...

    async def get(self, action_id: str) -> Action:
        """The action, or UnknownAction."""
        ...

    async def find_by_key(self, idempotency_key: str) -> Action | None: ...

    async def list(self, filters: ActionFilter | None = None) -> builtins.list[Action]:
        """Matching actions, oldest first."""
        ...

    async def events(self, action_id: str) -> builtins.list[Event]: ...

    async def attempts(self, action_id: str) -> builtins.list[Attempt]: ...

    async def recover_dispatching(self, now: float, *, is_orphan: Callable[[Action], bool]) -> builtins.list[Recovered]:
        """Settle actions whose executor died (`is_orphan`): see `recovery_state` for where each goes."""
        ...

    def close(self) -> None: ...


def check_transition(from_state: str, to_state: str) -> None:
    """Raise InvalidTransition unless the state machine allows from_state -> to_state."""
    if to_state not in TRANSITIONS.get(from_state, ()):  # type: ignore[call-overload]
        raise InvalidTransition(from_state, to_state)


def check_fields(fields: Mapping[str, JSON]) -> None:
    unknown = set(fields) - MUTABLE_FIELDS
    if unknown:
        raise ValueError(f"unknown action field(s) {sorted(unknown)}")
    approval = fields.get("approval")
    if approval is not None and approval not in get_args(Approval):
        raise ValueError(f"approval must be one of {get_args(Approval)}, not {approval!r}")


def check_transition_request(from_states: Sequence[State], to_state: State, fields: Mapping[str, JSON]) -> None:
    """What every store checks before it touches a row: a legal move from each expected state, known fields."""
    if not from_states:
        raise ValueError("from_states is empty")
    for from_state in from_states:
        check_transition(from_state, to_state)
    check_fields(fields)


def creation_path(then: Sequence[State]) -> tuple[State, ...]:
    """`proposed` and the states a new action moves on through in its creating transaction, each step
    checked (InvalidTransition)."""
    path: tuple[State, ...] = ("proposed", *then)
    for from_state, to_state in itertools.pairwise(path):
        check_transition(from_state, to_state)
    return path


def creation_events(path: Sequence[State]) -> list[tuple[int, tuple[State | None, State]]]:
    """(seq, (from, to)) of the events of a creation along `path`: `None -> proposed`, then each step."""
    return list(enumerate(zip((None, *path), path, strict=False), start=1))


RecoveryPlan = Literal["skip", "unknown_outcome", "failed_final"]


def recovery_state(action: Action) -> RecoveryPlan:
    """Where an orphaned action goes when its executor died.

    dispatching / failed_retryable: a request may have reached the upstream, so a write is
    `unknown_outcome` (reconciled where possible); a read-only tool has no effect to doubt and is
    `failed_final`. proposed / validated (not yet approved): nothing was sent: `failed_final`.
    A validated action an operator approved waits for its re-call; awaiting_approval waits for approval."""
    if action.state in ("dispatching", "failed_retryable"):
        return "failed_final" if action.side_effect == "read_only" else "unknown_outcome"
    if action.state == "proposed" or (action.state == "validated" and action.approval != "approved"):
        return "failed_final"
    return "skip"


def canonical_json(value: JSON) -> str:
    """Sorted keys, no insignificant whitespace, non-ASCII kept; raises TypeError/ValueError on non-JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_action_id(now: float, random_bytes: Callable[[int], bytes] = os.urandom) -> str:
    """A 26-character ULID-like id: 48-bit milliseconds then 80 random bits, Crockford base32."""
    value = (int(now * 1000) & ((1 << 48) - 1)) << 80 | int.from_bytes(random_bytes(10), "big")
    pairs = _CROCKFORD_PAIRS
    return "".join([pairs[(value >> shift) & 1023] for shift in range(120, -1, -10)])  # 10 bits a step


def iso_time(ts: float) -> str:
    """UTC ISO 8601 with milliseconds and a `Z`: `2026-05-01T12:00:00.123Z`."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clip(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
