"""SKILL005 unknown-skill: an entry of an agent's `skills:` that names no skill the agent sees."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.lint.support.skill_views import bare_name
from quiver.model import Finding, Location, ToolRef
from quiver.resolve import ResolvedAgent
from quiver.sources.skills import Skill
from quiver.suggest import closest

_ENTRY_LINES = 50  # how far below `skills:` an entry of its list is looked for


def _entry(src: Sources, ref: ToolRef) -> Location:
    """Where the entry is written: the first whole-word occurrence of its text from the `skills` key on, in
    the key's value (its line, then the list's lines below it); else the key."""
    at = ref.location
    lines = src.lines(at.file)
    word = re.compile(rf"(?<![\w.:-]){re.escape(ref.text)}(?![\w.:-])")
    for index in range(at.line - 1, min(len(lines), at.line - 1 + _ENTRY_LINES)):
        line = lines[index]
        if index > at.line - 1 and line[:1] not in (" ", "\t", "-"):
            break  # the next key: the list has ended
        skip = at.column - 1 + len("skills") if index == at.line - 1 else 0
        found = word.search(line, skip)
        if found:
            return Location(at.file, index + 1, found.start() + 1)
    return at


def _other_plugins_skill(skills: tuple[Skill, ...], text: str) -> bool:
    """`plugin:skill` naming a skill of another plugin of the project: Claude Code finds it where that plugin
    is enabled too, which quiver cannot see."""
    return ":" in text and any(s.plugin is not None and s.id == text for s in skills)


def _hint(ctx: LintContext, resolved: ResolvedAgent, text: str) -> str:
    visible = resolved.skills
    elsewhere = next((s for s in ctx.project.skills if text in (s.id, bare_name(s)) and s not in visible), None)
    host = resolved.host
    if elsewhere is not None:
        return f"`{text}` is `{elsewhere.path}`, which {host.name} does not list for this agent"
    guess = closest(text, {bare_name(s) for s in visible} | {s.id for s in visible})
    if guess is not None:
        return f"did you mean `{guess}`?"
    folders = " and ".join(f"`{d}/`" for d in host.skill_dirs)
    plugin = " and its plugin's `skills/`" if ":" in resolved.agent.id else ""
    return f"fix the name, or add the skill: {host.name} lists the skills of {folders}{plugin} for this agent"


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for resolved in ctx.resolved:
        for ref in resolved.unknown_skills:
            if _other_plugins_skill(ctx.project.skills, ref.text):
                continue
            yield UNKNOWN_SKILL.finding(
                location=_entry(src, ref),
                agent=resolved.agent.id,
                skill=ref.text,
                host=resolved.host.name,
                hint=_hint(ctx, resolved, ref.text),
            )


UNKNOWN_SKILL = Rule(
    code="SKILL005",
    name="unknown-skill",
    severity="error",
    check=check,
    message="agent `{agent}`: `skills` entry `{skill}` names no skill {host} lists for it",
    hint="{hint}",
    doc="""\
## What it does
Flags an entry of an agent's `skills:` that names no skill the agent's host lists for it. Those are the
project's skill folders that host reads (Claude Code `.claude/skills/`, Copilot `.github/skills/` and
`.claude/skills/`) and, for a plugin's agent, the plugin's own skills. The
hint names a close skill (did you mean), or the file of a skill of that name the host does not read.

## Why is this bad?
`skills:` injects each named skill's whole body into the agent's context when it starts: that is how an
agent is given the instructions it depends on. An entry that matches nothing injects nothing, without a
word, and the agent runs without them.

## Example
```yaml
# .claude/agents/reviewer.md
skills: [pdf-tool]   # the skill is .claude/skills/pdf-tools/
```
Use instead:
```yaml
skills: [pdf-tools]
```

## Fix
Correct the name, or move the skill into a folder the agent's host reads. A skill installed only on a
machine (`~/.claude/skills/`, `~/.copilot/skills/`) or by a plugin outside the repository is invisible to
quiver: ignore the rule for that file in `per-file-ignores`. `plugin:skill` naming another plugin of the
repository is left alone (it works where that plugin is enabled).

## References
Claude Code docs, subagents: `skills` (the full content is injected at startup); GitHub Docs, custom
agents configuration and Copilot CLI 1.0.22 changelog: `skills`. Recorded: Claude Code 2.1.332 and Copilot
CLI 1.0.102 inject the named bodies (docs/hosts.md).
""",
)


RULES: tuple[Rule, ...] = (UNKNOWN_SKILL,)
