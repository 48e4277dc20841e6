"""Tokens for bench/gateway.py: the client's first tools/list against every tool of the agent preloaded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


async def initial_tools(manifest: Path) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]], dict[str, Any]]:
    """(the client's first tools/list, the initialize instructions, every tool preloaded, compile's budget)."""
    import json

    from mcp import Client

    from quiver.runtime._manifest import load_manifest
    from quiver.runtime.gateway import Gateway

    loaded = load_manifest(manifest)
    async with Gateway(loaded, environ={}) as gateway, Client(gateway.server, mode="legacy") as client:
        listed = (await client.list_tools()).tools
        instructions = client.instructions or ""
    received = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
    everything = [t.exposed_definition() for t in loaded.tools]
    return received, instructions, everything, json.loads(manifest.read_text())["budget"]


def print_tokens(tokens: list[Any], table: Callable[[list[str], list[list[Any]]], None]) -> None:
    from quiver.tokens import count_tools_payload, counter, encoder_name

    print(f"tokens ({encoder_name()}): the client's first tools/list (+ the server index in its instructions)")
    print("against every tool of the agent preloaded; compile's budget of the same manifest for comparison")
    rows = []
    for label, received, instructions, everything, budget in tokens:
        first, full = count_tools_payload(received), count_tools_payload(everything)
        index = counter().count(instructions) if instructions else 0
        rows.append(
            [
                label,
                f"{len(received)} tools",
                first,
                index,
                f"{len(everything)} tools",
                full,
                f"{1 - (first + index) / full:.1%}",
                f"{budget['initial_tokens']} / {budget['baseline_tokens']}",
            ]
        )
    table(["manifest", "initial", "tokens", "+ index", "all preloaded", "tokens", "saving", "budget"], rows)
