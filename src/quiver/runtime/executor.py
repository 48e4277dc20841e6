"""The ledger executor: every permitted call as a recorded, retried, approved and traced action (DESIGN §7).

`LedgerExecutor.execute(request, dispatch)` runs these steps, awaiting each ledger write before the
next step:

1. claim the idempotency key: the record is created `proposed` (a unique key column makes the claim
   atomic across processes). The key is the caller's: `CallRequest.idempotency_key`, else
   `_meta["io.quiver/idempotency-key"]`, else the argument the policy names `idempotency_key_argument`
   (1-255 characters; two different keys on one call are refused; the key argument is not part of the
   recorded arguments). Without one it is the new action's id, so separate key-less calls are always
   separate actions. If the key exists: another tool or other arguments (canonical-JSON sha256) -> an
   error result, nothing dispatched; the same call -> the stored outcome (`succeeded`, `failed_final`,
   `unknown_outcome`), or a bounded wait (polling the ledger) while another executor runs it, or the
   approval step when it awaits approval, or a dispatch when an operator approved it.
2. validate the policy (side_effect, approval, timeout_ms, retry, reconcile) -> `validated`;
   a malformed policy is `failed_final`.
3. approval when `approval = "always"`, or `"irreversible"` for an `irreversible_write`:
   `awaiting_approval`, then approved -> `validated`; declined -> `failed_final`; unavailable -> the
   caller gets the action id and the state, and the action waits (see `quiver.runtime.approval`).
4. dispatch: `validated -> dispatching` (this guarded move is what makes one executor the sender),
   with the key in `_meta["io.quiver/idempotency-key"]` and, when the policy names an
   `idempotency_key_argument`, in that argument; bounded by `timeout_ms`. Each attempt is recorded.
   A result with isError true is `failed_final` (the tool ran and said no; never retried). An error
   is retried per `quiver.runtime.retry` (`failed_retryable`, then back to `dispatching` after a
   full-jitter wait); the upstream counts as honouring the key when the policy names an
   `idempotency_key_argument` or sets `honours_idempotency_key = true` (it dedupes on the `_meta` key).
   When no retry is left: a write any of whose attempts may have taken effect
   (a timeout, a dropped connection) is `unknown_outcome` and is never re-sent; anything else is
   `failed_final`.
5. the outcome is recorded, the span ended, and the client gets the result plus the action id.

Reconcile (optional policy `reconcile`) asks a read tool on the same server whether an
`unknown_outcome` action took effect:

    reconcile = {tool = "get_order", arguments = {id = "$.arguments.order_id", key = "$.idempotency_key"},
                 succeeded_when = "$.structuredContent.found", equals = true}

`arguments` values that are strings starting with `$` are JSONPath-lite paths (dotted names, list
indexes as numbers) into `{"arguments": ..., "idempotency_key": ..., "action_id": ..., "server": ...,
"tool": ...}`; anything else is a literal. The reconcile call's result (wire JSON) decides: isError
true, or `succeeded_when` missing from it -> still unknown; otherwise the value at `succeeded_when`
(compared with `equals` when given, else its truthiness) -> `succeeded` or `failed_final`. Right after a
timeout only a confirmation settles the action (a request the upstream still holds could land after a
"no"); at recovery (`recover`, on gateway start) either answer settles it.

Recovery: `recover(reconcile_dispatch)` moves the orphans of dead executors (see
`quiver.runtime.ledger.recovery_state`: a write left `dispatching` becomes `unknown_outcome`) and
then reconciles every `unknown_outcome` action whose policy has a reconcile tool. An executor is dead
when its recorded process (`owner` = host/pid/token) no longer exists on this host; owners on other
hosts count as alive unless `is_orphan` says otherwise.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

import anyio
from opentelemetry.trace import Tracer

from quiver.runtime.approval import Approver
from quiver.runtime.ledger import (
    JSON,
    TERMINAL,
    Action,
    ActionFilter,
    Attempt,
    LedgerStore,
    Recovered,
    State,
    StateConflict,
    canonical_json,
    clip,
    new_action_id,
    recovery_state,
    sha256_text,
)
from quiver.runtime.protocol import CallOutcome, CallRequest, Dispatch, UpstreamError, UpstreamTimeout
from quiver.runtime.retry import RetryPolicy, Uniform, backoff_delays, is_ambiguous, should_retry
from quiver.runtime.telemetry import ActionSpan, action_span, get_tracer

logger = logging.getLogger(__name__)

IDEMPOTENCY_META_KEY = "io.quiver/idempotency-key"
ACTION_META_KEY = "io.quiver/action"
MAX_KEY_CHARS = 255
DEFAULT_TIMEOUT_MS = 30_000
DISPATCH_GRACE_S = 1.0  # beyond the dispatch's own timeout, before the executor stops waiting itself
POLL_INITIAL_S = 0.005
POLL_MAX_S = 0.25
SIDE_EFFECTS = ("read_only", "reversible_write", "irreversible_write")
APPROVALS = ("never", "always", "irreversible")

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Verdict = Literal["succeeded", "failed_final"]


@dataclass(frozen=True, slots=True)
class ReconcileSpec:
    tool: str
    arguments: Mapping[str, JSON]
    succeeded_when: str
    equals: JSON = None
    has_equals: bool = False

    @classmethod
    def from_mapping(cls, value: JSON) -> ReconcileSpec:
        if not isinstance(value, Mapping):
            raise ValueError("reconcile must be a table with `tool`, `arguments` and `succeeded_when`")
        unknown = set(value) - {"tool", "arguments", "succeeded_when", "equals"}
        if unknown:
            raise ValueError(f"unknown reconcile key `{sorted(unknown)[0]}`")
        tool, arguments, when = value.get("tool"), value.get("arguments", {}), value.get("succeeded_when")
        if not isinstance(tool, str) or not tool:
            raise ValueError("reconcile.tool must name a read tool of the same server")
        if not isinstance(arguments, Mapping):
            raise ValueError("reconcile.arguments must be a table")
        if not isinstance(when, str) or not when.startswith("$"):
            raise ValueError("reconcile.succeeded_when must be a path such as `$.structuredContent.found`")
        return cls(tool, dict(arguments), when, value.get("equals"), "equals" in value)


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """The manifest's per-tool policy, checked (see `quiver.policy` for how it is merged)."""

    side_effect: str
    approval: str
    idempotent: bool
    timeout_s: float
    retry: RetryPolicy
    reconcile: ReconcileSpec | None = None
    key_argument: str | None = None
    key_in_meta_honoured: bool = False  # policy `honours_idempotency_key`: the upstream dedupes on the _meta key

    @property
    def needs_approval(self) -> bool:
        return self.approval == "always" or (
            self.approval == "irreversible" and self.side_effect == "irreversible_write"
        )

    @property
    def honours_key(self) -> bool:
        """The upstream dedupes on the key (an argument, or `_meta` when so configured): re-sending is safe."""
        return self.key_argument is not None or self.key_in_meta_honoured

    @classmethod
    def from_mapping(cls, policy: Mapping[str, JSON]) -> ExecPolicy:
        """Raises ValueError on a bad value. Missing keys take the safe side (an irreversible write)."""
        side_effect = policy.get("side_effect", "irreversible_write")
        if side_effect not in SIDE_EFFECTS:
            raise ValueError(f"side_effect must be one of {', '.join(SIDE_EFFECTS)}")
        approval = policy.get("approval", "never")
        if approval not in APPROVALS:
            raise ValueError(f"approval must be one of {', '.join(APPROVALS)}")
        timeout_ms = policy.get("timeout_ms", DEFAULT_TIMEOUT_MS)
        if not isinstance(timeout_ms, int | float) or isinstance(timeout_ms, bool) or timeout_ms <= 0:
            raise ValueError("timeout_ms must be a positive number")
        key_argument = policy.get("idempotency_key_argument")
        if key_argument is not None and (not isinstance(key_argument, str) or not key_argument):
            raise ValueError("idempotency_key_argument must be an argument name")
        reconcile = policy.get("reconcile")
        return cls(
            side_effect=side_effect,
            approval=approval,
            idempotent=policy.get("idempotent") is True or side_effect == "read_only",
            timeout_s=timeout_ms / 1000,
            retry=RetryPolicy.from_mapping(policy.get("retry")),
            reconcile=None if reconcile is None else ReconcileSpec.from_mapping(reconcile),
            key_argument=key_argument,
            key_in_meta_honoured=policy.get("honours_idempotency_key") is True,
        )


