"""Reconcile: ask a read tool on the same server whether an `unknown_outcome` action took effect (DESIGN §7).

The policy names the tool, its arguments and what in its result means "it took effect":

    reconcile = {tool = "get_order", arguments = {id = "$.arguments.order_id", key = "$.idempotency_key"},
                 succeeded_when = "$.structuredContent.found", equals = true}

`arguments` values that are strings starting with `$` are JSONPath-lite paths (dotted names, list
indexes as numbers) into `{"arguments": ..., "idempotency_key": ..., "action_id": ..., "server": ...,
"tool": ...}`; anything else is a literal. The reconcile call's result (wire JSON) decides: isError
true, or `succeeded_when` missing from it -> still unknown; otherwise the value at `succeeded_when`
(compared with `equals` when given, else its truthiness) -> `succeeded` or `failed_final`. A result
without `structuredContent` whose text content parses as JSON is read as if that JSON were its
`structuredContent` (most servers answer JSON as text). Right after a failure, and in the periodic
sweeps of a running gateway, only a confirmation settles the action (a request the upstream still
holds could land after a "no"); at recovery on gateway start (the previous gateway's upstreams died
with it) either answer settles it.

The probe goes through the same `Dispatch` as every call, so the upstream's definition of the reconcile
tool is checked against its pin: `quiver compile` writes the locked tool's sha256 into the policy as
`reconcile.tool_sha256` (and refuses a reconcile tool the server's locked catalog does not have). A
policy without that pin (a manifest from an older quiver) is never probed: recompile.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

from quiver.model import JSON
from quiver.policy_values import ReconcileSpec
from quiver.runtime._exec_outcome import _text
from quiver.runtime._exec_policy import ExecPolicy, attempt_once
from quiver.runtime.ledger import (
    Action,
    ActionFilter,
    Attempt,
    LedgerStore,
    State,
    StateConflict,
    canonical_json,
    clip,
)
from quiver.runtime.protocol import CallRequest, Dispatch
from quiver.runtime.transient import result_text

logger = logging.getLogger(__name__)

Verdict = Literal["succeeded", "failed_final"]
RECONCILE_INITIAL_S = 1.0  # the wait before a sweep asks about an unsettled action again
RECONCILE_MAX_S = 300.0
PROBE_MIN_TIMEOUT_S = 10.0  # a probe waits at least this long (its server may be starting): a read, safe to wait for


class StateMover(Protocol):
    """What reconcile uses of the executor that runs it (`LedgerExecutor`): its ledger, its clock and its
    guarded state move."""

    store: LedgerStore

    def now(self) -> float: ...

    async def move(
        self,
        action: Action,
        from_states: Sequence[State],
        to_state: State,
        *,
        detail: str | None = None,
        attempt: Attempt | None = None,
        **fields: JSON,
    ) -> Action: ...


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
    found, value = resolve_path(_with_parsed_text(result), spec.succeeded_when)
    if not found:
        return None
    took_effect = value == spec.equals if spec.has_equals else bool(value)
    return "succeeded" if took_effect else "failed_final"


def _with_parsed_text(result: Mapping[str, JSON]) -> Mapping[str, JSON]:
    """The result, with its text content parsed as JSON as `structuredContent` when it has none."""
    if result.get("structuredContent") is not None:
        return result
    try:
        parsed = json.loads(result_text(result))
    except ValueError:
        return result
    return {**result, "structuredContent": parsed}


async def reconcile_action(
    executor: StateMover, action: Action, policy: ExecPolicy, dispatch: Dispatch, *, settle_negative: bool
) -> Action:
    """Ask `policy.reconcile`'s tool about an `unknown_outcome` action, through `executor`, and settle it.

    A confirmation settles it `succeeded`; a "no" settles it `failed_final` only with `settle_negative`
    (at recovery: right after a timeout the upstream may still hold the request). A missing argument
    path, no answer or an unclear one leaves it `unknown_outcome`; if another executor settled it
    meanwhile, that action is returned.
    """
    spec = policy.reconcile
    assert spec is not None
    arguments = reconcile_arguments(spec, action)
    if arguments is None:
        return action
    if not spec.tool_sha256:
        logger.warning(
            "action %s: reconcile tool `%s` has no pin in the manifest (recompile with this quiver); not asked",
            action.id, spec.tool,
        )  # fmt: skip
        return action
    # the write's timeout, but never less than PROBE_MIN_TIMEOUT_S: the probe often (re)starts the server
    timeout_s = max(policy.timeout_s, PROBE_MIN_TIMEOUT_S)
    probe = CallRequest(
        server=action.server, tool=spec.tool, arguments=arguments, tool_sha256=spec.tool_sha256,
        policy={"side_effect": "read_only", "idempotent": True, "approval": "never",
                "timeout_ms": int(timeout_s * 1000)},
        session_id=action.session_id, requester="quiver-reconcile",
    )  # fmt: skip
    try:
        result = await attempt_once(dispatch, probe, {}, timeout_s)
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
        return await executor.move(
            action, ("unknown_outcome",), verdict, result=result_json,
            detail=clip(f"reconciled by {spec.tool}: {canonical_json(dict(result))}", 500), **fields,
        )  # fmt: skip
    except StateConflict as conflict:
        return conflict.action


async def reconcile_pending(
    executor: StateMover,
    dispatch: Dispatch,
    probes: dict[str, tuple[float, float]],
    *,
    settle_negative: bool,
) -> list[Action]:
    """Ask about every `unknown_outcome` action whose policy has a reconcile tool; the ones settled.

    `probes` (action id -> (next probe at, last wait), kept by the caller between sweeps) is the
    backoff: an action whose probe settled nothing is asked again after RECONCILE_INITIAL_S, then
    twice as long each time, up to RECONCILE_MAX_S."""
    settled_now: list[Action] = []
    for action in await executor.store.list(ActionFilter(states=("unknown_outcome",))):
        due, wait = probes.get(action.id, (0.0, 0.0))
        if executor.now() < due:
            continue
        try:
            policy = ExecPolicy.from_mapping(action.policy_value())
        except ValueError:
            continue
        if policy.reconcile is None:
            continue
        settled = await reconcile_action(executor, action, policy, dispatch, settle_negative=settle_negative)
        if settled.state != "unknown_outcome":
            probes.pop(action.id, None)
            settled_now.append(settled)
        else:
            wait = min(RECONCILE_MAX_S, wait * 2 if wait else RECONCILE_INITIAL_S)
            probes[action.id] = (executor.now() + wait, wait)
    return settled_now
