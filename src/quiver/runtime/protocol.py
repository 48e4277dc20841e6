"""The seam between the gateway and tool execution.

The gateway (`quiver.runtime.gateway`) decides *whether* a call may happen (allow-list, pins,
argument validation) and hands every permitted call to an `Executor`, which decides *how* it runs
(ledger record before dispatch, idempotency, retries, approvals, spans) and calls `Dispatch` to reach
the upstream server. `DirectExecutor` is the executor without a ledger.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

JSON = Any


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


class DirectExecutor:
    """Dispatch once, no ledger: for tests and `quiver serve --no-ledger`. With nowhere to record a pending
    approval, a call whose hook asks for one is refused, naming the reason."""

    def __init__(self, *, hook: PolicyHook | None = None) -> None:
        self._hook = hook

    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        from quiver.runtime.telemetry import direct_span

        if self._hook is not None:
            request = self._hook.before(request)
            reason = request.policy.get(APPROVAL_REASON_KEY)
            if reason:
                text = (
                    f"refused: `{request.server}/{request.tool}` needs approval ({reason}), and a gateway without a "
                    "ledger (`--no-ledger`) cannot ask for one; serve with a ledger to approve it"
                )
                outcome = CallOutcome(_error(text), "failed_final")
                self._hook.after(request, outcome)
                return outcome
        with direct_span(request) as finish:
            outcome = finish(await self._execute(request, dispatch))
        if self._hook is not None:
            self._hook.after(request, outcome)
        return outcome

    async def _execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        timeout_s = float(request.policy.get("timeout_ms", 30_000)) / 1000
        try:
            result = await dispatch(request, {}, timeout_s)
        except UpstreamTimeout as exc:
            return CallOutcome(_error(f"upstream timed out: {exc}"), "unknown_outcome")
        except UpstreamError as exc:
            return CallOutcome(_error(f"upstream failed: {exc}"), "failed_final")
        state = "failed_final" if result.get("isError") else "succeeded"
        return CallOutcome(result, state)


def _error(text: str) -> dict[str, JSON]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
