"""How the upstream connections fail: the errors of `quiver.runtime.upstream` beyond the protocol's, and
the mapping of an SDK exception (or a failed start) to the protocol's `UpstreamError`s."""

from __future__ import annotations

import anyio
import mcp.types as types
from mcp import MCPError
from pydantic import ValidationError

from quiver.runtime.protocol import UpstreamError, UpstreamProtocolError, UpstreamTimeout
from quiver.runtime.upstream_connection import PinCheck, _Connection, _first_line, _leaf

_SESSION_LOST_MESSAGES = ("session not found", "session terminated")


class UpstreamConnectionLost(UpstreamTimeout):
    """The connection ended while the request was in flight: it may or may not have run."""


class SchemaMismatch(UpstreamProtocolError):
    """The upstream's definition of the tool no longer matches the manifest pin."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None, transient=False)


class _SessionLost(Exception):
    """An HTTP server no longer knows our session: the request was rejected, not run."""


def _map_error(exc: BaseException, conn: _Connection, what: str) -> Exception:
    """The protocol's UpstreamError (or _SessionLost) for an exception raised by the SDK."""
    leaf = _leaf(exc)
    if isinstance(leaf, UpstreamError):
        return leaf
    if isinstance(leaf, MCPError):
        if leaf.code == types.REQUEST_TIMEOUT:
            return UpstreamTimeout(f"upstream `{conn.server}` did not answer {what}: {leaf.message}")
        if leaf.code == types.CONNECTION_CLOSED:
            conn.mark_lost()
            return UpstreamConnectionLost(
                f"upstream `{conn.server}` closed the connection during {what}; the call may or may not have run"
            )
        if leaf.code == types.INVALID_REQUEST and leaf.message.strip().lower() in _SESSION_LOST_MESSAGES:
            return _SessionLost(leaf.message)
        return UpstreamProtocolError(
            f"upstream `{conn.server}` answered {what} with error {leaf.code}: {leaf.message}",
            leaf.code,
            transient=leaf.code == types.INTERNAL_ERROR,
        )
    if isinstance(leaf, TimeoutError):
        return UpstreamTimeout(f"upstream `{conn.server}` did not answer {what} in time")
    if isinstance(leaf, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream | OSError):
        conn.mark_lost()
        return UpstreamConnectionLost(
            f"upstream `{conn.server}` connection failed during {what} ({_first_line(leaf)}); "
            "the call may or may not have run"
        )
    if isinstance(leaf, ValidationError):
        return UpstreamProtocolError(f"upstream `{conn.server}` sent an invalid {what} result", None)
    return UpstreamProtocolError(f"upstream `{conn.server}` failed during {what}: {_first_line(leaf)}", None)


def _mismatch_line(server: str, tool: str, pin: str, check: PinCheck) -> str:
    if check.current is None:
        return f"upstream `{server}` no longer serves tool `{tool}` (pinned sha256 {pin[:12]})"
    return f"upstream `{server}` serves `{tool}` with sha256 {str(check.current_sha256)[:12]}, pinned {pin[:12]}"


def _start_failure(server: str, error: BaseException | None, timeout_s: float) -> str:
    leaf = _leaf(error) if error is not None else None
    if leaf is None or isinstance(leaf, TimeoutError):
        return f"upstream `{server}` did not start within {timeout_s:g} s (no initialize answer and tool list)"
    if isinstance(leaf, FileNotFoundError | PermissionError):
        return f"cannot start upstream `{server}`: {leaf.strerror or leaf} ({leaf.filename})"
    if isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED:
        return f"upstream `{server}` exited or closed the connection during start-up"
    return f"cannot start upstream `{server}`: {_first_line(leaf)}"
