"""Token counts for the BUD rules (lint/bud/over_budget.py, large_preloaded_tool.py), one per lint run.
Holds no rules.

Counts come from the lock file (written by `quiver snapshot`), so the budget checks load no tokenizer
unless an agent defers tools and its budget is close enough to need the meta-tool and server-index
counts; those come from compile's token cache when it is there.
"""

from __future__ import annotations

from pathlib import Path

from quiver.compile import tool_tokens
from quiver.lint.engine import LintContext
from quiver.resolve import ResolvedTool
from quiver.sources.token_cache import TOKEN_CACHE_FILE, TokenCache


class Tokens:
    """Token counts: the lock's per tool; a cache (compile's, if present) for meta-tools and the index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: TokenCache | None = None

    @property
    def cache(self) -> TokenCache:
        if self._cache is None:
            self._cache = TokenCache(self.root / TOKEN_CACHE_FILE)
        return self._cache

    def of(self, item: ResolvedTool) -> int:
        return item.tool.tokens if item.tool.tokens is not None else tool_tokens(item, self.cache)


def tokens_of(ctx: LintContext) -> Tokens:
    """The run's token counts (one token cache read per lint run, shared by the BUD checks)."""
    found = ctx.memo.get("bud-tokens")
    if isinstance(found, Tokens):
        return found
    tokens = Tokens(ctx.project.root)
    ctx.memo["bud-tokens"] = tokens
    return tokens
