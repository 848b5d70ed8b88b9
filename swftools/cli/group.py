"""The click classes behind every ``swftools`` command: one error style, whole summaries and one
argument metavar style (issue 27).

* click's own usage errors print ``swftools: error: ...`` (exit 2), as the commands' do
  (``swftools.cli.common.fail``), instead of click's ``Usage: ...`` / ``Error: ...`` block;
* a group lists each command's whole first docstring line, never cut with ``...``;
* a command's usage line writes arguments as ``SRC``, ``[OUT]``, ``PATH...`` (typer writes a
  required one as ``{SRC}``).
"""

from __future__ import annotations

import errno
import sys
from typing import Any

import re

import typer
from typer._click import exceptions as click  # typer 0.28 runs on its own copy of click
from typer.exceptions import Abort
from typer.core import TyperCommand, TyperGroup

EXIT_USAGE = 2  # == swftools.cli.common.EXIT_USAGE (common imports the library's errors)
_BRACED = re.compile(r"^\{([^{}]*)\}")


def error_message(exc: click.ClickException) -> str:
    """``swftools: error: ...`` for a click exception, naming the command's help for a usage
    error."""
    message = f"swftools: error: {exc.format_message()}"
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message = message.rstrip(".") + f" (see '{ctx.command_path} --help')"
    return message


class Command(TyperCommand):
    """A command whose usage line writes required arguments bare (``SRC``, not ``{SRC}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:  # noqa: D102 (click API)
        return [_BRACED.sub(r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


class Group(TyperGroup):
    """A command group with whole summaries; as the top level, it renders click's errors."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """click's command list with each summary whole (wrapped, not cut with ``...``)."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        """click's ``main``, with its usage errors as ``swftools: error: ...`` (exit 2)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.NoArgsIsHelpError as exc:  # a bare group: its help
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            typer.echo(error_message(exc), err=True)
            sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
        except Abort:
            typer.echo("swftools: error: aborted", err=True)
            sys.exit(1)
        except OSError as exc:  # the reader of our output went away, as click's main handles it
            if exc.errno != errno.EPIPE:
                raise
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class Typer(typer.Typer):
    """``typer.Typer`` whose groups are :class:`Group` and whose commands are :class:`Command`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls", Group)
        super().__init__(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 (typer API)
        kwargs.setdefault("cls", Command)
        return super().command(*args, **kwargs)
