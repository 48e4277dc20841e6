"""Contract rules about whole tools, their annotations, their output schema and the agents using them."""

from __future__ import annotations

from quiver.contract._ruledoc import rule_doc
from quiver.findings.rule import Rule

_SPEC = (
    "MCP specification, `ToolAnnotations` (defaults: readOnlyHint false, destructiveHint true, "
    "idempotentHint false, openWorldHint true; destructive and idempotent apply only when not read-only)"
)

TOOL_REMOVED = Rule(
    code="CTR001",
    name="tool-removed",
    severity="error",
    direction="tool",
    kind="tool",
    action="removed",
    message="tool `{qualified}` was removed",
    hint="keep the tool (perhaps as a deprecated alias) or update every agent and prompt that calls it",
    doc=rule_doc(
        what="Reports a tool that the old catalog served and the new one does not, with no near-identical tool added.",
        why="Every caller of the tool gets an unknown-tool error; agents that list it lose a capability silently.",
        example="""
        Old catalog `{search_code, get_me}`, new catalog `{get_me}`.
        Use instead: keep `search_code`, or rename it with an alias.""",
        fix="Keep the tool, or serve the old name as an alias of its replacement. When the removal is intended, "
        "accept the finding with a reason in the ignore file.",
        witness="None: any call of the tool by name fails.",
    ),
)

TOOL_RENAMED = Rule(
    code="CTR002",
    name="tool-renamed",
    severity="error",
    direction="tool",
    kind="tool",
    action="renamed",
    message="tool `{qualified}` was removed; renamed to `{new_name}`",
    hint="serve `{tool}` as an alias of `{new_name}` until every caller has moved; the alias must keep accepting "
    "{accepts}",
    doc=rule_doc(
        what="Reports a removed tool when an added tool has the same normalised name (case, `-`, `_`, `.` and "
        "camelCase ignored: `getTinyImage` and `get-tiny-image`) or is near-identical to it (name, description "
        "and schema similarity of at least 0.8; the same non-trivial input schema counts for half): the tool was "
        "renamed. The two schemas are then diffed like any other tool: their findings are reported on the new "
        "name, and the hint says what an alias of the old name must keep accepting.",
        why="Callers of the old name fail exactly as for a removal; the new name tells them where to go. Pointing "
        "them there is not enough when the new schema rejects their old arguments.",
        example="""
        Old `list_workflows`, new `actions_list` with the same description and schema.
        Use instead: serve both names while callers migrate.""",
        fix="Serve the old name as a deprecated alias (github-mcp-server keeps `DeprecatedToolAliases`), or update "
        "agents to the new name. A false match means the similarity threshold was met by chance: accept it.",
        witness="None: any call by the old name fails.",
    ),
)

TOOL_ADDED = Rule(
    code="CTR003",
    name="tool-added",
    severity="info",
    direction="tool",
    kind="tool",
    action="added",
    message="tool `{qualified}` was added",
    hint="check the context budget (`quiver compile`) and whether agents should list it",
    doc=rule_doc(
        what="Reports a tool the new catalog serves and the old one did not.",
        why="Nothing breaks, but each preloaded tool costs context tokens and may draw routing from others.",
        example="Old catalog `{get_me}`, new catalog `{get_me, create_gist}`.",
        fix="Nothing to fix; list the tool in the agents that need it and keep the others' allow-lists tight.",
        witness="None: additions cannot break a caller.",
    ),
)

TOOL_DESCRIPTION_CHANGED = Rule(
    code="CTR004",
    name="tool-description-changed",
    severity="info",
    direction="tool",
    kind="description",
    action="changed",
    message="tool `{qualified}`: description changed",
    hint="run `quiver route-test` to check that queries still reach the right tool",
    doc=rule_doc(
        what="Reports a tool whose description changed beyond whitespace.",
        why="The model chooses tools by description: a reworded one can shift routing between tools.",
        example="""
        Old "List issues in a repository", new "List issues; prefer search_issues for queries".""",
        fix="Run `quiver route-test` and review the tools whose hit rate moved.",
        witness="None: the contract is unchanged; routing is tested by `quiver route-test`.",
    ),
)

