"""`quiver schema [NAME]`: the JSON Schemas quiver ships, for editors and scripts to use from a file.

The schemas' `$id`s are URNs (`urn:agent-quiver:schema:manifest`): names, not addresses. An editor needs
the document itself, so `quiver schema manifest --output .quiver/manifest.schema.json` writes it where a
`$schema` path or a `json.schemas` setting can point.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from quiver.commands.outcome import Outcome
from quiver.errors import UsageError
from quiver.suggest import did_you_mean
from quiver.validation import load_schema, schema_id, schema_names

__all__ = ["SchemaOptions", "run", "schema_text"]


@dataclass(frozen=True, slots=True)
class SchemaOptions:
    name: str | None = None
    output: Path | None = None  # write the schema to this file instead of stdout


def run(options: SchemaOptions) -> Outcome:
    return Outcome(schema_text(options.name), output=options.output)


def schema_text(name: str | None) -> str:
    """The schema `name` exactly as shipped; without a name, one line per schema: name and `$id`."""
    names = schema_names()
    if name is None:
        width = max(len(n) for n in names)
        return "".join(f"{n:<{width}}  {schema_id(n)}\n" for n in names)
    key = name.removesuffix(".schema.json")
    if key not in names:
        hint = did_you_mean(key, names, "")
        raise UsageError(
            f"no schema named `{name}`",
            hint=hint or f"`quiver schema` lists them: {', '.join(names)}",
        )
    load_schema(key)  # the same reader as validation: a shipped schema that is not JSON fails here
    return (resources.files("quiver") / "schemas" / f"{key}.schema.json").read_text(encoding="utf-8")
