"""Assemble a contract rule's documentation with the fixed headings (STYLE §6), in order."""

from __future__ import annotations

from textwrap import dedent

from quiver.findings.rule import Rule
from quiver.model import Severity

# Where the contract a rule guards is written down (every rule doc ends with References).
TOOLS_SPEC = "MCP specification 2025-11-25, Tools: `tools/list`, `name`, `description`, `annotations`."
SCHEMA_SPEC = (
    "MCP specification 2025-11-25, Tools: `{direction}Schema`; JSON Schema 2020-12, Core and Validation vocabularies."
)


def rule_doc(*, what: str, why: str, example: str, fix: str, witness: str, references: str = TOOLS_SPEC) -> str:
    """Markdown for one rule: What it does, Why is this bad?, Example, Fix, Witness, References."""
    sections = [
        ("## What it does", what),
        ("## Why is this bad?", why),
        ("## Example", example),
        ("## Fix", fix),
        ("## Witness", witness),
        ("## References", references),
    ]
    return "\n\n".join(f"{heading}\n{dedent(body).strip()}" for heading, body in sections) + "\n"


def contract_rule(
    direction: str,
    code: str,
    name: str,
    kind: str,
    action: str,
    message: str,
    hint: str,
    *,
    severity: Severity = "error",
    what: str,
    why: str,
    example: str,
    fix: str,
    witness: str,
) -> Rule:
    """A contract rule with its documentation assembled (the message as given)."""
    return Rule(
        code=code,
        name=name,
        severity=severity,
        direction=direction,
        kind=kind,
        action=action,
        message=message,
        hint=hint,
        doc=rule_doc(
            what=what,
            why=why,
            example=example,
            fix=fix,
            witness=witness,
            references=SCHEMA_SPEC.format(direction=direction) if direction in ("input", "output") else TOOLS_SPEC,
        ),
    )


def schema_rule(
    direction: str,
    code: str,
    name: str,
    kind: str,
    action: str,
    message: str,
    hint: str,
    *,
    severity: Severity = "error",
    what: str,
    why: str,
    example: str,
    fix: str,
    witness: str,
) -> Rule:
    """A rule about one tool's input or output schema: its message names the tool."""
    return contract_rule(
        direction,
        code,
        name,
        kind,
        action,
        "tool `{qualified}`: " + message,
        hint,
        severity=severity,
        what=what,
        why=why,
        example=example,
        fix=fix,
        witness=witness,
    )
