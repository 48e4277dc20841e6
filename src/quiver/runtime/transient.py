"""Which tool-error results are transient: `isError: true` whose text matches a pattern (DESIGN §7). Pure.

Servers that wrap HTTP APIs report a downstream timeout, a 503 or a reset connection as a tool result
with `isError: true` rather than as a protocol error. Such a result is *transient* when the text of its
content (its `text` items, joined by newlines) matches one of the tool's `transient_errors` patterns
(Python regular expressions, searched anywhere in the text; `(?i)` makes one case-insensitive). The
policy's list replaces the default set below (`transient_errors = []` turns classification off);
without the key the defaults apply:

* timeouts: "timeout", "timed out", "time-out";
* "connection reset", "connection refused", "connection aborted", ECONNRESET, ECONNREFUSED;
* HTTP 429 / 502 / 503 / 504 as a number, or "too many requests", "bad gateway", "service
  unavailable", "gateway timeout";
* "temporarily unavailable", "try again".

What the executor does with a transient result is the rule for any transient failure: retried when
sending again is safe (read-only, idempotent, or the upstream honours the key), else on a write
`unknown_outcome` (the tool may have acted before it failed) and never re-sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quiver.model import JSON
from quiver.policy_values import compiled_pattern
from quiver.runtime.protocol import UpstreamError

__all__ = ["DEFAULT_TRANSIENT_ERRORS", "TransientToolError", "result_text", "transient_error", "transient_match"]

DEFAULT_TRANSIENT_ERRORS: tuple[str, ...] = (
    r"(?i)\b(timeout|timed out|time-out)\b",
    r"(?i)\b(connection (reset|refused|aborted)|econnreset|econnrefused)\b",
    r"\b(429|502|503|504)\b",
    r"(?i)\b(too many requests|bad gateway|service unavailable|gateway timeout)\b",
    r"(?i)\btemporarily unavailable\b",
    r"(?i)\btry again\b",
)
MAX_TEXT_CHARS = 4000  # of a result's text searched: an error message, not a document


class TransientToolError(UpstreamError):
    """The tool answered `isError: true` with a text matching a transient pattern (`pattern`)."""

    def __init__(self, message: str, pattern: str) -> None:
        super().__init__(message)
        self.pattern = pattern


def result_text(result: Mapping[str, JSON]) -> str:
    """The text items of a CallToolResult's content, joined by newlines."""
    content = result.get("content")
    items = content if isinstance(content, list) else []
    texts = [str(item.get("text")) for item in items if isinstance(item, Mapping) and item.get("type") == "text"]
    return "\n".join(texts)


def transient_match(result: Mapping[str, JSON], patterns: Sequence[str] | None) -> str | None:
    """The first pattern matching an `isError` result's text (`patterns` None: the defaults), else None."""
    if not result.get("isError"):
        return None
    text = result_text(result)[:MAX_TEXT_CHARS]
    for pattern in DEFAULT_TRANSIENT_ERRORS if patterns is None else patterns:
        if compiled_pattern(pattern).search(text):
            return pattern
    return None


def transient_error(result: Mapping[str, JSON] | None, patterns: Sequence[str] | None) -> TransientToolError | None:
    """The error a transient tool-error result stands for (naming the matched pattern), else None."""
    pattern = None if result is None else transient_match(result, patterns)
    if result is None or pattern is None:
        return None
    return TransientToolError(f"transient tool error (matched `{pattern}`): {result_text(result)}", pattern)
