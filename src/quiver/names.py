"""Model-facing tool names per host (DESIGN §3): what the model sees for `server` + `tool`."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping

HOSTS = ("api", "claude", "copilot_cli", "quiver")
API_CAP = 64
COPILOT_CAP = 64
QUIVER_CAP = 128
_COPILOT_BAD = re.compile(r"[^A-Za-z0-9_-]")
_QUIVER_BAD = re.compile(r"[^A-Za-z0-9._-]")


def _ascii(text: str) -> str:
    """Non-ASCII text is Punycode-encoded, as the Copilot CLI does."""
    if text.isascii():
        return text
    return text.encode("punycode").decode("ascii")


@functools.cache
def copilot_cli_name(server: str, tool: str) -> str:
    """`server-tool`, characters outside `[A-Za-z0-9_-]` become `-`, capped at 64 characters."""
    return _COPILOT_BAD.sub("-", _ascii(f"{server}-{tool}"))[:COPILOT_CAP]


@functools.cache
def claude_name(server: str, tool: str) -> str:
    """Claude Code's `mcp__server__tool` (characters outside `[A-Za-z0-9_-]` become `_`)."""
    return "mcp__" + re.sub(r"[^A-Za-z0-9_-]", "_", server) + "__" + re.sub(r"[^A-Za-z0-9_-]", "_", tool)


@functools.cache
def quiver_name(server: str, tool: str) -> str:
    """quiver's own `server__tool`: valid as an MCP tool name (`[A-Za-z0-9._-]`, 1-128 characters)."""
    return _QUIVER_BAD.sub("-", _ascii(f"{server}__{tool}"))[:QUIVER_CAP]


@functools.cache
def api_name(server: str, tool: str) -> str:
    """Host API function names (Anthropic, OpenAI): `server__tool` in `[A-Za-z0-9_-]`, at most 64 characters."""
    return _COPILOT_BAD.sub("-", _ascii(f"{server}__{tool}"))[:API_CAP]


_NAMERS = {
    "api": (api_name, API_CAP),
    "copilot_cli": (copilot_cli_name, COPILOT_CAP),
    "claude": (claude_name, 0),
    "quiver": (quiver_name, QUIVER_CAP),
}


def assign_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Mapping[str, str]]:
    """Names for every (server, tool) per host; collisions get a numeric suffix in sorted order.

    Where no host has two equal names (the usual case), each pair's names are `plain_names`' mapping, shared
    by every call that carries the pair. The mappings are never changed."""
    ordered = sorted(set(pairs))
    if collision_free(ordered):
        return {pair: plain_names(*pair) for pair in ordered}
    out: dict[tuple[str, str], dict[str, str]] = {pair: {} for pair in ordered}
    for host, (namer, cap) in _NAMERS.items():
        taken: set[str] = set()
        for pair in ordered:
            base = namer(*pair)
            name = base
            n = 2
            while name in taken:
                suffix = str(n)
                name = (base[: cap - len(suffix)] if cap else base) + suffix
                n += 1
            taken.add(name)
            out[pair][host] = name
    return dict(out)


def collision_free(pairs: Collection[tuple[str, str]]) -> bool:
    """Whether no two of these distinct pairs get the same name on any host: then every subset of them is
    named by `plain_names` alone."""
    plain = [plain_names(*pair) for pair in pairs]
    return all(len({names[host] for names in plain}) == len(plain) for host in _NAMERS)


@functools.lru_cache(maxsize=65_536)
def plain_names(server: str, tool: str) -> Mapping[str, str]:
    """Each host's name of the pair when nothing collides with it (one shared mapping per pair)."""
    return {host: namer(server, tool) for host, (namer, _) in _NAMERS.items()}


def truncated(server: str, tool: str) -> Mapping[str, bool]:
    """Which hosts cut this name at their length cap."""
    return {
        "copilot_cli": len(_COPILOT_BAD.sub("-", _ascii(f"{server}-{tool}"))) > COPILOT_CAP,
        "quiver": len(_ascii(f"{server}__{tool}")) > QUIVER_CAP,
    }
