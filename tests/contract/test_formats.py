"""quiver's own format checkers: the same verdict on every install, RFC shapes rather than anything goes."""

from __future__ import annotations

import pytest

from quiver.contract.formats import CHECKS, conforms
from quiver.contract.witness import is_valid

GOOD = {
    "date": ["2024-02-29", "1999-12-31"],
    "date-time": ["2024-01-01T00:00:00Z", "2024-01-01t23:59:60.25+01:00"],
    "time": ["00:00:00Z", "12:30:00-05:00"],
    "email": ["user@example.com"],
    "idn-email": ["jos\u00e9@example.com"],
    "hostname": ["example.com", "a-b.c", "localhost."],
    "uri": ["https://example.com/a?b=%20", "urn:isbn:0451450523"],
    "uri-reference": ["../a/b", "#frag", ""],
    "uuid": ["00000000-0000-4000-8000-000000000000"],
    "ipv4": ["127.0.0.1"],
    "ipv6": ["::1", "2001:db8::8a2e:370:7334"],
    "regex": ["^[a-z]+$"],
    "json-pointer": ["", "/a~1b/0"],
}
BAD = {
    "date": ["2023-02-29", "2024-1-01", "2024-01-01T00:00:00Z", "x"],
    "date-time": ["2024-01-01", "2024-01-01 00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00"],
    "time": ["00:00:00", "25:00:00Z", "00:61:00Z"],
    "email": ["x", "a@b@c", "a b@c"],
    "idn-email": ["@example.com"],
    "hostname": ["-a.com", "a..b", "x" * 64],
    "uri": ["example.com", "http://a b", "http://a/%zz"],
    "uri-reference": ["a b"],
    "uuid": ["00000000000040008000000000000000", "x"],
    "ipv4": ["256.0.0.1", "01.2.3.4"],
    "ipv6": ["::g", "fe80::1%eth0"],
    "regex": ["("],
    "json-pointer": ["a", "/~2"],
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_each_checker_accepts_the_rfc_form_and_rejects_near_misses(name: str) -> None:
    assert all(conforms(name, value) for value in GOOD[name]), name
    assert not any(conforms(name, value) for value in BAD[name]), name


def test_unknown_formats_and_non_strings_pass_and_witness_checks_use_the_checkers() -> None:
    assert conforms("duration", "not a duration") and conforms("date", 7)
    schema = {"type": "string", "format": "date-time"}
    assert is_valid(schema, "2024-01-01T00:00:00Z") and not is_valid(schema, "2024-01-01")
