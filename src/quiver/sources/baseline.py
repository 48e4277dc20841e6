"""The baseline file (`quiver lint --baseline FILE`): its one reader and writer.

`{"baselineVersion": 1, "findings": [{"fingerprint", "rule", "file"}, ...]}`, sorted, final newline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.model import Finding
from quiver.sources._json import load_json_fast
from quiver.sources.files import read_text


def read_baseline(path: Path) -> set[str]:
    """The fingerprints a baseline file records."""
    if not path.is_file():
        raise InputError(
            "baseline file not found",
            position=Position(str(path)),
            hint="create it with `quiver lint --baseline FILE --update-baseline`",
        )
    data = load_json_fast(read_text(path, str(path)), str(path))  # bounded; a syntax error is named at its place
    try:
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
