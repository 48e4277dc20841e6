"""Read Agent Skills: a folder with a `SKILL.md` whose YAML frontmatter holds `name` and `description`.

Hosts put every visible skill's name and description in the context up front and load its body (and the
files beside it) on demand, except the skills an agent names in `skills:`, whose bodies are injected up
front (measured on Claude Code 2.1.332 and Copilot CLI 1.0.102). Skills live in `.claude/skills/*/`,
`.github/skills/*/` and Claude Code plugins (`<plugin>/skills/*/`, or the paths its plugin.json lists).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.globs import matches_any
from quiver.model import JSON, Location, RepairedValue
from quiver.sources._yaml import YNode
from quiver.sources.agents import PLUGIN_MANIFEST, SKIP_DIRS, split_frontmatter
from quiver.sources.claude_frontmatter import parse_frontmatter
from quiver.sources.files import read_text

SKILL_FILE = "SKILL.md"
SKILL_DIRS = (".claude/skills", ".github/skills")


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its frontmatter `name` and `description` (None when missing or not a string), the folder
    it lives in, its body, and the plugin it ships in (None outside a Claude Code plugin)."""

    path: str  # project-relative path of SKILL.md
    folder: str  # the skill's folder name
    name: str | None
    description: str | None
    body: str
    frontmatter: Mapping[str, JSON]
    key_locations: Mapping[str, Location]
    plugin: str | None = None
    yaml_error: str = ""  # the frontmatter is not YAML, and Claude Code reads it only after `repaired` (AGT026)
    repaired: tuple[RepairedValue, ...] = ()

    @property
    def location(self) -> Location:
        return Location(self.path, 1, 1)

    @property
    def id(self) -> str:
        """How hosts list it: its `name` (the folder when it has none), `plugin:name` in a plugin."""
        base = self.name or self.folder
        return f"{self.plugin}:{base}" if self.plugin else base

    @property
    def root(self) -> str:
        """The skills folder it sits in (`.claude/skills`, `.github/skills`, or a plugin's)."""
        return self.path.rsplit("/", 2)[0] if self.path.count("/") >= 2 else ""


@dataclass(frozen=True, slots=True)
class SkillFile:
    path: str
    plugin: str | None = None


def discover_skills(root: Path, exclude: Sequence[str] = ()) -> list[SkillFile]:
    """Every SKILL.md of the project (the hosts' skill folders and Claude Code plugins), sorted by path."""
    found: dict[str, SkillFile] = {}
    for folder in SKILL_DIRS:
        for path in sorted((root / folder).glob(f"*/{SKILL_FILE}")):
            rel = path.relative_to(root).as_posix()
            found.setdefault(rel, SkillFile(rel))
    for manifest in plugin_manifests(root):
        for item in _plugin_skills(root, manifest):
            found.setdefault(item.path, item)
    return [found[rel] for rel in sorted(found) if not matches_any(rel, tuple(exclude))]


def plugin_manifests(root: Path) -> list[str]:
    """Every Claude Code plugin's `.claude-plugin/plugin.json` in the project, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS or d == ".claude-plugin")
        if Path(dirpath).name == ".claude-plugin" and "plugin.json" in filenames:
            out.append((Path(dirpath) / "plugin.json").relative_to(root).as_posix())
    return sorted(out)


def _plugin_skills(root: Path, manifest: str) -> list[SkillFile]:

    plugin_dir = manifest[: -len(PLUGIN_MANIFEST)].rstrip("/")
    base = root / plugin_dir if plugin_dir else root
    try:
        data = json.loads((root / manifest).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    name = data.get("name") if isinstance(data.get("name"), str) and data["name"].strip() else base.name
    paths = data.get("skills", ["./skills"])
    if isinstance(paths, str):
        paths = [paths]
    out: list[SkillFile] = []
    top = root.resolve()
    for entry in paths if isinstance(paths, list) else []:
        if not isinstance(entry, str):
            continue
        target = (base / entry).resolve()
        if not target.is_relative_to(top) or not target.is_dir():
            continue
        files = [target / SKILL_FILE] if (target / SKILL_FILE).is_file() else sorted(target.glob(f"*/{SKILL_FILE}"))
        out.extend(SkillFile(f.relative_to(top).as_posix(), name) for f in files)
    return out


def read_skill(root: Path, found: SkillFile) -> Skill:
    rel = found.path
    text = read_text(root / rel, rel)
    fm_text, offset, body, _ = split_frontmatter(text, rel)
    # Claude Code reads the skills of `.claude/skills/` and of its plugins
    parsed = parse_frontmatter(fm_text, rel, offset, claude_code=rel.startswith(".claude/") or found.plugin is not None)
    node = parsed.node
    if fm_text is not None and node.value is None:
        node = YNode({}, offset + 1, 1)
    if not isinstance(node.value, dict):
        raise InputError(
            "skill frontmatter is not a mapping",
            position=Position(rel, node.line, node.column),
            hint="write `name: ...` and `description: ...` between the `---` markers",
        )
    fm: Mapping[str, JSON] = node.value
    name = fm.get("name")
    description = fm.get("description")
    return Skill(
        path=rel,
        folder=rel.rsplit("/", 2)[-2] if "/" in rel else "",
        name=name.strip() if isinstance(name, str) and name.strip() else None,
        description=description.strip() if isinstance(description, str) and description.strip() else None,
        body=body,
        frontmatter=fm,
        key_locations={k: Location(rel, line, col) for k, (line, col) in node.key_positions.items()},
        plugin=found.plugin,
        yaml_error=parsed.error,
        repaired=parsed.repaired,
    )
