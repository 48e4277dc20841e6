"""What the executor's caller gets back: the outcome of an action (or of a refused call) as a tool result.

Pure: a settled action in, a `CallOutcome` whose result carries the action's id and state under
`_meta["io.quiver/action"]` out; and the idempotency key a call carries, or why it is refused.
"""

from __future__ import annotations

from typing import NamedTuple

from quiver.model import JSON
from quiver.runtime.ledger import Action
from quiver.runtime.protocol import CallOutcome, CallRequest

ACTION_META_KEY = "io.quiver/action"


class _Done(NamedTuple):
    outcome: CallOutcome
    error_type: str | None = None
    replayed: bool = False


def _error_type(error: BaseException) -> str:
    return type(error).__name__


def _text(text: str, action: Action | None, state: str, *, is_error: bool = True) -> dict[str, JSON]:
    result: dict[str, JSON] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if action is not None:
        result["_meta"] = {
            ACTION_META_KEY: {"id": action.id, "state": state, "idempotency_key": action.idempotency_key}
        }
    return result


def _refusal(text: str, error_type: str) -> _Done:
    """Refused before any record was written (Stripe does not save validation failures either)."""
    return _Done(CallOutcome(_text(text, None, "failed_final"), "failed_final", None, 0), error_type)


def _done(action: Action, *, replayed: bool = False, result: dict[str, JSON] | None = None) -> _Done:
    """The outcome of a settled action: its stored result (`result` when the caller holds what it stored),
    or one built from its state and error."""
    result = result if result is not None else action.result_value()
    if result is None:
        where = f"`{action.server}/{action.tool}`"
        if action.state == "unknown_outcome":
            text = (
                f"{where} may or may not have taken effect ({action.error_type}: {action.error}). Action {action.id} "
                f"is unknown_outcome and will not be re-sent: check the target, then settle it with "
                f"`quiver ledger resolve {action.id} --state succeeded|failed_final`"
            )
        elif action.state == "failed_final" and action.error_type == "approval_declined":
            text = f"{where} was not run: the approver declined (action {action.id})"
        else:
            text = f"{where} failed after {action.attempts} attempt(s): {action.error_type}: {action.error}"
        result = _text(text, action, action.state, is_error=action.state != "succeeded")
    return _Done(CallOutcome(result, action.state, action.id, action.attempts), action.error_type, replayed)


def call_key(request: CallRequest, key_argument: JSON, meta_key: str, max_chars: int) -> tuple[str | None, str | None]:
    """(the call's idempotency key or None, None), or (None, why it is refused): the keys a call carries
    (`idempotency_key`, `_meta[meta_key]`, the policy's key argument) must agree and be 1-max_chars long."""
    supplied = [
        request.idempotency_key,
        request.meta.get(meta_key),
        request.arguments.get(key_argument) if isinstance(key_argument, str) else None,
    ]
    keys = [value for value in supplied if value is not None]
    if any(value != keys[0] for value in keys):
        return None, "the call carries different idempotency keys (idempotency_key, _meta, key argument); send one key"
    key: JSON = keys[0] if keys else None
    if key is not None and (not isinstance(key, str) or not 1 <= len(key) <= max_chars):
        return None, f"an idempotency key is a string of 1 to {max_chars} characters"
    return key, None
