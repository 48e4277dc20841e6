"""Domain lists have one source each, an enum, and every place that lists them again is checked against it:
the ledger states (`LedgerState`), the MCP config dialects (`Dialect`, `CONFIG_DIALECTS`) and who reads a
config file (`Reader`), the hosts (`HostId`). A value deleted or added in one place fails here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import click
import pytest

from quiver.cli import cli
from quiver.config import AGENT_HOST_IDS, HOST_IDS
from quiver.hosts import AGENT_HOSTS
from quiver.hosts.model import HostId
from quiver.lint.mcp.unknown_server_key import KNOWN_KEYS
from quiver.model import Dialect
from quiver.runtime.ledger import STATES, TERMINAL, TRANSITIONS, State
from quiver.runtime.states import RESOLVED_STATES, LedgerState
from quiver.sources._json import parse_json
from quiver.sources.mcp_config import CONFIG_DIALECTS, CONFIG_FILES, JSONC_FILES, Reader, config_from_node
from quiver.validation import load_schema, schema_names

STATE_VALUES = [state.value for state in LedgerState]
HOST_VALUES = [host.value for host in HostId]


def enums(node: Any, at: str = "") -> Iterator[tuple[str, list[Any]]]:
    """(JSON pointer, values) of every `enum` in a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "enum" and isinstance(value, list):
                yield at, value
            yield from enums(value, f"{at}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from enums(value, f"{at}/{index}")


def options(command: click.Command, path: str = "quiver") -> Iterator[tuple[str, click.Parameter]]:
    """(command path, parameter) of every option of every command, lazily registered ones included (through
    `list_commands`/`get_command`, as click resolves them: `Group.commands` holds a lazy one only once used)."""
    for param in command.params:
        yield path, param
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path.rsplit(" ", 1)[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name}"
            yield from options(sub, f"{path} {name}")


def choices(param: click.Parameter) -> list[str]:
    assert isinstance(param.type, click.Choice), param
    return [str(c) for c in param.type.choices]


# ---------------------------------------------------------------- ledger states


def test_the_state_literal_the_type_checker_sees_is_the_enum() -> None:
    assert list(get_args(State)) == STATE_VALUES == list(STATES)
    assert set(TRANSITIONS) == set(LedgerState)
    assert set(LedgerState) >= TERMINAL
    assert set(RESOLVED_STATES) == TRANSITIONS[LedgerState.UNKNOWN_OUTCOME]


def test_every_ledger_schema_lists_every_state_and_no_other() -> None:
    listed = 0
    for name in (n for n in schema_names() if n.startswith("ledger-")):
        for at, values in enums(load_schema(name)):
            if set(values) & set(STATE_VALUES):
                assert [v for v in values if v is not None] == STATE_VALUES, f"{name}{at}"
                listed += 1
    assert listed >= 7  # action/list/show: the action's state; export: the state, event from/to; show likewise


def test_the_cli_state_choices_are_the_enum() -> None:
    found = {path: choices(p) for path, p in options(cli) if p.name in ("state", "states") and "ledger" in path}
    assert found == {
        "quiver ledger list": STATE_VALUES,
        "quiver ledger export": STATE_VALUES,
        "quiver ledger resolve": [state.value for state in RESOLVED_STATES],
    }


# ---------------------------------------------------------------- config dialects and readers


def test_the_mcp_config_schema_has_one_branch_per_file_dialect() -> None:
    branches = load_schema("mcp-config")["oneOf"]
    assert all(len(b["required"]) == 1 for b in branches)
    assert [b["required"][0] for b in branches] == list(CONFIG_DIALECTS.values())
    assert set(CONFIG_DIALECTS) <= set(Dialect)


@pytest.mark.parametrize("dialect", list(CONFIG_DIALECTS), ids=str)
def test_a_file_of_each_dialect_is_read_as_that_dialect(dialect: Dialect) -> None:
    key = CONFIG_DIALECTS[dialect]
    body = '[{"name": "s", "command": "x"}]' if dialect == Dialect.LIST else '{"s": {"command": "x"}}'
    config = config_from_node(parse_json(f'{{"{key}": {body}}}', "f.json"), "f.json")
    assert config.dialect is dialect
    assert all(server.dialect is dialect for server in config.servers) and config.servers


def test_every_config_file_has_a_reader_and_every_reader_a_label_and_its_keys() -> None:
    readers = {
        rel: config_from_node(parse_json('{"mcpServers": {}}', rel), rel).reader
        for rel in CONFIG_FILES
        if rel not in JSONC_FILES
    }
    assert readers == {
        ".copilot/mcp-config.json": Reader.COPILOT,
        "mcp-config.json": Reader.COPILOT,
        ".github/mcp.json": Reader.COPILOT,
        ".mcp.json": Reader.SHARED,
    }
    vscode = config_from_node(parse_json('{"servers": {}}', ".vscode/mcp.json"), ".vscode/mcp.json")
    assert vscode.reader is Reader.VSCODE
    assert all(reader.label for reader in Reader)
    assert set(KNOWN_KEYS) == set(Reader)  # MCP017 knows the keys of every reader


# ---------------------------------------------------------------- hosts


def test_every_schema_listing_hosts_lists_every_host() -> None:
    listed: dict[str, list[str]] = {}
    for name in schema_names():
        for at, values in enums(load_schema(name)):
            if len(set(values) & set(HOST_VALUES)) > 1:  # `vscode` alone is also a `target` and a tool kind
                listed[f"{name}{at}"] = values
    sessions = "quiver-config/properties/sessions/items"
    assert listed.pop(sessions) == list(AGENT_HOSTS)
    assert all(values == HOST_VALUES for values in listed.values()), listed
    assert {at.split("/", 1)[0] for at in listed} >= {"budget", "explain", "manifest", "quiver-config"}
    assert list(load_schema("quiver-config")["properties"]["hosts"]["properties"]) == sorted(HOST_VALUES)


def test_the_cli_host_choices_and_the_config_checks_are_the_enum() -> None:
    found = [(path, choices(p)) for path, p in options(cli) if p.name == "host"]
    assert found and all(values == HOST_VALUES for _, values in found), found
    assert list(HOST_IDS) == HOST_VALUES
    assert AGENT_HOST_IDS == AGENT_HOSTS
    assert set(AGENT_HOSTS) < set(HOST_VALUES)
