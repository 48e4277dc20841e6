"""The executor's per-tool policy, checked: what `LedgerExecutor` reads of the manifest's `policy` table.

Pure: the policy mapping in, an `ExecPolicy` out, or ValueError on a bad value (see `quiver.policy` for
how the policy is merged and checked at compile time). Also what the policy bounds: one attempt
(`attempt_once`, the timeout plus DISPATCH_GRACE_S) and how long a re-call waits for a running action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import anyio

from quiver.model import JSON
from quiver.policy_values import ReconcileSpec, check_patterns
from quiver.runtime.ledger import canonical_json
from quiver.runtime.protocol import CallRequest, Dispatch, UpstreamTimeout
from quiver.runtime.retry import RetryPolicy

DEFAULT_TIMEOUT_MS = 30_000
DISPATCH_GRACE_S = 1.0  # beyond the dispatch's own timeout, before the executor stops waiting itself
SIDE_EFFECTS = ("read_only", "reversible_write", "irreversible_write")
APPROVALS = ("never", "always", "irreversible")


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
    transient_errors: tuple[str, ...] | None = None  # None: `quiver.runtime.transient`'s defaults

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
        transient = policy.get("transient_errors")
        return cls(
            side_effect=side_effect,
            approval=approval,
            idempotent=policy.get("idempotent") is True or side_effect == "read_only",
            timeout_s=timeout_ms / 1000,
            retry=RetryPolicy.from_mapping(policy.get("retry")),
            reconcile=None if reconcile is None else ReconcileSpec.from_mapping(reconcile),
            key_argument=key_argument,
            key_in_meta_honoured=policy.get("honours_idempotency_key") is True,
            transient_errors=None if transient is None else check_patterns(transient),
        )


_CHECKED: dict[int, tuple[Mapping[str, JSON], str, ExecPolicy | str]] = {}


def checked_policy(policy: Mapping[str, JSON]) -> tuple[str, ExecPolicy | str]:
    """(canonical JSON, the checked policy or what is wrong with it) of a tool's policy mapping.

    Kept per mapping object (a manifest builds each tool's once and never changes it): a call does not
    re-encode and re-check its tool's policy. The cache holds the mapping, so its id is never reused."""
    hit = _CHECKED.get(id(policy))
    if hit is not None and hit[0] is policy:
        return hit[1], hit[2]
    text = canonical_json(dict(policy))
    checked: ExecPolicy | str
    try:
        checked = ExecPolicy.from_mapping(policy)
    except ValueError as exc:
        checked = str(exc)
    if len(_CHECKED) >= 4096:
        _CHECKED.clear()
    _CHECKED[id(policy)] = (policy, text, checked)
    return text, checked


async def attempt_once(
    dispatch: Dispatch, call: CallRequest, meta: Mapping[str, JSON], timeout_s: float
) -> Mapping[str, JSON]:
    """One dispatch, bounded by `timeout_s` + DISPATCH_GRACE_S; raises UpstreamTimeout, or TypeError/ValueError
    when the result is not a JSON CallToolResult mapping."""
    return (await attempt_json(dispatch, call, meta, timeout_s))[0]


async def attempt_json(
    dispatch: Dispatch, call: CallRequest, meta: Mapping[str, JSON], timeout_s: float
) -> tuple[Mapping[str, JSON], str]:
    """`attempt_once`, with the result's canonical JSON (the check that it is JSON is its encoding, done once)."""
    result: Mapping[str, JSON] | None = None
    with anyio.move_on_after(timeout_s + DISPATCH_GRACE_S):
        result = await dispatch(call, meta, timeout_s)
    if result is None:
        raise UpstreamTimeout(f"no answer within {timeout_s:g}s")
    if not isinstance(result, Mapping):
        raise TypeError(f"dispatch returned {type(result).__name__}, not a CallToolResult mapping")
    return result, canonical_json(dict(result))  # raises here, inside the attempt, when the result is not JSON


def wait_budget_s(policy: ExecPolicy | None) -> float:
    """How long a re-call with the same key waits for the executor running it: every attempt and backoff."""
    if policy is None:
        return DEFAULT_TIMEOUT_MS / 1000
    attempts = policy.retry.maximum_attempts or 10
    return (policy.timeout_s + DISPATCH_GRACE_S) * attempts + policy.retry.cap * (attempts - 1) + 1.0
