"""Lint rules about custom agent files: frontmatter fields, the prompt body and the file itself.

The family is split by concern: this module holds the file-level rules and the family's `check`;
`_agent_fields` the key and type rules, `_agent_tools` the rules about `tools` and `mcp-servers`,
`_agent_links` the rules that compare agents with each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.lint import _agent_fields, _agent_links, _agent_tools
from quiver.lint._locate import Sources
from quiver.lint.engine import LintContext
from quiver.model import Agent, Edit, Finding, Location
from quiver.rules import Rule
from quiver.suggest import did_you_mean

MAX_BODY = 30_000
TARGETS = ("vscode", "github-copilot")
_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")
_OLD_SPELLING, _NEW_SPELLING = "user-invokable", "user-invocable"

MISSING_DESCRIPTION = Rule(
    code="AGT001",
    name="missing-description",
    severity="error",
    message="agent `{agent}` has no `description`",
    hint="add `description:` saying what the agent does and when to pick it",
    doc="""\
## What it does
Flags an agent file whose frontmatter has no `description`, or an empty one.

## Why is this bad?
`description` is the only required field: hosts show it in the agent picker and use it to decide
when to delegate to the agent. Without it the cloud agent rejects the profile and no model routes to it.

## Example
```yaml
---
name: reviewer
---
```
Use instead:
```yaml
---
name: reviewer
description: Reviews pull requests for security and style problems.
---
```

## Fix
Write one or two sentences on what the agent does and when to use it.

## References
GitHub Docs, custom agents configuration: `description` (required).
""",
)

INVALID_TARGET = Rule(
    code="AGT003",
    name="invalid-target",
    severity="error",
    message="`target` is `{value}`; it must be `vscode` or `github-copilot`",
    hint="{advice}",
    doc="""\
## What it does
Flags a `target` value other than `vscode` or `github-copilot`.

## Why is this bad?
Hosts filter agents by `target`: an unknown value makes the agent invisible everywhere, or visible
where it was not meant to run.

## Example
```yaml
target: copilot
```
Use instead:
```yaml
target: github-copilot
```

## Fix
Use one of the two values, or remove `target` to make the agent available in both environments.

## References
GitHub Docs, custom agents configuration: `target`.
""",
)

DEPRECATED_INFER = Rule(
    code="AGT004",
    name="deprecated-infer",
    severity="warning",
    message="`infer` is deprecated",
    hint="{advice}",
    doc="""\
## What it does
Flags the retired `infer` field.

## Why is this bad?
Hosts are dropping `infer`; `disable-model-invocation` replaces it and wins when both are set, so an
`infer` that disagrees with it is silently ignored.

## Example
```yaml
infer: false
```
Use instead:
```yaml
disable-model-invocation: true
```

## Fix
`infer: false` becomes `disable-model-invocation: true`; `infer: true` is the default and can go.

## References
GitHub Docs, custom agents configuration: `infer` (retired), `disable-model-invocation`.
""",
)

OLD_USER_INVOCABLE_SPELLING = Rule(
    code="AGT005",
    name="user-invokable-spelling",
    severity="warning",
    message="`user-invokable` is the old spelling of `user-invocable`",
    hint="rename the key to `user-invocable`",
    fixable=True,
    doc="""\
## What it does
Flags the key `user-invokable` (with a k), the spelling of older VS Code releases.

## Why is this bad?
Current VS Code and GitHub read `user-invocable`; hosts that dropped the old spelling ignore the key
and show an agent that was meant to be hidden (or the reverse).

## Example
```yaml
user-invokable: false
```
Use instead:
```yaml
user-invocable: false
```

## Fix
`--fix` renames the key and touches nothing else. No fix is offered when both spellings are present:
delete the one you do not mean.

## References
VS Code docs, custom agents (`user-invocable`); formats research §1.4, spelling conflict.
""",
)

PROMPT_TOO_LONG = Rule(
    code="AGT006",
    name="prompt-too-long",
    severity="error",
    message="the prompt body is {length:,} characters, over the {limit:,} limit",
    hint="move reference material into files the agent reads on demand",
    doc="""\
