"""One `--since` parser (quiver.since) behind `quiver stats` and `quiver ledger list/export`."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ledger_cli import T0, ledger, run

from quiver.commands import ledger as cmd
from quiver.errors import UsageError
from quiver.since import parse_since
from quiver.stats import parse_since as stats_parse_since

__all__ = ["ledger"]  # the fixture, imported from test_ledger_cli


def test_stats_and_ledger_share_the_one_parser() -> None:
    assert stats_parse_since is parse_since


@pytest.mark.parametrize(("text", "back"), [("90s", 90), ("30m", 1800), ("24h", 86400), ("2w", 14 * 86400)])
def test_a_duration_counts_back_from_now(text: str, back: float) -> None:
    assert parse_since(text, now=1_000_000) == 1_000_000 - back


def test_ledger_list_takes_weeks_like_stats(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    one_week_after = T0 + 7 * 86400
    listed = cmd.list_actions(path, since="1w", now=one_week_after + 1, fmt="json")
    assert ids["done"] not in listed and ids["waiting"] in listed and ids["unknown"] in listed
    code, out, err = run(path.parent.parent, "list", "--since", "2w")
    assert code == 0 and err == "" and out.splitlines()[0].split()[0] == "ID"


def test_a_since_that_is_no_duration_and_no_date_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--since `5 minutes`"):
        parse_since("5 minutes", now=0)
