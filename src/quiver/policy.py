"""Side-effect classes and execution policy per tool (DESIGN §7), from annotations and config. Pure."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import get_args

from quiver.config import POLICY_KEYS, Config, unknown_key_hint
from quiver.errors import ConfigError, Position
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
    from quiver.policy_values import ReconcileSpec

    try:
        ReconcileSpec.from_mapping(value)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"`reconcile` for `{server}/{tool}`: {exc}",
            hint='write {tool = "get_x", arguments = {id = "$.arguments.id"}, '
            'succeeded_when = "$.structuredContent.found"}',
        ) from None


def _check_transient(value: JSON, server: str, tool: str) -> list[str]:
    from quiver.policy_values import check_patterns

    try:
        return list(check_patterns(value))
    except ValueError as exc:
        raise ConfigError(
            f"`transient_errors` for `{server}/{tool}`: {exc}",
            hint='write a list of Python regular expressions, e.g. transient_errors = ["(?i)rate limit", "\\b503\\b"]',
        ) from None


def policy_errors(config: Config, *, unknown: bool = True) -> list[ConfigError]:
    """Every bad key (with `unknown`) and bad value of the `servers.*` / `tools.*` policy tables, each at
    its file:line:col, in file order: compile reports them all at once, lint as QVR003 / QVR004."""
    errors = []
    if unknown:
        for key, line, col in config.unknown_keys:
            if "." in key and not key.startswith("mcp_servers."):  # those are warnings, as top-level keys are
                head, name, rest = _split_unknown(key, config)
                errors.append(
                    ConfigError(
                        f"unknown policy key `{rest}` in `{head}.{name}`",
                        position=Position(config.path or "quiver.toml", line, col),
                        hint=unknown_key_hint(key),
                    )
                )
    for head, tables in (("servers", config.servers), ("tools", config.tools)):
        for name, table in sorted(tables.items()):
            for path, message, hint in table_problems(table):
                where = config.position(head, name, *path)
                errors.append(ConfigError(f"`{'.'.join((head, name, *path))}` {message}", position=where, hint=hint))
    return sorted(errors, key=lambda e: (e.position.line if e.position else 0, e.message))


def _split_unknown(key: str, config: Config) -> tuple[str, str, str]:
    head, _, rest = key.partition(".")
    names = config.servers if head == "servers" else config.tools
    name = next((n for n in sorted(names, key=len, reverse=True) if rest.startswith(f"{n}.")), rest.split(".")[0])
    return head, name, rest[len(name) + 1 :]


def table_problems(table: Mapping[str, JSON]) -> list[tuple[tuple[str, ...], str, str]]:
    """(key path, what is wrong, hint) for each known key of one policy table whose value the gateway would
    refuse. Unknown keys are the config's (`Config.unknown_keys`)."""
    problems: list[tuple[tuple[str, ...], str, str]] = []

    def bad(key: str, what: str, hint: str, *sub: str) -> None:
        problems.append(((key, *sub), what if sub else f"must be {what}", hint))

    if "side_effect" in table and table["side_effect"] not in SIDE_EFFECTS:
        bad("side_effect", f"one of {', '.join(SIDE_EFFECTS)} (not {table['side_effect']!r})", "write one of them")
    if "approval" in table and table["approval"] not in APPROVALS:
        bad("approval", f"one of {', '.join(APPROVALS)} (not {table['approval']!r})", "write one of them")
    timeout = table.get("timeout_ms", 1)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        bad("timeout_ms", "a positive whole number of milliseconds", "e.g. timeout_ms = 5000")
    retry = table.get("retry", {})
    if not isinstance(retry, dict):
        bad("retry", "a table", "e.g. retry = { maximum_attempts = 5 }")
    else:
        for key in sorted(set(retry) - set(DEFAULT_RETRY)):
            bad("retry", "is not a retry setting", "use Temporal's names: " + ", ".join(DEFAULT_RETRY), key)
        for key in sorted(set(retry) & set(DEFAULT_RETRY)):
            problem = manifest_bound_problem(("retry", key), retry[key])
            if problem is not None:
                bad("retry", problem, f"e.g. retry = {{ {key} = {_example(DEFAULT_RETRY[key])} }}", key)
    if "idempotency_key_argument" in table and not isinstance(table["idempotency_key_argument"], str):
        bad("idempotency_key_argument", "a string (the argument's name)", 'e.g. idempotency_key_argument = "key"')
    if "honours_idempotency_key" in table and not isinstance(table["honours_idempotency_key"], bool):
        bad("honours_idempotency_key", "true or false", "write true or false")
    for key, check in (("transient_errors", _check_transient), ("reconcile", _check_reconcile)):
        if key in table:
            try:
                check(table[key], "", "")
            except ConfigError as exc:
                problems.append(((key,), "is invalid: " + exc.message.split(": ", 1)[-1], exc.hint or "see README"))
    return problems


def manifest_bound_problem(path: tuple[str, ...], value: JSON) -> str | None:
    """Why `value` breaks the manifest schema's own bounds for the policy key at `path` (`("retry",
    "backoff_coefficient")`), as `must be ...` text; None when it fits. The config check and the compiled
    manifest agree because both read the one schema: what passes here never makes compile's output break it."""
    from quiver.schema_fast import instance_valid
    from quiver.validation import load_schema

    schema: JSON = load_schema("manifest")["$defs"]["policy"]
    for part in path:
        schema = schema.get("properties", {}).get(part) if isinstance(schema, dict) else None
    if not isinstance(schema, dict):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number (not {value})"
    if instance_valid("Draft202012Validator", schema, value):
        return None
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    return None if error is None else f"must fit the manifest schema: {error.message}"


def _example(value: JSON) -> str:
    return "[]" if value == [] else str(value)
