"""Routing rules about server descriptions: vague or short ones (ROUTE004), and ones that miss the words their
own tools use (ROUTE005).

A server's description is its `description` in quiver's config (or an agent's `mcp-servers`), else the
`instructions` its initialize result gave, else its `serverInfo` title. Agents that defer a server's tools
route to it by this text first: the server index shows it next to the name, and tool search weighs it.
A description written in the config is always checked; one the server supplied only when some agent
defers the server's tools, since otherwise nothing routes by it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import cached_check
from quiver.lint.support.route_words import ACTIONS, canonical, name_terms, spaced, stem, term_set, terms
from quiver.lint.support.text import shown
from quiver.lint.support.words import display_length, word_count, words
from quiver.model import Finding, Location, Lock, LockedServer, LockedTool, Server

SHORT_WORDS = 3  # a description under this many words, or
SHORT_CHARS = 20  # under this many characters, is too short to route by
VOCABULARY_SIZE = 8  # the tool terms a description is measured against
VOCABULARY_MIN = 3  # fewer shared terms than this: nothing to measure
COVERAGE_MIN = 0.25  # weighted share of the tool terms a description must mention
_SENTENCE_END = re.compile(r"[.!?]\s|\n|\s\|\s|$")  # a sentence, line or `|`-separated part ends here
_SENTENCE_WORDS = 40
_SOURCES = {
    "instructions": " (its `instructions`; no `description` is set)",
    "title": " (its title; no `description` is set)",
}


@dataclass(frozen=True, slots=True)
class Described:
    """A server's description as routing sees it, where it comes from and where to report it."""

    server: str
    text: str
    origin: str  # "config", "instructions", "title" or "" (none)
    location: Location


def described(server: Server, locked: LockedServer | None) -> Described:
    if server.description is not None and server.description.strip():
        where = server.key_locations.get("description", server.location)
        return Described(server.name, server.description.strip(), "config", where)
    if locked is not None:
        if locked.instructions and locked.instructions.strip():
            return Described(server.name, locked.instructions.strip(), "instructions", server.location)
        title = locked.server_info.get("title")
        if isinstance(title, str) and title.strip():
            return Described(server.name, title.strip(), "title", server.location)
    return Described(server.name, "", "", server.location)


def _check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    deferred = {t.server for r in ctx.resolved for t in r.tools if t.gateway_load == "deferred"}
    words_of: ToolWords | None = None
    for item in _descriptions(ctx):
        if item.origin != "config" and item.server not in deferred:
            continue
        top: list[tuple[str, str, float]] = []
        if lock is not None and item.server in lock.servers:
            words_of = words_of or ToolWords.of(lock)
            top = words_of.vocabulary(item.server)
        problem = vague(item)
        if problem is not None:
            example = f", e.g. {', '.join(f'`{w}`' for _, w, _ in top[:4])}" if top else ""
            yield VAGUE_SERVER_DESCRIPTION.finding(
                location=item.location, server=item.server, problem=problem, example=example
            )
            continue
        if len(top) < VOCABULARY_MIN:
            continue
        said = {canonical(t) for t in term_set(item.text)}
        total = sum(weight for _, _, weight in top)
        covered = [t for t in top if canonical(t[0]) in said]
        share = sum(weight for _, _, weight in covered) / total
        if share < COVERAGE_MIN:
            missing = [w for t, w, _ in top if canonical(t) not in said][:5]
            yield SERVER_DESCRIPTION_MISSES_TOOLS.finding(
                location=item.location,
                server=item.server,
                covered=len(covered),
                total=len(top),
                share=f"{share:.0%}",
                text=shown(item.text),
                missing=", ".join(f"`{w}`" for w in missing),
            )


def vague(item: Described) -> str | None:
    """What is wrong with a description for routing, or None."""
    if not item.text:
        return "has no description (no `description`, `instructions` or title) and its tools are deferred"
    own = {stem(w) for w in words(item.server)}
    specific = [w for t, w in terms(item.text) if t not in own]
    source = _SOURCES.get(item.origin, "")
    if not specific:
        return f"has a vague description{source} that names nothing its tools work on: `{shown(item.text)}`"
    if word_count(item.text) < SHORT_WORDS or display_length(item.text) < SHORT_CHARS:
        return f"has a description{source} too short to route by: `{shown(item.text)}`"
    return None


