"""The gateway's serving scope (`GatewayScope`: sessions, the change-notification bus) and the low-level
server it runs on (see `quiver.runtime.gateway`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

from quiver.runtime.session import SessionScope


@dataclass(eq=False)
class GatewayScope:
    """The lifespan state of one serving scope: its sessions and its 2026-era change-notification bus."""

    sessions: SessionScope
    bus: InMemorySubscriptionBus
    listen: ListenHandler


class _GatewayServer(Server[GatewayScope]):
    """The low-level server, advertising `tools.listChanged` to handshake-era clients on every transport.

    The SDK's in-memory transport and streamable-HTTP manager call `create_initialization_options()`
    without arguments; the default here turns the flag on for them too.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )
