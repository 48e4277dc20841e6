"""Variable references in MCP configs: kept verbatim in outputs, expanded only to start a server."""

from __future__ import annotations

import re
from collections.abc import Mapping

from quiver.errors import InputError

REFERENCE = re.compile(
    r"\$\{\{\s*(?P<gh>[A-Za-z_][\w.]*)\s*\}\}"  # ${{ secrets.X }} / ${{ vars.X }}
    r"|\$\{env:(?P<env>[A-Za-z_]\w*)\}"  # ${env:VAR}
    r"|\$\{input:(?P<input>[^}]+)\}"  # ${input:id}
    r"|\$\{(?P<braced>[A-Za-z_]\w*)(?::-(?P<default>[^}]*))?\}"  # ${VAR} ${VAR:-default}
    r"|\$(?P<bare>[A-Za-z_]\w*)"  # $VAR
)


def references(text: str) -> list[tuple[str, str]]:
    """(syntax, name) for every reference: syntax is one of gh, env, input, braced, default, bare."""
    out = []
    for match in REFERENCE.finditer(text):
        for syntax in ("gh", "env", "input", "braced", "bare"):
            if match.group(syntax):
                kind = "default" if syntax == "braced" and match.group("default") is not None else syntax
                out.append((kind, match.group(syntax)))
    return out


def expand(text: str, environ: Mapping[str, str], *, where: str) -> str:
    """Expand references from `environ`; `${input:id}` reads QUIVER_INPUT_<ID>. Missing -> InputError."""

    def one(match: re.Match[str]) -> str:
        if match.group("gh"):
            name = match.group("gh").rsplit(".", 1)[-1]
        elif match.group("input"):
            name = "QUIVER_INPUT_" + re.sub(r"\W", "_", match.group("input")).upper()
        else:
            name = match.group("env") or match.group("braced") or match.group("bare")
        if name in environ:
            return environ[name]
        if match.group("default") is not None:
            return match.group("default")
        raise InputError(
            f"{where}: variable `{match.group(0)}` is not set",
            hint=f"export {name}=... before running quiver",
        )

    return REFERENCE.sub(one, text)
