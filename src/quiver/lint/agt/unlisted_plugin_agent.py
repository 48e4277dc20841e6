"""AGT027 plugin-agent-not-listed: a subagent file beside a Claude Code plugin's agents that its
`plugin.json` `agents` list leaves out, so Claude Code never loads it."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location


def check(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.project.unlisted:
        yield PLUGIN_AGENT_NOT_LISTED.finding(location=Location(item.path, 1, 1), why=item.origin)


PLUGIN_AGENT_NOT_LISTED = Rule(
    code="AGT027",
    name="plugin-agent-not-listed",
    severity="warning",
    check=check,
    message="this subagent is never loaded: {why}",
    hint="add it to the plugin's `agents` list in `.claude-plugin/plugin.json`, or move it out of the folder",
    doc="""\
## What it does
Flags a Markdown file with frontmatter that sits in the same folder as the agent files a Claude Code
plugin lists in its `.claude-plugin/plugin.json` `agents` array, but is not in that list.

## Why is this bad?
When a plugin lists its agents, Claude Code loads exactly those files: an agent added to the folder and
forgotten in `plugin.json` ships with the plugin and never appears, without a word. quiver does not
compile it either (it would not be true to what the host runs); this rule is how it is not lost.

## Example
`.claude-plugin/plugin.json`:
```json
{"name": "core", "agents": ["./api-designer.md"]}
```
with `api-designer.md` and `docs-editor.md` beside each other.

Use instead:
```json
{"name": "core", "agents": ["./api-designer.md", "./docs-editor.md"]}
```

## Fix
Add the file to `agents`, or move it somewhere the plugin does not ship. A file that is not an agent at
all (notes, a template) can be excluded with quiver.toml's `exclude`.

## References
Claude Code plugins reference, plugin manifest `agents` (code.claude.com/docs/en/plugins-reference);
recorded with Claude Code 2.1.332 `--plugin-dir` (docs/hosts.md).
""",
)


RULES: tuple[Rule, ...] = (PLUGIN_AGENT_NOT_LISTED,)
