"""Approvals: asking a human before an action runs, through MCP elicitation (DESIGN §7).

The executor asks an `Approver` when the policy requires it (`approval = "always"`, or
`"irreversible"` and the tool's side-effect class is `irreversible_write`). The answer is
`approved` (dispatch), `declined` (the action ends `failed_final`) or `unavailable` (no answer could
be had: the action stays `awaiting_approval`, the caller gets its id, and `quiver ledger approve ID`
or `deny ID` decides; a re-call with the same idempotency key then runs or reports it).

`ElicitationApprover` sends a form-mode elicitation whose text is built only from the ledger record
(target `server/tool`, side-effect class, each argument, action id, key), never from model prose, and
one boolean field `approve`. Only `accept` with `approve: true` approves; `decline`, `cancel` (the
user dismissed the form) and `approve: false` decline. The gateway wires the elicitation per call:

    with elicitation(functools.partial(ctx.session.elicit_form, related_request_id=ctx.request_id)):
        outcome = await executor.execute(request, dispatch)

(on handshake-era connections whose client declared the `elicitation` capability). A 2026-07-28
connection has no server-to-client requests: there the gateway binds its `input_required` round instead
(`quiver.runtime.input_required`), whose answer comes with the client's retry of the call. Elsewhere bind
nothing, or None. An `MCPError` from the client (including `NoBackChannelError`) or no answer within
`timeout_s` is `unavailable`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, Protocol

import anyio

from quiver.model import JSON
from quiver.runtime.ledger import Action, canonical_json, clip

Decision = Literal["approved", "declined", "unavailable"]
DEFAULT_TIMEOUT_S = 600.0
MAX_ARGUMENT_CHARS = 300
SIDE_EFFECT_TEXT = {
    "read_only": "read-only: changes nothing",
    "reversible_write": "reversible write: changes state that can be changed back",
    "irreversible_write": "irreversible write: changes state that cannot be undone",
}


class Approver(Protocol):
    async def request(self, action: Action) -> Decision: ...


class ElicitReply(Protocol):
    """The slice of `mcp.types.ElicitResult` read here."""

    @property
    def action(self) -> str: ...

    @property
    def content(self) -> Mapping[str, Any] | None: ...


Elicit = Callable[[str, dict[str, JSON]], Awaitable[ElicitReply]]

_CURRENT: ContextVar[Elicit | None] = ContextVar("quiver_elicit", default=None)


@contextmanager
def elicitation(elicit: Elicit | None) -> Iterator[None]:
    """Make `elicit` the way to reach the current caller for approvals made inside this block."""
    token = _CURRENT.set(elicit)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def approval_message(action: Action) -> str:
    """The deterministic text shown to the approver. Pure."""
    arguments = action.arguments_value()
    why = action.policy_value().get("approval_reason")  # a policy hook's reason (quiver.runtime.flow_guard)
    lines = [
        f"Approve `{action.server}/{action.tool}`?",
        f"Effect: {SIDE_EFFECT_TEXT.get(action.side_effect, action.side_effect)}",
        *([f"Why: {why}"] if isinstance(why, str) and why else []),
        "Arguments:" if arguments else "Arguments: (none)",
        *(f"  {name} = {clip(canonical_json(value), MAX_ARGUMENT_CHARS)}" for name, value in sorted(arguments.items())),
        f"Requested by: {action.requester} (session {action.session_id})",
        f"Action: {action.id}",
        f"Idempotency key: {action.idempotency_key}",
        "Set approve to true and accept to run it once; decline to cancel it.",
    ]
    return "\n".join(lines)


def approval_schema(action: Action) -> dict[str, JSON]:
    """The form: one required boolean. Pure."""
    return {
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Approve",
                "description": f"Run `{action.server}/{action.tool}` once with the arguments shown",
                "default": False,
            }
        },
        "required": ["approve"],
    }


def decision_of(reply: ElicitReply) -> Decision:
    """`accept` with `approve: true` approves; anything else the user answered declines. Pure."""
    if reply.action == "accept" and (reply.content or {}).get("approve") is True:
        return "approved"
    return "declined"


class ElicitationApprover:
    """Asks through MCP elicitation: `elicit` if given, else the one bound with `elicitation(...)`."""

    def __init__(self, elicit: Elicit | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._elicit = elicit
        self._timeout_s = timeout_s

    async def request(self, action: Action) -> Decision:
        elicit = self._elicit or _CURRENT.get()
        if elicit is None:
            return "unavailable"
        from mcp import MCPError  # mcp is loaded wherever elicitation is wired (the gateway)

        try:
            with anyio.fail_after(self._timeout_s):
                reply = await elicit(approval_message(action), approval_schema(action))
        except (MCPError, TimeoutError):
            return "unavailable"
        return decision_of(reply)
