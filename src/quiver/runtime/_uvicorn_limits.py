"""uvicorn's httptools protocol with the limits a public gateway needs (the one place that names uvicorn's
protocol class, `uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`, which is not uvicorn's public API;
tests/runtime/test_http_hardening.py runs it through a real `quiver serve --http`).

uvicorn times out only idle keep-alive connections: a client that sends half a request line or half its
headers, or a body that never ends, holds its connection (and a slot) forever. Here:

- the request line and headers must arrive within `header_timeout_s` of the request's first byte (or of
  the connection, for the first request);
- each chunk of a body within `body_timeout_s` of the one before;
- at most `max_connections` connections are open at once; one more is closed at once.

A connection that breaks a limit is closed (there is no request to answer yet) and logged through a
`Throttle`: one line, then a count per window, never a line per connection.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from quiver.runtime._throttle import Throttle

__all__ = ["HttpLimits", "limited_protocol"]

logger = logging.getLogger("quiver.runtime.serve")


class HttpLimits:
    def __init__(self, *, header_timeout_s: float, body_timeout_s: float, max_connections: int) -> None:
        self.header_timeout_s, self.body_timeout_s, self.max_connections = (
            header_timeout_s,
            body_timeout_s,
            max_connections,
        )
        self.throttle = Throttle(logger)


def limited_protocol(limits: HttpLimits) -> type[asyncio.Protocol]:
    """The protocol class for `uvicorn.Config(http=...)`, enforcing `limits`."""

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                limits.throttle.warn(
                    "connections", "closed a connection: %d are open, the limit", limits.max_connections
                )
                transport.close()
                return
            self._arm(limits.header_timeout_s, "its request line and headers")

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._timer is None:  # the next request on a kept-alive connection
                self._arm(limits.header_timeout_s, "its request line and headers")

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._arm(limits.body_timeout_s, "the next part of its body")

        def on_body(self, body: bytes) -> None:
            super().on_body(body)
            self._arm(limits.body_timeout_s, "the next part of its body")

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._disarm()

        def _arm(self, seconds: float, what: str) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, self._expired, seconds, what)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expired(self, seconds: float, what: str) -> None:
            self._timer = None
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            limits.throttle.warn(
                "timeouts", "closed the connection of %s: %s did not arrive within %g s", client, what, seconds
            )
            if not self.transport.is_closing():
                self.transport.close()

    return LimitedHttpToolsProtocol
