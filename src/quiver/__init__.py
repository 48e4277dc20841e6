"""quiver: a compiler, linter and runtime for agent definitions."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
