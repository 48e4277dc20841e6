"""Capability labels of one tool: annotations, side-effect class, parameters and wording, each with its reason;
the built-ins' table; the corpus's real tools keep the labels the hand-labelled sets give them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from quiver.capabilities import LABELS, ToolFacts, classify_tool
from quiver.capabilities._builtins import classify_builtin

BENCH = Path(__file__).resolve().parents[2] / "bench" / "flows"


def facts(name: str, description: str = "", **fields: Any) -> ToolFacts:
    return ToolFacts(server=fields.pop("server", "srv"), name=name, description=description, **fields)


def labels(tool: ToolFacts) -> tuple[str, ...]:
    return classify_tool(tool).labels


def test_a_url_the_server_requests_is_untrusted_input_and_a_way_out() -> None:
    tool = facts("fetch", "Fetches a URL from the internet.", input_schema={"properties": {"url": {"type": "string"}}})
    found = classify_tool(tool)
    assert found.labels == ("untrusted_input", "exfiltration")
    assert found.reason("exfiltration").text.startswith("parameter `url`")  # type: ignore[union-attr]


def test_a_url_of_one_site_is_input_but_no_way_out() -> None:
    schema = {"properties": {"url": {"type": "string"}}}
    assert labels(facts("get_transcript", "Extract the transcript of a YouTube video URL", input_schema=schema)) == (
        "untrusted_input",
    )


def test_a_free_text_write_to_a_repository_is_a_way_out_and_its_read_is_input_and_private() -> None:
    repo = {"owner": {"type": "string"}, "repo": {"type": "string"}}
    comment = facts("add_issue_comment", "Add a comment.", input_schema={"properties": {**repo, "body": {}}})
    read = facts("issue_read", "Get an issue.", input_schema={"properties": repo}, annotations={"readOnlyHint": True})
    assert labels(comment) == ("exfiltration",)
    assert labels(read) == ("untrusted_input", "private_data")


def test_local_reads_are_private_and_local_writes_go_nowhere() -> None:
    path = {"properties": {"path": {"type": "string"}, "content": {"type": "string"}}}
    assert labels(facts("read_text_file", "Read a file.", input_schema=path)) == ("private_data",)
    assert labels(facts("write_file", "Create or overwrite a file.", input_schema=path)) == ("destructive",)
    assert labels(facts("create_directory", "Create a directory.", input_schema=path)) == ()


def test_annotations_decide_where_the_wording_says_nothing() -> None:
    assert labels(facts("zap", "Zap it.", annotations={"destructiveHint": True})) == ("destructive",)
    world = facts("lookup", "Look it up.", annotations={"readOnlyHint": True, "openWorldHint": True})
    assert labels(world) == ("untrusted_input",)


def test_open_world_false_keeps_wording_from_setting_input() -> None:
    text = "Search the web for pages."
    assert labels(facts("search", text)) == ("untrusted_input",)
    assert labels(facts("search", text, annotations={"openWorldHint": False})) == ()


def test_the_configured_side_effect_class_makes_a_verbless_tool_a_read() -> None:
    schema = {"properties": {"path": {"type": "string"}}}
    assert labels(facts("workspace_blob", "The blob.", input_schema=schema)) == ()
    assert labels(facts("workspace_blob", "The blob.", input_schema=schema, side_effect="read_only")) == (
        "private_data",
    )


def test_a_shell_has_every_label() -> None:
    tool = facts("start_process", "Start a terminal process.", input_schema={"properties": {"command": {}}})
    assert labels(tool) == LABELS


def test_builtins_are_looked_up_by_the_hosts_names_and_qualified_tools_by_their_tool() -> None:
    assert classify_builtin("Bash", "execute").labels == LABELS  # type: ignore[union-attr]
    assert classify_builtin("WebSearch", "web").labels == ("untrusted_input",)  # type: ignore[union-attr]
    assert classify_builtin("execute/getTerminalOutput", "execute/getTerminalOutput").labels == (  # type: ignore[union-attr]
        "private_data",
    )
    assert classify_builtin("web/fetch", "web/fetch").labels == ("untrusted_input", "exfiltration")  # type: ignore[union-attr]
    assert classify_builtin("todo", "todo").labels == ()  # type: ignore[union-attr]
    assert classify_builtin("publisher.ext/tool", "publisher.ext/tool") is None


def test_a_tool_set_named_alone_carries_its_tools_labels_each_with_the_tool_that_gave_it() -> None:
    found = classify_builtin("vscode", "vscode")
    assert found is not None and found.labels == LABELS
    assert "installExtension" in found.reason("destructive").text  # type: ignore[union-attr]


def _labelled(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (BENCH / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_label_sets_are_split_by_name_hash_and_cover_the_named_servers() -> None:
    import hashlib

    rows = {"eval": _labelled("eval"), "tune": _labelled("tune")}
    for split, found in rows.items():
        for row in found:
            first = hashlib.sha256(row["tool"].encode()).hexdigest()[0]
            assert (first in "0123456789a") == (split == "eval"), row["tool"]
            assert set(row["labels"]) <= set(LABELS) and row["why"]
    servers = {r["tool"].split("/")[0] for r in rows["eval"]}
    assert {"github", "filesystem", "fetch", "playwright", "notion"} <= servers
    assert len(rows["eval"]) >= 100


@pytest.mark.parametrize("label", LABELS)
def test_each_labels_precision_and_recall_on_the_held_out_set_stay_above_the_figures_measured(
    label: str, corpus: Path
) -> None:
    """bench/flows.py prints the figures; this guards against a change that makes them fall."""
    import sys

    sys.path.insert(0, str(BENCH.parent))
    try:
        from flows import catalog_tools  # bench/flows.py
    finally:
        sys.path.pop(0)
    tools = catalog_tools(corpus)
    tp = fp = fn = 0
    for row in _labelled("eval"):
        server, tool = tools[row["tool"]]
        got = classify_tool(
            ToolFacts(
                server["server"],
                tool["name"],
                tool.get("description") or "",
                input_schema=tool.get("inputSchema") or {},
                server_description=server.get("description") or "",
            )
        ).has(label)
        want = label in row["labels"]
        tp, fp, fn = tp + (got and want), fp + (got and not want), fn + (want and not got)
    assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.8, (label, tp, fp, fn)
