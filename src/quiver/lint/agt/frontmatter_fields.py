"""Agent frontmatter keys and value types: unknown keys (AGT002) and wrong types (AGT014)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import describe
from quiver.model import JSON, Agent, Finding
from quiver.suggest import did_you_mean

# Keys every host reading `.github/agents` understands (GitHub, VS Code, Copilot CLI), sorted.
COPILOT_KEYS = frozenset(
    {
        "agents",
        "argument-hint",
        "deferred-tool-loading",
        "description",
        "disable-model-invocation",
        "handoffs",
        "hooks",
        "include-custom-instructions",
        "infer",
        "mcp-servers",
        "metadata",
        "model",
        "modelPolicy",
        "models",
        "name",
        "reasoningEffort",
        "sidekick",
        "target",
        "tools",
        "user-invocable",
        "user-invokable",
    }
)
# Claude Code subagent keys, valid in `.claude/agents/*.md` only.
CLAUDE_KEYS = frozenset(
    {
        "background",
        "color",
        "disallowedTools",
        "effort",
        "isolation",
        "maxTurns",
        "mcpServers",
        "memory",
        "permissionMode",
        "skills",
    }
)

# Keys another host's agent files use, which a file here may share: named as that host's, never "did you mean".
# OpenCode (https://opencode.ai/docs/agents): `mode: subagent`, `hidden: true` appear in awesome-copilot's agents.
OPENCODE_KEYS = frozenset(
    {"disable", "hidden", "maxSteps", "mode", "permission", "permissions", "prompt", "steps", "temperature", "top_p",
     "variant"}
)  # fmt: skip


def _other_host(key: str, kind: str) -> str | None:
    """The host whose agent files read `key`, when this kind of file has no such key."""
    if key in CLAUDE_KEYS and kind != "claude":
        return "Claude Code (`.claude/agents/*.md`)"
    if key in OPENCODE_KEYS:
        return "OpenCode (`.opencode/agents/*.md`)"
    return None


def _is_str(value: JSON) -> bool:
    return isinstance(value, str)


def _is_bool(value: JSON) -> bool:
    return isinstance(value, bool)


def _is_int(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_mapping(value: JSON) -> bool:
    return isinstance(value, dict)


def _is_str_list(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_str_or_list(value: JSON) -> bool:
    return _is_str(value) or _is_str_list(value)


def _is_str_map(value: JSON) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_mapping_list(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _is_model_policy(value: JSON) -> bool:
    return value in ("preferred", "required")


def _is_mapping_or_list(value: JSON) -> bool:
    return isinstance(value, dict | list)


_STR = ("a string", _is_str)
_BOOL = ("`true` or `false`", _is_bool)
_STR_OR_LIST = ("a string or a list of strings", _is_str_or_list)
TYPES: Mapping[str, tuple[str, Callable[[JSON], bool]]] = {
    "agents": ("a list of agent names (or `*`)", _is_str_or_list),
    "argument-hint": _STR,
    "background": _BOOL,
    "color": _STR,
    "deferred-tool-loading": _BOOL,
    "description": _STR,
    "disable-model-invocation": _BOOL,
    "disallowedTools": _STR_OR_LIST,
    "effort": _STR,
    "handoffs": ("a list of mappings (`label`, `agent`, `prompt`, `send`)", _is_mapping_list),
    "hooks": ("a mapping", _is_mapping),
    "include-custom-instructions": _BOOL,
    "infer": _BOOL,
    "isolation": _STR,
    "maxTurns": ("a whole number", _is_int),
    "mcp-servers": ("a mapping of server names to server configs", _is_mapping),
    "mcpServers": ("a list of server names or a mapping of server configs", _is_mapping_or_list),
    "memory": _STR,
    "metadata": ("a mapping of strings to strings", _is_str_map),
    "model": _STR_OR_LIST,
    "modelPolicy": ("`preferred` or `required`", _is_model_policy),
    "models": _STR_OR_LIST,
    "name": _STR,
    "permissionMode": _STR,
    "reasoningEffort": _STR,
    "sidekick": ("a mapping", _is_mapping),
    "skills": _STR_OR_LIST,
    "target": _STR,
    "tools": ("a list of tool names or a comma-separated string", _is_str_or_list),
    "user-invocable": _BOOL,
    "user-invokable": _BOOL,
}


def _advice(key: str, value: JSON) -> str:
    if value is None:
        return f"give `{key}` a value or remove the line"
    if TYPES[key][1] is _is_str_map:
        return "quote every value"
    if isinstance(value, str) and TYPES[key][1] is _is_bool and value.lower() in ("true", "false", "yes", "no"):
        return f"write `{key}: {'true' if value.lower() in ('true', 'yes') else 'false'}` without quotes"
    return "see the field table in the custom agents configuration reference"


def _check_agent(agent: Agent) -> Iterator[Finding]:
    known = COPILOT_KEYS | CLAUDE_KEYS if agent.kind == "claude" else COPILOT_KEYS
    for key, value in agent.frontmatter.items():
        where = agent.key_locations.get(key, agent.location)
        if key not in known:
            host = _other_host(key, agent.kind)
            if host is not None:  # a key of another host's format, not a typo of one of ours
                suggestion = (
                    f"`{key}` is read by {host}, not by the hosts of this file: remove it, or suppress AGT002 "
                    "here if the file is shared with that host"
                )
            else:
                fallback = "remove it, or suppress this finding if another tool reads it"
                suggestion = did_you_mean(key, known, fallback)
            yield UNKNOWN_FRONTMATTER_KEY.finding(location=where, agent=agent.id, key=key, suggestion=suggestion)
            continue
        if key == "description" and (value is None or value == ""):
            continue  # AGT001
        expected, valid = TYPES[key]
        if not valid(value):
            actual = describe(value)
            if valid is _is_str_map and isinstance(value, dict):
                odd = next(k for k, v in value.items() if not isinstance(v, str))
                actual = f"`{odd}` = {describe(value[odd])}"
            elif valid is _is_mapping_list and isinstance(value, list):
                actual = f"a list holding {describe(next(v for v in value if not isinstance(v, dict)))}"
            yield INVALID_FIELD_TYPE.finding(
                location=where,
                agent=agent.id,
                key=key,
                expected=expected,
                actual=actual,
                advice=_advice(key, value),
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _check_agent(agent)


UNKNOWN_FRONTMATTER_KEY = Rule(
    code="AGT002",
    name="unknown-frontmatter-key",
    severity="warning",
    check=check,
    message="unknown frontmatter key `{key}`",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a frontmatter key that no host reads in this kind of agent file. Claude Code keys
(`disallowedTools`, `permissionMode`, `maxTurns`, `skills`, `mcpServers`, `memory`, `background`,
`isolation`, `effort`, `color`) are known in `.claude/agents/*.md` only.

## Why is this bad?
Hosts ignore unknown keys without a word, so a misspelt `discription` or `mcp_servers` silently loses
the setting the author meant.

## Example
```yaml
mcp_servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["*"]}
```
Use instead:
```yaml
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["*"]}
```

## Fix
The hint names the closest known key. A key that another host's agent files use (Claude Code's in a
Copilot file; OpenCode's `mode`, `hidden`, `temperature`, `permission`, ...) is named as that host's
instead, never "did you mean": if the file is shared with that host on purpose, suppress the finding
with `<!-- quiver: ignore[AGT002] -->` above the key.

## References
GitHub Docs, custom agents configuration; VS Code docs, custom agents; Copilot CLI command reference;
OpenCode docs, agents (https://opencode.ai/docs/agents).
""",
)


INVALID_FIELD_TYPE = Rule(
    code="AGT014",
    name="invalid-field-type",
    severity="error",
    check=check,
    message="`{key}` must be {expected}, not {actual}",
    hint="{advice}",
    doc="""\
## What it does
Flags a frontmatter value of the wrong type. For example: `tools` that is neither a list of strings nor a string,
`model` that is neither a string nor a list, `mcp-servers` that is not a mapping,
`deferred-tool-loading` (or another flag) that is not `true`/`false`, `metadata` that is not a
mapping of strings, `handoffs` that is not a list of mappings, and so on.

## Why is this bad?
Hosts drop a value they cannot read, so `tools: {read: true}` gives the agent *every* tool, and
`deferred-tool-loading: "yes"` is ignored. quiver treats such a value as unset, as the hosts do.

## Example
```yaml
deferred-tool-loading: "true"
```
Use instead:
```yaml
deferred-tool-loading: true
```

## Fix
Write the value in the documented type. An empty `key:` line is `null`: remove it or give a value.

## References
GitHub Docs, custom agents configuration (field types); Copilot CLI command reference.
""",
)


RULES: tuple[Rule, ...] = (UNKNOWN_FRONTMATTER_KEY, INVALID_FIELD_TYPE)
