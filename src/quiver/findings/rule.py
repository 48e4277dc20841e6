"""The rule type shared by lint and contract diff: code, name, severity, message, doc and check side by side."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from quiver.model import Edit, Finding, Location, Severity

DOC_HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Fix")
FixSafety = Literal["none", "safe", "unsafe"]
# A check takes the context of the layer that runs it (lint: `LintContext`) and yields findings; findings/
# sits below that layer, so the context is `Any` here. Rules that share one check share the function.
Check = Callable[[Any], Iterable[Finding]]
_CODE = re.compile(r"^[A-Z]{3,5}\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule. `message` and `hint` are str.format templates filled by `Rule.finding`.

    `doc` is the one-screen rule documentation (markdown, headings in DOC_HEADINGS order). `fix` says
    whether findings carry edits and whether `quiver lint --fix` may apply them unasked ("safe").
    `check` is the function that yields the rule's findings (lint rules); contract rules are raised by the
    schema walker instead and set `direction` (input/output/annotations/tool/agent), `kind` and `action`.
    """

    code: str
    name: str
    severity: Severity
    message: str
    doc: str
    hint: str | None = None
    fix: FixSafety = "none"
    check: Check | None = None
    direction: str | None = None
    kind: str | None = None
    action: str | None = None

    def __post_init__(self) -> None:
        if not _CODE.match(self.code):
            raise ValueError(f"bad rule code {self.code!r}")
        if not _NAME.match(self.name):
            raise ValueError(f"bad rule name {self.name!r}")

    @property
    def prefix(self) -> str:
        return self.code.rstrip("0123456789")

    @property
    def fixable(self) -> bool:
        return self.fix != "none"

    @property
    def summary(self) -> str:
        """The first sentence of 'What it does'."""
        body = " ".join(self.doc.split("## What it does", 1)[-1].split("\n##", 1)[0].split())
        return re.split(r"(?<=\.)\s", body, maxsplit=1)[0] if body else self.name

    def finding(
        self,
        *,
        location: Location | None,
        severity: Severity | None = None,
        server: str | None = None,
        tool: str | None = None,
        agent: str | None = None,
        witness: Any = None,
        fixes: tuple[Edit, ...] = (),
        **values: Any,
    ) -> Finding:
        """Build a finding of this rule; `values` fill the message and hint templates."""
        values = {"server": server, "tool": tool, "agent": agent, **values}
        hint = self.hint.format(**values) if self.hint else None
        return Finding(
            rule=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=self.message.format(**values),
            location=location,
            hint=hint,
            server=server,
            tool=tool,
            agent=agent,
            witness=witness,
            fixes=fixes,
        )


def index_rules(rules: tuple[Rule, ...]) -> Mapping[str, Rule]:
    """Map both code and name of every rule to the rule."""
    table: dict[str, Rule] = {}
    for rule in rules:
        table[rule.code] = rule
        table[rule.name] = rule
    return table
