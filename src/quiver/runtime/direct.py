"""The executor without a ledger (`DirectExecutor`): for tests and `quiver serve --no-ledger`. Above the seam it
implements (`quiver.runtime.protocol`) and the spans it opens (`quiver.runtime.telemetry`)."""

from __future__ import annotations

from quiver.model import JSON
from quiver.runtime.protocol import (
    APPROVAL_REASON_KEY,
    CallOutcome,
    CallRequest,
    Dispatch,
    PolicyHook,
    UpstreamError,
    UpstreamTimeout,
)
from quiver.runtime.telemetry import direct_span


class DirectExecutor:
    """Dispatch once, no ledger: for tests and `quiver serve --no-ledger`. With nowhere to record a pending
    approval, a call whose hook asks for one is refused, naming the reason."""

    def __init__(self, *, hook: PolicyHook | None = None) -> None:
        self._hook = hook

    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
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