def resolve_path(root: JSON, path: str) -> tuple[bool, JSON]:
    """(found, value) of a JSONPath-lite path (`$`, `$.a.b`, `$.items.0.id`) in `root`. Pure."""
    if path != "$" and not path.startswith("$."):
        return False, None
    value = root
    for part in path[2:].split(".") if path != "$" else ():
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def reconcile_arguments(spec: ReconcileSpec, action: Action) -> dict[str, JSON] | None:
    """The reconcile call's arguments, or None when a path is missing from the action. Pure."""
    root = {
        "arguments": action.arguments_value(),
        "idempotency_key": action.idempotency_key,
        "action_id": action.id,
        "server": action.server,
        "tool": action.tool,
    }
    out: dict[str, JSON] = {}
    for name, source in spec.arguments.items():
        if isinstance(source, str) and source.startswith("$"):
            found, out[name] = resolve_path(root, source)
            if not found:
                return None
        else:
            out[name] = source
    return out


def reconcile_verdict(spec: ReconcileSpec, result: Mapping[str, JSON]) -> Verdict | None:
    """What a reconcile result says about the action; None when it cannot tell. Pure."""
    if result.get("isError"):
        return None
    found, value = resolve_path(result, spec.succeeded_when)
    if not found:
        return None
    took_effect = value == spec.equals if spec.has_equals else bool(value)
    return "succeeded" if took_effect else "failed_final"


