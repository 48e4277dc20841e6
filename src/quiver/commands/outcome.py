"""What every command hands the command line: one `Outcome`, which `render` prints and turns into the exit code.

Each command module defines a frozen `XOptions` (what the click function parsed) and `run(options) -> Outcome`
(the ledger's subcommands `run_list`, `run_show`, ...). A run function computes and writes the files it is
asked to (a baseline, a patch, an HTML report, manifests); it never prints and never exits. `render` writes,
in this order: `messages` to stderr, one line each; `text` to stdout exactly as it is (or, with `output`,
atomically to that file); `notes` to stderr; and returns `code`, the exit code. Expected failures are raised
(`QuiverError`) and printed by the error funnel of `quiver.commands._group`.

The exceptions, where output has to appear while the work goes on (nothing else prints from a command):

- the progress line of `quiver.commands._progress` (stderr, on a terminal only, erased before the result);
- `quiver serve`, which runs until stopped: its log on stderr and, over stdio, the MCP protocol on stdout;
- `quiver ledger doctor`, which writes each action it salvages as it reads it (a damaged ledger can be large).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from quiver.errors import QuiverError


@dataclass(frozen=True, slots=True)
class Outcome:
    """A command's result: the report, the lines around it on stderr, the exit code."""

    text: str = ""  # the report, printed as it is: it ends with its own newline
    messages: tuple[str, ...] = ()  # stderr lines before the report
    notes: tuple[str, ...] = ()  # stderr lines after the report
    code: int = 0
    output: Path | None = None  # write `text` to this file (atomically) instead of stdout
    root: Path | None = None  # with `output`: a missing folder may be created inside this project
    color: bool | None = None  # keep the report's colors (True: even when piped); None: click decides


def render(outcome: Outcome) -> int:
    """Print `outcome` (see the module docstring) and return its exit code, which the group exits with."""
    for line in outcome.messages:
        click.echo(line, err=True)
    if outcome.output is not None:
        from quiver.sources.files import write_output

        write_output(outcome.output, outcome.text, root=outcome.root)
    else:
        click.echo(outcome.text, nl=False, color=outcome.color)
    for line in outcome.notes:
        click.echo(line, err=True)
    return outcome.code


def error_lines(exc: QuiverError) -> list[str]:
    """What the error funnel prints for an expected failure: one `error:` line each."""
    return [f"error: {line}" for line in exc.lines()]


def failed(messages: Sequence[str], exc: QuiverError) -> Outcome:
    """A run that failed after it had gathered `messages` (its warnings, what it already changed): they are
    printed, then the error as the funnel prints it, and its exit code."""
    return Outcome(messages=(*messages, *error_lines(exc)), code=exc.exit_code)
