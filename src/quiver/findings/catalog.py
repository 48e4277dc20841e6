"""The catalog of every rule code, lint and contract: one line per code (ruff's `codes.rs`).

Each line names the code, its kebab-case name and the module that declares the rule (and holds its check),
so any code is one hop from its file. The catalog is data: it imports no rule module (findings sits below
lint and contract); `quiver.lint.registry` loads the lint modules it names and a test keeps every line in
step with the rules the modules declare. Codes and names are stable and never reused.
`scripts/new_rule.py` adds a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entry:
    code: str
    name: str
    module: str

    @property
    def prefix(self) -> str:
        return self.code.rstrip("0123456789")


def _entries(table: str) -> tuple[Entry, ...]:
    rows = (line.split() for line in table.strip().splitlines())
    return tuple(Entry(code, name, module) for code, name, module in rows)


# code  name  module  (sorted by code)
CATALOG: tuple[Entry, ...] = _entries("""
AGT001    missing-description                        quiver.lint.agt.missing_description
AGT002    unknown-frontmatter-key                    quiver.lint.agt.frontmatter_fields
AGT003    invalid-target                             quiver.lint.agt.invalid_target
AGT004    deprecated-infer                           quiver.lint.agt.deprecated_infer
AGT005    user-invokable-spelling                    quiver.lint.agt.user_invokable_spelling
AGT006    prompt-too-long                            quiver.lint.agt.prompt_too_long
AGT007    invalid-file-name                          quiver.lint.agt.invalid_file_name
AGT008    unknown-tool-reference                     quiver.lint.agt.tool_references
AGT009    ambiguous-tool-reference                   quiver.lint.agt.tool_references
AGT010    unknown-server-reference                   quiver.lint.agt.tool_references
AGT011    host-server-not-snapshotted                quiver.lint.agt.tool_references
AGT012    duplicate-agent-id                         quiver.lint.agt.duplicate_agent_id
AGT013    comma-separated-tools                      quiver.lint.agt.comma_separated_tools
AGT014    invalid-field-type                         quiver.lint.agt.frontmatter_fields
AGT015    duplicate-tool-reference                   quiver.lint.agt.duplicate_tool_reference
AGT016    ineffective-deferred-tool-loading          quiver.lint.agt.ineffective_deferred_tool_loading
AGT017    unreachable-mcp-servers                    quiver.lint.agt.unreachable_mcp_servers
AGT018    unknown-handoff-agent                      quiver.lint.agt.agent_links
AGT019    unknown-subagent                           quiver.lint.agt.agent_links
AGT020    subagents-without-agent-tool               quiver.lint.agt.agent_links
AGT021    mcp-servers-ignored-for-vscode             quiver.lint.agt.mcp_servers_ignored_for_vscode
AGT022    unverifiable-tool-references               quiver.lint.agt.unverifiable_tool_references
AGT023    tool-reference-host-syntax                 quiver.lint.agt.host_references
AGT024    server-not-read-by-host                    quiver.lint.agt.host_references
AGT025    server-shadowed-by-host                    quiver.lint.agt.host_references
AGT026    frontmatter-repaired-by-host               quiver.lint.agt.host_repaired_frontmatter
AGT027    plugin-agent-not-listed                    quiver.lint.agt.unlisted_plugin_agent
BUD001    over-budget                                quiver.lint.bud.over_budget
BUD002    unused-preload                             quiver.lint.bud.unused_preload
BUD003    large-preloaded-tool                       quiver.lint.bud.large_preloaded_tool
CTR001    tool-removed                               quiver.contract._rules_tool
CTR002    tool-renamed                               quiver.contract._rules_tool
CTR003    tool-added                                 quiver.contract._rules_tool
CTR004    tool-description-changed                   quiver.contract._rules_tool
CTR010    read-only-hint-weakened                    quiver.contract._rules_tool
CTR011    destructive-hint-weakened                  quiver.contract._rules_tool
CTR012    idempotent-hint-weakened                   quiver.contract._rules_tool
CTR013    open-world-hint-weakened                   quiver.contract._rules_tool
CTR020    input-required-property-added              quiver.contract._rules_input
CTR021    input-property-became-required             quiver.contract._rules_input
CTR022    input-property-removed                     quiver.contract._rules_input
CTR023    input-property-unlisted                    quiver.contract._rules_input
CTR024    input-type-narrowed                        quiver.contract._rules_input
CTR025    input-enum-value-removed                   quiver.contract._rules_input
CTR026    input-enum-added                           quiver.contract._rules_input
CTR027    input-const-changed                        quiver.contract._rules_input
CTR028    input-bound-tightened                      quiver.contract._rules_input
CTR029    input-pattern-added                        quiver.contract._rules_input
CTR030    input-pattern-changed                      quiver.contract._rules_input
CTR031    input-format-added                         quiver.contract._rules_input
CTR032    input-format-changed                       quiver.contract._rules_input
CTR033    input-additional-properties-closed         quiver.contract._rules_input
CTR034    input-composition-branch-removed           quiver.contract._rules_input
CTR035    input-composition-added                    quiver.contract._rules_input
CTR036    input-items-closed                         quiver.contract._rules_input
CTR037    input-dependent-required-added             quiver.contract._rules_input
CTR038    input-dependent-schema-added               quiver.contract._rules_input
CTR039    input-default-changed                      quiver.contract._rules_input
CTR040    input-optional-property-added              quiver.contract._rules_input_safe
CTR041    input-type-widened                         quiver.contract._rules_input_safe
CTR042    input-enum-value-added                     quiver.contract._rules_input_safe
CTR043    input-bound-loosened                       quiver.contract._rules_input_safe
CTR044    input-property-became-optional             quiver.contract._rules_input_safe
CTR045    input-property-description-changed         quiver.contract._rules_input_safe
CTR050    output-schema-added                        quiver.contract._rules_tool
CTR051    output-schema-removed                      quiver.contract._rules_tool
CTR052    output-required-property-removed           quiver.contract._rules_output
CTR053    output-property-became-optional            quiver.contract._rules_output
CTR054    output-type-widened                        quiver.contract._rules_output
CTR055    output-enum-value-added                    quiver.contract._rules_output
CTR056    output-enum-removed                        quiver.contract._rules_output
CTR057    output-const-changed                       quiver.contract._rules_output
CTR058    output-bound-loosened                      quiver.contract._rules_output
CTR059    output-pattern-removed                     quiver.contract._rules_output
CTR060    output-pattern-changed                     quiver.contract._rules_output
CTR061    output-format-removed                      quiver.contract._rules_output
CTR062    output-format-changed                      quiver.contract._rules_output
CTR063    output-additional-properties-opened        quiver.contract._rules_output
CTR064    output-composition-branch-added            quiver.contract._rules_output
CTR065    output-composition-removed                 quiver.contract._rules_output
CTR066    output-property-added                      quiver.contract._rules_output
CTR067    output-optional-property-removed           quiver.contract._rules_output
CTR070    agent-tool-lost                            quiver.contract._rules_tool
CTR071    agent-tool-load-changed                    quiver.contract._rules_tool
CTR080    tool-schema-unreadable                     quiver.contract._rules_gaps
CTR081    input-composition-branches-overlap         quiver.contract._rules_gaps
CTR082    output-composition-overlap-removed         quiver.contract._rules_gaps
CTR083    input-constraint-added                     quiver.contract._rules_gaps
CTR084    output-constraint-removed                  quiver.contract._rules_gaps
CTR085    input-default-added                        quiver.contract._rules_gaps
CTR086    input-default-removed                      quiver.contract._rules_gaps
CTR087    input-keyword-not-analysed                 quiver.contract._rules_gaps
CTR088    output-keyword-not-analysed                quiver.contract._rules_gaps
CTR089    input-subschema-not-compared               quiver.contract._rules_gaps
CTR090    output-subschema-not-compared              quiver.contract._rules_gaps
CTR091    tool-schema-repaired                       quiver.contract._rules_surface
CTR092    tool-moved                                 quiver.contract._rules_surface
CTR093    tool-folded                                quiver.contract._rules_surface
CTR094    tool-text-hazard-added                     quiver.contract._rules_surface
CTR095    tool-title-changed                         quiver.contract._rules_surface
CTR096    tool-icons-changed                         quiver.contract._rules_surface
CTR097    task-support-narrowed                      quiver.contract._rules_surface
CTR098    task-support-widened                       quiver.contract._rules_surface
CTR099    input-header-changed                       quiver.contract._rules_surface
CTR100    input-header-added                         quiver.contract._rules_surface
CTR101    input-header-removed                       quiver.contract._rules_surface
CTR102    input-header-invalid                       quiver.contract._rules_surface
CTR103    input-enum-case-changed                    quiver.contract._rules_surface
MCP001    invalid-server-type                        quiver.lint.mcp.invalid_server_type
MCP002    stdio-server-without-command               quiver.lint.mcp.server_definition
MCP003    remote-server-without-url                  quiver.lint.mcp.server_definition
MCP004    missing-server-tools                       quiver.lint.mcp.server_definition
MCP005    literal-secret-in-config                   quiver.lint.mcp.literal_secret
MCP006    undefined-input-variable                   quiver.lint.mcp.input_variables
MCP007    input-variable-outside-vscode              quiver.lint.mcp.input_variables
MCP008    unexpanded-variable-syntax                 quiver.lint.mcp.input_variables
MCP009    insecure-server-url                        quiver.lint.mcp.insecure_server_url
MCP010    download-piped-to-shell                    quiver.lint.mcp.download_piped_to_shell
MCP011    preload-tool-not-served                    quiver.lint.mcp.unserved_tool_entries
MCP012    server-not-snapshotted                     quiver.lint.mcp.server_not_snapshotted
MCP013    allow-list-tool-not-served                 quiver.lint.mcp.unserved_tool_entries
MCP014    conflicting-server-definitions             quiver.lint.mcp.conflicting_server_definitions
MCP015    invalid-defer-tools                        quiver.lint.mcp.loading_settings
MCP016    invalid-preload-setting                    quiver.lint.mcp.loading_settings
MCP017    contradictory-preload                      quiver.lint.mcp.loading_settings
MCP018    unknown-server-key                         quiver.lint.mcp.unknown_server_key
MCP019    invalid-server-field-type                  quiver.lint.mcp.invalid_server_field_type
MCP020    key-ignored-by-transport                   quiver.lint.mcp.key_ignored_by_transport
QVR001    unused-suppression                         quiver.lint.qvr.unused_suppression
QVR002    unreadable-file                            quiver.lint.qvr.unreadable_file
QVR003    unknown-config-key                         quiver.lint.qvr.unknown_config_key
QVR004    invalid-execution-policy                   quiver.lint.qvr.invalid_execution_policy
ROUTE001  near-duplicate-tools                       quiver.lint.route.tool_pairs
ROUTE002  near-duplicate-tools-across-servers        quiver.lint.route.tool_pairs
ROUTE003  near-duplicate-agent-descriptions          quiver.lint.route.near_duplicate_agent_descriptions
ROUTE004  vague-server-description                   quiver.lint.route.server_descriptions
ROUTE005  server-description-misses-tool-vocabulary  quiver.lint.route.server_descriptions
ROUTE006  shadowed-tool                              quiver.lint.route.shadowed_tool
ROUTE007  overlapping-tool-names                     quiver.lint.route.tool_pairs
ROUTE008  near-duplicate-skill-descriptions          quiver.lint.route.near_duplicate_skill_descriptions
SEC001    hidden-instruction-markup                  quiver.lint.sec.tool_poisoning
SEC002    instruction-override                       quiver.lint.sec.tool_poisoning
SEC003    credential-access-request                  quiver.lint.sec.tool_poisoning
SEC004    cross-tool-instruction                     quiver.lint.sec.tool_poisoning
SEC005    exfiltration-url                           quiver.lint.sec.tool_poisoning
SEC006    invisible-unicode                          quiver.lint.sec.tool_poisoning
SEC007    tool-name-shadowing                        quiver.lint.sec.tool_name_shadowing
SEC101    toxic-flow                                 quiver.lint.sec.toxic_flow
SEC102    toxic-flow-through-builtin                 quiver.lint.sec.toxic_flow
SEC103    destructive-flow                           quiver.lint.sec.toxic_flow
SEC104    unused-capability-override                 quiver.lint.sec.unused_capability_override
SKILL001  missing-skill-description                  quiver.lint.skill.missing_skill_description
SKILL002  skill-description-too-long                 quiver.lint.skill.skill_description_too_long
SKILL003  skill-name-invalid                         quiver.lint.skill.skill_name_invalid
SKILL004  duplicate-skill-name                       quiver.lint.skill.duplicate_skill_name
SKILL005  unknown-skill                              quiver.lint.skill.unknown_skill
TOOL001   invalid-tool-name                          quiver.lint.tool.invalid_tool_name
TOOL002   duplicate-tool-name                        quiver.lint.tool.duplicate_tool_name
TOOL003   missing-tool-description                   quiver.lint.tool.tool_description
TOOL004   short-tool-description                     quiver.lint.tool.tool_description
TOOL005   description-repeats-name                   quiver.lint.tool.tool_description
TOOL006   undocumented-parameters                    quiver.lint.tool.schema
TOOL007   invalid-json-schema                        quiver.lint.tool.schema
TOOL008   input-schema-not-object                    quiver.lint.tool.schema
TOOL009   required-property-undeclared               quiver.lint.tool.schema
TOOL010   undisclosed-side-effects                   quiver.lint.tool.annotations
TOOL011   destructive-tool-marked-read-only          quiver.lint.tool.annotations
TOOL012   read-tool-marked-destructive               quiver.lint.tool.annotations
TOOL013   model-facing-name-collision                quiver.lint.tool.model_facing_names
TOOL014   model-facing-name-truncated                quiver.lint.tool.model_facing_names
TOOL015   duplicate-enum-value                       quiver.lint.tool.schema
TOOL016   invalid-default                            quiver.lint.tool.schema
TOOL017   unresolved-schema-ref                      quiver.lint.tool.schema
""")

_BY_ID: Mapping[str, str] = {
    **{e.code: e.code for e in CATALOG},
    **{e.name: e.code for e in CATALOG},
}


def resolve_id(rule_id: str) -> str | None:
    """The code a rule id (code or kebab-case name) stands for, or None."""
    return _BY_ID.get(rule_id)


def entry(rule_id: str) -> Entry | None:
    """The catalog line of a code or name (codes also in lower case), or None."""
    code = resolve_id(rule_id) or resolve_id(rule_id.upper())
    return next((e for e in CATALOG if e.code == code), None) if code else None


def ids() -> tuple[str, ...]:
    """Every code and name (for suggestions and parameter checks)."""
    return tuple(_BY_ID)
