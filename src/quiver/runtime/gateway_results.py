"""The results the gateway answers with: a JSON payload, an error, and why a tool of a server that had no
catalog when the manifest was compiled is missing."""

from __future__ import annotations

import json

from quiver.model import JSON
from quiver.runtime._manifest import Manifest


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
