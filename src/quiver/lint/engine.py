"""What every lint check sees (`LintContext`), and running the checks of the chosen rules.

Selection, severity overrides, suppressions and baselines are the findings layer's (quiver.findings).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from quiver.findings.rule import Check, Rule
from quiver.model import Finding, LockedTool
from quiver.project import Project
from quiver.resolve import ResolvedAgent
from quiver.sources.files import MAX_LOCK_BYTES, read_bytes


@dataclass(frozen=True, slots=True)
class LintContext:
    """What a check sees: the project as read, and every agent as resolved."""

    project: Project
    resolved: tuple[ResolvedAgent, ...]
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)  # per-run, shared by checks
    pending: dict[str, Callable[[], None]] = field(default_factory=dict, compare=False, repr=False)

    def at_finish(self, key: str, action: Callable[[], None]) -> None:
        """Have `finish` run `action` once (a cache written once per run, not once per check); the last
        action given for `key` is the one run."""
        self.pending[key] = action

    def finish(self) -> None:
        """Run the actions `at_finish` collected, in the order their keys were first given."""
        while self.pending:
            key = next(iter(self.pending))
            self.pending.pop(key)()

    def source(self, rel: str) -> str:
        """A project file's text ('' when unreadable), read once per run."""
        key = f"source:{rel}"
        cached = self.memo.get(key)
        if isinstance(cached, str):
            return cached
        try:  # bounded, regular files only: the readers refused anything else already
            data = read_bytes(self.project.root / rel, limit=MAX_LOCK_BYTES)
            text = data.decode("utf-8-sig").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError):
            text = ""
        self.memo[key] = text
        return text

    def locked_tools(self) -> Iterator[LockedTool]:
        """Every tool of the lock file, by server name then as served (each checked once, not per agent)."""
        lock = self.project.lock
        if lock is None:
            return
        for name in sorted(lock.servers):
            yield from lock.servers[name].tools


def checks_of(rules: Iterable[Rule]) -> list[Check]:
    """The distinct checks behind `rules`, in rule order (rules sharing a check share the function)."""
    out: list[Check] = []
    for rule in rules:
        if rule.check is not None and all(rule.check is not seen for seen in out):
            out.append(rule.check)
    return out


def run_checks(ctx: LintContext, rules: Iterable[Rule]) -> Iterator[Finding]:
    """Every finding of the checks behind `rules` (a check may also yield findings of its other rules)."""
    for check in checks_of(rules):
        yield from check(ctx)
    ctx.finish()
