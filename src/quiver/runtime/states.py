"""The ledger's action states: the one list the runtime, the CLI's `--state` choices and the ledger
schemas (`ledger-*.schema.json`, checked by tests/runtime/test_ledger_states.py) are made from.

A module of its own, without the ledger's imports, so the CLI can build its choices at start-up.
`quiver.runtime.ledger.State` is the same list as a `Literal`, for the type checker (tested equal).
"""

from __future__ import annotations

from enum import StrEnum


class LedgerState(StrEnum):
    """An action's state in the ledger (the machine is `quiver.runtime.ledger.TRANSITIONS`)."""

    PROPOSED = "proposed"
    VALIDATED = "validated"
    AWAITING_APPROVAL = "awaiting_approval"
    DISPATCHING = "dispatching"
    SUCCEEDED = "succeeded"
    FAILED_RETRYABLE = "failed_retryable"
    FAILED_FINAL = "failed_final"
    UNKNOWN_OUTCOME = "unknown_outcome"


# what an operator may settle an `unknown_outcome` action as (`quiver ledger resolve --state`)
RESOLVED_STATES = (LedgerState.SUCCEEDED, LedgerState.FAILED_FINAL)
