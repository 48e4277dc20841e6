"""The command line is thin: each click command builds its module's options, calls one `run` function that
returns an `Outcome`, and returns `render` of it; only the renderer prints, and shared options are declared
once in `quiver.commands._options`."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import pytest
from click.testing import CliRunner

import quiver.commands
from quiver.cli import cli
from quiver.commands._group import QuiverGroup
from quiver.commands.outcome import Outcome, failed, render
from quiver.errors import InputErrors, UsageError

COMMANDS = Path(quiver.commands.__file__).parent
CLICK_MODULES = ("cli.py", "commands/ledger_cli.py", "commands/usage_cli.py")
SRC = COMMANDS.parent
# Where a command prints while it works, rather than through its Outcome (see quiver.commands.outcome).
STREAMING = {("ledger.py", "run_doctor")}


def command_modules() -> Iterator[ModuleType]:
    """The modules of `quiver.commands` that hold a command (not the click side, nor the shared helpers)."""
    for info in pkgutil.iter_modules(quiver.commands.__path__):
        if not info.name.startswith("_") and not info.name.endswith("_cli") and info.name != "outcome":
            yield importlib.import_module(f"quiver.commands.{info.name}")


def options_classes(module: ModuleType) -> list[type]:
    return [
        value
        for name, value in vars(module).items()
        if name.endswith("Options") and inspect.isclass(value) and value.__module__ == module.__name__
    ]


def entry_functions(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """The functions of `module` whose first parameter is annotated with one of its options classes."""
    classes = {cls.__name__ for cls in options_classes(module)}
    found = {}
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            first = next(iter(inspect.signature(value).parameters.values()), None)
            if first is not None and first.annotation in classes:  # a string: the modules postpone annotations
                found[name] = value
    return found


@pytest.mark.parametrize("module", list(command_modules()), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_command_module_runs_frozen_options_into_an_outcome(module: ModuleType) -> None:
    classes = options_classes(module)
    assert classes, f"{module.__name__} defines no XOptions"
    for cls in classes:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
    entries = entry_functions(module)
    assert entries, f"{module.__name__} has no run(options) function"
    assert getattr(module, "Outcome", None) is Outcome
    for name, function in entries.items():  # the annotation as written: the modules postpone annotations
        assert inspect.signature(function).return_annotation == "Outcome", f"{module.__name__}.{name}"


def leaf_commands(group: click.Group) -> Iterator[click.Command]:
    """Every leaf command as click finds it (the lazy ones too: `get_command` imports them)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from leaf_commands(command)
        else:
            yield command


def test_every_click_command_returns_render_of_one_run_call() -> None:
    commands = list(leaf_commands(cli))
    assert len(commands) == 22  # 13 commands, 9 ledger subcommands
    for command in commands:
        assert command.callback is not None
        source = inspect.getsource(command.callback)
        function = ast.parse(source[source.index("def ") :]).body[0]
        assert isinstance(function, ast.FunctionDef)
        last = function.body[-1]
        assert isinstance(last, ast.Return) and isinstance(last.value, ast.Call), command.name
        assert ast.unparse(last.value.func) == "render", command.name
        (inner,) = last.value.args
        runs = [n for n in ast.walk(function) if isinstance(n, ast.Call) and ast.unparse(n.func).startswith("run")]
        assert len(runs) == 1, command.name  # one call of the module's run function, inside render(...)
        assert ast.unparse(inner).startswith("run"), command.name


def _printing_calls(tree: ast.AST) -> Iterator[ast.Call]:
    """Calls that print or exit: click.echo/secho, print, sys.exit, SystemExit, sys.stdout/stderr writes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("click.echo", "click.secho", "print", "sys.exit", "SystemExit", "exit") or (
                name.startswith(("sys.stdout.", "sys.stderr."))
            ):
                yield node
        elif isinstance(node, ast.Raise) and node.exc is not None and "SystemExit" in ast.unparse(node.exc):
            yield ast.Call(func=ast.Name("SystemExit"), args=[], keywords=[], lineno=node.lineno)


@pytest.mark.parametrize("rel", CLICK_MODULES)
def test_the_click_modules_neither_print_nor_exit(rel: str) -> None:
    tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
    assert [f"{rel}:{c.lineno}: {ast.unparse(c.func)}" for c in _printing_calls(tree)] == []


def _outermost_function(tree: ast.Module, line: int) -> str:
    """The module-level function (or class) that holds `line`."""
    return next((n.name for n in tree.body if hasattr(n, "name") and n.lineno <= line <= (n.end_lineno or 0)), "")


def test_no_command_function_prints_but_the_streaming_ones() -> None:
    found = []
    for module in command_modules():
        path = Path(str(module.__file__))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _printing_calls(tree):
            where = (path.name, _outermost_function(tree, call.lineno))
            if where not in STREAMING:
                found.append(f"{path.name}:{call.lineno}: {ast.unparse(call.func)} in {where[1]}")
    assert found == []


SHARED = {"--format", "--fail-on", "--select", "--ignore", "--baseline", "--update-baseline", "--changed-only"}
SHARED |= {"--lexical", "--output", "--host", "--project", "--since"}
# The same name for another option: `serve --project` defaults to the manifest's project, and the ledger's
# `--since` filters actions by creation time, not recorded sessions.
OTHER_MEANINGS = {("cli.py", "--project"), ("commands/ledger_cli.py", "--since")}


def test_shared_options_are_declared_only_in_the_options_module() -> None:
    spelled = []
    for rel in CLICK_MODULES:
        for node in ast.walk(ast.parse((SRC / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option":
                names = {a.value for a in node.args if isinstance(a, ast.Constant)}
                spelled += [(rel, name) for name in sorted(names & SHARED) if (rel, name) not in OTHER_MEANINGS]
    assert spelled == []


@click.group(cls=QuiverGroup)
def _demo() -> None:
    pass


@_demo.command("show")
@click.option("--fail", is_flag=True)
@click.option("--output", type=click.Path(path_type=Path), default=None)
def _show(fail: bool, output: Path | None) -> int:
    if fail:
        error = InputErrors((UsageError("first", hint="h"), UsageError("second")))
        return render(failed(("warning: before",), error))
    return render(Outcome("report\n", ("before",), ("after",), 3, output=output))


def test_render_prints_messages_report_notes_in_order_and_exits_with_the_code(tmp_path: Path) -> None:
    result = CliRunner().invoke(_demo, ["show"])
    assert (result.exit_code, result.stdout, result.stderr) == (3, "report\n", "before\nafter\n")
    assert result.output == "before\nreport\nafter\n"
    written = tmp_path / "r.txt"
    result = CliRunner().invoke(_demo, ["show", "--output", str(written)])
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", "before\nafter\n")
    assert written.read_text(encoding="utf-8") == "report\n"


def test_a_failure_after_messages_prints_them_then_the_error_as_the_funnel_does() -> None:
    result = CliRunner().invoke(_demo, ["show", "--fail"])
    assert result.exit_code == 2
    assert result.stderr == "warning: before\nerror: first (h)\nerror: second\n"


def test_start_up_imports_no_command_module_it_does_not_run() -> None:
    """Importing the group (what every `quiver` run does first) loads none of the lazily registered command
    modules, nor the modules the other commands import when they run."""
    code = "import sys, quiver.cli; print(sorted(m for m in sys.modules if m.startswith('quiver.commands.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for module in ("usage_cli", "ledger_cli", "lint", "compile", "diff"):
        assert f"'quiver.commands.{module}'" not in out, out