## What it does
Flags an agent whose Markdown body (the prompt) is longer than 30,000 characters.

## Why is this bad?
GitHub caps the prompt at 30,000 characters: a longer profile is rejected or cut, and every turn pays
for the whole prompt in context.

## Example
```markdown
---
description: Pimcore expert.
---
(31,000 characters: the framework manual pasted in full)
```
Use instead:
```markdown
---
description: Pimcore expert.
---
Follow the conventions in docs/pimcore.md; read the relevant section before editing.
```

## Fix
Keep the instructions; link to documentation or instruction files instead of inlining them.

## References
GitHub Docs, custom agents configuration: "maximum 30,000 characters".
""",
)

INVALID_FILE_NAME = Rule(
    code="AGT007",
    name="invalid-file-name",
    severity="error",
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


def _description(agent: Agent) -> Iterator[Finding]:
    value = agent.frontmatter.get("description")
    if value is None or (isinstance(value, str) and not value.strip()):
        where = agent.key_locations.get("description", agent.location)
        yield MISSING_DESCRIPTION.finding(location=where, agent=agent.id)


def _target(agent: Agent) -> Iterator[Finding]:
    value = agent.frontmatter.get("target")
    if isinstance(value, str) and value not in TARGETS:
        fallback = "use `vscode` or `github-copilot`, or remove `target` to run in both"
        yield INVALID_TARGET.finding(
            location=agent.key_locations["target"],
            agent=agent.id,
            value=value,
            advice=did_you_mean(value, TARGETS, fallback),
        )


def _infer(agent: Agent) -> Iterator[Finding]:
    if "infer" not in agent.frontmatter:
        return
    value = agent.frontmatter["infer"]
    if "disable-model-invocation" in agent.frontmatter:
        advice = "remove it: `disable-model-invocation` is set and wins"
    elif value is False:
        advice = "use `disable-model-invocation: true` instead"
    else:
        advice = "remove it: model invocation is the default (`disable-model-invocation: false`)"
    yield DEPRECATED_INFER.finding(location=agent.key_locations["infer"], agent=agent.id, advice=advice)


def _old_spelling(agent: Agent, src: Sources) -> Iterator[Finding]:
    where = agent.key_locations.get(_OLD_SPELLING)
    if where is None:
        return
    fixes: tuple[Edit, ...] = ()
    if _NEW_SPELLING not in agent.frontmatter:
        line = src.line(agent.path, where.line)
        start = where.column - 1
        if line[start : start + 1] in ("'", '"'):
            start += 1
        if line[start : start + len(_OLD_SPELLING)] == _OLD_SPELLING:
            end = start + len(_OLD_SPELLING)
            fixes = (Edit(agent.path, where.line, start + 1, where.line, end + 1, _NEW_SPELLING),)
    yield OLD_USER_INVOCABLE_SPELLING.finding(location=where, agent=agent.id, fixes=fixes)


def _body(agent: Agent) -> Iterator[Finding]:
    if len(agent.body) > MAX_BODY:
        yield PROMPT_TOO_LONG.finding(
            location=Location(agent.path, agent.body_line, 1), agent=agent.id, length=len(agent.body), limit=MAX_BODY
        )


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


RULES: tuple[Rule, ...] = (
    MISSING_DESCRIPTION,
    INVALID_TARGET,
    DEPRECATED_INFER,
    OLD_USER_INVOCABLE_SPELLING,
    PROMPT_TOO_LONG,
    INVALID_FILE_NAME,
    *_agent_fields.RULES,
    *_agent_tools.RULES,
    *_agent_links.RULES,
)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    resolved = {r.agent.path: r for r in ctx.resolved}
    for agent in ctx.project.agents:
        yield from _description(agent)
        yield from _target(agent)
        yield from _infer(agent)
        yield from _old_spelling(agent, src)
        yield from _body(agent)
        yield from _file_name(agent)
        yield from _agent_fields.check_agent(agent)
        yield from _agent_tools.check_agent(ctx, agent, resolved.get(agent.path), src)
    yield from _agent_links.check(ctx, src)
