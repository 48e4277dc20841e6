"""Formatters shared by lint and diff: text, json, sarif, github, markdown."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github", "markdown")

__all__ = ["FORMATS"]
