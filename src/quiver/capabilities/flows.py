"""Per agent, the flows its tools make possible: pure, from a resolved agent and a `Classifier`.

A **toxic flow** (the lethal trifecta) is one agent carrying a tool that brings in untrusted input, one
that reaches private data and one that can send data out: a prompt injection read through the first
can make the model fetch with the second and send with the third. A **destructive flow** is untrusted
input plus a destructive tool. Every tool the agent can reach counts, preloaded, deferred (deferral is
not authorization: a deferred tool is one `search_tools` away) or built-in.

A built-in that runs anything (a shell, tasks, tests, `*`) has every label by itself: a flow is first
sought without those (`through_shell` False), and only when none exists, with them (`through_shell`
True), so that a shell does not hide the MCP tools that make a flow on their own.

For each kind the flow names one witness tool per label (distinct tools where the agent has them; tools
the agent names before those a wildcard brings, preloaded before deferred, MCP tools before built-ins,
fewer labels first, then by name), every tool of each label, and the
smallest cut: the label with the fewest tools, whose removal breaks the flow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from quiver.capabilities.model import FLOW_LABELS, LABELS, Capabilities, Label
from quiver.capabilities.overrides import Classifier
from quiver.model import Agent, Location
from quiver.references import CLAUDE_MCP_PREFIX
from quiver.resolve import ResolvedAgent

FlowKind = Literal["toxic", "destructive"]
KIND_LABELS: dict[FlowKind, tuple[Label, ...]] = {
    "toxic": FLOW_LABELS,
    "destructive": ("untrusted_input", "destructive"),
}


@dataclass(frozen=True, slots=True)
class Carried:
    """One tool an agent carries, with its capabilities and the `tools` entry that brought it in."""

    name: str  # `server/tool`, or the built-in reference as written (`execute`, `web/fetch`)
    load: str  # "preloaded" | "deferred" | "built-in"
    entry: Location  # the agent file's `tools` entry (or the agent's start when `tools` is unset)
    capabilities: Capabilities
    named: bool = False  # the agent names it (`server/tool`, a bare name, a built-in), not via `*` or `server/*`

    @property
    def builtin(self) -> bool:
        return self.load == "built-in"

    @property
    def runs_anything(self) -> bool:
        """A built-in with every label: a shell, a task or test runner, `*`."""
        return self.builtin and all(self.capabilities.has(label) for label in LABELS)


@dataclass(frozen=True, slots=True)
class Flow:
    kind: FlowKind
    witness: Mapping[Label, Carried]  # one tool per label of the kind, in the kind's label order
    tools: Mapping[Label, tuple[Carried, ...]]  # every carried tool of each label
    cut: Label  # the label with the fewest tools: dropping them breaks the flow
    through_shell: bool = False  # the flow needs a built-in that runs anything

    @property
    def labels(self) -> tuple[Label, ...]:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True, slots=True)
class AgentFlows:
    agent: Agent
    carried: tuple[Carried, ...]  # every classified tool: MCP tools by name, then built-ins as written
    unclassified: tuple[str, ...]  # built-ins quiver does not know (extension tools, newer hosts)
    flows: tuple[Flow, ...]

    def flow(self, kind: FlowKind) -> Flow | None:
        return next((f for f in self.flows if f.kind == kind), None)


def agent_flows(resolved: ResolvedAgent, classifier: Classifier) -> AgentFlows:
    agent = resolved.agent
    carried: list[Carried] = []
    for item in resolved.tools:
        carried.append(
            Carried(
                f"{item.server}/{item.tool.name}",
                item.load,
                entry_of(agent, item.server, item.tool.name),
                classifier.tool(item.server, item.tool),
                item.named,
            )
        )
    unclassified = []
    for builtin in resolved.builtins:
        found = classifier.builtin(builtin.ref, builtin.canonical)
        if found is None:
            unclassified.append(builtin.ref)
        else:
            carried.append(Carried(builtin.ref, "built-in", builtin.location, found, builtin.canonical != "*"))
    flows = tuple(f for f in (_flow(kind, carried) for kind in KIND_LABELS) if f is not None)
    return AgentFlows(agent, tuple(carried), tuple(unclassified), flows)


def _flow(kind: FlowKind, carried: Sequence[Carried]) -> Flow | None:
    found = _flow_of(kind, [c for c in carried if not c.runs_anything], through_shell=False)
    return found or _flow_of(kind, carried, through_shell=True)


def _flow_of(kind: FlowKind, carried: Sequence[Carried], *, through_shell: bool) -> Flow | None:
    labels = KIND_LABELS[kind]
    tools = {label: tuple(c for c in carried if c.capabilities.has(label)) for label in labels}
    if not all(tools.values()):
        return None
    witness: dict[Label, Carried] = {}
    for label in labels:
        ranked = sorted(tools[label], key=_rank)
        fresh = [c for c in ranked if c not in witness.values()]
        witness[label] = (fresh or ranked)[0]
    cut = min(labels, key=lambda label: (len(tools[label]), labels.index(label)))
    return Flow(kind, witness, tools, cut, through_shell)


def _rank(item: Carried) -> tuple[bool, bool, bool, int, str]:
    """Witnesses: named tools first (what the author chose), then preloaded, MCP before built-in, fewer labels."""
    labels = len(item.capabilities.reasons)
    return (not item.named, item.load == "deferred", item.builtin, labels, item.name)


def entry_of(agent: Agent, server: str, tool: str) -> Location:
    """The `tools` entry that selects `server/tool`: the most specific one (`server/tool` or a bare name,
    then `server/*` or the server's name, then `*`); the `tools` key, or the file's start, when none does."""
    fallback = agent.key_locations.get("tools", agent.location)
    best: tuple[int, Location] | None = None
    for ref in agent.tools or ():
        text = ref.text
        if text.startswith(CLAUDE_MCP_PREFIX):
            text = text[len(CLAUDE_MCP_PREFIX) :].replace("__", "/", 1)
        rank = 0
        if text in (f"{server}/{tool}", tool):
            rank = 3
        elif text in (f"{server}/*", server):
            rank = 2
        elif text == "*":
            rank = 1
        if rank and (best is None or rank > best[0]):
            best = (rank, ref.location)
    return best[1] if best is not None else fallback
