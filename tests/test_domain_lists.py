"""Domain lists have one source each, an enum, and every place that lists them again is checked against it:
the ledger states (`LedgerState`). A value deleted or added in one place fails here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import click

from quiver.cli import cli
from quiver.runtime.ledger import STATES, TERMINAL, TRANSITIONS, State
from quiver.runtime.states import RESOLVED_STATES, LedgerState
from quiver.validation import load_schema, schema_names

STATE_VALUES = [state.value for state in LedgerState]


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
    """(command path, parameter) of every option of every command."""
    for param in command.params:
        yield path, param
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
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
