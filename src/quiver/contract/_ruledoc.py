"""Assemble a contract rule's documentation with the fixed headings (STYLE §6), in order."""

from __future__ import annotations

from textwrap import dedent


def rule_doc(*, what: str, why: str, example: str, fix: str, witness: str, references: str = "") -> str:
    """Markdown for one rule: What it does, Why is this bad?, Example, Fix, Witness[, References]."""
    sections = [
        ("## What it does", what),
        ("## Why is this bad?", why),
        ("## Example", example),
        ("## Fix", fix),
        ("## Witness", witness),
    ]
    if references:
        sections.append(("## References", references))
    return "\n\n".join(f"{heading}\n{dedent(body).strip()}" for heading, body in sections) + "\n"
