"""Helpers shared by lint rule modules: locating nested values, MCP entries, text and words, secrets,
injection patterns, schema walking and result caches. This package holds no rules."""
