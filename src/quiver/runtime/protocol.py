"""The seam between the gateway and tool execution.

The gateway (`quiver.runtime.gateway`) decides *whether* a call may happen (allow-list, pins,
argument validation) and hands every permitted call to an `Executor`, which decides *how* it runs
(ledger record before dispatch, idempotency, retries, approvals, spans) and calls `Dispatch` to reach
the upstream server. `DirectExecutor` (`quiver.runtime.direct`) is the executor without a ledger.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from quiver.model import JSON


@dataclass(frozen=True, slots=True)
class CallRequest:
    """A permitted call, as the gateway hands it over."""

    server: str
    tool: str
    arguments: Mapping[str, JSON]
    tool_sha256: str
    policy: Mapping[str, JSON]  # the manifest's per-tool policy: side_effect, timeout_ms, retry, approval, ...
    session_id: str
    requester: str = "model"
    idempotency_key: str | None = None
    call_id: str | None = None  # the MCP request id, for traces
    meta: Mapping[str, JSON] = field(default_factory=dict)
    description: str | None = None  # the tool's description, for traces (gen_ai.tool.description)


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What the client gets back: an MCP CallToolResult as wire JSON (camelCase), plus ledger facts."""

    result: Mapping[str, JSON]  # {"content": [...], "isError": bool, "structuredContent"?: ...}
    state: str  # ledger state when the call returned (succeeded, failed_final, unknown_outcome, ...)
    action_id: str | None = None
    attempts: int = 1


# Sends one attempt upstream. `meta` is merged into the request's `_meta` (idempotency key, trace
# context); `timeout_s` bounds the wait. Raises quiver.runtime.protocol.UpstreamError subclasses.
Dispatch = Callable[[CallRequest, Mapping[str, JSON], float], Awaitable[Mapping[str, JSON]]]


class UpstreamError(Exception):
    """A failure reaching the upstream server. `transient` says whether a retry may help."""

    transient = True


class UpstreamTimeout(UpstreamError):
    """No answer within the timeout: the side effect may or may not have happened."""


class UpstreamUnavailable(UpstreamError):
    """The server could not be started or reached: nothing was sent."""


class UpstreamProtocolError(UpstreamError):
    """The server answered with a JSON-RPC error (code in `code`)."""

    def __init__(self, message: str, code: int | None = None, *, transient: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.transient = transient


class Executor(Protocol):
    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome: ...


class PolicyHook(Protocol):
    """Adjusts a call's policy from what its session did before (`quiver.runtime.flow_guard`), and hears each
    outcome. `before` returns the request to run (the same one, or one whose policy asks for approval)."""

    def before(self, request: CallRequest) -> CallRequest: ...

    def after(self, request: CallRequest, outcome: CallOutcome) -> None: ...


APPROVAL_REASON_KEY = "approval_reason"  # a hook's reason for asking, kept in the call's policy
