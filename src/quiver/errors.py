"""Expected failures: each carries a location and a hint, and maps to exit code 2 in one place (cli.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    """A place in a file: 1-based line and column."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"


class QuiverError(Exception):
    """An expected failure: the user's input or invocation is wrong. Exit code 2."""

    exit_code = 2

    def __init__(self, message: str, *, position: Position | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint

    def one_line(self) -> str:
        where = f"{self.position}: " if self.position else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}{self.message}{hint}"

    def lines(self) -> list[str]:
        """What the CLI prints, one `error:` line each."""
        return [self.one_line()]


class InputError(QuiverError):
    """A file quiver reads is malformed, missing or too large."""


class ConfigError(QuiverError):
    """The project configuration is wrong."""


class UsageError(QuiverError):
    """The command line is wrong."""


class InputErrors(InputError):
    """Several input files are broken: each is named, none hides another."""

    def __init__(self, errors: tuple[QuiverError, ...]) -> None:
        super().__init__(errors[0].message, position=errors[0].position, hint=errors[0].hint)
        self.errors = errors

    def lines(self) -> list[str]:
        return [e.one_line() for e in self.errors]
