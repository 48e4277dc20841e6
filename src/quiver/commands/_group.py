"""The one error funnel of the `quiver` command line: what each kind of failure prints, and its exit code.

A command's result is an `Outcome` (`quiver.commands.outcome`): the group exits with the code its command
returns. Expected errors (a user's mistake) print one `error:` line each and exit 2, click's usage errors too;
Ctrl-C exits 130 (128 + SIGINT, as shells report it), distinct from 1 (findings); a bug exits 3 with
the traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import click

from quiver import __version__
from quiver.commands.outcome import error_lines
from quiver.errors import QuiverError

INTERRUPTED = 130


class QuiverGroup(click.Group):
    """The `quiver` group. `lazy` maps the names of commands defined in other modules to functions that import
    and return them: a module is imported only when its command runs or help lists it, so start-up pays only
    for the command it runs."""

    def __init__(
        self, *args: Any, lazy: Mapping[str, Callable[[], click.Command]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and cmd_name not in self.commands:
            self.add_command(self._lazy[cmd_name](), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except QuiverError as exc:
            for line in error_lines(exc):
                click.echo(line, err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            ctx.exit(1)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # a bug, also one that escapes as a BaseException (an asyncio CancelledError)
            import traceback

            click.echo(f"internal error: quiver {__version__}, Python {sys.version.split()[0]}", err=True)
            click.echo("this is a bug in quiver; please report it with the traceback below", err=True)
            click.echo(traceback.format_exc(), err=True, nl=False)
            ctx.exit(3)

    def main(  # always exits, as click standalone mode does
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()  # `quiver` alone: the help text, not an error line
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else (prog_name or "quiver")
            _fail(f"{exc.format_message().rstrip('.')} (see `{where} --help`)", exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            _fail("interrupted", INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
