"""`quiver search QUERY [--agent ID]`: rank the project's tools, or one agent's, with the tool search index.

The index is the one the gateway serves (`quiver.search`), built from the lock: every server of the project,
or the tool set an agent resolves to, with the servers' config descriptions. JSON output is a list of
`{server, tool, score, matched, description}`, best first; `matched` names the fields the query hit.
"""

from __future__ import annotations

import json
from pathlib import Path

from quiver._search._scope import agent_docs, project_docs, project_index
from quiver.errors import InputError, Position, UsageError
from quiver.project import Project, load_project
from quiver.resolve import resolve_agent
from quiver.search import SearchDoc
from quiver.suggest import did_you_mean

DESCRIPTION_WIDTH = 72  # characters of the description the text table shows


def run(root: Path, query: str, agent: str | None, limit: int, fmt: str, *, lexical: bool = False) -> str:
    if not query.strip():
        raise UsageError(
            "the query is empty", hint='say what the tool should do: `quiver search "open a pull request"`'
        )
    project = load_project(root)
    docs = scope_docs(project, agent)
    hits = project_index(project, docs, lexical=lexical).search(query, limit)
    described = {(d.server, d.tool): d.description for d in docs}
    rows = [
        {
            "server": h.server,
            "tool": h.tool,
            "score": h.score,
            "matched": list(h.matched),
            "description": described.get((h.server, h.tool), ""),
        }
        for h in hits
    ]
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if not rows:
        where = f"agent `{agent}`'s {len(docs)} tools" if agent else f"the project's {len(docs)} tools"
        return f"no tool matches `{query.strip()}` among {where}\n"
    return _table(rows)


def scope_docs(project: Project, agent: str | None) -> list[SearchDoc]:
    """The tools to rank: every locked server, or the tool set `agent` resolves to."""
    if project.lock is None:
        raise InputError(
            "no lock file: quiver does not know the servers' tools yet",
            position=Position(project.config.lock),
            hint="run `quiver snapshot` to capture them",
        )
    if agent is None:
        return project_docs(project)
    by_id = {a.id: a for a in project.agents}
    if agent not in by_id:
        hint = (
            did_you_mean(agent, by_id, "run `quiver compile` to list the agents") if by_id else "no agent files found"
        )
        raise UsageError(f"no agent `{agent}`", hint=hint)
    return agent_docs(resolve_agent(by_id[agent], project), project.config.examples)


def _table(rows: list[dict[str, object]]) -> str:
    names = [f"{r['server']}/{r['tool']}" for r in rows]
    matched = [", ".join(str(m) for m in r["matched"]) if isinstance(r["matched"], list) else "" for r in rows]
    scores = [f"{r['score']:.2f}" if isinstance(r["score"], float) else str(r["score"]) for r in rows]
    wn, wm, ws = max(map(len, names)), max(len("matched"), *map(len, matched)), max(len("score"), *map(len, scores))
    width = len(str(len(rows)))
    lines = [f"{'#':>{width}}  {'score':>{ws}}  {'tool':<{wn}}  {'matched':<{wm}}  description"]
    for i, (row, name, hit, score) in enumerate(zip(rows, names, matched, scores, strict=True), start=1):
        text = _one_line(str(row["description"]))
        lines.append(f"{i:>{width}}  {score:>{ws}}  {name:<{wn}}  {hit:<{wm}}  {text}".rstrip())
    return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = DESCRIPTION_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."
