"""AGT018-020, the links between agents: handoffs and subagents that name no agent, and subagents an agent
cannot call without the agent tool."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from quiver.builtins import builtin_alias
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.model import Agent, Finding

# Agents the hosts provide themselves: VS Code's built-in agents, then Copilot CLI's.
BUILTIN_AGENTS = frozenset(
    {"agent", "ask", "edit", "plan"}
    | {"code-review", "explore", "general-purpose", "research", "rubber-duck", "security-review", "task"}
)
# Where an agent id is looked up first (GitHub: `.github/agents` beats `.claude/agents` at one level).


class _Known:
    """Agent ids and names of the project (lower case -> as written), with near-miss suggestions."""

    def __init__(self, agents: Sequence[Agent]) -> None:
        self.names: dict[str, str] = {}
        for agent in agents:
            self.names.setdefault(agent.id.lower(), agent.id)
            if agent.name:
                self.names.setdefault(agent.name.lower(), agent.name)
        for name in sorted(BUILTIN_AGENTS):
            self.names.setdefault(name, name)
        self.lowered = sorted(self.names)
        self.cache: dict[str, str] = {}

    def __contains__(self, name: str) -> bool:
        return name.lower() in self.names

    def suggest(self, word: str) -> str:
        """A did-you-mean for near-misses only: agent ids share long prefixes, so similarity alone misleads."""
        cached = self.cache.get(word)
        if cached is None:
            from rapidfuzz import process
            from rapidfuzz.distance import DamerauLevenshtein

            best = process.extractOne(
                word.lower(), self.lowered, scorer=DamerauLevenshtein.distance, score_cutoff=max(2, len(word) // 6)
            )
            cached = (
                f"did you mean `{self.names[best[0]]}`?"
                if best is not None
                else "check the agent's id, or suppress this finding if the agent is defined outside this repository"
            )
            self.cache[word] = cached
        return cached


def _calls_agents(agent: Agent) -> bool:
    for ref in agent.tools or ():
        low = ref.text.lower()
        if low == "*" or builtin_alias(low) == "agent" or low == "runsubagent" or low.startswith("agent/"):
            return True
    return False


def _links(agent: Agent, known: _Known, src: Sources) -> Iterator[Finding]:
    handoffs = agent.frontmatter.get("handoffs")
    if isinstance(handoffs, list):
        start = agent.key_locations["handoffs"]
        for item in handoffs:
            target = item.get("agent") if isinstance(item, dict) else None
            if isinstance(target, str) and target not in known:
                label = item.get("label")
                yield UNKNOWN_HANDOFF_AGENT.finding(
                    location=src.find(start, "agent:", target),
                    agent=agent.id,
                    label=label if isinstance(label, str) else "?",
                    target=target,
                    suggestion=known.suggest(target),
                )
    subagents = agent.frontmatter.get("agents")
    if isinstance(subagents, list):
        start = agent.key_locations["agents"]
        for target in subagents:
            if isinstance(target, str) and target != "*" and target not in known:
                yield UNKNOWN_SUBAGENT.finding(
                    location=src.find(start, target),
                    agent=agent.id,
                    target=target,
                    suggestion=known.suggest(target),
                )
    if subagents and agent.tools is not None and not _calls_agents(agent):
        yield SUBAGENTS_WITHOUT_AGENT_TOOL.finding(location=agent.key_locations["agents"], agent=agent.id)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    agents = ctx.project.agents
    known = _Known(agents)
    for agent in agents:
        yield from _links(agent, known, src)


UNKNOWN_HANDOFF_AGENT = Rule(
    code="AGT018",
    name="unknown-handoff-agent",
    severity="warning",
    check=check,
    message="handoff `{label}` targets agent `{target}`, which is not defined in this repository",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `handoffs` entry whose `agent` is neither an agent of this repository (by id or `name`) nor a
built-in agent (`agent`, `ask`, `edit`, `plan`).

## Why is this bad?
VS Code shows the handoff button, and clicking it goes nowhere: the workflow the agent was written
for breaks at that step.

## Example
```yaml
handoffs:
  - label: Implement
    agent: implementor
```
Use instead:
```yaml
handoffs:
  - label: Implement
    agent: implementer
```

## Fix
The hint names the closest known agent. It is wrong when the target agent lives outside this
repository (user or organization agents): suppress the finding then.

## References
VS Code docs, custom agents: `handoffs`.
""",
)


UNKNOWN_SUBAGENT = Rule(
    code="AGT019",
    name="unknown-subagent",
    severity="warning",
    check=check,
    message="`agents` names `{target}`, which is not defined in this repository",
    hint="{suggestion}",
    doc="""\
## What it does
Flags an entry of `agents` (the subagents an agent may call) that is neither an agent of this
repository (by id or `name`) nor a built-in agent.

## Why is this bad?
The orchestrating agent's prompt relies on a subagent that the host cannot find, so that step of the
pipeline is skipped or fails at run time.

## Example
```yaml
agents: ["auditor", "fixr"]
```
Use instead:
```yaml
agents: ["auditor", "fixer"]
```

## Fix
The hint names the closest known agent. It is wrong for user or organization agents defined outside
this repository.

## References
VS Code docs, custom agents: `agents`.
""",
)


SUBAGENTS_WITHOUT_AGENT_TOOL = Rule(
    code="AGT020",
    name="subagents-without-agent-tool",
    severity="warning",
    check=check,
    message="`agents` lists subagents, but `tools` does not include the `agent` tool",
    hint='add "agent" to `tools`',
    doc="""\
## What it does
Flags an agent that names subagents in `agents` while its `tools` list leaves out the `agent` tool
(or one of its aliases: `custom-agent`, `Task`, `runSubagent`).

## Why is this bad?
Subagents are called through the `agent` tool; without it the allow-list in `agents` is dead and the
orchestrator cannot delegate.

## Example
```yaml
tools: ["read", "edit"]
agents: ["auditor"]
```
Use instead:
```yaml
tools: ["read", "edit", "agent"]
agents: ["auditor"]
```

## Fix
Add `agent` to `tools`. Not reported when `tools` is unset or contains `*` (all tools).

## References
VS Code docs, custom agents: `agents` ("requires the agent tool").
""",
)


RULES: tuple[Rule, ...] = (UNKNOWN_HANDOFF_AGENT, UNKNOWN_SUBAGENT, SUBAGENTS_WITHOUT_AGENT_TOOL)
