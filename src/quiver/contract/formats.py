"""The `format` assertions every witness is checked with: quiver's own checkers, standard library only.

jsonschema asserts `date-time`, `time` and `uri` only when optional packages are installed, so the same diff
would confirm a witness on one machine and not on another. Witnesses use this fixed set instead, the formats
MCP schemas use: `date`, `date-time`, `time` (RFC 3339), `email`, `idn-email`, `hostname`, `uri`,
`uri-reference` (RFC 3986), `uuid` (RFC 4122), `ipv4`, `ipv6`, `regex` and `json-pointer`. Any other
format asserts nothing, on every machine. A value that is not a string passes every format (JSON Schema).
"""

from __future__ import annotations

import calendar
import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Any

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))\Z", re.ASCII)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\Z")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII)
_POINTER = re.compile(r"(?:/(?:[^~/]|~[01])*)*\Z")
# RFC 3986 characters: unreserved, reserved and `%` (checked below as part of a percent-encoding)
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*\Z", re.ASCII)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:", re.ASCII)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def is_date(text: str) -> bool:
    """RFC 3339 full-date: `2024-02-29` (a day the month has)."""
    match = _DATE.match(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


def is_time(text: str) -> bool:
    """RFC 3339 full-time: `23:59:60.5+01:00` (an offset is required; second 60 for a leap second)."""
    match = _TIME.match(text)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), int(match[3])
    if match[4] is not None and (int(match[5]) > 23 or int(match[6]) > 59):
        return False
    return hour <= 23 and minute <= 59 and second <= 60


def is_date_time(text: str) -> bool:
    """RFC 3339 date-time: full-date `T` full-time (`t` and a space-free `T` separator only)."""
    date, separator, time = text[:10], text[10:11], text[11:]
    return separator in ("T", "t") and is_date(date) and is_time(time)


def is_email(text: str) -> bool:
    """One `@` between a local part and a domain, no white space."""
    return _EMAIL.match(text) is not None


def is_hostname(text: str) -> bool:
    """RFC 1123: dot-separated labels of letters, digits and inner hyphens, 63 characters each, 253 in all."""
    name = text[:-1] if text.endswith(".") else text
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def is_uri_reference(text: str) -> bool:
    """RFC 3986 URI-reference: only URI characters, every `%` starts a percent-encoding."""
    return _URI_CHARS.match(text) is not None and _BAD_PERCENT.search(text) is None


def is_uri(text: str) -> bool:
    """RFC 3986 URI: a URI-reference with a scheme."""
    return _SCHEME.match(text) is not None and is_uri_reference(text)


def is_uuid(text: str) -> bool:
    return _UUID.match(text) is not None


def is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def is_ipv6(text: str) -> bool:
    if "%" in text:  # a zone id is not part of the RFC 4291 text form
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def is_regex(text: str) -> bool:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def is_json_pointer(text: str) -> bool:
    return _POINTER.match(text) is not None


CHECKS: Mapping[str, Callable[[str], bool]] = {
    "date": is_date,
    "date-time": is_date_time,
    "time": is_time,
    "email": is_email,
    "idn-email": is_email,
    "hostname": is_hostname,
    "uri": is_uri,
    "uri-reference": is_uri_reference,
    "uuid": is_uuid,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "regex": is_regex,
    "json-pointer": is_json_pointer,
}

# (old, new): every string of the old format has the new one, so the change rejects nothing
IMPLIED_FORMATS = frozenset({("uri", "uri-reference"), ("email", "idn-email")})


def conforms(format_name: str, value: object) -> bool:
    """Whether `value` satisfies `format_name` as witnesses assert it (unknown formats and non-strings pass)."""
    check = CHECKS.get(format_name)
    return check is None or not isinstance(value, str) or check(value)


def format_checker() -> Any:  # Any: jsonschema has no type stubs
    """A `jsonschema.FormatChecker` asserting exactly CHECKS, whatever optional packages are installed."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name in CHECKS:
        checker.checks(name)(lambda value, name=name: conforms(name, value))
    return checker
