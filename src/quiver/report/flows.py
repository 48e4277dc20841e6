"""`quiver explain AGENT --flows`: an agent's flows drawn, then every tool it carries by capability label,
each label with the reason that set it (text), or the same as JSON. Pure: an `AgentFlows` in, a string out."""

from __future__ import annotations

import json
from collections.abc import Sequence

from quiver.capabilities import LABELS, SHOWN, Label
from quiver.capabilities.flows import AgentFlows, Carried, Flow, approval_text, builtin_text, cut_text
from quiver.model import JSON

_TITLE = {"toxic": "toxic flow", "destructive": "destructive flow"}
_ROLE: dict[Label, str] = {
    "untrusted_input": "untrusted input",
    "private_data": "private data",
    "exfiltration": "sends it out",
    "destructive": "destroys",
}


def flows_text(flows: AgentFlows) -> str:
    agent = flows.agent
    count = len(flows.flows)
    summary = ", ".join(_TITLE[f.kind] + (" (through a host built-in)" * f.through_builtin) for f in flows.flows)
    lines = [f"agent `{agent.id}` ({agent.path}): " + (summary if count else "no flow")]
    for flow in flows.flows:
        lines += ["", *_flow_lines(flows, flow)]
    lines += ["", "tools by label (preloaded, deferred and built-in alike: deferral is not authorization)"]
    width = max((len(c.name) for c in flows.carried), default=0)
    for label in LABELS:
        tools = [c for c in flows.carried if c.capabilities.has(label)]
        lines.append(f"  {SHOWN[label]} ({len(tools)})")
        for item in tools:
            reason = item.capabilities.reason(label)
            lines.append(f"    {item.name:<{width}}  {item.load:<9}  {reason.text if reason else ''}")
    cleared = [(c, r) for c in flows.carried for r in c.capabilities.cleared]
    if cleared:
        lines.append(f"  cleared by an override ({len(cleared)})")
        for item, reason in cleared:
            lines.append(f"    {item.name:<{width}}  {SHOWN[reason.label]}: {reason.text}")
    plain = [c.name for c in flows.carried if not c.capabilities.reasons]
    if plain:
        lines.append(f"  no label ({len(plain)}): " + ", ".join(f"`{n}`" for n in plain))
    if flows.unclassified:
        shown = ", ".join(f"`{n}`" for n in flows.unclassified)
        lines.append(f"  not classified ({len(flows.unclassified)}): {shown}: tools quiver does not know (extensions)")
    return "\n".join(lines) + "\n"


def _flow_lines(flows: AgentFlows, flow: Flow) -> list[str]:
    head = _TITLE[flow.kind] + (f": {builtin_text(flows, flow)}" if flow.through_builtin else "")
    chain = "  ->  ".join(f"{flow.witness[label].name} ({_ROLE[label]})" for label in flow.labels)
    lines = [head, f"  {chain}"]
    width = max(len(SHOWN[label]) for label in flow.labels)
    for label in flow.labels:
        item = flow.witness[label]
        reason = item.capabilities.reason(label)
        more = len(flow.tools[label]) - 1
        others = f" (+{more} more)" if more else ""
        why = reason.text if reason else ""
        lines.append(f"  {SHOWN[label]:<{width}}  {item.name}{others}  [{item.load}, {item.entry}]: {why}")
    lines.append(f"  break it: {cut_text(flows, flow)}, {approval_text(flow)}, or split the agent")
    return lines


def flows_json(flows: AgentFlows) -> str:
    agent = flows.agent
    document: dict[str, JSON] = {
        "agent": agent.id,
        "source": agent.path,
        "flows": [_flow_json(flows, f) for f in flows.flows],
        "tools": [_tool_json(c) for c in flows.carried],
        "unclassified": list(flows.unclassified),
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _flow_json(flows: AgentFlows, flow: Flow) -> dict[str, JSON]:
    return {
        "kind": flow.kind,
        "through_builtin": flow.through_builtin,
        "witness": {label: flow.witness[label].name for label in flow.labels},
        "tools": {label: _names(flow.tools[label]) for label in flow.labels},
        "cut": flow.cut,
        "break": [cut_text(flows, flow), approval_text(flow), "split the agent"],
    }


def _tool_json(item: Carried) -> dict[str, JSON]:
    return {
        "name": item.name,
        "load": item.load,
        "entry": str(item.entry),
        "labels": [{"label": r.label, "reason": r.text, "origin": r.origin} for r in item.capabilities.reasons],
        "cleared": [{"label": r.label, "reason": r.text, "origin": r.origin} for r in item.capabilities.cleared],
    }


def _names(items: Sequence[Carried]) -> list[JSON]:
    return [c.name for c in items]
