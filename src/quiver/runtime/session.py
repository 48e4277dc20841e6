"""Per-session state of the gateway: the tools that joined the exposed list, and the session's figures.

A session is what one client sees. Where it lives depends on the transport and protocol era:

* stdio: one gateway process serves one client, so there is one session per process (either era);
* in-process (`mcp.Client(gateway.server)`): one per client, in the server's lifespan state;
* streamable HTTP, handshake era (2025-11-25): one per `Mcp-Session-Id`;
* streamable HTTP, 2026-07-28: that protocol has no session, so its clients of one gateway (they share
  its bearer token) share one session: a tool one of them loaded is listed to the others.

No `mcp` import here: this is plain state, shared by the gateway and its tests.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

DEFAULT_MAX_SESSIONS = 1024


@dataclass(slots=True)
class SessionStats:
    """Figures that judge a preload policy (DESIGN §7): discovery, refusals, time to the first call."""

    started: float = field(default_factory=time.monotonic)
    calls: int = 0
    succeeded: int = 0
    refused: int = 0
    invalid_arguments: int = 0
    schema_mismatches: int = 0
    discovery_steps: int = 0  # meta-tool calls: search, list, describe
    first_success_s: float | None = None

    def summary(self) -> str:
        first = f"{self.first_success_s:.3f} s" if self.first_success_s is not None else "none"
        return (
            f"{self.calls} calls ({self.succeeded} succeeded, {self.invalid_arguments} with invalid arguments, "
            f"{self.schema_mismatches} schema mismatches), {self.refused} refused, "
            f"{self.discovery_steps} discovery steps, first success after {first}"
        )

    def record_success(self) -> None:
        self.succeeded += 1
        if self.first_success_s is None:
            self.first_success_s = round(time.monotonic() - self.started, 6)


@dataclass(eq=False, slots=True)
class GatewaySession:
    """One client's view: deferred tools it loaded (by exposed name, in order) and its figures."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    loaded: dict[str, None] = field(default_factory=dict)  # an ordered set
    stats: SessionStats = field(default_factory=SessionStats)

    def load(self, names: Iterable[str]) -> list[str]:
        """Add tools to the exposed list for the rest of the session; returns those that were new."""
        added = [name for name in dict.fromkeys(names) if name not in self.loaded]
        for name in added:
            self.loaded[name] = None
        return added

    def is_loaded(self, name: str) -> bool:
        return name in self.loaded


class SessionScope:
    """The sessions of one serving scope: a default one, plus one per transport session id (bounded, LRU)."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.default = GatewaySession()
        self._by_id: OrderedDict[str, GatewaySession] = OrderedDict()
        self._max = max_sessions

    def get(self, transport_session_id: str | None) -> GatewaySession:
        if transport_session_id is None:
            return self.default
        session = self._by_id.get(transport_session_id)
        if session is None:
            session = self._by_id[transport_session_id] = GatewaySession(id=transport_session_id)
            while len(self._by_id) > self._max:
                self._by_id.popitem(last=False)
        else:
            self._by_id.move_to_end(transport_session_id)
        return session

    def __len__(self) -> int:
        return len(self._by_id) + 1

    def sessions(self) -> list[GatewaySession]:
        return [self.default, *self._by_id.values()]
