"""Every private name of the MCP SDK that quiver uses, in one place, each with its way out.

The SDK (`mcp`, pinned below the next minor release in pyproject.toml) has no public API for these:

- `mcp.server.runner._has_modern_envelope`, `_serve_legacy_stream`, `_serve_modern_stream`: the two
  protocol eras' stream loops and the test that picks one, which `serve_dual_era_loop` runs after a relay
  task that costs two event-loop turns a message (`runtime/_stdio.serve`). Way out: `Server.run`.
- `mcp.server._otel.OpenTelemetryMiddleware`: the SDK's default span middleware, which the gateway swaps
  for its own (`runtime/telemetry_mcp.install`). Way out: recognise it by its class name.
- `mcp.shared._stream_protocols.ReadStream` and `mcp.client._transport.TransportStreams`: type names only,
  imported by other modules under TYPE_CHECKING from here, so nothing imports them at run time.

It sits in the bottom layer: the gateway (`runtime/`) and live snapshots (`sources/live.py`, below runtime)
both name the SDK's types.

The stream loops are used only when each can be called exactly as `_stdio.serve` calls it (checked with
`inspect.signature(...).bind` on the arguments named below); anything else (the module gone, a name
renamed, a parameter added, removed or renamed) falls back, with one warning naming what changed.
tests/runtime/test_sdk_private.py checks the installed SDK against these lists: a new SDK release is
admitted (pyproject's upper bound moved) only once the suite passes on it (docs/decisions.md, "MCP SDK:
private names and the version cap", issue 24).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams as TransportStreams
    from mcp.shared._stream_protocols import ReadStream as ReadStream

__all__ = ["CALLS", "RUNNER", "StreamLoops", "is_sdk_tracing", "loops_of", "stream_loops"]

logger = logging.getLogger(__name__)

RUNNER = "mcp.server.runner"
OTEL_MODULE, OTEL_CLASS = "mcp.server._otel", "OpenTelemetryMiddleware"

# name -> (positional arguments, keyword arguments) exactly as `_stdio.serve` passes them
CALLS: Mapping[str, tuple[int, tuple[str, ...]]] = {
    "_has_modern_envelope": (1, ()),
    "_serve_legacy_stream": (
        3,
        ("lifespan_state", "session_id", "init_options", "raise_exceptions"),
    ),
    "_serve_modern_stream": (3, ("lifespan_state", "raise_exceptions")),
}


@dataclass(frozen=True, slots=True)
class StreamLoops:
    """The SDK's era test and stream loops, each checked to take the arguments `_stdio.serve` passes."""

    has_modern_envelope: Callable[[Mapping[str, Any] | None], bool]
    serve_legacy_stream: Callable[..., Any]
    serve_modern_stream: Callable[..., Any]


def mismatch(function: object, positional: int, keywords: tuple[str, ...]) -> str | None:
    """Why `function(*positional args, **keywords)` cannot be called as written, or None when it can."""
    if not callable(function):
        return "is not callable"
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        return f"has no readable signature ({exc})"
    try:
        signature.bind(*([None] * positional), **dict.fromkeys(keywords))
    except TypeError:
        return f"takes {signature}, not {positional} positional argument(s) and {', '.join(keywords) or 'no keywords'}"
    return None


def loops_of(runner: ModuleType | object) -> tuple[StreamLoops | None, str | None]:
    """(the loops, None) when `runner` has all three names callable as CALLS says, else (None, why not)."""
    found: dict[str, object] = {}
    for name, (positional, keywords) in CALLS.items():
        function = getattr(runner, name, None)
        if function is None:
            return None, f"{RUNNER}.{name} is gone"
        why = mismatch(function, positional, keywords)
        if why is not None:
            return None, f"{RUNNER}.{name} {why}"
        found[name] = function
    return (
        StreamLoops(
            has_modern_envelope=found["_has_modern_envelope"],  # type: ignore[arg-type]
            serve_legacy_stream=found["_serve_legacy_stream"],  # type: ignore[arg-type]
            serve_modern_stream=found["_serve_modern_stream"],  # type: ignore[arg-type]
        ),
        None,
    )


@functools.cache
def stream_loops() -> StreamLoops | None:
    """The installed SDK's stream loops, or None (with one warning) when they are not as 2.3 has them."""
    try:
        loops, why = loops_of(importlib.import_module(RUNNER))
    except Exception as exc:  # not only ImportError: a module that fails while importing is gone too
        loops, why = None, f"{RUNNER} does not import ({type(exc).__name__}: {exc})"
    if loops is None:
        logger.warning("the MCP SDK's stream loops changed (%s): serving through Server.run", why)
    return loops


@functools.cache
def _otel_class() -> type | None:
    try:
        found = getattr(importlib.import_module(OTEL_MODULE), OTEL_CLASS, None)
    except Exception:
        return None
    return found if isinstance(found, type) else None


def is_sdk_tracing(middleware: object) -> bool:
    """Whether `middleware` is the SDK's default OpenTelemetry middleware (by its class, else by its name)."""
    cls = _otel_class()
    if cls is not None:
        return isinstance(middleware, cls)
    return type(middleware).__name__ == OTEL_CLASS
