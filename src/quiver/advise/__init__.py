"""Preload advice (`quiver advise`): which tools each agent should carry up front, from measured use.

Pure: recorded usage (`stats.UsageStats`) and compiled manifests in, frozen dataclasses and patch text
out. The command reads the files and writes the patch.

- `manifest`: what advice reads of a compiled manifest, and the loads `quiver compile` gives under settings;
- `model`: the cost model and the project-wide decision (`advise`); its docstring states the model;
- `patch`: the config change as a unified diff;
- `shadow`: a log of calls made without quiver, replayed as usage.
"""

from __future__ import annotations

from quiver.advise.manifest import AgentManifest, ServerLoading, loading_from_manifests, manifest_view, predict_loads
from quiver.advise.manifest import AgentTool as AgentTool  # not in __all__, imported by tests
from quiver.advise.model import MIN_SESSIONS, Advice, AgentAdvice, ConfigChange, advise
from quiver.advise.model import ServerEdit as ServerEdit  # not in __all__, imported by tests
from quiver.advise.patch import render_patch
from quiver.advise.shadow import ShadowCall, ShadowReport, shadow_events, shadow_report

__all__ = [
    "MIN_SESSIONS",
    "Advice",
    "AgentAdvice",
    "AgentManifest",
    "ConfigChange",
    "ServerLoading",
    "ShadowCall",
    "ShadowReport",
    "advise",
    "loading_from_manifests",
    "manifest_view",
    "predict_loads",
    "render_patch",
    "shadow_events",
    "shadow_report",
]
