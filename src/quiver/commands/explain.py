"""`quiver explain AGENT [TOOL]`: the load decision of each tool and the file:line that made it."""

from __future__ import annotations

from pathlib import Path

from quiver.commands.compile import CACHE_FILE
from quiver.compile import budget_of
from quiver.errors import UsageError
from quiver.project import load_project
from quiver.report.budget import explain, explain_json
from quiver.resolve import resolve_agent
from quiver.suggest import did_you_mean
from quiver.tokens import TokenCache


def run(root: Path, agent_id: str, tool: str | None, fmt: str = "text") -> str:
    project = load_project(root)
    by_id = {a.id: a for a in project.agents}
    if agent_id not in by_id:
        hint = (
            did_you_mean(agent_id, by_id, "run `quiver compile` to list the agents")
            if by_id
            else "no agent files found"
        )
        raise UsageError(f"no agent `{agent_id}`", hint=hint)
    resolved = resolve_agent(by_id[agent_id], project.servers, project.lock, project.config)
    budget = budget_of(resolved, TokenCache(root / CACHE_FILE))
    text = explain(resolved, budget, tool)
    if tool is not None and text.strip() == "":
        raise UsageError(f"agent `{agent_id}` carries no tool `{tool}`", hint=f"run `quiver explain {agent_id}`")
    return explain_json(resolved, budget, tool) if fmt == "json" else text
