"""Lint rules about the names hosts show the model for `server` + `tool`: collisions and truncation (per agent)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

from quiver import names
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.model import Agent, Finding
from quiver.resolve import ResolvedTool

HOST_LABELS: Mapping[str, str] = {
    "copilot_cli": "Copilot CLI",
    "claude": "Claude Code",
    "quiver": "quiver's gateway",
    "api": "host APIs",
}
_NAMERS: Mapping[str, Callable[[str, str], str]] = {
    "copilot_cli": names.copilot_cli_name,
    "claude": names.claude_name,
    "quiver": names.quiver_name,
    "api": names.api_name,
}
_AGENTS_SHOWN = 3


def hosts_for(agent: Agent) -> tuple[str, ...]:
    """The hosts an agent's names matter on: its own host, plus quiver's gateway and host API exports."""
    return ("claude" if agent.kind == "claude" else "copilot_cli", "quiver", "api")


@functools.lru_cache(maxsize=65_536)
def _caps(server: str, name: str) -> Mapping[str, int]:
    """host -> the cap it cuts this pair's name at, for the hosts that cut it (usually none)."""
    return {host: cap for host in _NAMERS if (cap := _cut_name(host, server, name))}


@functools.cache
def _cut_name(host: str, server: str, name: str) -> int:
    if host == "api":
        full = f"{server}__{name}"
        length = len(full if full.isascii() else full.encode("punycode"))
        return names.API_CAP if length > names.API_CAP else 0
    if host in ("copilot_cli", "quiver") and names.truncated(server, name)[host]:
        return names.COPILOT_CAP if host == "copilot_cli" else names.QUIVER_CAP
    return 0


def check(ctx: LintContext) -> Iterator[Finding]:
    collisions: dict[tuple[str, str, str, str, str], list[str]] = {}
    collided: dict[tuple[str, str, str, str, str], tuple[ResolvedTool, str, str]] = {}
    cuts: dict[tuple[str, str], tuple[ResolvedTool, dict[str, str]]] = {}
    for resolved in ctx.resolved:
        hosts = hosts_for(resolved.agent)
        # A tool named by its pair's plain names was renamed on no host (resolve shares that one mapping).
        renamed = [t for t in resolved.tools if t.names is not names.plain_names(t.server, t.tool.name)]
        for host in hosts if renamed else ():
            by_name = {t.names.get(host): t for t in resolved.tools}
            for item in renamed:
                natural = _NAMERS[host](item.server, item.tool.name)
                actual = item.names.get(host, natural)
                if actual == natural:
                    continue
                owner = by_name.get(natural)
                other = f"{owner.server}/{shown(owner.tool.name)}" if owner is not None else natural
                key = (host, item.server, item.tool.name, other, actual)
                collisions.setdefault(key, []).append(resolved.agent.id)
                collided[key] = (item, natural, actual)
        for item in resolved.tools:
            caps = _caps(item.server, item.tool.name)
            for host in hosts if caps else ():
                cap = caps.get(host, 0)
                if cap:
                    entry = cuts.setdefault((item.server, item.tool.name), (item, {}))
                    entry[1][host] = f"{HOST_LABELS[host]} ({cap}: `{item.names.get(host, '')}`)"
    for key in sorted(collisions):
        item, natural, actual = collided[key]
        agents = sorted(set(collisions[key]))
        shown_agents = ", ".join(f"`{a}`" for a in agents[:_AGENTS_SHOWN])
        if len(agents) > _AGENTS_SHOWN:
            shown_agents += f" and {len(agents) - _AGENTS_SHOWN} more"
        yield MODEL_FACING_NAME_COLLISION.finding(
            location=item.tool.location,
            server=item.server,
            tool=item.tool.name,
            shown_name=shown(item.tool.name),
            host=HOST_LABELS[key[0]],
            other=key[3],
            natural=shown(natural, 80),
            actual=shown(actual, 80),
            agents=shown_agents,
        )
    for pair in sorted(cuts):
        item, by_host = cuts[pair]
        hosts_text = ", ".join(by_host[h] for h in HOST_LABELS if h in by_host)
        yield MODEL_FACING_NAME_TRUNCATED.finding(
            location=item.tool.location,
            server=item.server,
            tool=item.tool.name,
            shown_name=shown(item.tool.name),
            hosts=hosts_text,
        )


MODEL_FACING_NAME_COLLISION = Rule(
    code="TOOL013",
    name="model-facing-name-collision",
    severity="warning",
    check=check,
    message="on {host}, `{server}/{shown_name}` and `{other}` both become `{natural}`; "
    "`{server}/{shown_name}` is renamed `{actual}` (agents: {agents})",
    hint="rename one of the servers in the MCP config so that `server-tool` names stay distinct",
    doc="""\
## What it does
Flags two tools an agent carries whose model-facing names collide on a host, so that one of them gets
a numeric suffix: the Copilot CLI's `server-tool` (other characters become `-`), Claude Code's
`mcp__server__tool`, quiver's `server__tool` and the host API name.

## Why is this bad?
The model sees `github-search_issues2`: a name that says nothing about the tool behind it, and that
changes whenever a server is added or removed, breaking prompts and allow-lists that spell it out.

## Example
```json
{"mcpServers": {"git-hub": {...}, "git": {...}}}
```
with `git-hub` serving `list` and `git` serving `hub-list`: both become `git-hub-list` on the
Copilot CLI.
Use instead:
```json
{"mcpServers": {"github": {...}, "git": {...}}}
```

## Fix
Rename a server (its key in the MCP config is yours to choose); tool names belong to the server.

## References
DESIGN §3, model-facing names; GitHub Docs, Copilot CLI MCP tool names.
""",
)


MODEL_FACING_NAME_TRUNCATED = Rule(
    code="TOOL014",
    name="model-facing-name-truncated",
    severity="warning",
    check=check,
    message="the model-facing name of `{server}/{shown_name}` is cut on {hosts}",
    hint="shorten the server's name in the MCP config (the tool name is the server's)",
    doc="""\
## What it does
Flags a tool an agent carries whose model-facing name is longer than a host allows and gets cut:
the Copilot CLI and host APIs stop at 64 characters, quiver's gateway at 128.

## Why is this bad?
A cut name loses its end, which is usually the part that tells tools apart (`..._comments` vs
`..._commits`); two cut names can also collide and get numeric suffixes.

## Example
Server `acme-enterprise-knowledge-base-production` serving `search_documents_by_semantic_similarity`.
Use instead: the server key `kb`.

## Fix
Shorten the server key in the MCP config.

## References
DESIGN §3, model-facing names.
""",
)


RULES: tuple[Rule, ...] = (MODEL_FACING_NAME_COLLISION, MODEL_FACING_NAME_TRUNCATED)
