"""What the SDK asks of a read stream beyond `receive` and `aclose`: async iteration and `async with`.

Shared by the gateway's own stdio read stream (`_stdio.py`) and the watched upstream stream
(`upstream_connection.py`), which differ only in how they receive and close.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import anyio
from mcp.shared.message import SessionMessage


class ReadStreamBase:
    """Subclasses give `receive` (EndOfStream at the end) and `aclose`; this gives the rest of the protocol."""

    async def receive(self) -> SessionMessage | Exception:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
