"""Reconcile: ask a read tool on the same server whether an `unknown_outcome` action took effect (DESIGN §7).

The policy names the tool, its arguments and what in its result means "it took effect":

    reconcile = {tool = "get_order", arguments = {id = "$.arguments.order_id", key = "$.idempotency_key"},
                 succeeded_when = "$.structuredContent.found", equals = true}

`arguments` values that are strings starting with `$` are JSONPath-lite paths (dotted names, list
indexes as numbers) into `{"arguments": ..., "idempotency_key": ..., "action_id": ..., "server": ...,
"tool": ...}`; anything else is a literal. The reconcile call's result (wire JSON) decides: isError
true, or `succeeded_when` missing from it -> still unknown; otherwise the value at `succeeded_when`
(compared with `equals` when given, else its truthiness) -> `succeeded` or `failed_final`. Right after a
timeout only a confirmation settles the action (a request the upstream still holds could land after a
"no"); at recovery (`recover`, on gateway start) either answer settles it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from quiver.runtime._exec_outcome import _text
from quiver.runtime.ledger import JSON, Action, StateConflict, canonical_json, clip
from quiver.runtime.protocol import CallRequest, Dispatch

if TYPE_CHECKING:
    from quiver.runtime._exec_policy import ExecPolicy
    from quiver.runtime.executor import LedgerExecutor

# the executor's logger, as before the move: `quiver serve` prints logger names
logger = logging.getLogger("quiver.runtime.executor")

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


async def reconcile_action(
    executor: LedgerExecutor, action: Action, policy: ExecPolicy, dispatch: Dispatch, *, settle_negative: bool
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
    probe = CallRequest(
        server=action.server, tool=spec.tool, arguments=arguments, tool_sha256="",
        policy={"side_effect": "read_only", "idempotent": True, "approval": "never",
                "timeout_ms": int(policy.timeout_s * 1000)},
        session_id=action.session_id, requester="quiver-reconcile",
    )  # fmt: skip
    try:
        result = await executor._attempt(dispatch, probe, {}, policy.timeout_s)
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
        return await executor._move(
            action, ("unknown_outcome",), verdict, result=result_json,
            detail=clip(f"reconciled by {spec.tool}: {canonical_json(dict(result))}", 500), **fields,
        )  # fmt: skip
    except StateConflict as conflict:
        return conflict.action
