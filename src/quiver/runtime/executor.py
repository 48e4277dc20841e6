"""The ledger executor: every permitted call as a recorded, retried, approved and traced action (DESIGN §7).

`LedgerExecutor.execute(request, dispatch)` runs these steps, awaiting each ledger write before the
next step:

1. claim the idempotency key: the record is created `proposed` (a unique key column makes the claim
   atomic across processes); without approval to ask, the same write moves it through `validated` to
   `dispatching` with the first attempt on record (one transaction; then one for the outcome). The key
   is the caller's: `CallRequest.idempotency_key`, else `_meta["io.quiver/idempotency-key"]`, else the
   argument the policy names `idempotency_key_argument` (1-255 characters; two different keys on one
   call are refused; the key argument is not part of the recorded arguments). Without one it is the
   new action's id, so separate key-less calls are always separate actions. If the key exists: another
   tool or other arguments (canonical-JSON sha256) -> an error result, nothing dispatched; the same call
   -> the stored outcome (`succeeded`, `failed_final`, `unknown_outcome`), or a bounded wait (polling the
   ledger) while another executor runs it, or the approval step when it awaits approval, or a dispatch
   when an operator approved it.
2. validate the policy (side_effect, approval, timeout_ms, retry, reconcile) -> `validated`;
   a malformed policy is `failed_final`.
3. approval when `approval = "always"`, or `"irreversible"` for an `irreversible_write`:
   `awaiting_approval`, then approved -> `validated`; declined -> `failed_final`; unavailable -> the
   caller gets the action id and the state, and the action waits (see `quiver.runtime.approval`).
4. dispatch: `validated -> dispatching` (this guarded move is what makes one executor the sender),
   with the key in `_meta["io.quiver/idempotency-key"]` and, when the policy names an
   `idempotency_key_argument`, in that argument; bounded by `timeout_ms`. Each attempt is recorded
   `in_flight` in the move to `dispatching`, before anything is sent (a gateway killed mid-call leaves
   it), and rewritten with its ending. A result with isError true is `failed_final` (the tool said no),
   unless its text matches a `transient_errors` pattern (`quiver.runtime.transient`): then it is a
   `TransientToolError` like any transient error, the pattern named in the event and the attempt. An
   error is retried per `quiver.runtime.retry` (`failed_retryable`, then `dispatching` again after a
   full-jitter wait); the upstream honours the key when the policy names an `idempotency_key_argument`
   or sets `honours_idempotency_key = true` (it dedupes on the `_meta` key). When no retry is left: a
   write any attempt of which may have taken effect (a timeout, a dropped connection, a transient tool
   error) is `unknown_outcome` and is never re-sent; anything else is `failed_final`.
5. the outcome is recorded, the span ended, and the client gets the result plus the action id.

Reconcile (policy `reconcile`, `quiver.runtime.reconcile`) asks a read tool on the same server whether
an `unknown_outcome` action took effect. Recovery: `recover(reconcile_dispatch)` moves the orphans of
dead executors (`quiver.runtime.ledger.recovery_state`: a write left `dispatching` becomes
`unknown_outcome`), then reconciles. An executor is dead when its recorded process (`owner` =
host/pid/token) no longer exists on this host; owners on other hosts count as alive unless `is_orphan`
says otherwise. Parts: `_exec_policy` (policy, one attempt), `_exec_outcome` (results, keys), `_exec_owner`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import anyio
from opentelemetry.trace import Tracer

from quiver.model import JSON
from quiver.runtime._exec_outcome import ACTION_META_KEY, _Done, _done, _error_type, _refusal, _text, call_key
from quiver.runtime._exec_owner import default_owner, owner_is_gone
from quiver.runtime._exec_policy import (
    APPROVALS,
    DEFAULT_TIMEOUT_MS,
    DISPATCH_GRACE_S,
    SIDE_EFFECTS,
    ExecPolicy,
    attempt_json,
    checked_policy,
    wait_budget_s,
)
from quiver.runtime.approval import Approver
from quiver.runtime.ledger import (
    TERMINAL,
    Action,
    Attempt,
    AttemptOutcome,
    LedgerStore,
    LedgerUnavailable,
    Recovered,
    State,
    StateConflict,
    canonical_json,
    clip,
    new_action_id,
    recovery_state,
    sha256_text,
)
from quiver.runtime.protocol import CallOutcome, CallRequest, Dispatch, PolicyHook, UpstreamError
from quiver.runtime.reconcile import reconcile_action, reconcile_pending
from quiver.runtime.retry import Uniform, backoff_delays, is_ambiguous, should_retry
from quiver.runtime.telemetry import ActionSpan, action_span, get_tracer
from quiver.runtime.transient import transient_error

__all__ = [  # with names moved to `_exec_*`, so they import from here as before
    "ACTION_META_KEY", "APPROVALS", "DEFAULT_TIMEOUT_MS", "DISPATCH_GRACE_S", "IDEMPOTENCY_META_KEY", "MAX_KEY_CHARS",
    "POLL_INITIAL_S", "POLL_MAX_S", "SIDE_EFFECTS", "Clock", "ExecPolicy", "LedgerExecutor", "LedgerOutage",
    "RecoveryReport", "Sleep",
    "default_owner", "owner_is_gone",
]  # fmt: skip

logger = logging.getLogger(__name__)

IDEMPOTENCY_META_KEY = "io.quiver/idempotency-key"
MAX_KEY_CHARS = 255
POLL_INITIAL_S, POLL_MAX_S = 0.005, 0.25  # a re-call polls the ledger for the running action's outcome

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class LedgerOutage(Exception):
    """A call the ledger could not record (`LedgerUnavailable` underneath): `sent` says whether the request
    had reached the upstream by then (False: nothing happened; the same call may be sent again, with the
    same idempotency key when it had one)."""

    def __init__(self, message: str, *, sent: bool, idempotency_key: str | None) -> None:
        super().__init__(message)
        self.message, self.sent, self.idempotency_key = message, sent, idempotency_key


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    recovered: tuple[Recovered, ...]
    reconciled: tuple[Action, ...]  # unknown_outcome actions a reconcile tool settled


class LedgerExecutor:
    """`Executor` with a durable ledger; see the module docstring. All collaborators are injected."""

    def __init__(
        self,
        store: LedgerStore,
        *,
        clock: Clock = time.time,
        sleep: Sleep = anyio.sleep,
        rng: Uniform | None = None,
        tracer: Tracer | None = None,
        approver: Approver | None = None,
        owner: str | None = None,
        wait_s: float | None = None,
        hook: PolicyHook | None = None,
    ) -> None:
        self.store = store
        self.owner = owner or default_owner()
        self._clock = clock
        self._sleep = sleep
        self._rng: Uniform = rng or random.SystemRandom()
        self._tracer = tracer or get_tracer()
        self._approver = approver
        self._wait_s = wait_s
        self._hook = hook  # e.g. quiver.runtime.flow_guard: raises a call's approval from its session's past
        self._probes: dict[str, tuple[float, float]] = {}  # action id -> (next reconcile probe at, last wait)

    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        """Run the call; raises `LedgerOutage` when the ledger could not record a step (saying whether the
        request had been sent upstream by then), never a result the ledger does not hold."""
        if self._hook is not None:
            request = self._hook.before(request)
        outcome = await self._execute_spanned(request, dispatch)
        if self._hook is not None:
            self._hook.after(request, outcome)
        return outcome

    async def _execute_spanned(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        side_effect = request.policy.get("side_effect")
        sent: list[bool] = []

        async def tracked(call: CallRequest, meta: Mapping[str, JSON], timeout_s: float) -> Mapping[str, JSON]:
            sent.append(True)
            return await dispatch(call, meta, timeout_s)

        with action_span(
            self._tracer, server=request.server, tool=request.tool, call_id=request.call_id,
            side_effect=side_effect if isinstance(side_effect, str) else None, description=request.description,
        ) as span:  # fmt: skip
            try:
                done = await self._execute(request, tracked, span)
            except LedgerUnavailable as exc:
                key, _ = call_key(
                    request, request.policy.get("idempotency_key_argument"), IDEMPOTENCY_META_KEY, MAX_KEY_CHARS
                )
                span.finish(state="ledger_unavailable", attempts=0, error_type="ledger_unavailable", replayed=False)
                raise LedgerOutage(str(exc), sent=bool(sent), idempotency_key=key) from exc
            outcome = done.outcome
            span.finish(
                state=outcome.state, attempts=outcome.attempts, error_type=done.error_type, replayed=done.replayed
            )
            return outcome

    async def recover(
        self,
        reconcile_dispatch: Dispatch | None,
        *,
        is_orphan: Callable[[Action], bool] | None = None,
        settle_negative: bool = True,
    ) -> RecoveryReport:
        """Settle dead executors' actions, then reconcile `unknown_outcome` actions where configured.

        On gateway start `settle_negative` (either answer settles); the periodic sweeps of a running
        gateway pass False (only a confirmation settles: the upstream may still hold the request). An
        action whose probe settles nothing is asked again only after a backoff (see `reconcile_pending`)."""
        orphan = is_orphan or (lambda action: action.owner != self.owner and owner_is_gone(action.owner))
        recovered = await self.store.recover_dispatching(self._clock(), is_orphan=orphan)
        reconciled: list[Action] = []
        if reconcile_dispatch is not None:
            reconciled = await reconcile_pending(
                self, reconcile_dispatch, self._probes, settle_negative=settle_negative
            )
        return RecoveryReport(tuple(recovered), tuple(reconciled))

    # --- steps ----------------------------------------------------------------------------------------

    async def _execute(self, request: CallRequest, dispatch: Dispatch, span: ActionSpan) -> _Done:
        key_argument = request.policy.get("idempotency_key_argument")
        key, problem = call_key(request, key_argument, IDEMPOTENCY_META_KEY, MAX_KEY_CHARS)
        if problem is not None:
            return _refusal(problem, "invalid_idempotency_key")
        try:
            # the key argument is the key, not part of the call: it is set from the action's key on dispatch
            arguments = canonical_json({k: v for k, v in request.arguments.items() if k != key_argument})
            policy_json, checked = checked_policy(request.policy)
        except (TypeError, ValueError) as exc:
            return _refusal(f"arguments are not JSON: {exc}", "invalid_arguments")
        now = self._clock()
        action_id = new_action_id(now)
        side_effect = str(request.policy.get("side_effect", "irreversible_write"))
        # one write claims the key, validates and (without approval) claims the first send, attempt on record
        policy, problem = (checked, None) if isinstance(checked, ExecPolicy) else (None, checked)
        then: tuple[State, ...] = (
            () if policy is None else ("validated",) if policy.needs_approval else ("validated", "dispatching")
        )
        first = Attempt(action_id, 1, now, now, "in_flight") if "dispatching" in then else None
        draft = Action(
            id=action_id, idempotency_key=key or action_id, session_id=request.session_id, requester=request.requester,
            call_id=request.call_id, server=request.server, tool=request.tool, tool_sha256=request.tool_sha256,
            arguments=arguments, args_sha256=sha256_text(arguments), side_effect=side_effect, policy=policy_json,
            state="proposed", created_at=now, updated_at=now, owner=self.owner, attempts=1 if first else 0,
        )  # fmt: skip
        action, created = await self.store.create_action(draft, then=then, attempt=first)
        span.bind(action_id=action.id, idempotency_key=action.idempotency_key, side_effect=action.side_effect)
        if not created:
            return await self._rejoin(action, draft, request, dispatch, span)
        if policy is None:
            action = await self.move(action, ("proposed",), "failed_final", error_type="invalid_policy", error=problem)
            return _done(action)
        if action.state == "dispatching":
            return await self._run(action, policy, request, dispatch, span)
        return await self._approve_then_run(action, policy, request, dispatch, span)

    async def _rejoin(
        self, action: Action, draft: Action, request: CallRequest, dispatch: Dispatch, span: ActionSpan
    ) -> _Done:
        """The key exists: replay, wait for its executor, or continue it (approval, approved re-call)."""
        if (action.server, action.tool, action.args_sha256) != (draft.server, draft.tool, draft.args_sha256):
            return _refusal(
                f"idempotency key `{action.idempotency_key}` was already used for a different call (another tool or "
                "other arguments); use a new key for a new call",
                "idempotency_key_mismatch",
            )
        try:
            policy: ExecPolicy | None = ExecPolicy.from_mapping(action.policy_value())
        except ValueError:
            policy = None
        deadline = self._clock() + (self._wait_s if self._wait_s is not None else wait_budget_s(policy))
        poll = POLL_INITIAL_S
        while True:
            if action.state in TERMINAL or action.state == "unknown_outcome":
                return _done(action, replayed=True)
            if policy is not None and (
                action.state == "awaiting_approval" or (action.state == "validated" and action.approval == "approved")
            ):
                return await self._approve_then_run(action, policy, request, dispatch, span)
            if self._clock() >= deadline:
                text = (
                    f"action {action.id} for idempotency key `{action.idempotency_key}` is still {action.state}; "
                    "call again later with the same key for its outcome"
                )
                return _Done(CallOutcome(_text(text, action, action.state), action.state, action.id, action.attempts))
            await self._sleep(poll)
            poll = min(poll * 2, POLL_MAX_S)
            action = await self.store.get(action.id)

    async def _approve_then_run(
        self, action: Action, policy: ExecPolicy, request: CallRequest, dispatch: Dispatch, span: ActionSpan
    ) -> _Done:
        if policy.needs_approval and action.approval != "approved":
            try:
                if action.state == "validated":
                    action = await self.move(action, ("validated",), "awaiting_approval", approval="pending")
                decision = "unavailable" if self._approver is None else await self._approver.request(action)
                if decision == "unavailable":
                    text = (
                        f"`{action.server}/{action.tool}` needs approval and none could be asked for here. Action "
                        f"{action.id} is awaiting_approval: run `quiver ledger approve {action.id}` (or `deny`), then "
                        f"call again with idempotency key `{action.idempotency_key}`"
                    )
                    return _Done(
                        CallOutcome(_text(text, action, action.state), action.state, action.id, action.attempts)
                    )
                if decision == "declined":
                    action = await self.move(
                        action, ("awaiting_approval",), "failed_final", approval="declined",
                        approval_ref="elicitation", error_type="approval_declined", error="the approver declined",
                    )  # fmt: skip
                    return _done(action)
                action = await self.move(
                    action, ("awaiting_approval",), "validated", approval="approved", approval_ref="elicitation"
                )
            except StateConflict as conflict:
                return await self._rejoin(conflict.action, conflict.action, request, dispatch, span)
        return await self._run(action, policy, request, dispatch, span)

    async def _run(
        self, action: Action, policy: ExecPolicy, request: CallRequest, dispatch: Dispatch, span: ActionSpan
    ) -> _Done:
        """Dispatch with retries; `validated -> dispatching` is the claim that makes this executor the sender
        (an action already `dispatching` was claimed by its creating write, first attempt on record)."""
        claimed = action.state == "dispatching"
        call = request
        if policy.key_argument is not None:
            call = replace(request, arguments={**request.arguments, policy.key_argument: action.idempotency_key})
        meta = {IDEMPOTENCY_META_KEY: action.idempotency_key}
        delays = backoff_delays(policy.retry, self._rng)
        ambiguous = False
        from_states: Sequence[State] = ("validated",)
        while True:
            number, started = action.attempts + (not claimed), action.updated_at if claimed else self._clock()
            in_flight = Attempt(action.id, number, started, started, "in_flight")  # on record before the send
            try:
                if not claimed:
                    action = await self.move(
                        action, from_states, "dispatching", attempt=in_flight, attempts=number, owner=self.owner
                    )
                claimed = False
            except StateConflict as conflict:
                return await self._rejoin(conflict.action, conflict.action, request, dispatch, span)
            result: Mapping[str, JSON] | None
            try:
                result, result_json = await attempt_json(dispatch, call, meta, policy.timeout_s)
                error: Exception | None = None
            except Exception as exc:  # the attempt's outcome, whatever dispatch raised; recorded below
                result, result_json, error = None, "", exc
            except BaseException:  # cancelled: leave a settled record, then let the cancellation through
                ended = self._clock()
                await self._abandon(action, Attempt(action.id, number, started, ended, "error", "cancelled", None))
                raise
            ended = self._clock()
            if error is not None and not isinstance(error, UpstreamError):
                logger.warning("dispatch of %s/%s raised %r", action.server, action.tool, error, exc_info=error)
            tool_error = result is not None and bool(result.get("isError"))
            tool_result, transient = result, transient_error(result, policy.transient_errors)
            if transient is not None:  # "503, try again" as a tool result: handled as a transient error
                result, error = None, transient
            detail = None if transient is None else clip(f"transient_errors pattern `{transient.pattern}` matched", 500)
            error_type = "tool_error" if tool_error and error is None else None if error is None else _error_type(error)
            outcome: AttemptOutcome = "tool_error" if tool_error else "error" if error else "ok"
            message = None if error is None else clip(f"{error}" or type(error).__name__)
            attempt = Attempt(action.id, number, started, ended, outcome, error_type, message)
            span.attempt(number, outcome=outcome, error_type=error_type, duration_s=ended - started)
            if result is not None:
                state: State = "failed_final" if tool_error else "succeeded"
                try:
                    # `unknown_outcome` too: a recovery sweep may have judged this executor dead while the
                    # answer was on its way (an expired lease); the answer settles what the sweep could not
                    action = await self.move(
                        action,
                        ("dispatching", "unknown_outcome"),
                        state,
                        attempt=attempt,
                        result=result_json,
                        error_type=error_type,
                    )
                except StateConflict as conflict:  # someone settled it first (an operator, a reconcile)
                    return _done(conflict.action)
                return _done(action, result=dict(result))  # what was just stored, not parsed back
            assert error is not None
            ambiguous = ambiguous or is_ambiguous(error)
            if should_retry(
                error, number, policy.retry, tool_idempotent=policy.idempotent, upstream_honours_key=policy.honours_key
            ):
                delay = next(delays, None)
                if delay is not None:
                    action = await self.move(
                        action,
                        ("dispatching",),
                        "failed_retryable",
                        detail=detail,
                        attempt=attempt,
                        error_type=error_type,
                        error=message,
                    )
                    try:
                        await self._sleep(delay)
                    except BaseException:
                        await self._abandon(action)
                        raise
                    from_states = ("failed_retryable",)
                    continue
            final: State = "unknown_outcome" if ambiguous and policy.side_effect != "read_only" else "failed_final"
            # a transient tool error that ends failed_final keeps the upstream's own answer for the caller
            kept = {"result": result_json} if tool_result and final == "failed_final" else {}
            action = await self.move(
                action, ("dispatching",), final, detail=detail, attempt=attempt, error_type=error_type, error=message,
                **kept,
            )  # fmt: skip
            if final == "unknown_outcome" and policy.reconcile is not None:
                action = await reconcile_action(self, action, policy, dispatch, settle_negative=False)
            return _done(action)

    async def _abandon(self, action: Action, attempt: Attempt | None = None) -> None:
        """Cancelled mid-run: record where the action was left (a write in flight is unknown_outcome)."""
        with anyio.CancelScope(shield=True):
            try:
                current = await self.store.get(action.id)
                plan = recovery_state(current)
                if plan != "skip":
                    await self.move(
                        current, (current.state,), plan, attempt=attempt if current.state == "dispatching" else None,
                        error_type="cancelled", error="the call was cancelled",
                    )  # fmt: skip
            except StateConflict:
                pass  # settled meanwhile by another executor or a recovery: nothing left to record

    def now(self) -> float:
        """The executor's clock (injected: a test's fake clock)."""
        return self._clock()

    async def move(
        self,
        action: Action,
        from_states: Sequence[State],
        to_state: State,
        *,
        detail: str | None = None,
        attempt: Attempt | None = None,
        **fields: JSON,
    ) -> Action:
        """Move `action` to `to_state` if the ledger has it in one of `from_states` (else StateConflict), at the
        executor's clock, setting `fields`; the executor's steps and reconcile make every state change here."""
        return await self.store.transition(
            action.id, from_states, to_state, at=self._clock(), detail=detail, attempt=attempt, **fields
        )
