"""Entry point of the ``sdckit`` command: discovers the command groups and runs them.

Errors sdckit raises on purpose are printed as one readable line (exit code
2); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer
from rich.markup import escape

import sdckit
import sdckit.cli
from sdckit.cli._common import err_console
from sdckit.errors import SDCError

app = typer.Typer(
    name="sdckit",
    help="Statistical disclosure control: mask microdata, protect tables, serve safe analyses, assess risk.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sdckit {sdckit.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Statistical disclosure control: mask microdata, protect tables, serve safe analyses, assess risk."""


def _register_groups() -> None:
    for info in sorted(pkgutil.iter_modules(sdckit.cli.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "main":
            continue
        module = importlib.import_module(f"sdckit.cli.{info.name}")
        module.register(app)


_register_groups()


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        app(args=args, prog_name="sdckit", standalone_mode=False)
    except SDCError as exc:
        if debug:
            raise
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 1
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            return exc.exit_code
        if debug:
            raise
        err_console.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
            "(run with --debug for the traceback)",
            highlight=False,
            soft_wrap=True,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
