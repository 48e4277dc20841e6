from __future__ import annotations

from pathlib import Path

import pytest
from report_cases import context, lint_findings

from quiver.errors import UsageError
from quiver.report import FORMATS
from quiver.report.render import formatter, render


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_the_same_findings_identically_twice(project: Path, fmt: str) -> None:
    first = render(lint_findings(), fmt, context(project))
    assert first == render(lint_findings(), fmt, context(project))
    assert first.endswith("\n")


def test_an_unknown_format_is_a_usage_error_naming_the_choices() -> None:
    with pytest.raises(UsageError) as info:
        formatter("xml")
    assert "`xml`" in info.value.message
    assert info.value.hint is not None and "sarif" in info.value.hint
