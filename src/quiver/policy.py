"""Side-effect classes and execution policy per tool (DESIGN §7), from annotations and config. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from quiver.errors import ConfigError
from quiver.model import JSON, SideEffect

SIDE_EFFECTS: tuple[str, ...] = get_args(SideEffect)
APPROVALS = ("never", "always", "irreversible")
DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_RETRY: dict[str, JSON] = {
    "initial_interval": 1.0,
    "backoff_coefficient": 2.0,
    "maximum_interval": 30.0,
    "maximum_attempts": 3,
    "non_retryable_errors": [],
}
POLICY_KEYS = frozenset(
    {
        "timeout_ms",
        "retry",
        "approval",
        "side_effect",
        "reconcile",
        "idempotency_key_argument",
        "honours_idempotency_key",
        "transient_errors",
    }
)


def side_effect_class(annotations: Mapping[str, JSON]) -> SideEffect:
    """From MCP annotations, with the spec's defaults (destructiveHint defaults to true)."""
    if annotations.get("readOnlyHint") is True:
        return "read_only"
    if annotations.get("destructiveHint") is False:
        return "reversible_write"
    return "irreversible_write"


def execution_policy(
    *,
    server: str,
    tool: str,
    annotations: Mapping[str, JSON],
    server_timeout_ms: int | None,
    server_policy: Mapping[str, JSON],
    tool_policy: Mapping[str, JSON],
) -> dict[str, JSON]:
    """The merged policy: defaults < server config < per-tool config. Raises ConfigError on a bad value."""
    merged: dict[str, JSON] = {}
    for layer in (server_policy, tool_policy):
        for key, value in layer.items():
            if key not in POLICY_KEYS:
                raise ConfigError(
                    f"unknown policy key `{key}` for `{server}/{tool}`",
                    hint=f"use one of {', '.join(sorted(POLICY_KEYS))}",
                )
            if key == "retry" and isinstance(value, dict):
                merged["retry"] = {**merged.get("retry", {}), **value}
            else:
                merged[key] = value
    side_effect = merged.get("side_effect", side_effect_class(annotations))
    if side_effect not in SIDE_EFFECTS:
        raise ConfigError(f"`side_effect` for `{server}/{tool}` must be one of {', '.join(SIDE_EFFECTS)}")
    approval = merged.get("approval", "never")
    if approval not in APPROVALS:
        raise ConfigError(f"`approval` for `{server}/{tool}` must be one of {', '.join(APPROVALS)}")
    retry = {**DEFAULT_RETRY, **(merged.get("retry") or {})}
    unknown = set(retry) - set(DEFAULT_RETRY)
    if unknown:
        raise ConfigError(
            f"unknown retry key `{sorted(unknown)[0]}` for `{server}/{tool}`",
            hint="use Temporal's names: " + ", ".join(DEFAULT_RETRY),
        )
    timeout = merged.get("timeout_ms", server_timeout_ms or DEFAULT_TIMEOUT_MS)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError(f"`timeout_ms` for `{server}/{tool}` must be a positive whole number")
    policy: dict[str, JSON] = {
        "approval": approval,
        "idempotent": annotations.get("idempotentHint") is True or side_effect == "read_only",
        "retry": retry,
        "side_effect": side_effect,
        "timeout_ms": timeout,
    }
    for key in ("reconcile", "idempotency_key_argument", "honours_idempotency_key", "transient_errors"):
        if key in merged:
            policy[key] = merged[key]
    if "transient_errors" in policy:
        policy["transient_errors"] = _check_transient(policy["transient_errors"], server, tool)
    if "reconcile" in policy:
        _check_reconcile(policy["reconcile"], server, tool)
    if "honours_idempotency_key" in policy and not isinstance(policy["honours_idempotency_key"], bool):
        raise ConfigError(f"`honours_idempotency_key` for `{server}/{tool}` must be true or false")
    return policy


def _check_reconcile(value: JSON, server: str, tool: str) -> None:
    from quiver.runtime.reconcile import ReconcileSpec

    try:
        ReconcileSpec.from_mapping(value)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"`reconcile` for `{server}/{tool}`: {exc}",
            hint='write {tool = "get_x", arguments = {id = "$.arguments.id"}, '
            'succeeded_when = "$.structuredContent.found"}',
        ) from None


def _check_transient(value: JSON, server: str, tool: str) -> list[str]:
    from quiver.runtime.transient import check_patterns

    try:
        return list(check_patterns(value))
    except ValueError as exc:
        raise ConfigError(
            f"`transient_errors` for `{server}/{tool}`: {exc}",
            hint='write a list of Python regular expressions, e.g. transient_errors = ["(?i)rate limit", "\\b503\\b"]',
        ) from None
