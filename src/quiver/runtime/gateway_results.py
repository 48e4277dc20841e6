"""The results the gateway answers with: a JSON payload, an error, and why a tool of a server that had no
catalog when the manifest was compiled is missing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from quiver.model import JSON
from quiver.runtime._manifest import Manifest

if TYPE_CHECKING:
    from mcp import MCPError

    from quiver.runtime.executor import LedgerOutage

# The JSON-RPC error code of a call the ledger could not record (in JSON-RPC's implementation-defined server
# error range, -32000 to -32099; the SDK uses -32001 for a request timeout). Stable: clients may test for it.
LEDGER_UNAVAILABLE = -32030


def _json_result(payload: dict[str, JSON]) -> dict[str, JSON]:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return {"content": [{"type": "text", "text": text}], "structuredContent": payload, "isError": False}


def _error(text: str) -> dict[str, JSON]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _unsnapshotted(manifest: Manifest, server: str, name: str) -> str | None:
    """Why a tool of a server the manifest lists without any tool is missing: the lock had no catalog."""
    if server not in manifest.servers or manifest.server_tools(server):
        return None
    return (
        f"`{name}`: server `{server}` had no catalog in the lock file when this manifest was compiled, so the "
        f"agent carries none of its tools; run `quiver snapshot --server {server}`, then `quiver compile`"
    )


def ledger_unavailable_error(name: str, outage: LedgerOutage) -> MCPError:
    """`LEDGER_UNAVAILABLE` with data `{"retryable", "sent", "idempotency_key"}`: nothing sent means the same
    call may be sent again (with the same key, when it had one); sent means its outcome is not on record."""
    from mcp import MCPError

    if outage.sent:
        text = (
            f"quiver gateway: the ledger could not record the outcome of `{name}`, which was sent upstream: its "
            "effect is not on record; do not send it again blindly (see `quiver ledger list --state dispatching`)"
        )
    else:
        again = f" with idempotency key `{outage.idempotency_key}`" if outage.idempotency_key else ""
        text = f"quiver gateway: ledger unavailable, `{name}` was not sent; call it again{again} later"
    data = {"retryable": not outage.sent, "sent": outage.sent, "idempotency_key": outage.idempotency_key}
    return MCPError(LEDGER_UNAVAILABLE, text, data)
