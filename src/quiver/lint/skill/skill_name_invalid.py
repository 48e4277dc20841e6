"""SKILL003 skill-name-invalid: a skill `name` that is missing, breaks the Agent Skills naming rules, or is not
its folder's name (fixable when it is written plainly and the folder's name is the fix)."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from pathlib import PurePosixPath

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.model import Edit, Finding
from quiver.sources.agents import PLUGIN_MANIFEST
from quiver.sources.skills import Skill

MAX_NAME = 64  # characters: the Agent Skills specification's limit
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_NAME_CHARS = frozenset(string.ascii_lowercase + string.digits + "-")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_NAME = re.compile(r"[^a-z0-9]+")
# Plain YAML scalars that would not read back as the text: numbers and the 1.1/1.2 core keywords.
_YAML_WORDS = frozenset({"null", "true", "false", "yes", "no", "on", "off", "y", "n"})
_NUMBER = re.compile(r"^[0-9][0-9_]*(e[0-9]+)?$|^0x[0-9a-f]+$|^0o[0-7]+$")


def valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and NAME.match(name) is not None


def name_problem(name: str) -> str:
    """Why `name` breaks the naming rules (it does: `valid_name(name)` is False)."""
    problems = []
    if len(name) > MAX_NAME:
        problems.append(f"is {len(name)} characters long (at most {MAX_NAME})")
    if any(c in string.ascii_uppercase for c in name):
        problems.append("has capital letters")
    others = sorted({c for c in name if c not in _NAME_CHARS and c not in string.ascii_uppercase})
    if others:
        problems.append("has " + ", ".join("a space" if c == " " else f"`{c}`" for c in others))
    if name.startswith("-") or name.endswith("-"):
        problems.append("starts or ends with a hyphen")
    if "--" in name:
        problems.append("has two hyphens in a row")
    return " and ".join(problems) or "is not lowercase letters, digits and single hyphens"


def kebab(text: str) -> str:
    """`text` as a valid skill name (`PDF_Tools` -> `pdf-tools`), or '' when nothing of it is left."""
    words = _NOT_NAME.sub("-", _CAMEL.sub("-", text).lower()).strip("-")
    return words[:MAX_NAME].rstrip("-")


def _at_plugin_root(ctx: LintContext, skill: Skill) -> bool:
    """A plugin's own root `SKILL.md`: Claude Code names it by its `name`, the folder is the plugin's."""
    if skill.plugin is None:
        return False
    folder = PurePosixPath(skill.path).parent
    return (ctx.project.root / folder / PLUGIN_MANIFEST).is_file()


def _yaml_text(name: str) -> str:
    return f'"{name}"' if name in _YAML_WORDS or _NUMBER.match(name) else name


def _rename(src: Sources, skill: Skill, to: str) -> tuple[Edit, ...]:
    """The edit writing `to` over the `name` value, when the value is written plainly on the key's line
    (`name: x`, `name: "x"`, `name: 'x'`, nothing after it)."""
    where = skill.key_locations.get("name")
    raw = skill.frontmatter.get("name")
    if where is None or not isinstance(raw, str) or not raw:
        return ()
    line = src.line(skill.path, where.line)
    start = where.column - 1
    if not line.startswith("name:", start):
        return ()
    rest = line[start + len("name:") :]
    value = rest.strip()
    if value not in (raw, f'"{raw}"', f"'{raw}'") or "#" in value:
        return ()
    begin = start + len("name:") + rest.index(value)
    return (Edit(skill.path, where.line, begin + 1, where.line, begin + 1 + len(value), _yaml_text(to)),)


def _named_by_agents(ctx: LintContext) -> frozenset[str]:
    return frozenset(name for agent in ctx.project.agents for name in agent.skills)


def _finding(ctx: LintContext, src: Sources, skill: Skill, referenced: frozenset[str]) -> Finding | None:
    folder, raw = skill.folder, skill.frontmatter.get("name")
    folder_ok = valid_name(folder)
    where = skill.key_locations.get("name", skill.location)
    name = skill.name
    if name is None:
        problem = "has no `name`" if raw is None or isinstance(raw, str) else "has a `name` that is not text"
        hint = (
            f"add `name: {folder}` (the folder's name)"
            if folder_ok
            else f"add a `name` and give the folder the same name, e.g. `{kebab(folder) or 'my-skill'}`"
        )
        subject = f"the skill in `{folder}/`"
        return SKILL_NAME_INVALID.finding(location=where, subject=subject, problem=problem, hint=hint)
    if valid_name(name) and (name == folder or _at_plugin_root(ctx, skill)):
        return None
    if not valid_name(name):
        problem = name_problem(name)
        if folder_ok:
            hint = f"rename it to `{folder}` (the folder's name)"
        else:
            hint = f"rename it and its folder to `{kebab(name) or kebab(folder) or 'my-skill'}`"
    else:
        problem = f"is not its folder's name, `{folder}`"
        if folder_ok:
            hint = f"rename it to `{folder}` (the folder's name), or the folder to `{name}`"
        else:
            hint = f"rename the folder to `{name}`"
    # The fix writes the folder's name; not in a plugin, where `name` is the command users type
    # (`/plugin:name`), nor when an agent's `skills:` names the skill by its current name.
    fixable = folder_ok and skill.plugin is None and name not in referenced and skill.id not in referenced
    fixes = _rename(src, skill, folder) if fixable else ()
    subject = f"skill name `{name}`"
    return SKILL_NAME_INVALID.finding(location=where, subject=subject, problem=problem, hint=hint, fixes=fixes)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    referenced = _named_by_agents(ctx)
    for skill in ctx.project.skills:
        found = _finding(ctx, src, skill, referenced)
        if found is not None:
            yield found


SKILL_NAME_INVALID = Rule(
    code="SKILL003",
    name="skill-name-invalid",
    severity="warning",
    fix="safe",
    check=check,
    message="{subject} {problem}",
    hint="{hint}",
    doc="""\
## What it does
Flags a skill (`SKILL.md`) whose `name` is missing, breaks the naming rules, or is not its folder's name.
The rules: 1-64 lowercase letters, digits and single hyphens, no hyphen at either end
(`^[a-z0-9]+(-[a-z0-9]+)*$`). A plugin's root `SKILL.md`, which has no folder of its own, is only held
to the naming rules.

## Why is this bad?
The Agent Skills specification requires all three, and readers that follow it refuse the skill
(`skills-ref validate`). Where hosts accept it, the skill has two names: Claude Code lists a project
skill under its `name` but runs `/folder` and finds it by its folder, and a plugin skill's `name`
replaces the folder in its command (`/plugin:name`); the model, the user and an agent's `skills:` entry
can each use a different one.

## Example
```yaml
# .claude/skills/pdf-tools/SKILL.md
name: PDF_Tools
```
Use instead:
```yaml
name: pdf-tools
```

## Fix
The hint names the fix: the folder's name when that is a valid name, else a valid form of the name for
both. `quiver lint --fix` writes the folder's name over a `name` written plainly on its line, except in a
plugin (there `name` is the command users type: rename it, or the folder, yourself) and when an agent's
`skills:` names the skill by its current name (rename both together).

## References
Agent Skills specification (agentskills.io/specification): `name`, required, 1-64 characters, lowercase
letters, digits and hyphens, no leading, trailing or consecutive hyphens, must match the parent
directory. Claude Code docs, skills: how a skill gets its command name.
""",
)


RULES: tuple[Rule, ...] = (SKILL_NAME_INVALID,)
