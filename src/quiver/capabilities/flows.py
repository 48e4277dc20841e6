"""Per agent, the flows its tools make possible: pure, from a resolved agent and a `Classifier`.

A **toxic flow** (the lethal trifecta) is one agent carrying a tool that brings in untrusted input, one
that reaches private data and one that can send data out: a prompt injection read through the first
can make the model fetch with the second and send with the third. A **destructive flow** is untrusted
input plus a destructive tool. Every tool the agent can reach counts, preloaded, deferred (deferral is
not authorization: a deferred tool is one `search_tools` away) or built-in.

A flow is first sought among the tools quiver can see and guard: without the built-ins that run anything
(a shell, tasks, tests, `*`: each has every label by itself) and with an MCP tool as the way out or the
destructive tool (`through_builtin` False). Only when there is none is it sought among every tool
(`through_builtin` True): then its way out, or all of it, is a host built-in, which the host confirms
before it runs unless the user allowed it. So a shell does not hide the MCP tools that make a flow.

For each kind the flow names one witness tool per label (distinct tools where the agent has them; see
`_rank`), every tool of each label, and the
smallest cut: the label with the fewest tools, whose removal breaks the flow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from quiver.capabilities.model import FLOW_LABELS, LABELS, SHOWN, Capabilities, Label
from quiver.capabilities.overrides import Classifier
from quiver.model import JSON, Agent, Location
from quiver.references import CLAUDE_MCP_PREFIX
from quiver.resolve import ResolvedAgent

LISTED = 3  # tools named in a sentence before "and N more"
_HYPHENATED = {label: SHOWN[label].replace(" ", "-") for label in SHOWN}
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
    through_builtin: bool = False  # the flow needs a host built-in: its way out, or a shell

    @property
    def labels(self) -> tuple[Label, ...]:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True, slots=True)
class AgentFlows:
    agent: Agent
    carried: tuple[Carried, ...]  # every classified tool: the resolved tools in their order, then built-ins
    unclassified: tuple[str, ...]  # built-ins quiver does not know (extension tools, newer hosts)
    flows: tuple[Flow, ...]

    def flow(self, kind: FlowKind) -> Flow | None:
        return next((f for f in self.flows if f.kind == kind), None)


def agent_flows(resolved: ResolvedAgent, classifier: Classifier) -> AgentFlows:
    agent = resolved.agent
    entries = Entries(agent)
    carried: list[Carried] = []
    for item in resolved.tools:
        carried.append(
            Carried(
                f"{item.server}/{item.tool.name}",
                item.load,
                entries.of(item.server, item.tool.name),
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
    by_label: dict[Label, list[Carried]] = {label: [] for label in LABELS}
    for one in carried:
        for label in one.capabilities.labels:
            by_label[label].append(one)
    flows = tuple(f for f in (_flow(kind, by_label) for kind in KIND_LABELS) if f is not None)
    return AgentFlows(agent, tuple(carried), tuple(unclassified), flows)


def _flow(kind: FlowKind, by_label: Mapping[Label, Sequence[Carried]]) -> Flow | None:
    labels = KIND_LABELS[kind]
    sink = labels[-1]  # exfiltration, destructive
    seen = {label: tuple(c for c in by_label[label] if not c.runs_anything) for label in labels}
    seen[sink] = tuple(c for c in seen[sink] if not c.builtin)  # a way out quiver can guard: an MCP tool
    found = _flow_of(kind, seen, through_builtin=False)
    return found or _flow_of(kind, {label: tuple(by_label[label]) for label in labels}, through_builtin=True)


def _flow_of(kind: FlowKind, tools: Mapping[Label, tuple[Carried, ...]], *, through_builtin: bool) -> Flow | None:
    labels = KIND_LABELS[kind]
    if not all(tools[label] for label in labels):
        return None
    witness: dict[Label, Carried] = {}
    for label in labels:
        fresh = [c for c in tools[label] if all(c is not w for w in witness.values())]
        witness[label] = min(fresh or tools[label], key=lambda c: _rank(c, label))
    cut = min(labels, key=lambda label: (len(tools[label]), labels.index(label)))
    return Flow(kind, witness, dict(tools), cut, through_builtin)


def _rank(item: Carried, role: Label) -> tuple[bool, bool, bool, bool, int, str]:
    """Witnesses: MCP tools before built-ins, those the agent names before those a wildcard brings, preloaded
    before deferred; then the plainest example of the role: a source or private-data witness that sends
    nothing out, a source that also reaches private data (`issue_read`: untrusted text in private
    repositories), and fewer labels (a sink that only sends, private data that is only private)."""
    has = item.capabilities.has
    impure = role != "exfiltration" and role != "destructive" and has("exfiltration")
    lacks_private = role == "untrusted_input" and not has("private_data")
    labels = len(item.capabilities.reasons)
    return (item.builtin, not item.named, item.load == "deferred", impure or lacks_private, labels, item.name)


class Entries:
    """Which `tools` entry of an agent selects a tool: the most specific one (`server/tool` or a bare name,
    then `server/*` or the server's name, then `*`), the first written of equals; the `tools` key, or the
    file's start, when none does."""

    def __init__(self, agent: Agent) -> None:
        self._fallback = agent.key_locations.get("tools", agent.location)
        self._exact: dict[str, Location] = {}
        self._server: dict[str, Location] = {}
        self._any: Location | None = None
        for ref in agent.tools or ():
            text = ref.text
            if text.startswith(CLAUDE_MCP_PREFIX):
                text = text[len(CLAUDE_MCP_PREFIX) :].replace("__", "/", 1)
            if text == "*":
                self._any = self._any or ref.location
            elif text.endswith("/*"):
                self._server.setdefault(text[:-2], ref.location)
            else:
                self._exact.setdefault(text, ref.location)
                if "/" not in text:
                    self._server.setdefault(text, ref.location)  # a server's name alone, or a bare tool

    def of(self, server: str, tool: str) -> Location:
        return (
            self._exact.get(f"{server}/{tool}")
            or self._exact.get(tool)
            or self._server.get(server)
            or self._any
            or self._fallback
        )


# ------------------------------------------------------------------ what would break a flow (lint and explain)


def names_text(items: Sequence[Carried]) -> str:
    """`a`, `b`, `c` and N more."""
    shown = ", ".join(f"`{c.name}`" for c in items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


def cut_text(flows: AgentFlows, flow: Flow) -> str:
    """How to break the flow by dropping tools: the label the agent has fewest tools of."""
    label, items = flow.cut, flow.tools[flow.cut]
    kind = _HYPHENATED[label]
    entries = {c.entry for c in items}
    written = {ref.location: ref.text for ref in flows.agent.tools or ()}
    if flows.agent.tools is None:
        return "set `tools` to what the agent needs (unset, it carries every built-in and every configured server)"
    if len(items) == 1 and items[0].name == "*" and items[0].builtin:
        return "replace `*` by the tools it needs"
    if len(items) == 1:
        return f"drop `{items[0].name}` (its only {kind} tool)"
    if len(entries) == 1 and (entry := written.get(next(iter(entries)))) is not None and entry != items[0].name:
        return f"narrow `{entry}`, which brings all {len(items)} of its {kind} tools ({names_text(items)})"
    return f"drop its {len(items)} {kind} tools ({names_text(items)})"


def approval_text(flow: Flow) -> str:
    """How to break the flow by approving the sinks (the tools that send out or destroy)."""
    label: Label = "exfiltration" if flow.kind == "toxic" else "destructive"
    cut = flow.cut
    sinks = flow.tools[label]
    served = [c for c in sinks if not c.builtin]
    if not served:
        them = ("it" if len(sinks) == 1 else "them") if cut == label else names_text(sinks)
        return f"have the host confirm {them} before each call"
    if cut == label:
        what = "it" if len(sinks) == 1 else "them" if len(served) == len(sinks) else f"the {len(served)} MCP ones"
    elif len(served) == 1:
        what = f"`{served[0].name}`"
    else:
        what = f"its {len(served)} {_HYPHENATED[label]} tools"
    return f'require approval on {what} (`approval = "always"`, or `[flows] enforce = true` for `quiver serve`)'


def builtin_text(flows: AgentFlows, flow: Flow) -> str:
    """Which host built-in a flow needs: a shell, or its way out."""
    shells = [c for label in flow.labels for c in flow.tools[label] if c.runs_anything]
    if shells and flows.agent.tools is None:
        return "`tools` is unset, so it has every built-in, a shell included"
    if shells:
        reason = shells[0].capabilities.reason("exfiltration")
        return reason.text if reason is not None else f"built-in `{shells[0].name}` runs anything"
    sink = flow.witness.get("exfiltration") or flow.witness.get("destructive")
    return f"its way out is the host's own `{sink.name}`" if sink is not None else ""


# ------------------------------------------------------------------ the manifest's part


def manifest_flows(flows: AgentFlows, *, enforce: bool) -> dict[str, JSON]:
    """The manifest's `flows`: whether `quiver serve` enforces them, and each flow with its witnesses."""
    return {
        "enforce": enforce,
        "found": [
            {
                "kind": flow.kind,
                "through_builtin": flow.through_builtin,
                "witness": {label: flow.witness[label].name for label in flow.labels},
            }
            for flow in flows.flows
        ],
    }
