"""AGT007 invalid-file-name: characters hosts reject in an agent file name."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding, Location

_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(agent: Agent) -> Iterator[Finding]:
    name = agent.path.rsplit("/", 1)[-1]
    bad = sorted(set(_FILE_NAME.findall(name)))
    if bad:
        chars = ", ".join("a space" if c == " " else f"`{c}`" if c.strip() else repr(c) for c in bad)
        yield INVALID_FILE_NAME.finding(
            location=Location(agent.path, 1, 1),
            agent=agent.id,
            file=name,
            chars=chars,
            suggestion=re.sub(r"-+", "-", _FILE_NAME.sub("-", name)),
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _file_name(agent)


INVALID_FILE_NAME = Rule(
    code="AGT007",
    name="invalid-file-name",
    severity="error",
    check=check,
    message="file name `{file}` contains {chars}; only letters, digits, `.`, `-` and `_` are allowed",
    hint="rename the file, e.g. `{suggestion}`",
    doc="""\
## What it does
Flags an agent file whose name contains anything but `.`, `-`, `_`, `a-z`, `A-Z` and `0-9`.

## Why is this bad?
The file name is the agent id. GitHub refuses other characters (spaces, `+`, non-ASCII letters), so
the agent cannot be created or selected.

## Example
`.github/agents/code reviewer.agent.md`

Use instead:
`.github/agents/code-reviewer.agent.md`

## Fix
The hint replaces each invalid character by `-`. Update handoffs and `agents` lists that name the old id.

## References
GitHub Docs, creating custom agents: file name characters.
""",
)


RULES: tuple[Rule, ...] = (INVALID_FILE_NAME,)
