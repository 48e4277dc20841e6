"""`--format json`: an array of `Finding.to_json()` objects (the documented schema), sorted keys, final newline."""

from __future__ import annotations

import json
from collections.abc import Sequence

from quiver.model import Finding
from quiver.report.render import ReportContext


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2, sort_keys=True, ensure_ascii=False) + "\n"
