"""The executor's per-tool policy, checked: what `LedgerExecutor` reads of the manifest's `policy` table.

Pure: the policy mapping in, an `ExecPolicy` out, or ValueError on a bad value (see `quiver.policy` for
how the policy is merged and checked at compile time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quiver.runtime.ledger import JSON
from quiver.runtime.reconcile import ReconcileSpec
from quiver.runtime.retry import RetryPolicy
from quiver.runtime.transient import check_patterns

DEFAULT_TIMEOUT_MS = 30_000
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