READ_ONLY_HINT_WEAKENED = Rule(
    code="CTR010",
    name="read-only-hint-weakened",
    severity="error",
    direction="annotations",
    kind="read-only-hint",
    action="weakened",
    message="tool `{qualified}`: `readOnlyHint` went from {old} to {new}: the tool may now modify its environment",
    hint="review the policy that auto-approved `{tool}` as read-only",
    doc=rule_doc(
        what="Reports a tool that was annotated read-only (`readOnlyHint: true`) and no longer is.",
        why="Gateways and hosts auto-approve read-only tools; a tool that starts writing would run unreviewed.",
        example="""
        Old `{"readOnlyHint": true}`, new `{}` (the default is false).""",
        fix="Re-review the tool's approval policy; restore the hint only if the tool still writes nothing.",
        witness="None: annotations are compared as effective values with the MCP defaults.",
        references=_SPEC,
    ),
)

DESTRUCTIVE_HINT_WEAKENED = Rule(
    code="CTR011",
    name="destructive-hint-weakened",
    severity="error",
    direction="annotations",
    kind="destructive-hint",
    action="weakened",
    message="tool `{qualified}`: `destructiveHint` went from {old} to {new}: the tool may now destroy data",
    hint="review the policy for `{tool}`; write `destructiveHint: false` again only if its updates stay additive",
    doc=rule_doc(
        what="Reports a writing tool whose `destructiveHint` went from false to true, or was dropped (the default "
        "is true).",
        why="Policies let non-destructive writes through and stop destructive ones; the tool changed class.",
        example="""
        Old `{"readOnlyHint": false, "destructiveHint": false}`, new `{"readOnlyHint": false}`.""",
        fix="Re-review the tool's policy; if the hint was dropped by accident, write it again.",
        witness="None: annotations are compared as effective values with the MCP defaults.",
        references=_SPEC,
    ),
)

IDEMPOTENT_HINT_WEAKENED = Rule(
    code="CTR012",
    name="idempotent-hint-weakened",
    severity="warning",
    direction="annotations",
    kind="idempotent-hint",
    action="weakened",
    message="tool `{qualified}`: `idempotentHint` went from {old} to {new}: retries are no longer safe",
    hint="stop retrying `{tool}` automatically",
    doc=rule_doc(
        what="Reports a writing tool whose `idempotentHint` went from true to false or was dropped.",
        why="Runtimes retry idempotent calls after a timeout; a retried non-idempotent call can act twice. A warning "
        "rather than an error: nothing runs without review that did not before.",
        example="""
        Old `{"idempotentHint": true}`, new `{"idempotentHint": false}`.""",
        fix="Turn off automatic retries for the tool, or restore idempotency on the server.",
        witness="None: annotations are compared as effective values with the MCP defaults.",
        references=_SPEC,
    ),
)

OPEN_WORLD_HINT_WEAKENED = Rule(
    code="CTR013",
    name="open-world-hint-weakened",
    severity="warning",
    direction="annotations",
    kind="open-world-hint",
    action="weakened",
    message="tool `{qualified}`: `openWorldHint` went from {old} to {new}: the tool now reaches outside systems",
    hint="check data-exfiltration policy for `{tool}`",
    doc=rule_doc(
        what="Reports a tool whose `openWorldHint` went from false to true or was dropped (the default is true).",
        why="A closed-world tool only touches its own store; an open-world one talks to external entities, which "
        "matters for prompt injection and data leaving the system. A warning: the risk class grew.",
        example="""
        Old `{"openWorldHint": false}`, new `{}`.""",
        fix="Review what the tool may now send or fetch; restore the hint if it was dropped by accident.",
        witness="None: annotations are compared as effective values with the MCP defaults.",
        references=_SPEC,
    ),
)

