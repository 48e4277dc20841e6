"""The baseline file (`quiver lint --baseline FILE`): its one reader and writer.

`{"baselineVersion": 1, "findings": [{"fingerprint", "rule", "file"}, ...]}`, sorted, final newline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.model import Finding


def read_baseline(path: Path) -> set[str]:
    """The fingerprints a baseline file records."""
    if not path.is_file():
        raise InputError(
            "baseline file not found",
            position=Position(str(path)),
            hint="create it with `quiver lint --baseline FILE --update-baseline`",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(item["fingerprint"]) for item in data["findings"]}
    except (ValueError, KeyError, TypeError):
        raise InputError(
            "not a quiver baseline", position=Position(str(path)), hint="recreate it with --update-baseline"
        ) from None


def render_baseline(findings: Sequence[Finding]) -> str:
    """The baseline file recording `findings`."""
    items = sorted(
        (
            {"fingerprint": f.fingerprint, "rule": f.rule, "file": f.location.file if f.location else ""}
            for f in findings
        ),
        key=lambda d: (d["file"], d["rule"], d["fingerprint"]),
    )
    return json.dumps({"baselineVersion": 1, "findings": items}, indent=2, sort_keys=True) + "\n"
