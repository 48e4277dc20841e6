"""Capability classification (issue 28): which tools bring untrusted input, reach private data, can send data
out, or destroy something, each label with the reason that set it.

`classify_tool` reads one MCP tool (annotations, quiver's side-effect class, parameters, wording);
`classify_builtin` looks a host built-in up in `_builtins`'s table; `quiver.capabilities.overrides` applies
the `capabilities` tables of the quiver config; `quiver.capabilities.flows` finds, per agent, the flows
that combine them.
"""

from __future__ import annotations

from quiver.capabilities._tool import ToolFacts, classify_tool
from quiver.capabilities.model import FLOW_LABELS, LABELS, SHOWN, Capabilities, Label, Reason

__all__ = ["FLOW_LABELS", "LABELS", "SHOWN", "Capabilities", "Label", "Reason", "ToolFacts", "classify_tool"]
