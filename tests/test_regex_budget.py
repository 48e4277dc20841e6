"""`regex_budget`: RE2 answers only where it agrees with `re`; the rest goes to a worker under a budget."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.regex_budget import (
    NeedsBacktracking,
    PatternTimeout,
    bounded_validator,
    budget,
    close_workers,
    linear_only,
    linear_search,
    search,
)

ATOMS = ["a", "b", ".", "\\d", "\\w", "\\s", "\\b", "\\D", "\\W", "\\S", "[ab]", "[^a]", "[a-z]", "\\.", "é", "\\x41",
         "[\\d]", "[\\s]", "x{2}", "a{1,3}", "(?:ab)", "(a|b)", "^", "$", "\\A", " ", "-", "\\n", "[]a]", "{", "}",
         "\\t", "\\v", "[[:alpha:]]", "a{,2}", "\\Z", "(?i)a", "(?=a)", "(?P<n>a)", "\\1", "a*+"]  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def _no_workers_left() -> Iterator[None]:
    yield
    close_workers()  # the worker processes are this process's children: other tests count those


QUANTIFIERS = ["", "", "*", "+", "?", "*?", "{2}", "{0,2}"]
TEXT = st.text(alphabet=st.sampled_from(list("ab AZ09_é١\n\t\x0b\x1c-.!")), max_size=12)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)), min_size=1, max_size=5))
    body = "".join(a + q for a, q in parts)
    return body if draw(st.booleans()) else f"({body})|{draw(st.sampled_from(ATOMS))}"


@settings(max_examples=1500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(patterns(), TEXT)
def test_where_re2_answers_it_agrees_with_re(pattern: str, text: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # `re` on `[[:alpha:]]`: "possible nested set"
            expected = re.search(pattern, text) is not None
    except re.error:
        return  # jsonschema's meta-schema check refuses such a pattern before any argument is matched
    found = linear_search(pattern, text)
    assert found is None or found == expected, (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [("^\\d+$", "١٢٣"), ("^a$", "a\n"), ("\\s", "\x0b"), ("(?=a)a", "a"), ("(a)\\1", "aa"), ("a{,2}", "aa")],
)
def test_what_re2_reads_differently_goes_to_re(pattern: str, text: str) -> None:
    assert linear_search(pattern, text) is None
    assert search(pattern, text) == (re.search(pattern, text) is not None)


def test_catastrophic_backtracking_is_linear_in_re2_and_bounded_in_re() -> None:
    assert linear_search("^(a+)+$", "a" * 5000 + "!") is False
    with pytest.raises(PatternTimeout, match=r"took longer than its 0\.5 s budget"), budget(0.5):
        search("^(?=a)(a+)+$", "a" * 40 + "!")  # the worker is killed at the deadline, not waited for
    assert search("^(?=a)(a+)+$", "aaa") is True  # a fresh worker takes the next search
    with linear_only(), pytest.raises(NeedsBacktracking):
        search("^(?=a)(a+)+$", "aaa")


def test_the_bounded_validator_reads_like_jsonschema() -> None:
    import jsonschema

    schema = {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    for value in ({"id": "abc"}, {"id": "AB"}, {"x-a": 1}, {"x-a": "s"}, {"other": 1}, {"id": "a", "x-b": 2}):
        ours = sorted(e.message for e in bounded_validator(schema).iter_errors(value))
        theirs = sorted(e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(value))
        assert ours == theirs, value
