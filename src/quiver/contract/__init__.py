"""Contract diff: what changed between two versions of an MCP server's tools, and whether callers break.

Import the parts directly (`quiver.contract.diff`, `quiver.contract.rules`): the package itself stays
empty so that reading the rule catalog (lint, `quiver rule`) does not load the diff engine.
"""

from __future__ import annotations

__all__: list[str] = []
