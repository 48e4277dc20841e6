"""The contract rule registry: one line per rule, sorted by code (oasdiff's `GetAllRules`)."""

from __future__ import annotations

from collections.abc import Mapping

from quiver.contract import _rules_gaps as gap
from quiver.contract import _rules_input as inp
from quiver.contract import _rules_input_safe as inp_safe
from quiver.contract import _rules_output as out
from quiver.contract import _rules_surface as surface
from quiver.contract import _rules_tool as tool
from quiver.contract.taxonomy import WAIVERS, Cell, UnknownCell
from quiver.findings.rule import Rule

CONTRACT_RULES: tuple[Rule, ...] = (
    tool.TOOL_REMOVED,  # CTR001 error  tool/tool/removed
    tool.TOOL_RENAMED,  # CTR002 error  tool/tool/renamed
    tool.TOOL_ADDED,  # CTR003 info  tool/tool/added
    tool.TOOL_DESCRIPTION_CHANGED,  # CTR004 info  tool/description/changed
    tool.READ_ONLY_HINT_WEAKENED,  # CTR010 error  annotations/read-only-hint/weakened
    tool.DESTRUCTIVE_HINT_WEAKENED,  # CTR011 error  annotations/destructive-hint/weakened
    tool.IDEMPOTENT_HINT_WEAKENED,  # CTR012 warning  annotations/idempotent-hint/weakened
    tool.OPEN_WORLD_HINT_WEAKENED,  # CTR013 warning  annotations/open-world-hint/weakened
    inp.REQUIRED_PROPERTY_ADDED,  # CTR020 error  input/required/added
    inp.PROPERTY_BECAME_REQUIRED,  # CTR021 error  input/required/became-required
    inp.PROPERTY_REMOVED,  # CTR022 error  input/property/removed
    inp.PROPERTY_UNLISTED,  # CTR023 warning  input/property/unlisted
    inp.TYPE_NARROWED,  # CTR024 error  input/type/narrowed
    inp.ENUM_VALUE_REMOVED,  # CTR025 error  input/enum/value-removed
    inp.ENUM_ADDED,  # CTR026 error  input/enum/added
    inp.CONST_CHANGED,  # CTR027 error  input/const/changed
    inp.BOUND_TIGHTENED,  # CTR028 error  input/bound/tightened
    inp.PATTERN_ADDED,  # CTR029 error  input/pattern/added
    inp.PATTERN_CHANGED,  # CTR030 error  input/pattern/changed
    inp.FORMAT_ADDED,  # CTR031 error  input/format/added
    inp.FORMAT_CHANGED,  # CTR032 error  input/format/changed
    inp.ADDITIONAL_PROPERTIES_CLOSED,  # CTR033 error  input/additional-properties/closed
    inp.COMPOSITION_BRANCH_REMOVED,  # CTR034 error  input/composition/branch-removed
    inp.COMPOSITION_ADDED,  # CTR035 error  input/composition/added
    inp.ITEMS_CLOSED,  # CTR036 error  input/items/closed
    inp.DEPENDENT_REQUIRED_ADDED,  # CTR037 error  input/dependent-required/added
    inp.DEPENDENT_SCHEMA_ADDED,  # CTR038 error  input/dependent-schema/added
    inp.DEFAULT_CHANGED,  # CTR039 warning  input/default/changed
    inp_safe.OPTIONAL_PROPERTY_ADDED,  # CTR040 info  input/property/added
    inp_safe.TYPE_WIDENED,  # CTR041 info  input/type/widened
    inp_safe.ENUM_VALUE_ADDED,  # CTR042 info  input/enum/value-added
    inp_safe.BOUND_LOOSENED,  # CTR043 info  input/bound/loosened
    inp_safe.PROPERTY_BECAME_OPTIONAL,  # CTR044 info  input/required/became-optional
    inp_safe.PROPERTY_DESCRIPTION_CHANGED,  # CTR045 info  input/description/changed
    tool.OUTPUT_SCHEMA_ADDED,  # CTR050 info  output/output-schema/added
    tool.OUTPUT_SCHEMA_REMOVED,  # CTR051 error  output/output-schema/removed
    out.REQUIRED_PROPERTY_REMOVED,  # CTR052 error  output/required/removed
    out.PROPERTY_BECAME_OPTIONAL,  # CTR053 error  output/required/became-optional
    out.TYPE_WIDENED,  # CTR054 error  output/type/widened
    out.ENUM_VALUE_ADDED,  # CTR055 warning  output/enum/value-added
    out.ENUM_REMOVED,  # CTR056 warning  output/enum/removed
    out.CONST_CHANGED,  # CTR057 error  output/const/changed
    out.BOUND_LOOSENED,  # CTR058 warning  output/bound/loosened
    out.PATTERN_REMOVED,  # CTR059 warning  output/pattern/removed
    out.PATTERN_CHANGED,  # CTR060 warning  output/pattern/changed
    out.FORMAT_REMOVED,  # CTR061 warning  output/format/removed
    out.FORMAT_CHANGED,  # CTR062 warning  output/format/changed
    out.ADDITIONAL_PROPERTIES_OPENED,  # CTR063 warning  output/additional-properties/opened
    out.COMPOSITION_BRANCH_ADDED,  # CTR064 warning  output/composition/branch-added
    out.COMPOSITION_REMOVED,  # CTR065 warning  output/composition/removed
    out.PROPERTY_ADDED,  # CTR066 info  output/property/added
    out.OPTIONAL_PROPERTY_REMOVED,  # CTR067 warning  output/property/removed
    tool.AGENT_TOOL_LOST,  # CTR070 warning  agent/tool/removed
    tool.AGENT_TOOL_LOAD_CHANGED,  # CTR071 info  agent/load/changed
    gap.TOOL_SCHEMA_UNREADABLE,  # CTR080 error  tool/schema/unreadable
    gap.COMPOSITION_BRANCHES_OVERLAP,  # CTR081 error  input/composition/overlap
    gap.COMPOSITION_OVERLAP_REMOVED,  # CTR082 warning  output/composition/overlap-removed
    gap.CONSTRAINT_ADDED,  # CTR083 error  input/constraint/added
    gap.CONSTRAINT_REMOVED,  # CTR084 warning  output/constraint/removed
    gap.DEFAULT_ADDED,  # CTR085 warning  input/default/added
    gap.DEFAULT_REMOVED,  # CTR086 warning  input/default/removed
    gap.INPUT_KEYWORD_NOT_ANALYSED,  # CTR087 warning  input/keyword/changed
    gap.OUTPUT_KEYWORD_NOT_ANALYSED,  # CTR088 warning  output/keyword/changed
    gap.INPUT_SUBSCHEMA_NOT_COMPARED,  # CTR089 warning  input/subschema/not-compared
    gap.OUTPUT_SUBSCHEMA_NOT_COMPARED,  # CTR090 warning  output/subschema/not-compared
    surface.TOOL_SCHEMA_REPAIRED,  # CTR091 info  tool/schema/repaired
    surface.TOOL_MOVED,  # CTR092 error  tool/tool/moved
    surface.TOOL_FOLDED,  # CTR093 error  tool/tool/folded
    surface.TEXT_HAZARD_ADDED,  # CTR094 error  tool/text/hazard-added
    surface.TITLE_CHANGED,  # CTR095 info  tool/title/changed
    surface.ICONS_CHANGED,  # CTR096 info  tool/icons/changed
    surface.TASK_SUPPORT_NARROWED,  # CTR097 error  tool/task-support/narrowed
    surface.TASK_SUPPORT_WIDENED,  # CTR098 info  tool/task-support/widened
    surface.HEADER_CHANGED,  # CTR099 error  input/header/changed
    surface.HEADER_ADDED,  # CTR100 warning  input/header/added
    surface.HEADER_REMOVED,  # CTR101 warning  input/header/removed
    surface.HEADER_INVALID,  # CTR102 error  input/header/invalid
    surface.ENUM_CASE_CHANGED,  # CTR103 error  input/enum/case-changed
)

RULES_BY_CELL: Mapping[Cell, Rule] = {(r.direction or "", r.kind or "", r.action or ""): r for r in CONTRACT_RULES}


def rule_for(direction: str, kind: str, action: str) -> Rule | None:
    """The rule for one taxonomy cell; None when the cell is waived (see taxonomy.WAIVERS).

    A cell with neither a rule nor a waiver raises UnknownCell: the walker produced a change nobody decided
    about, which is a bug to fix, not a change to drop."""
    cell = (direction, kind, action)
    rule = RULES_BY_CELL.get(cell)
    if rule is None and cell not in WAIVERS:
        raise UnknownCell(f"contract change {direction}/{kind}/{action} has no rule and no waiver")
    return rule