class ToolWords:
    """The terms of every locked tool (name, and first sentence of the description), and their spread."""

    __slots__ = ("_by_server", "_servers", "_spread")

    def __init__(self, by_server: Mapping[str, list[tuple[frozenset[str], list[tuple[str, str]]]]]) -> None:
        self._by_server = by_server
        self._servers = max(len(by_server), 1)
        spread: dict[str, int] = {}
        for tools in by_server.values():
            for term in {t for _, found in tools for t, _ in found}:
                spread[term] = spread.get(term, 0) + 1
        self._spread = spread

    @classmethod
    def of(cls, lock: Lock) -> ToolWords:
        return cls({name: [_tool_terms(t) for t in locked.tools] for name, locked in lock.servers.items()})

    def vocabulary(self, server: str) -> list[tuple[str, str, float]]:
        """The server's most distinctive tool terms, best first: (stem, word as written, weight).

        A term counts once per tool that uses it and once more per tool whose name has it; it is kept when
        it counts twice, and weighs that count times log(1 + servers / servers whose tools use it). Action
        words (get, list, create, ...) say what tools do everywhere, not what this server works on: left out.
        """
        own = {stem(w) for w in words(server)}
        count: dict[str, int] = {}
        written: dict[str, str] = {}
        for named, found in self._by_server.get(server, ()):
            for term, word in found:
                written.setdefault(term, word)
            for term in {t for t, _ in found}:
                count[term] = count.get(term, 0) + (2 if term in named else 1)
        scored = [
            (term, written[term], n * math.log(1.0 + self._servers / self._spread[term]))
            for term, n in count.items()
            if n >= 2 and term not in own and canonical(term) not in ACTIONS
        ]
        scored.sort(key=lambda t: (-t[2], t[0]))
        return scored[:VOCABULARY_SIZE]


def _tool_terms(tool: LockedTool) -> tuple[frozenset[str], list[tuple[str, str]]]:
    """(terms of the name, every term of name and first sentence in order)."""
    text = tool.description
    end = _SENTENCE_END.search(text)
    first = " ".join(text[: end.start() + 1 if end else len(text)].split()[:_SENTENCE_WORDS])
    named = list(name_terms(tool.name))
    return frozenset(t for t, _ in named), [*named, *(item for item in terms(first) if spaced(item[0]))]


def _descriptions(ctx: LintContext) -> list[Described]:
    """Each distinct description of each server: project-level, and as agents' `mcp-servers` change it."""
    lock = ctx.project.lock
    found: dict[tuple[str, str, str, int], Described] = {}
    servers = [*ctx.project.servers.values(), *(s for r in ctx.resolved for s in r.servers)]
    for server in servers:
        item = described(server, lock.servers.get(server.name) if lock is not None else None)
        found.setdefault((item.server, item.text, item.location.file, item.location.line), item)
    return [found[k] for k in sorted(found)]


check = cached_check("route-servers", _check)


VAGUE_SERVER_DESCRIPTION = Rule(
    code="ROUTE004",
    name="vague-server-description",
    severity="warning",
    check=check,
    message="server `{server}` {problem}",
    hint="say what the server works on and what its tools do{example}",
    doc="""\
## What it does
Flags a server description that is missing, short or vague. Short is under 3 words or 20 characters;
vague is without one word beyond the server's own name and boilerplate ("MCP server", "tools",
"internal", "provides access to", "API", ...). A description from quiver's
config is always checked; a server's `instructions` or title, and a missing description, only when
some agent defers the server's tools.

## Why is this bad?
An agent that defers a server's tools sees the server's name and description in the server index
before any tool: "internal tools" tells it nothing, so requests that belong to the server never reach
it, and tool search has no server words to weigh.

## Example
```json
"acme": {"command": "acme-mcp", "description": "Internal tools"}
```
Use instead:
```json
"acme": {"command": "acme-mcp", "description": "Acme billing: invoices, refunds, customer payment history"}
```

## Fix
Write `description` in the server's config entry (quiver's extension to `.mcp.json` and
`.vscode/mcp.json`, or `[[mcp_servers]]` in quiver.toml): the objects its tools work on and the
actions they take. The hint suggests the words its tools use most.

## References
DESIGN §3, the server index of a deferring agent; MCP specification 2025-11-25, `instructions`.
""",
)


SERVER_DESCRIPTION_MISSES_TOOLS = Rule(
    code="ROUTE005",
    name="server-description-misses-tool-vocabulary",
    severity="info",
    check=check,
    message="description of server `{server}` mentions {covered} of the {total} words its tools use most "
    "({share} by weight): `{text}`",
    hint="mention what its tools work on: {missing}",
    doc="""\
## What it does
Flags a server description that mentions less than 25% of the words its tools use most. Those are
the top 8 words of the tools' names and first sentences, used by at least two tools, weighted by how
many tools use them and by how few other servers do; generic words, action words (get, list, create,
...) and the server's own name are left out, and a synonym counts (`read` for `retrieve`). Servers
whose tools share fewer than 3 such words are not measured. Which descriptions are checked is as for
ROUTE004, which takes precedence.

## Why is this bad?
With deferred tools, a request reaches the server only if the server's description matches it. A
GitHub server described as "connects AI tools directly to GitHub's platform" matches no request about
issues or pull requests, though 40 of its tools are about them.

## Example
```json
"github": {"url": "https://api.githubcopilot.com/mcp/",
           "description": "The GitHub MCP Server connects AI tools directly to GitHub's platform."}
```
Use instead:
```json
"github": {"url": "https://api.githubcopilot.com/mcp/",
           "description": "GitHub: repositories, issues, pull requests, code search, commits and releases"}
```

## Fix
Add the missing words the hint lists, as a short list of what the server works on. The words come
from the tools; when a word is an artefact of their wording, the rule is wrong: suppress it.

## References
DESIGN §3, the server index of a deferring agent.
""",
)


RULES: tuple[Rule, ...] = (VAGUE_SERVER_DESCRIPTION, SERVER_DESCRIPTION_MISSES_TOOLS)
