"""Lint rules about routing quality: can a model, and tool search, tell tools, servers and agents apart?

Pairs of tools (near-duplicates within a server or across an agent's servers, names that mean the same)
are in `_route_pairs.py`, agents competing for auto-selection in `_route_agents.py`, server descriptions in
`_route_servers.py`, tools that search cannot reach in `_route_shadow.py`; `RULES` lists them all by code.
Candidate pairs always come from the search index's blocking, so the family grows linearly with the catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from quiver._search._scope import purpose_vectors
from quiver.lint import _route_agents, _route_pairs, _route_servers, _route_shadow
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.rules import Rule

RULES: tuple[Rule, ...] = tuple(
    sorted(
        (*_route_pairs.RULES, *_route_agents.RULES, *_route_servers.RULES, *_route_shadow.RULES),
        key=lambda r: r.code,
    )
)


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _route_agents.check(ctx)
    yield from _route_servers.check(ctx)
    lock = ctx.project.lock
    if lock is None:
        return
    yield from _route_pairs.check(_route_pairs.Catalog.of(lock, ctx.resolved), partial(purpose_vectors, ctx.project))
    yield from _route_shadow.check(ctx)
