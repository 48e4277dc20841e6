"""Every lint rule family, listed explicitly (nothing registers itself by import side effect)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from quiver.lint import references
from quiver.lint._cache import cached_check
from quiver.lint.engine import Family, LintContext
from quiver.model import Finding
from quiver.rules import Rule, index_rules
from quiver.server_findings import project_findings


def _references(ctx: LintContext) -> Iterator[Finding]:
    yield from project_findings(ctx.project, ctx.resolved)
    for resolved in ctx.resolved:
        yield from resolved.findings


def families() -> tuple[Family, ...]:
    from quiver.lint import agents, budget, mcp_configs, meta, routing, security, tools

    return (
        Family("agents", agents.RULES, agents.check),
        Family("references", references.RULES, _references),
        Family("mcp-configs", mcp_configs.RULES, mcp_configs.check),
        Family("tools", tools.RULES, tools.check),
        Family("security", security.RULES, security.check),
        Family("budget", budget.RULES, budget.check),
        Family("routing", routing.RULES, cached_check("routing", routing.check)),
        Family("meta", meta.RULES, meta.check),
    )


def all_rules() -> tuple[Rule, ...]:
    """Every lint rule, sorted by code."""
    rules = [rule for family in families() for rule in family.rules]
    return tuple(sorted(rules, key=lambda r: r.code))


def rule_table() -> Mapping[str, Rule]:
    """Code and name of every rule (lint and contract) -> rule."""
    from quiver.contract.rules import CONTRACT_RULES

    return index_rules((*all_rules(), *CONTRACT_RULES))
