"""TOOL003-005, one look at each tool's description: missing, too short, or only the name again."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown, tool_values
from quiver.lint.support.words import content_words, display_length, word_count
from quiver.model import Finding, LockedTool

DESCRIPTION_MIN_CHARS = 20


DESCRIPTION_MIN_WORDS = 4


def _description(tool: LockedTool) -> Iterator[Finding]:
    raw = tool.definition.get("description")
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        yield MISSING_TOOL_DESCRIPTION.finding(**tool_values(tool))
        return
    words = word_count(text)
    if words < DESCRIPTION_MIN_WORDS or display_length(text) < DESCRIPTION_MIN_CHARS:
        yield SHORT_TOOL_DESCRIPTION.finding(
            **tool_values(tool), text=shown(text), words=words, chars=display_length(text)
        )
        return
    named = content_words(tool.name)
    for title in (tool.definition.get("title"), tool.annotations.get("title")):
        if isinstance(title, str):
            named |= content_words(title)
    if words > 2 * len(named) + 6:
        return  # too long to be only the name again
    said = content_words(text)
    if said and said <= named:
        yield DESCRIPTION_REPEATS_NAME.finding(**tool_values(tool), text=shown(text))


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.locked_tools():
        yield from _description(tool)


MISSING_TOOL_DESCRIPTION = Rule(
    code="TOOL003",
    name="missing-tool-description",
    severity="error",
    check=check,
    message="tool `{server}/{shown_name}` has no description",
    hint="add a `description` that says what the tool does, when to use it and what it returns",
    doc="""\
## What it does
Flags a tool without a `description`, or with an empty one.

## Why is this bad?
The description is the only text a model routes by. Without it the model guesses from the name, and
tool search (which ranks by description) cannot find the tool once it is deferred.

## Example
```json
{"name": "sync", "inputSchema": {"type": "object"}}
```
Use instead:
```json
{"name": "sync", "description": "Push local commits to the remote branch and pull new ones.",
 "inputSchema": {"type": "object"}}
```

## Fix
Write the description in the server. Name the action, the object and what comes back.

## References
MCP specification 2025-11-25, Tools: `description`.
""",
)


SHORT_TOOL_DESCRIPTION = Rule(
    code="TOOL004",
    name="short-tool-description",
    severity="warning",
    check=check,
    message="description of `{server}/{shown_name}` is too short to route by: `{text}` "
    "({words} words, {chars} characters)",
    hint="say what the tool does, to what, and when to prefer it (at least 4 words and 20 characters)",
    doc="""\
## What it does
Flags a tool description under 20 characters or under 4 words. A CJK character counts as one word and
as two characters.

## Why is this bad?
Short descriptions do not separate a tool from its neighbours: the model picks the wrong one of
`get`, `fetch` and `read`, and tool search ranks it by chance.

## Example
```json
{"name": "get_issue", "description": "Gets it."}
```
Use instead:
```json
{"name": "get_issue", "description": "Get one GitHub issue by number: title, body, labels and state."}
```

## Fix
Extend the description in the server. The rule is wrong for a tool no model should call; leave that
tool out of every agent instead.

## References
Anthropic, "Writing effective tools for agents".
""",
)


DESCRIPTION_REPEATS_NAME = Rule(
    code="TOOL005",
    name="description-repeats-name",
    severity="warning",
    check=check,
    message="description of `{server}/{shown_name}` only repeats its name: `{text}`",
    hint="say what the name does not: what it returns, its limits, when to use it",
    doc="""\
## What it does
Flags a description whose words, ignoring case, separators, plural `s` and filler words ("the",
"a", "for", "tool", ...), are all words of the tool's name or title.

## Why is this bad?
It costs tokens and adds nothing: the model knows no more than the name told it. Descriptions that
are short as well are left to TOOL004.

## Example
```json
{"name": "list_pull_request_review_comments", "description": "List pull request review comments."}
```
Use instead:
```json
{"name": "list_pull_request_review_comments",
 "description": "List the inline review comments of a pull request, oldest first, with file and line."}
```

## Fix
Rewrite the description in the server.

## References
Anthropic, "Writing effective tools for agents".
""",
)


RULES: tuple[Rule, ...] = (MISSING_TOOL_DESCRIPTION, SHORT_TOOL_DESCRIPTION, DESCRIPTION_REPEATS_NAME)
