"""Does a config value hold a literal credential? Pure heuristics, no I/O.

A value is judged after its variable references (`${VAR}`, `$VAR`, `${input:x}`, ...) are removed:
only what is written literally can leak. Three signals, strongest first:
1. a known token format (GitHub, OpenAI/Anthropic `sk-`, Slack, AWS, Google, GitLab, npm, PyPI, Stripe,
   Hugging Face, JWTs, PEM private keys);
2. an HTTP credential scheme followed by a literal (`Bearer abc...`, `Basic ...`, `token ...`);
3. a random-looking literal: under a secret-sounding name (`*TOKEN*`, `*KEY*`, `*SECRET*`,
   `*PASSWORD*`, `Authorization`, ...) 12+ characters mixing letters and digits or cases; under any
   other name 32+ characters mixing lower case, upper case and digits with high entropy.
Placeholders (`<your-token>`, `YOUR_API_KEY`, `xxxx`, `changeme`, ...) never count.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from quiver.variables import REFERENCE

TOKEN_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}", "GitHub token"),
        (r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}", "GitHub fine-grained token"),
        (r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}", "Anthropic API key"),
        (r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}", "`sk-` secret key"),
        (r"(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}", "Slack token"),
        (r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])", "AWS access key id"),
        (r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}", "Google API key"),
        (r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}", "GitLab token"),
        (r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}", "npm token"),
        (r"(?<![A-Za-z0-9_-])pypi-[A-Za-z0-9_-]{50,}", "PyPI token"),
        (r"(?<![A-Za-z0-9_])[sr]k_live_[A-Za-z0-9]{20,}", "Stripe key"),
        (r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}", "Hugging Face token"),
        (r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+", "JSON Web Token"),
        (r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "private key"),
    )
)
SECRET_NAME = re.compile(
    r"(?i)token|secret|passw|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|credential|auth|cookie"
    r"|session|(?:^|[-_])pat(?:$|[-_])"
)
_SCHEME = re.compile(r"(?i)^\s*(bearer|basic|token)\s+(\S+)\s*$")
_PLACEHOLDER = re.compile(
    r"(?i)your[-_ ]|<[^>]*>|\.\.\.|x{4,}|\*{3,}|placeholder|changeme|change[-_]me|replace|example|dummy"
    r"|redacted|todo|secret[-_]?here|token[-_]?here|(?-i:^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$)"
)
_NOT_OPAQUE = re.compile(r"\s|://|^[/~.]|\\")
_URL_QUERY = r"(?i)[?&](api[-_]?key|access[-_]?token|token|key|secret|password|sig)=([^&#]+)"  # compiled on use
_URL_USERINFO = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:]*:([^/@]+)@", re.IGNORECASE)


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _classes(text: str) -> int:
    return sum(any(test(c) for c in text) for test in (str.islower, str.isupper, str.isdigit))


def is_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDER.search(text)) or len(set(text)) <= 2


def _literal(value: str) -> str:
    return REFERENCE.sub(" ", value)


def token_format(value: str) -> str | None:
    """The kind of a known token format found literally in `value`."""
    literal = _literal(value)
    for pattern, kind in TOKEN_FORMATS:
        if any(not is_placeholder(match.group(0)) for match in pattern.finditer(literal)):
            return kind
    return None


def secret_kind(name: str, value: str) -> str | None:
    """What kind of literal credential an `env` / `headers` entry `name: value` holds, or None."""
    kind = token_format(value)
    if kind is not None:
        return kind
    scheme = _SCHEME.match(value)
    if scheme is not None:
        credential = scheme.group(2)
        if REFERENCE.search(credential) or is_placeholder(credential) or len(credential) < 8:
            return None
        return f"`{scheme.group(1).capitalize()}` credential"
    if REFERENCE.search(value):
        return None
    text = value.strip()
    if _NOT_OPAQUE.search(text) or is_placeholder(text):
        return None
    if SECRET_NAME.search(name):
        if len(text) >= 12 and _classes(text) >= 2 and _entropy(text) >= 3.0:
            return "secret value"
        return None
    if len(text) >= 32 and _classes(text) == 3 and _entropy(text) >= 4.0:
        return "high-entropy string (a key?)"
    return None


def url_secret(url: str) -> str | None:
    """A literal password or credential query parameter in a URL."""
    literal = _literal(url)
    kind = token_format(url)
    if kind is not None:
        return kind
    userinfo = _URL_USERINFO.match(literal)
    if userinfo and userinfo.group(1).strip() and not is_placeholder(userinfo.group(1)):
        return "password in the URL"
    for match in re.finditer(_URL_QUERY, url) if "=" in url else ():
        value = match.group(2)
        if not REFERENCE.search(value) and not is_placeholder(value) and len(value) >= 8:
            return f"`{match.group(1)}` query parameter"
    return None
