"""`quiver route-test`: routing cases ranked against the compiled catalog, recall@k and MRR, misses, baselines.

The tests drive `quiver.commands.route_test.run`, the function the click command calls, through `run` below:
the exit code and the report of its Outcome (errors are QuiverErrors: exit 2 through the CLI's funnel).
`quiver.routes` is tested on its own for the scores.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from quiver.commands import route_test
from quiver.errors import InputError, Position, UsageError
from quiver.model import sha256_json
from quiver.routes import RouteCase, evaluate, parse_cases
from quiver.search import SearchDoc, SearchIndex

DEMO_CASES = Path(__file__).resolve().parents[2] / "examples" / "demo" / ".quiver" / "routes.yaml"
PR_CASE = "- query: create a pull request from my feature branch\n  expect: github/create_pull_request\n"


def run(root: Path, **options: Any) -> tuple[int, str]:
    """`quiver route-test` on `root`: (exit code, stdout)."""
    outcome = route_test.run(route_test.RouteTestOptions(root, **options))
    return outcome.code, outcome.text


def with_cases(root: Path, text: str | None = None) -> Path:
    target = root / ".quiver" / "routes.yaml"
    target.parent.mkdir(exist_ok=True)
    if text is None:
        shutil.copyfile(DEMO_CASES, target)
    else:
        target.write_text(text, encoding="utf-8")
    return target


def test_the_demo_routing_cases_all_rank_within_their_k(demo: Path) -> None:
    with_cases(demo)
    code, out = run(demo)
    lines = out.splitlines()
    assert code == 0, out
    assert lines[0] == "14 routing cases in .quiver/routes.yaml"
    assert lines[1].startswith("recall@1 ") and "recall@3 1.000  recall@5 1.000  MRR " in lines[1]
    assert lines[-1] == "ok"


def test_a_case_below_its_k_fails_and_names_the_tool_that_won_instead(demo: Path) -> None:
    with_cases(demo, PR_CASE + "- query: take a screenshot of the page\n  expect: time/convert_time\n  k: 3\n")
    code, out = run(demo)
    assert code == 1
    assert (
        '.quiver/routes.yaml:3:3: miss: `time/convert_time` for "take a screenshot of the page": not in the top 10 '
        "(k 3); `playwright/browser_take_screenshot` came first"
    ) in out.splitlines()
    assert out.splitlines()[-1] == "fail: 1 case(s) ranked below their k"


def test_recall_at_1_3_5_and_mrr_count_every_case() -> None:
    docs = [
        SearchDoc("mail", "send_email", "Send an email message to recipients"),
        SearchDoc("mail", "draft_email", "Save an email message as a draft"),
        SearchDoc("weather", "get_forecast", "Weather forecast for a city"),
    ]
    where = Position("routes.yaml", 1, 3)
    cases = [
        RouteCase("send an email to Ana", "mail", "send_email", None, 5, where),
        RouteCase("send an email to Ana", "mail", "draft_email", None, 1, where),
        RouteCase("weather in Oslo tomorrow", "mail", "send_email", None, 5, where),
    ]
    report = evaluate(cases, {None: SearchIndex.build(docs)})
    assert [r.rank for r in report.results] == [1, 2, None]
    assert [r.winner for r in report.results] == [None, "mail/send_email", "weather/get_forecast"]
    assert [r.passed for r in report.results] == [True, False, False]
    assert (report.recall(1), report.recall(3), report.recall(5)) == (1 / 3, 2 / 3, 2 / 3)
    assert report.mrr == pytest.approx((1 + 0.5 + 0) / 3)


@pytest.mark.parametrize(
    ("text", "line", "column", "message", "hint"),
    [
        ("- query: a\n  expect: [x\n", 3, 1, "invalid YAML", None),
        (
            "- query: find it\n  expected: srv/tool\n",
            2,
            3,
            "unknown key `expected` in a case",
            "did you mean `expect`?",
        ),
        ("- query: find it\n  expect: tool\n", 2, 11, "a case needs `expect: server/tool`", None),
        ("- query: find it\n  expect: srv/tool\n  k: 0\n", 3, 6, "`k` must be a whole number from 1 to 10", None),
        ("query: find it\n", 1, 1, "a routes file is a list of cases", None),
    ],
)
def test_a_malformed_case_is_an_input_error_at_its_file_line_and_column(
    text: str, line: int, column: int, message: str, hint: str | None
) -> None:
    with pytest.raises(InputError) as caught:
        parse_cases(text, ".quiver/routes.yaml")
    assert caught.value.position == Position(".quiver/routes.yaml", line, column)
    assert caught.value.message.startswith(message)
    if hint is not None:
        assert caught.value.hint == hint


def test_cases_may_sit_under_a_cases_key_with_their_positions_kept() -> None:
    cases = parse_cases("cases:\n  - query: open a PR\n    expect: github/create_pull_request\n    k: 2\n", "r.yaml")
    assert [(c.query, c.expect, c.agent, c.k, c.position) for c in cases] == [
        ("open a PR", "github/create_pull_request", None, 2, Position("r.yaml", 2, 5))
    ]


def test_an_expected_tool_the_scope_lacks_is_an_input_error_with_a_suggestion(demo: Path) -> None:
    with_cases(demo, "- query: open a PR\n  expect: github/create_pull_reqest\n")
    with pytest.raises(InputError) as caught:
        run(demo)
    assert caught.value.message == "`github/create_pull_reqest` is not a tool of the project"
    assert caught.value.hint == "did you mean `github/create_pull_request`?"
    assert caught.value.position == Position(".quiver/routes.yaml", 1, 3)


def test_an_unknown_agent_is_an_input_error_at_the_case_naming_it(demo: Path) -> None:
    with_cases(demo, PR_CASE + "- query: open a PR\n  expect: github/create_pull_request\n  agent: opps\n")
    with pytest.raises(InputError) as caught:
        run(demo)
    assert caught.value.message == "no agent `opps`"
    assert caught.value.hint == "did you mean `ops`?"
    assert caught.value.position == Position(".quiver/routes.yaml", 3, 3)


def test_a_missing_cases_file_is_an_input_error(demo: Path) -> None:
    with pytest.raises(InputError) as caught:
        run(demo)
    assert caught.value.position == Position(".quiver/routes.yaml")


def test_the_cases_file_defaults_to_the_routes_config_key(demo: Path) -> None:
    config = demo / "quiver.toml"
    config.write_text('routes = "ci/routing.yaml"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    (demo / "ci").mkdir()
    (demo / "ci" / "routing.yaml").write_text(PR_CASE, encoding="utf-8")
    code, out = run(demo)
    assert code == 0
    assert out.splitlines()[0] == "1 routing case in ci/routing.yaml"


def test_json_output_gives_recall_mrr_and_each_case_with_its_rank(demo: Path) -> None:
    with_cases(demo)
    code, out = run(demo, fmt="json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True and data["failures"] == 0
    assert {"recall@1", "recall@3", "recall@5", "mrr", "cases", "file"} <= set(data)
    first = data["cases"][0]
    assert first["expect"] == "time/get_current_time" and first["rank"] == 1 and first["passed"] is True
    assert (first["line"], first["column"]) == (5, 3)


def test_update_baseline_stores_each_rank_and_the_mrr(demo: Path) -> None:
    with_cases(demo)
    baseline = demo / ".quiver" / "routes-baseline.json"
    code, out = run(demo, baseline=baseline, update_baseline=True)
    assert code == 0 and out.endswith(f"wrote {baseline}\n")
    stored = json.loads(baseline.read_text(encoding="utf-8"))
    assert stored["routesBaselineVersion"] == 1 and len(stored["cases"]) == 14
    assert {
        "agent": None,
        "expect": "time/get_current_time",
        "query": "what is the current time in UTC",
        "rank": 1,
    } in stored["cases"]
    code, out = run(demo, baseline=baseline)
    mrr = f"{stored['mrr']:.3f}"
    assert code == 0 and f"baseline .quiver/routes-baseline.json: MRR {mrr} -> {mrr}" in out.splitlines()


def test_a_description_change_that_pushes_a_case_down_fails_against_the_baseline(demo: Path) -> None:
    with_cases(demo, PR_CASE + "- query: open a new issue about a crash\n  expect: github/issue_write\n")
    baseline = demo / "routes-baseline.json"
    run(demo, baseline=baseline, update_baseline=True)
    lock = json.loads((demo / "quiver.lock.json").read_text(encoding="utf-8"))
    entry = next(t for t in lock["servers"]["github"]["tools"] if t["tool"]["name"] == "issue_write")
    # A rewording that reads well but says last what it writes (issues): the case ranks worse than before.
    entry["tool"]["description"] = "Record writes: method create or update, with title, body and labels; for issues."
    entry["sha256"] = sha256_json(entry["tool"])  # as `quiver snapshot` would pin the new description
    (demo / "quiver.lock.json").write_text(json.dumps(lock, indent=2), encoding="utf-8")
    code, out = run(demo, baseline=baseline)
    lines = out.splitlines()
    assert code == 1, out
    worse = [line for line in lines if " worse: " in line]
    assert len(worse) == 1
    assert worse[0].startswith(
        '.quiver/routes.yaml:3:3: worse: `github/issue_write` for "open a new issue about a crash"'
    )
    # Still within its k (the embedding keeps it in the top 5), but worse than the baseline: that alone fails.
    assert lines[-1].split("; ") == [
        "fail: 1 case(s) rank worse than the baseline",
        "the MRR dropped below the baseline",
    ]


def test_a_missing_baseline_is_an_input_error_that_says_how_to_create_it(demo: Path) -> None:
    with_cases(demo, PR_CASE)
    with pytest.raises(InputError) as caught:
        run(demo, baseline=demo / "nope.json")
    assert caught.value.hint == "create it with `quiver route-test --baseline FILE --update-baseline`"


def test_update_baseline_without_a_baseline_file_is_a_usage_error(demo: Path) -> None:
    with_cases(demo, PR_CASE)
    with pytest.raises(UsageError):
        run(demo, update_baseline=True)
