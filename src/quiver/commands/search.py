"""`quiver search QUERY [--agent ID]`: rank the project's tools, or one agent's, with the tool search index.

The index is the one the gateway serves (`quiver.search`), built from the lock: every server of the project,
or the tool set an agent resolves to, with the servers' config descriptions. JSON output is a list of
`{server, tool, score, matched, description}`, best first; `matched` names the fields the query hit.
`--explain` adds what made each score (`explain`: `words`, `meaning`, `cosine` and the signals' `moves`),
in JSON and as a line under each text row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from quiver._search._scope import agent_docs, project_docs, project_index
from quiver.commands.outcome import Outcome
from quiver.errors import InputError, Position, UsageError
from quiver.project import Project, load_project
from quiver.resolve import resolve_agent
from quiver.search import SearchDoc
from quiver.suggest import did_you_mean

DESCRIPTION_WIDTH = 72  # characters of the description the text table shows


@dataclass(frozen=True, slots=True)
class SearchOptions:
    root: Path
    query: str
    agent: str | None = None  # only the tools this agent resolves to
    limit: int = 10
    fmt: str = "text"
    lexical: bool = False  # words alone, without the embedding model
    explain: bool = False  # what made each score


def run(options: SearchOptions) -> Outcome:
    o = options
    ranked = search_tools(o.root, o.query, o.agent, o.limit, o.fmt, lexical=o.lexical, explain=o.explain, once=True)
    return Outcome(ranked)


def search_tools(
    root: Path,
    query: str,
    agent: str | None,
    limit: int,
    fmt: str,
    *,
    lexical: bool = False,
    explain: bool = False,
    once: bool = False,
) -> str:
    """The ranking `quiver search` prints (text or JSON); `quiver.api.search` reads its JSON. `once`: the
    process ranks no other query (the command), so the query is encoded the way cheapest for one."""
    if not query.strip():
        raise UsageError(
            "the query is empty", hint='say what the tool should do: `quiver search "open a pull request"`'
        )
    project = load_project(root)
    docs = scope_docs(project, agent)
    explained = project_index(project, docs, lexical=lexical).explain(query, limit, once=once)
    described = {(d.server, d.tool): d.description for d in docs}
    rows: list[dict[str, object]] = []
    for e in explained:
        h = e.hit
        row: dict[str, object] = {
            "server": h.server,
            "tool": h.tool,
            "score": h.score,
            "matched": list(h.matched),
            "description": described.get((h.server, h.tool), ""),
        }
        if explain:
            row["explain"] = {"words": e.words, "meaning": e.meaning, "cosine": e.cosine, "moves": dict(e.moves)}
        rows.append(row)
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
        parts = row.get("explain")
        if isinstance(parts, dict):
            lines.append(" " * (width + 2) + _explained(parts))
    return "\n".join(lines) + "\n"


def _explained(parts: dict[str, object]) -> str:
    """`words +1.20  meaning +0.85 (cosine 0.612)  action +0.30`: the shares and moves that sum to the score."""
    out = [f"words {parts['words']:+.2f}"]
    cosine = parts.get("cosine")
    if isinstance(cosine, float):
        out.append(f"meaning {parts['meaning']:+.2f} (cosine {cosine:.3f})")
    moves = parts.get("moves")
    if isinstance(moves, dict):
        out += [f"{name} {value:+.2f}" for name, value in moves.items()]
    return "  ".join(out)


def _one_line(text: str, limit: int = DESCRIPTION_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."
