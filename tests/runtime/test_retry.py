"""Retry policy: full-jitter backoff bounds (property tests) and which failures may be sent again."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quiver.runtime.protocol import UpstreamError, UpstreamProtocolError, UpstreamTimeout, UpstreamUnavailable
from quiver.runtime.retry import RetryPolicy, backoff_delays, is_ambiguous, should_retry

policies = st.builds(
    RetryPolicy,
    # 0 or a real duration: subnormal floats (5e-324 s) make `initial * coefficient**n` and the running
    # product round apart by a whole unit, which says nothing about the backoff.
    initial_interval=st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=60, allow_nan=False)),
    backoff_coefficient=st.floats(min_value=1, max_value=10, allow_nan=False),
    maximum_interval=st.none(),
    maximum_attempts=st.integers(min_value=1, max_value=40),
)


class Extremes:
    """An rng that alternates the lowest and the highest value `uniform` may return."""

    def __init__(self) -> None:
        self.high = False

    def uniform(self, a: float, b: float) -> float:
        self.high = not self.high
        return b if self.high else a


@given(policy=policies, cap_factor=st.floats(min_value=1, max_value=50), seed=st.integers())
def test_each_wait_lies_between_zero_and_the_capped_exponential(
    policy: RetryPolicy, cap_factor: float, seed: int
) -> None:
    policy = RetryPolicy(
        initial_interval=policy.initial_interval, backoff_coefficient=policy.backoff_coefficient,
        maximum_interval=policy.initial_interval * cap_factor, maximum_attempts=policy.maximum_attempts,
    )  # fmt: skip
    delays = list(backoff_delays(policy, random.Random(seed)))
    assert len(delays) == policy.maximum_attempts - 1
    for n, delay in enumerate(delays):
        ceiling = min(policy.cap, policy.initial_interval * policy.backoff_coefficient**n)
        assert 0 <= delay <= ceiling * (1 + 1e-9)


@given(policy=policies)
def test_the_highest_waits_grow_by_the_coefficient_until_the_cap(policy: RetryPolicy) -> None:
    highs = list(backoff_delays(policy, Extremes()))[::2]
    for n, high in enumerate(highs):
        expected = min(policy.cap, policy.initial_interval * policy.backoff_coefficient ** (2 * n))
        assert high == pytest.approx(expected, rel=1e-9)


def test_without_maximum_interval_the_cap_is_a_hundred_initial_intervals() -> None:
    policy = RetryPolicy(initial_interval=0.5, backoff_coefficient=2, maximum_attempts=0)
    highs = [d for d in itertools.islice(backoff_delays(policy, Extremes()), 40)][::2]
    assert max(highs) == 50.0


def test_unlimited_attempts_never_run_out_of_waits_and_never_overflow() -> None:
    policy = RetryPolicy(initial_interval=1, backoff_coefficient=10, maximum_interval=30, maximum_attempts=0)
    delays = list(itertools.islice(backoff_delays(policy, random.Random(1)), 2000))
    assert len(delays) == 2000
    assert max(delays) <= 30


def test_one_attempt_means_no_retry() -> None:
    assert list(backoff_delays(RetryPolicy(maximum_attempts=1), random.Random(0))) == []


@pytest.mark.parametrize(
    "value",
    [
        {"initial_interval": -1},
        {"backoff_coefficient": 0.5},
        {"maximum_interval": 0.1, "initial_interval": 1},
        {"maximum_attempts": -1},
        {"maximum_attempts": 2.5},
        {"maximum_attempts": True},
        {"non_retryable_errors": "UpstreamTimeout"},
        {"jitter": True},
    ],
)
def test_a_bad_retry_table_is_refused(value: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy.from_mapping(value)


def test_temporal_names_are_read_from_the_manifest() -> None:
    policy = RetryPolicy.from_mapping(
        {"initial_interval": 0.2, "backoff_coefficient": 3, "maximum_interval": 5, "maximum_attempts": 4,
         "non_retryable_errors": ["UpstreamTimeout"]}
    )  # fmt: skip
    assert policy == RetryPolicy(0.2, 3, 5, 4, ("UpstreamTimeout",))


POLICY = RetryPolicy(maximum_attempts=3)
TRANSIENT_RPC = UpstreamProtocolError("internal", -32603, transient=True)


@pytest.mark.parametrize(
    ("error", "idempotent", "honours", "expected"),
    [
        (UpstreamTimeout("slow"), True, False, True),
        (UpstreamTimeout("slow"), False, True, True),
        (UpstreamTimeout("slow"), False, False, False),
        (TRANSIENT_RPC, True, False, True),
        (TRANSIENT_RPC, False, False, False),
        (UpstreamProtocolError("bad params", -32602), True, True, False),
        (UpstreamUnavailable("not started"), False, False, True),
        (RuntimeError("a bug"), True, True, False),
    ],
)
def test_only_transient_errors_are_retried_and_only_when_sending_again_is_safe(
    error: Exception, idempotent: bool, honours: bool, expected: bool
) -> None:
    assert should_retry(error, 1, POLICY, tool_idempotent=idempotent, upstream_honours_key=honours) is expected


def test_no_retry_once_the_attempts_are_used_up() -> None:
    assert should_retry(UpstreamTimeout("x"), 2, POLICY, tool_idempotent=True, upstream_honours_key=False)
    assert not should_retry(UpstreamTimeout("x"), 3, POLICY, tool_idempotent=True, upstream_honours_key=False)
    unlimited = RetryPolicy(maximum_attempts=0)
    assert should_retry(UpstreamTimeout("x"), 10_000, unlimited, tool_idempotent=True, upstream_honours_key=False)


def test_listed_non_retryable_errors_match_the_exact_class_name() -> None:
    policy = RetryPolicy(non_retryable_errors=("UpstreamTimeout",))
    assert not should_retry(UpstreamTimeout("x"), 1, policy, tool_idempotent=True, upstream_honours_key=False)
    assert should_retry(UpstreamUnavailable("x"), 1, policy, tool_idempotent=True, upstream_honours_key=False)
    parent = RetryPolicy(non_retryable_errors=("UpstreamError",))
    assert should_retry(UpstreamTimeout("x"), 1, parent, tool_idempotent=True, upstream_honours_key=False)


def test_timeouts_and_unknown_failures_are_ambiguous_but_unreached_or_answered_ones_are_not() -> None:
    assert is_ambiguous(UpstreamTimeout("x"))
    assert is_ambiguous(UpstreamError("connection dropped"))
    assert is_ambiguous(RuntimeError("bug"))
    assert not is_ambiguous(UpstreamUnavailable("x"))
    assert not is_ambiguous(TRANSIENT_RPC)
