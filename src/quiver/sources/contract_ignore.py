"""The contract ignore file (`.quiver/contract-ignore.yaml`): accepted breaking changes; the one reader.

A YAML list of `{fingerprint, reason}`; `quiver diff` hides the findings whose fingerprint it lists.
"""

from __future__ import annotations

from pathlib import Path

from quiver.errors import InputError, Position
from quiver.sources.files import read_text

IGNORE_FILE = ".quiver/contract-ignore.yaml"


def read_ignores(root: Path) -> dict[str, str]:
    """{fingerprint: reason} from the contract ignore file; every entry needs a reason."""
    path = root / IGNORE_FILE
    if not path.is_file():
        return {}
    from quiver.sources._yaml import parse_yaml  # PyYAML is loaded only when the file exists

    node = parse_yaml(read_text(path, IGNORE_FILE), IGNORE_FILE)
    out: dict[str, str] = {}
    for item in node.items if isinstance(node.value, list) else []:
        fp = item.value.get("fingerprint") if isinstance(item.value, dict) else None
        reason = item.value.get("reason") if isinstance(item.value, dict) else None
        if not isinstance(fp, str) or not isinstance(reason, str) or not reason.strip():
            raise InputError(
                "each ignore entry needs a `fingerprint` and a non-empty `reason`",
                position=Position(IGNORE_FILE, item.line, item.column),
                hint="write `- fingerprint: <from --format json>` and `reason: why this break is accepted`",
            )
        out[fp] = reason
    if node.value is not None and not isinstance(node.value, list):
        raise InputError(
            "the ignore file must be a YAML list",
            position=Position(IGNORE_FILE, 1, 1),
            hint="write `- fingerprint: ...` entries",
        )
    return out
