"""Which skills one model sees listed together (shared by the SKILL rules and ROUTE008; no rules here).

A host lists every skill it reads, name and description, in one listing: a session's main thread lists the
project skill folders the host reads (and, in Claude Code, the skills of the plugins it runs), a custom agent
or subagent the skills `ResolvedAgent.skills` holds (its host's project folders and its own plugin's). Two
skills meet, and can collide or compete, only inside one such listing; skills of two different plugins
never do in what quiver models (each plugin is one view, beside the project's `.claude/skills/`).
"""

from __future__ import annotations

from dataclasses import dataclass

from quiver.hosts import HostId, host
from quiver.lint.engine import LintContext
from quiver.sources.skills import Skill

_MEMO = "skill-views"


@dataclass(frozen=True, slots=True)
class SkillView:
    """One listing: its skills, sorted by path, and everyone shown exactly these (`Claude Code`, an agent)."""

    labels: tuple[str, ...]
    skills: tuple[Skill, ...]


def bare_name(skill: Skill) -> str:
    """The name a host lists a skill under, without a plugin's prefix: its `name`, else its folder."""
    return skill.name or skill.folder


def model_invocable(skill: Skill) -> bool:
    """Whether the model may pick the skill: not `disable-model-invocation: true` (Claude Code then leaves
    its description out of the listing; it takes `yes`, `on` and `1` too, since 2.1.218)."""
    value = skill.frontmatter.get("disable-model-invocation")
    if isinstance(value, str):
        return value.strip().lower() not in ("true", "yes", "on", "1")
    return value is not True and value != 1


_MAIN_ORDER = (HostId.CLAUDE_CODE, HostId.COPILOT_CLI, HostId.VSCODE, HostId.GITHUB_CODING_AGENT)


def skill_views(ctx: LintContext) -> tuple[SkillView, ...]:
    """Every distinct listing of two or more skills: each agent host's main session (only the host
    quiver.toml names, when it names one), Claude Code with each plugin that ships skills, and each agent.
    A listing shown to several of them is one view holding every label, main sessions first."""
    cached = ctx.memo.get(_MEMO)
    if isinstance(cached, tuple):
        return cached
    project = ctx.project
    skills = project.skills
    views: list[tuple[str, tuple[Skill, ...]]] = []
    if skills:
        wanted = project.config.host
        hosts = [host(wanted)] if wanted else [host(h) for h in _MAIN_ORDER]
        for item in hosts:
            views.append((item.name, tuple(s for s in skills if s.plugin is None and s.root in item.skill_dirs)))
        if wanted is None or wanted == HostId.CLAUDE_CODE.value:
            claude = host(HostId.CLAUDE_CODE)
            project_skills = tuple(s for s in skills if s.plugin is None and s.root in claude.skill_dirs)
            for plugin in sorted({s.plugin for s in skills if s.plugin is not None}):
                own = tuple(s for s in skills if s.plugin == plugin)
                views.append((f"{claude.name} with plugin `{plugin}`", project_skills + own))
        for resolved in ctx.resolved:
            views.append((f"agent `{resolved.agent.id}`", resolved.skills))
    merged: dict[tuple[str, ...], tuple[list[str], tuple[Skill, ...]]] = {}
    for label, listed in views:
        ordered = tuple(sorted(listed, key=lambda s: s.path))
        if len(ordered) >= 2:
            merged.setdefault(tuple(s.path for s in ordered), ([], ordered))[0].append(label)
    result = tuple(SkillView(tuple(labels), listed) for labels, listed in merged.values())
    ctx.memo[_MEMO] = result
    return result


def listed_to(views: tuple[SkillView, ...], first: Skill, other: Skill) -> str | None:
    """Who sees both skills in one listing, as a message says it (`Claude Code and Copilot CLI`, or the
    first two and how many more), or None when no listing holds both."""
    labels = [label for v in views if first in v.skills and other in v.skills for label in v.labels]
    if not labels:
        return None
    if len(labels) <= 2:
        return " and ".join(labels)
    more = len(labels) - 2
    return f"{labels[0]}, {labels[1]} and {more} other listing{'s' if more > 1 else ''}"
