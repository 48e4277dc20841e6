"""Internals of `quiver.search`: text analysis, vocabulary, query analysis, near-duplicate blocking."""
