"""Findings about servers, reported once per server rather than once per agent that sees it."""

from __future__ import annotations

from collections.abc import Sequence

from quiver.lint import references as R
from quiver.model import Finding, Location
from quiver.project import Project
from quiver.resolve import ResolvedAgent
from quiver.suggest import did_you_mean

SPELLING = "check the spelling, or add the server that provides it"


def project_findings(project: Project, resolved: Sequence[ResolvedAgent] = ()) -> list[Finding]:
    """Findings about servers, reported once rather than per agent: MCP012 lists the agents it concerns."""
    out: list[Finding] = []
    users: dict[tuple[str, Location], list[str]] = {}
    named: dict[str, list[str]] = {}
    for item in resolved:
        for name in item.unknown_catalogs:
            server = next(s for s in item.servers if s.name == name)
            users.setdefault((name, server.location), []).append(item.agent.id)
        for ref in item.unknown_named:
            if ref not in named.setdefault(ref.split("/", 1)[0], []):
                named[ref.split("/", 1)[0]].append(ref)
    for (name, where), agents in sorted(users.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        shown = ", ".join(f"`{a}`" for a in agents[:5]) + (f" and {len(agents) - 5} more" if len(agents) > 5 else "")
        label = f"agent {shown}" if len(agents) == 1 else f"{len(agents)} agents: {shown}"
        refs = named.get(name, [])
        label += f", including the named {', '.join(f'`{r}`' for r in refs[:5])}" if refs else ""
        out.append(R.SERVER_NOT_SNAPSHOTTED.finding(location=where, server=name, agents=label))
    lock = project.lock
    for name in sorted(project.servers):
        server = project.servers[name]
        locked = lock.servers.get(name) if lock is not None else None
        if locked is None:
            continue
        served = [t.name for t in locked.tools]
        for field, rule in (("preload_tools", R.PRELOAD_TOOL_NOT_SERVED), ("tools", R.ALLOW_LIST_TOOL_NOT_SERVED)):
            for entry in getattr(server, field) or ():
                if entry != "*" and entry not in served:
                    out.append(
                        rule.finding(
                            location=server.key_locations.get(field, server.location),
                            server=name,
                            tool=entry,
                            suggestion=did_you_mean(
                                entry, served, "check the spelling, or add the server that provides it"
                            ),
                        )
                    )
    return out