OUTPUT_SCHEMA_ADDED = Rule(
    code="CTR050",
    name="output-schema-added",
    severity="info",
    direction="output",
    kind="output-schema",
    action="added",
    message="tool `{qualified}`: `outputSchema` added; results now carry `structuredContent`",
    hint="callers may start reading `structuredContent` instead of parsing text",
    doc=rule_doc(
        what="Reports a tool that now declares an `outputSchema`.",
        why="Nothing breaks: results gain a typed `structuredContent` that callers may use.",
        example='Old tool without `outputSchema`, new tool with `{"type": "object", ...}`.',
        fix="Nothing to fix.",
        witness="None: a new guarantee cannot break a caller.",
    ),
)

OUTPUT_SCHEMA_REMOVED = Rule(
    code="CTR051",
    name="output-schema-removed",
    severity="error",
    direction="output",
    kind="output-schema",
    action="removed",
    message="tool `{qualified}`: `outputSchema` removed; results no longer promise `structuredContent`",
    hint="keep the `outputSchema`, or update callers that read `structuredContent`",
    doc=rule_doc(
        what="Reports a tool that declared an `outputSchema` and no longer does.",
        why="Output is covariant: callers that read `structuredContent` fields get nothing to read.",
        example="Old tool with `outputSchema`, new tool without one.",
        fix="Keep the schema, or move callers back to the text content.",
        witness="None: without a schema every result is allowed, so no single result proves more than the removal.",
    ),
)

AGENT_TOOL_LOST = Rule(
    code="CTR070",
    name="agent-tool-lost",
    severity="warning",
    direction="agent",
    kind="tool",
    action="removed",
    message="agent `{agent}` lost tool `{qualified}`",
    hint="check that `{agent}` can still do its job without `{tool}`",
    doc=rule_doc(
        what="Reports a tool that an agent could use at the base revision and cannot at the head revision, "
        "however the agent reached it: by name (`github/search_code`), by its server (`github`, `github/*`) or "
        "through `*` or an unset `tools`. A warning when the agent names the tool or its server; info when only "
        "`*` or an unset `tools` reached it (the agent never chose that server, and the removal itself is "
        "already a `CTR001` error).",
        why="The agent's prompt may still tell it to call the tool; it will improvise or fail.",
        example="Base: `tools: [github/*]` resolves to `search_code`; head: the server no longer serves it.",
        fix="Update the agent's prompt and tool list, or bring the tool back.",
        witness="None: the agent's resolved tool sets are compared by name.",
    ),
)

AGENT_TOOL_LOAD_CHANGED = Rule(
    code="CTR071",
    name="agent-tool-load-changed",
    severity="info",
    direction="agent",
    kind="load",
    action="changed",
    message="agent `{agent}`: tool `{qualified}` is now {after}, was {before} ({reason})",
    hint="run `quiver route-test`; pin the tool's loading in the agent if the change was not intended",
    doc=rule_doc(
        what="Reports a tool of an agent that moved between preloaded and deferred loading.",
        why="A preloaded tool is in every prompt; a deferred one is found by tool search first. Routing, latency "
        "and the context budget all shift. Nothing breaks, so it is info.",
        example="Base: `search_code` preloaded; head: the server grew past the preload budget and it is deferred.",
        fix="Run `quiver route-test`; pin the tool (`preload_tools`) if it must stay preloaded.",
        witness="None: the tool is still callable either way.",
    ),
)

# The module's rules in code order; findings/catalog.py names this module for each of their codes.
RULES: tuple[Rule, ...] = (
    TOOL_REMOVED,  # CTR001
    TOOL_RENAMED,  # CTR002
    TOOL_ADDED,  # CTR003
    TOOL_DESCRIPTION_CHANGED,  # CTR004
    READ_ONLY_HINT_WEAKENED,  # CTR010
    DESTRUCTIVE_HINT_WEAKENED,  # CTR011
    IDEMPOTENT_HINT_WEAKENED,  # CTR012
    OPEN_WORLD_HINT_WEAKENED,  # CTR013
    OUTPUT_SCHEMA_ADDED,  # CTR050
    OUTPUT_SCHEMA_REMOVED,  # CTR051
    AGENT_TOOL_LOST,  # CTR070
    AGENT_TOOL_LOAD_CHANGED,  # CTR071
)
