"""Retry policy: when to send an action again, and how long to wait first. Pure.

Field names are Temporal's (`initial_interval`, `backoff_coefficient`, `maximum_interval`,
`maximum_attempts`, `non_retryable_errors`); intervals are seconds. `maximum_attempts` counts every
attempt including the first (1 disables retries, 0 means unlimited, as in Temporal), and
`maximum_interval` defaults to 100 x `initial_interval` (Temporal's server default).

The wait before retry n (n = 0 for the second attempt) is "full jitter" (AWS Architecture Blog,
"Exponential Backoff and Jitter"): `uniform(0, min(maximum_interval, initial_interval *
backoff_coefficient ** n))`.

A failed attempt is retried only when all of these hold:
  * the error is an `UpstreamError` whose `transient` is true, and its class name is not listed in
    `non_retryable_errors` (exact match, as Temporal matches error types);
  * attempts are left;
  * sending again is safe: the tool is read-only or idempotent, or the upstream honours the
    idempotency key, or the error is `UpstreamUnavailable` (the server was not reached: nothing was
    sent, so the retry is in effect the first send).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from quiver.runtime.protocol import UpstreamError, UpstreamProtocolError, UpstreamUnavailable

DEFAULT_INITIAL_INTERVAL = 1.0
DEFAULT_BACKOFF_COEFFICIENT = 2.0
DEFAULT_MAXIMUM_ATTEMPTS = 3
MAXIMUM_INTERVAL_FACTOR = 100.0  # Temporal: maximum_interval defaults to 100 x initial_interval


class Uniform(Protocol):
    """The slice of `random.Random` backoff needs."""

    def uniform(self, a: float, b: float) -> float: ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    initial_interval: float = DEFAULT_INITIAL_INTERVAL
    backoff_coefficient: float = DEFAULT_BACKOFF_COEFFICIENT
    maximum_interval: float | None = None
    maximum_attempts: int = DEFAULT_MAXIMUM_ATTEMPTS
    non_retryable_errors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _number(self.initial_interval) or self.initial_interval < 0:
            raise ValueError("retry.initial_interval must be a number of seconds >= 0")
        if not _number(self.backoff_coefficient) or self.backoff_coefficient < 1:
            raise ValueError("retry.backoff_coefficient must be a number >= 1")
        if self.maximum_interval is not None and (
            not _number(self.maximum_interval) or self.maximum_interval < self.initial_interval
        ):
            raise ValueError("retry.maximum_interval must be a number of seconds >= initial_interval")
        if isinstance(self.maximum_attempts, bool) or not isinstance(self.maximum_attempts, int):
            raise ValueError("retry.maximum_attempts must be a whole number (0: unlimited)")
        if self.maximum_attempts < 0:
            raise ValueError("retry.maximum_attempts must be >= 0 (0: unlimited)")

    @property
    def cap(self) -> float:
        """The longest single wait."""
        if self.maximum_interval is not None:
            return float(self.maximum_interval)
        return float(self.initial_interval) * MAXIMUM_INTERVAL_FACTOR

    @classmethod
    def from_mapping(cls, value: Mapping[str, Any] | None) -> RetryPolicy:
        """From the manifest's `retry` table; raises ValueError on an unknown key or a bad value."""
        value = dict(value or {})
        unknown = set(value) - {
            "initial_interval", "backoff_coefficient", "maximum_interval", "maximum_attempts", "non_retryable_errors",
        }  # fmt: skip
        if unknown:
            raise ValueError(f"unknown retry key `{sorted(unknown)[0]}`")
        errors = value.pop("non_retryable_errors", ()) or ()
        if isinstance(errors, str) or not all(isinstance(name, str) for name in errors):
            raise ValueError("retry.non_retryable_errors must be a list of error class names")
        return cls(**value, non_retryable_errors=tuple(errors))


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def backoff_delays(policy: RetryPolicy, rng: Uniform) -> Iterator[float]:
    """The waits before the 2nd, 3rd, ... attempt: `maximum_attempts - 1` of them (endless when 0)."""
    ceiling = float(policy.initial_interval)
    cap = policy.cap
    retry = 0
    while policy.maximum_attempts == 0 or retry < policy.maximum_attempts - 1:
        yield rng.uniform(0.0, min(cap, ceiling))
        ceiling = min(cap, ceiling * policy.backoff_coefficient)  # saturates instead of overflowing
        retry += 1


def should_retry(
    error: BaseException,
    attempt: int,
    policy: RetryPolicy,
    *,
    tool_idempotent: bool,
    upstream_honours_key: bool,
) -> bool:
    """Whether to send again after `attempt` (1-based) failed with `error`; see the module docstring."""
    if not isinstance(error, UpstreamError) or not error.transient:
        return False
    if type(error).__name__ in policy.non_retryable_errors:
        return False
    if policy.maximum_attempts and attempt >= policy.maximum_attempts:
        return False
    return tool_idempotent or upstream_honours_key or isinstance(error, UpstreamUnavailable)


def is_ambiguous(error: BaseException) -> bool:
    """Whether the failed attempt may have taken effect upstream (a timeout, a dropped connection, a bug):
    everything except "not reached" (`UpstreamUnavailable`) and "answered with an error"
    (`UpstreamProtocolError`)."""
    return not isinstance(error, UpstreamUnavailable | UpstreamProtocolError)
