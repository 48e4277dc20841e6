"""One upstream connection's state (`_Connection`), the read stream that notices its end, and `PinCheck`,
the live definition of a tool against its pin (see `quiver.runtime.upstream`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.session import IncomingMessage
from mcp.shared.message import SessionMessage

from quiver.model import JSON
from quiver.runtime._read_stream import ReadStreamBase

if TYPE_CHECKING:
    from quiver.mcp_sdk import ReadStream
    from quiver.runtime.upstream_stdio import DirectCalls

logger = logging.getLogger("quiver.runtime.upstream")  # the name its records had before the split


@dataclass(frozen=True, slots=True)
class PinCheck:
    """The upstream's current definition of one tool against its pin."""

    matches: bool
    current: Mapping[str, JSON] | None  # None: the server no longer serves the tool
    current_sha256: str | None


@dataclass(eq=False)
class _Connection:
    """One session with one server; its contexts live in `UpstreamManager._run`."""

    server: str
    generation: int
    session: ClientSession | None = None
    error: BaseException | None = None
    catalog: dict[str, dict[str, Any]] = field(default_factory=dict)
    catalog_stale: bool = False
    checked: dict[tuple[str, str], PinCheck] = field(default_factory=dict)
    ready: anyio.Event = field(default_factory=anyio.Event)
    ended: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)  # its task's, for `aclose`
    lost: bool = False
    direct: DirectCalls | None = None  # the transport's, where it has them (stdio)

    @property
    def usable(self) -> bool:
        return self.session is not None and not self.ended.is_set()

    def mark_lost(self) -> None:
        if not self.ended.is_set():
            self.lost = True
            self.ended.set()

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            logger.info("upstream `%s` changed its tool list; its pins will be checked again", self.server)
            self.catalog_stale = True
        elif isinstance(message, Exception):
            logger.warning("upstream `%s` sent something that is not MCP: %s", self.server, _first_line(message))


class _WatchedReadStream(ReadStreamBase):
    """A transport's read stream that reports its end: how a crashed server is noticed between calls."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__
