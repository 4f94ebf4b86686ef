"""Entry point of the ``sdckit`` command: discovers the command groups and runs them.

Errors sdckit raises on purpose are printed as one readable line (exit code
2); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Annotated

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
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Statistical disclosure control: mask microdata, protect tables, serve safe analyses, assess risk."""


def _register_groups() -> None:
    for info in sorted(pkgutil.iter_modules(sdckit.cli.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "main":
            continue
        module = importlib.import_module(f"sdckit.cli.{info.name}")
        module.register(app)


_register_groups()


def _usage_error_types() -> tuple[type[BaseException], ...]:
    """The exception types of command-line usage mistakes (unknown option, bad number...).

    Recent typer releases ship their own copy of click, whose exceptions derive
    from ``typer.exceptions.TyperException``, not from ``click.ClickException``;
    older ones use click itself. Both are usage errors.
    """
    types: list[type[BaseException]] = []
    try:
        from typer.exceptions import TyperException

        types.append(TyperException)
    except ImportError:  # pragma: no cover - typer < 0.16
        pass
    import click

    types.append(click.ClickException)
    return tuple(types)


def _show_usage_error(exc: BaseException) -> None:
    """Print a usage error the way typer does in standalone mode (usage line, hint, message)."""
    try:
        from typer import rich_utils

        rich_utils.rich_format_error(exc)  # type: ignore[arg-type]
    except Exception:  # pragma: no cover - a typer without rich formatting
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            err_console.print(f"error: {escape(str(exc))}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Exit codes: 0 success; 2 an error sdckit raised on purpose (bad input or
    parameters) or a usage mistake (unknown option or command, missing or
    malformed value); 1 an unexpected internal error (a bug: please report it).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    usage_errors = _usage_error_types()
    try:
        returned = app(args=args, prog_name="sdckit", standalone_mode=False)
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
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except usage_errors as exc:
        _show_usage_error(exc)
        return int(getattr(exc, "exit_code", 2))
    except Exception as exc:
        if debug:
            raise
        err_console.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
            "(run with --debug for the traceback)",
            highlight=False,
            soft_wrap=True,
        )
        return 1
    # In non-standalone mode typer returns the code of a typer.Exit raised by a command.
    if isinstance(returned, int) and not isinstance(returned, bool):
        return returned
    return 0


if __name__ == "__main__":
    sys.exit(main())
