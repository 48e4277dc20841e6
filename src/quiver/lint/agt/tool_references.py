"""AGT008-011: `tools` entries quiver can prove wrong, and host-provided servers without a catalog.

Resolution (quiver.references, quiver.resolve) returns them as data (`Unresolved` entries, `host_refs`);
the check turns them into findings. AGT022 (entries only the host can resolve) is unverifiable_tool_references.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.project import HOST_SERVERS
from quiver.resolve import ResolvedAgent
from quiver.suggest import did_you_mean


def reference_findings(resolved: ResolvedAgent) -> Iterator[Finding]:
    """One agent's unresolved `tools` entries in the order it wrote them, then one AGT011 per host server."""
    agent = resolved.agent.id
    for item in resolved.unresolved:
        ref, at = item.ref.text, item.ref.location
        match item.kind:
            case "unknown-tool":
                if item.server is None:
                    hint = f"did you mean `{item.guess}`?"
                else:
                    fallback = (
                        f"the lock lists no such tool of `{item.server}`; "
                        f"run `quiver snapshot --server {item.server}` if it changed"
                    )
                    hint = did_you_mean(ref, item.candidates, fallback)
                yield UNKNOWN_TOOL_REFERENCE.finding(location=at, agent=agent, ref=ref, suggestion=hint)
            case "ambiguous-tool":
                servers = ", ".join(f"`{name}`" for name in item.candidates)
                example = f"{item.candidates[0]}/{ref}"
                yield AMBIGUOUS_TOOL_REFERENCE.finding(
                    location=at, agent=agent, ref=ref, servers=servers, example=example
                )
            case "host-syntax" | "not-read-by-host" | "shadowed-by-host":
                continue  # AGT023-025 (host_references.py)
            case "unknown-server":
                hint = f"did you mean `{item.guess}`?"
                yield UNKNOWN_SERVER_REFERENCE.finding(
                    location=at, agent=agent, ref=ref, server=item.server, suggestion=hint
                )
            case _:
                assert_never(item.kind)
    for server, refs in resolved.host_refs.items():
        listed = ", ".join(f"`{r.text}`" for r in refs)
        yield HOST_SERVER_NOT_SNAPSHOTTED.finding(
            location=refs[0].location,
            agent=agent,
            refs=listed,
            server=server,
            host=HOST_SERVERS.get(server, resolved.host.name),
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for resolved in ctx.resolved:
        yield from reference_findings(resolved)


UNKNOWN_TOOL_REFERENCE = Rule(
    code="AGT008",
    name="unknown-tool-reference",
    severity="error",
    check=check,
    message="`{ref}` matches no built-in tool and no tool of any visible server",
    hint="{suggestion}",
    doc="""\
## What it does
Flags an entry of an agent's `tools` that quiver can prove wrong: `server/tool` where the lock lists
`server`'s tools and `tool` is not one of them, or a bare name close to a tool or server of the MCP
configs and lock quiver reads. A name quiver cannot check (a server configured outside the repository,
an extension tool) is AGT022 instead.

## Why is this bad?
Hosts silently ignore tools they do not know, so the agent runs without a tool its prompt relies on.
A typo here is invisible until the agent fails at the task.

## Example
```yaml
tools: ["github/serch_issues"]
```
Use instead:
```yaml
tools: ["github/search_issues"]
```

## Fix
The hint proposes the closest known name (by edit distance). When the server changed, re-run
`quiver snapshot --server NAME`.

## Options
`mcp_configs` adds config files; `lock` names the lock file that lists each server's tools.

## References
GitHub Docs, custom agents configuration: tool names.
""",
)


AMBIGUOUS_TOOL_REFERENCE = Rule(
    code="AGT009",
    name="ambiguous-tool-reference",
    severity="error",
    check=check,
    message="bare tool name `{ref}` is served by several servers: {servers}",
    hint="qualify it, e.g. `{example}`",
    doc="""\
## What it does
Flags a bare tool name in `tools` that more than one visible MCP server serves.

## Why is this bad?
The host picks one of them (or both), so the agent may call a different server than intended.

## Example
```yaml
tools: ["search"]   # served by `github` and `notion`
```
Use instead:
```yaml
tools: ["github/search"]
```

## Fix
Write the reference as `server/tool`.

## References
DESIGN §3, bare MCP tool names resolve only when unique.
""",
)


UNKNOWN_SERVER_REFERENCE = Rule(
    code="AGT010",
    name="unknown-server-reference",
    severity="error",
    check=check,
    message="`{ref}` names server `{server}`, which no MCP config defines",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `server/tool` or `server/*` reference whose server is neither configured (project configs or
the agent's own `mcp-servers`) nor a host built-in server, when its name is close to one that is: a
typo. A server no config here defines and that resembles none is AGT022 (only the host can resolve it).

## Why is this bad?
The host has no such server, so every tool the reference was meant to bring is missing.

## Example
```yaml
tools: ["githb/*"]
```
Use instead:
```yaml
tools: ["github/*"]
```

## Fix
The hint proposes the closest configured server name; otherwise add the server to `.mcp.json` or the
agent's `mcp-servers`.

## References
GitHub Docs, custom agents configuration: `mcp-servers`.
""",
)


HOST_SERVER_NOT_SNAPSHOTTED = Rule(
    code="AGT011",
    name="host-server-not-snapshotted",
    severity="info",
    check=check,
    message="host-provided server `{server}` ({host}) has no catalog in the lock; not checked: {refs}",
    hint="snapshot it (`quiver snapshot --import ... --server {server}`) to count its tokens",
    doc="""\
## What it does
Notes, once per agent and server, the references to a server the host provides itself (Copilot's
`github`, `playwright`, ...) when the lock file has no catalog for it.

## Why is this bad?
quiver cannot count the tokens those tools cost or check that the named tools exist.

## Example
```yaml
tools: ["github/*"]   # and no `github` entry in quiver.lock.json
```

## Fix
Import the server's tool list into the lock file with `quiver snapshot --import`.

## References
DESIGN §3, host built-in servers.
""",
)


RULES: tuple[Rule, ...] = (
    UNKNOWN_TOOL_REFERENCE,
    AMBIGUOUS_TOOL_REFERENCE,
    UNKNOWN_SERVER_REFERENCE,
    HOST_SERVER_NOT_SNAPSHOTTED,
)