def default_owner() -> str:
    """This executor instance: `host/pid/random`."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def owner_is_gone(owner: str | None) -> bool:
    """Whether the executor that owned an action is dead: its process on this host no longer exists.
    An owner on another host cannot be checked and counts as alive."""
    if owner is None:
        return True
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class _Done(NamedTuple):
    outcome: CallOutcome
    error_type: str | None = None
    replayed: bool = False


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
    ) -> None:
        self.store = store
        self.owner = owner or default_owner()
        self._clock = clock
        self._sleep = sleep
        self._rng: Uniform = rng or random.SystemRandom()
        self._tracer = tracer or get_tracer()
        self._approver = approver
        self._wait_s = wait_s

    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        side_effect = request.policy.get("side_effect")
        with action_span(
            self._tracer, server=request.server, tool=request.tool, call_id=request.call_id,
            side_effect=side_effect if isinstance(side_effect, str) else None,
        ) as span:  # fmt: skip
            done = await self._execute(request, dispatch, span)
            outcome = done.outcome
            span.finish(
                state=outcome.state, attempts=outcome.attempts, error_type=done.error_type, replayed=done.replayed
            )
            return outcome

    async def recover(
        self, reconcile_dispatch: Dispatch | None, *, is_orphan: Callable[[Action], bool] | None = None
    ) -> RecoveryReport:
        """On start: settle dead executors' actions, then reconcile `unknown_outcome` actions where configured."""
        orphan = is_orphan or (lambda action: action.owner != self.owner and owner_is_gone(action.owner))
        recovered = await self.store.recover_dispatching(self._clock(), is_orphan=orphan)
        reconciled: list[Action] = []
        if reconcile_dispatch is not None:
            for action in await self.store.list(ActionFilter(states=("unknown_outcome",))):
                try:
                    policy = ExecPolicy.from_mapping(action.policy_value())
                except ValueError:
                    continue
                if policy.reconcile is None:
                    continue
                settled = await self._reconcile(action, policy, reconcile_dispatch, settle_negative=True)
                if settled.state != "unknown_outcome":
                    reconciled.append(settled)
        return RecoveryReport(tuple(recovered), tuple(reconciled))

    # --- steps ----------------------------------------------------------------------------------------

    async def _execute(self, request: CallRequest, dispatch: Dispatch, span: ActionSpan) -> _Done:
        key_argument = request.policy.get("idempotency_key_argument")
        supplied = [
            request.idempotency_key,
            request.meta.get(IDEMPOTENCY_META_KEY),
            request.arguments.get(key_argument) if isinstance(key_argument, str) else None,
        ]
        keys = [value for value in supplied if value is not None]
        if any(value != keys[0] for value in keys):
            return _refusal(
                "the call carries different idempotency keys (idempotency_key, _meta, key argument); send one key",
                "invalid_idempotency_key",
            )
        key: JSON = keys[0] if keys else None
        if key is not None and (not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS):
            return _refusal(
                f"an idempotency key is a string of 1 to {MAX_KEY_CHARS} characters", "invalid_idempotency_key"
            )
        try:
            # the key argument is the key, not part of the call: it is set from the action's key on dispatch
            arguments = canonical_json({k: v for k, v in request.arguments.items() if k != key_argument})
            policy_json = canonical_json(dict(request.policy))
        except (TypeError, ValueError) as exc:
            return _refusal(f"arguments are not JSON: {exc}", "invalid_arguments")
        now = self._clock()
        action_id = new_action_id(now)
        side_effect = str(request.policy.get("side_effect", "irreversible_write"))
        draft = Action(
            id=action_id, idempotency_key=key or action_id, session_id=request.session_id, requester=request.requester,
            call_id=request.call_id, server=request.server, tool=request.tool, tool_sha256=request.tool_sha256,
            arguments=arguments, args_sha256=sha256_text(arguments), side_effect=side_effect, policy=policy_json,
            state="proposed", created_at=now, updated_at=now, owner=self.owner,
        )  # fmt: skip
        action, created = await self.store.create_action(draft)
        span.bind(action_id=action.id, idempotency_key=action.idempotency_key, side_effect=action.side_effect)
        if not created:
            return await self._rejoin(action, draft, request, dispatch, span)
        try:
            policy = ExecPolicy.from_mapping(request.policy)
        except ValueError as exc:
            action = await self._move(
                action, ("proposed",), "failed_final", error_type="invalid_policy", error=str(exc)
            )
            return _done(action)
        action = await self._move(action, ("proposed",), "validated")
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
        deadline = self._clock() + self._wait_budget(policy)
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
                    action = await self._move(action, ("validated",), "awaiting_approval", approval="pending")
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
                    action = await self._move(
                        action, ("awaiting_approval",), "failed_final", approval="declined",
                        approval_ref="elicitation", error_type="approval_declined", error="the approver declined",
                    )  # fmt: skip
                    return _done(action)
                action = await self._move(
                    action, ("awaiting_approval",), "validated", approval="approved", approval_ref="elicitation"
                )
            except StateConflict as conflict:
                return await self._rejoin(conflict.action, conflict.action, request, dispatch, span)
        return await self._run(action, policy, request, dispatch, span)

    async def _run(
        self, action: Action, policy: ExecPolicy, request: CallRequest, dispatch: Dispatch, span: ActionSpan
    ) -> _Done:
        """Dispatch with retries; `validated -> dispatching` is the claim that makes this executor the sender."""
        arguments = dict(request.arguments)
        if policy.key_argument is not None:
            arguments[policy.key_argument] = action.idempotency_key
        call = replace(request, arguments=arguments)
        meta = {IDEMPOTENCY_META_KEY: action.idempotency_key}
        delays = backoff_delays(policy.retry, self._rng)
        ambiguous = False
        from_states: Sequence[State] = ("validated",)
        while True:
            number = action.attempts + 1
            try:
                action = await self._move(action, from_states, "dispatching", attempts=number, owner=self.owner)
            except StateConflict as conflict:
                return await self._rejoin(conflict.action, conflict.action, request, dispatch, span)
            started = self._clock()
            try:
                result: Mapping[str, JSON] | None = await self._attempt(dispatch, call, meta, policy.timeout_s)
                error: Exception | None = None
            except Exception as exc:  # the attempt's outcome, whatever dispatch raised; recorded below
                result, error = None, exc
            except BaseException:  # cancelled: leave a settled record, then let the cancellation through
                ended = self._clock()
                await self._abandon(action, Attempt(action.id, number, started, ended, "error", "cancelled", None))
                raise
            ended = self._clock()
            if error is not None and not isinstance(error, UpstreamError):
                logger.warning("dispatch of %s/%s raised %r", action.server, action.tool, error, exc_info=error)
            tool_error = result is not None and bool(result.get("isError"))
            error_type = _error_type(error) if error is not None else ("tool_error" if tool_error else None)
            outcome: Literal["ok", "tool_error", "error"] = "error" if error else "tool_error" if tool_error else "ok"
            message = None if error is None else clip(f"{error}" or type(error).__name__)
            attempt = Attempt(action.id, number, started, ended, outcome, error_type, message)
            span.attempt(number, outcome=outcome, error_type=error_type, duration_s=ended - started)
            if result is not None:
                state: State = "failed_final" if tool_error else "succeeded"
                action = await self._move(
                    action,
                    ("dispatching",),
                    state,
                    attempt=attempt,
                    result=canonical_json(result),
                    error_type=error_type,
                )
                return _done(action)
            assert error is not None
            ambiguous = ambiguous or is_ambiguous(error)
            if should_retry(
                error, number, policy.retry, tool_idempotent=policy.idempotent, upstream_honours_key=policy.honours_key
            ):
                delay = next(delays, None)
                if delay is not None:
                    action = await self._move(
                        action,
                        ("dispatching",),
                        "failed_retryable",
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
            action = await self._move(
                action, ("dispatching",), final, attempt=attempt, error_type=error_type, error=message
            )
            if final == "unknown_outcome" and policy.reconcile is not None:
                action = await self._reconcile(action, policy, dispatch, settle_negative=False)
            return _done(action)

    async def _attempt(
        self, dispatch: Dispatch, call: CallRequest, meta: Mapping[str, JSON], timeout_s: float
    ) -> Mapping[str, JSON]:
        result: Mapping[str, JSON] | None = None
        with anyio.move_on_after(timeout_s + DISPATCH_GRACE_S):
            result = await dispatch(call, meta, timeout_s)
        if result is None:
            raise UpstreamTimeout(f"no answer within {timeout_s:g}s")
        if not isinstance(result, Mapping):
            raise TypeError(f"dispatch returned {type(result).__name__}, not a CallToolResult mapping")
        canonical_json(dict(result))  # raises here, inside the attempt, when the result is not JSON
        return result

    async def _reconcile(
        self, action: Action, policy: ExecPolicy, dispatch: Dispatch, *, settle_negative: bool
    ) -> Action:
        spec = policy.reconcile
        assert spec is not None
        arguments = reconcile_arguments(spec, action)
        if arguments is None:
            return action
        probe = CallRequest(
            server=action.server, tool=spec.tool, arguments=arguments, tool_sha256="",
            policy={"side_effect": "read_only", "idempotent": True, "approval": "never",
                    "timeout_ms": int(policy.timeout_s * 1000)},
            session_id=action.session_id, requester="quiver-reconcile",
        )  # fmt: skip
        try:
            result = await self._attempt(dispatch, probe, {}, policy.timeout_s)
        except Exception as exc:  # the reconcile tool could not answer: the action stays unknown_outcome
            logger.info("reconcile of action %s via %s failed: %r", action.id, spec.tool, exc)
            return action
        verdict = reconcile_verdict(spec, result)
        if verdict is None or (verdict == "failed_final" and not settle_negative):
            return action
        if verdict == "succeeded":
            text = f"`{action.server}/{action.tool}` took effect (confirmed by `{spec.tool}`); action {action.id}"
            fields: dict[str, JSON] = {"error_type": None, "error": None}
        else:
            text = f"`{action.server}/{action.tool}` did not take effect (per `{spec.tool}`); action {action.id}"
            fields = {"error_type": "not_applied", "error": f"`{spec.tool}` reports no effect"}
        result_json = canonical_json(_text(text, action, verdict, is_error=verdict != "succeeded"))
        try:
            return await self._move(
                action, ("unknown_outcome",), verdict, result=result_json,
                detail=clip(f"reconciled by {spec.tool}: {canonical_json(dict(result))}", 500), **fields,
            )  # fmt: skip
        except StateConflict as conflict:
            return conflict.action

    async def _abandon(self, action: Action, attempt: Attempt | None = None) -> None:
        """Cancelled mid-run: record where the action was left (a write in flight is unknown_outcome)."""
        with anyio.CancelScope(shield=True):
            try:
                current = await self.store.get(action.id)
                plan = recovery_state(current)
                if plan != "skip":
                    await self._move(
                        current, (current.state,), plan, attempt=attempt if current.state == "dispatching" else None,
                        error_type="cancelled", error="the call was cancelled",
                    )  # fmt: skip
            except StateConflict:
                pass  # settled meanwhile by another executor or a recovery: nothing left to record

    async def _move(
        self,
        action: Action,
        from_states: Sequence[State],
        to_state: State,
        *,
        detail: str | None = None,
        attempt: Attempt | None = None,
        **fields: JSON,
    ) -> Action:
        return await self.store.transition(
            action.id, from_states, to_state, at=self._clock(), detail=detail, attempt=attempt, **fields
        )

    def _wait_budget(self, policy: ExecPolicy | None) -> float:
        if self._wait_s is not None:
            return self._wait_s
        if policy is None:
            return DEFAULT_TIMEOUT_MS / 1000
        attempts = policy.retry.maximum_attempts or 10
        return (policy.timeout_s + DISPATCH_GRACE_S) * attempts + policy.retry.cap * (attempts - 1) + 1.0


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


def _done(action: Action, *, replayed: bool = False) -> _Done:
    """The outcome of a settled action: its stored result, or one built from its state and error."""
    result = action.result_value()
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
