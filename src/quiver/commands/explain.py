"""`quiver explain AGENT [TOOL]`: the load decision of each tool and the file:line that made it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from quiver.capabilities.flows import agent_flows
from quiver.capabilities.overrides import Classifier
from quiver.commands.compile import CACHE_FILE
from quiver.commands.outcome import Outcome
from quiver.compile import budget_of
from quiver.errors import UsageError
from quiver.model import Agent
from quiver.project import Project, load_project
from quiver.report.budget import explain, explain_json
from quiver.report.flows import flows_json, flows_text
from quiver.resolve import ResolvedAgent, ResolvedTool, resolve_agent
from quiver.sources.token_cache import TokenCache
from quiver.suggest import closest, did_you_mean


@dataclass(frozen=True, slots=True)
class ExplainOptions:
    root: Path
    agent: str
    tool: str | None = None  # only this tool (`server/tool` or its name)
    fmt: str = "text"
    host: str | None = None
    flows: bool = False  # the toxic flows and capability labels instead of the load decisions


def run(options: ExplainOptions) -> Outcome:
    o = options
    return Outcome(explain_agent(o.root, o.agent, o.tool, o.fmt, o.host, flows=o.flows))


def explain_agent(
    root: Path, agent_id: str, tool: str | None, fmt: str = "text", host: str | None = None, *, flows: bool = False
) -> str:
    """The report of `quiver explain` (text or JSON); `quiver.api.explain` reads its JSON."""
    project = load_project(root)
    by_id = {a.id: a for a in project.agents}
    if agent_id not in by_id:
        raise UsageError(f"no agent `{agent_id}`", hint=_agent_hint(agent_id, project.agents))
    resolved = resolve_agent(by_id[agent_id], project, host=host)
    if flows:
        return _flows(project, resolved, tool, fmt)
    budget = budget_of(resolved, TokenCache(root / CACHE_FILE))
    text = explain(resolved, budget, tool)
    lock = project.config.lock
    if tool is not None and text.strip() == "":
        server = tool.split("/", 1)[0] if "/" in tool else None
        if server in resolved.unknown_catalogs:
            raise UsageError(
                f"agent `{agent_id}` names `{tool}`, but server `{server}` has no catalog in {lock}, "
                "so quiver does not know its tools",
                hint=f"run `quiver snapshot --server {server}`, then `quiver compile`",
            )
        carried = [f"{t.server}/{t.tool.name}" for t in resolved.tools]
        if "/" not in tool:
            carried = [t.tool.name for t in resolved.tools]
        hint = did_you_mean(tool, carried, f"run `quiver explain {agent_id}` to list its tools")
        raise UsageError(f"agent `{agent_id}` carries no tool `{tool}`", hint=hint)
    if tool is None:
        for server in resolved.unknown_catalogs:
            named = [r for r in resolved.unknown_named if r.split("/", 1)[0] == server]
            what = f"`{'`, `'.join(named)}` and any other tool" if named else "every tool"
            text += (
                f"  missing    {what} of server `{server}`: it has no catalog in {lock}; "
                f"run `quiver snapshot --server {server}`\n"
            )
    if fmt == "json":
        return explain_json(resolved, budget, tool)
    return text + _examples(resolved.tools, project.config.examples, tool)


def _flows(project: Project, resolved: ResolvedAgent, tool: str | None, fmt: str) -> str:
    """`--flows`: the agent's toxic and destructive flows and every tool's capability labels (issue 28)."""

    if tool is not None:
        raise UsageError("`--flows` explains the whole agent", hint=f"run `quiver explain {resolved.agent.id} --flows`")
    found = agent_flows(resolved, Classifier(project.config, project.lock, project.servers))
    return flows_json(found) if fmt == "json" else flows_text(found)


def _agent_hint(given: str, agents: Iterable[Agent]) -> str:
    """A did-you-mean over agent ids, and over display `name`s (naming the id to type instead)."""
    ids = {a.id: a.id for a in agents}
    if not ids:
        return "no agent files found"
    by_name = {a.name: a.id for a in agents if a.name}
    exact = next((ident for name, ident in sorted(by_name.items()) if name.lower() == given.lower()), None)
    if guess := ids.get(closest(given, ids) or ""):
        return f"did you mean `{guess}`?"
    if guess := exact or by_name.get(closest(given, by_name) or ""):
        return f"did you mean `{guess}`? an agent goes by its id, the file name, not its `name`"
    return "run `quiver compile` to list the agents"


def _examples(tools: Iterable[ResolvedTool], examples: Mapping[str, tuple[str, ...]], only: str | None) -> str:
    """The search examples of the tools shown (config `examples`: indexed by tool search as their own field)."""
    lines = []
    for item in tools:
        full = f"{item.server}/{item.tool.name}"
        if (only is None or only in (full, item.tool.name)) and examples.get(full):
            quoted = ", ".join(json.dumps(e, ensure_ascii=False) for e in examples[full])
            lines.append(f"  search examples of {full}: {quoted}\n")
    return "".join(lines)
