"""Approvals on MCP 2026-07-28 connections: `input_required` instead of a server-to-client elicitation.

That revision has no server-to-client requests on its connections (the SDK raises `NoBackChannelError`),
so a tools/call that needs an approval answers, in place of its result, an `InputRequiredResult` holding
the approval form as an elicitation request and a `requestState` naming the action's idempotency key; the
client asks its user, then retries the same call carrying the answer (`inputResponses`) and the state.

    round 1: no answer yet. The approver's elicitation is `ask`, which notes the form and reports that
             nobody can be asked now, so the executor leaves the action `awaiting_approval` (recorded, as
             for a client that cannot elicit) and `result` turns that answer into the InputRequiredResult;
    round 2: the answer and the key come back. The call rejoins its action through the key, and the
             approver's elicitation returns the client's answer: accept with `approve: true` runs it once,
             anything else declines it (`failed_final`).

Only a client that declared the `elicitation` capability is asked this way; others get the waiting
action's id, to be released with `quiver ledger approve`. The state is sealed by the SDK's
`RequestStateBoundary` (authenticated, bound to the tool and arguments, expiring), which the gateway
installs; a tampered or stale state is refused by the SDK before it reaches quiver.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp import MCPError
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.types import INVALID_PARAMS

from quiver.model import JSON
from quiver.runtime._exec_outcome import ACTION_META_KEY

__all__ = ["APPROVAL_INPUT", "InputRound", "bind", "current_round", "request_state_boundary", "round_for", "unbind"]

APPROVAL_INPUT = "io.quiver/approval"  # the key of the approval form in `inputRequests` / `inputResponses`
_STATE_KEY = "idempotency_key"


class _NoAnswerYet(MCPError):
    """Raised by round 1's elicitation: the approver reads it as "nobody can be asked now"."""

    def __init__(self) -> None:
        super().__init__(code=INVALID_PARAMS, message="the approval is asked through input_required")


@dataclass(slots=True)
class InputRound:
    """One tools/call on a 2026-07-28 connection whose client can be asked: the answer it carries (round
    2), the key its state names, and the form round 1 asked for."""

    reply: Any = None  # the client's ElicitResult for the approval, on a retry
    key: str | None = None  # the idempotency key the request state names
    asked: list[tuple[str, dict[str, JSON]]] = field(default_factory=list)

    async def elicit(self, message: str, schema: dict[str, JSON]) -> Any:
        """The approver's elicitation for this call: the client's answer, or note the form and give none."""
        if self.reply is not None:
            return self.reply
        self.asked.append((message, schema))
        raise _NoAnswerYet

    def result(self, answer: Mapping[str, JSON]) -> dict[str, JSON]:
        """The call's answer to send: round 1's approval form as an InputRequiredResult, else `answer`."""
        action = (answer.get("_meta") or {}).get(ACTION_META_KEY) if isinstance(answer.get("_meta"), dict) else None
        if not self.asked or not isinstance(action, dict) or action.get("state") != "awaiting_approval":
            return dict(answer)
        message, schema = self.asked[-1]
        form = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))
        required = types.InputRequiredResult(
            input_requests={APPROVAL_INPUT: form},
            request_state=json.dumps({_STATE_KEY: action.get("idempotency_key")}, sort_keys=True),
        )
        dumped: dict[str, JSON] = required.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped


_CURRENT: ContextVar[InputRound | None] = ContextVar("quiver_input_round", default=None)


def current_round() -> InputRound | None:
    """The `InputRound` of the tools/call being handled, if any."""
    return _CURRENT.get()


def round_for(ctx: Any, params: types.CallToolRequestParams) -> InputRound | None:
    """The round of a 2026-07-28 tools/call whose client declared elicitation; None otherwise (a
    handshake-era session is asked by elicitation itself, a client that cannot be asked gets the id)."""
    session = getattr(ctx, "session", None)
    capable = session is not None and session.check_client_capability(
        types.ClientCapabilities(elicitation=types.ElicitationCapability())
    )
    if not capable:
        return None
    reply = (params.input_responses or {}).get(APPROVAL_INPUT)
    key = None
    if params.request_state:  # plaintext: the SDK's boundary verified and unsealed it
        try:
            state = json.loads(params.request_state)
        except ValueError:
            state = None
        key = state.get(_STATE_KEY) if isinstance(state, dict) and isinstance(state.get(_STATE_KEY), str) else None
    return InputRound(reply=reply if hasattr(reply, "action") else None, key=key)


def bind(round_: InputRound | None) -> Any:
    """Make `round_` current for the call being handled (a ContextVar token for `unbind`)."""
    return _CURRENT.set(round_)


def unbind(token: Any) -> None:
    _CURRENT.reset(token)


def request_state_boundary() -> RequestStateBoundary:
    """The SDK's sealing of `requestState` under a key of this process (a state minted before a restart
    is refused, and the call is then asked again from round 1)."""
    return RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="quiver")
