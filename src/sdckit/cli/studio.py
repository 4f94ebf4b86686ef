"""``sdckit studio`` (the steward's workbench in the browser) and ``sdckit recipe`` (its replay).

``sdckit recipe run`` replays a studio recipe; ``sdckit recipe step`` runs
any registered masking method by name with its parameters as JSON values
(the commands a recipe exports are made of it) and ``sdckit recipe release``
keeps the released columns.
"""

from __future__ import annotations

import json
import socket
import threading
import webbrowser
from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import (
    InputFile,
    MaskedOutput,
    QuietOption,
    SeedOption,
    check_outputs,
    err_console,
    write_output,
)
from sdckit.errors import DataError, ParameterError
from sdckit.io import read_table
from sdckit.microdata.base import MaskResult

recipe_app = typer.Typer(
    help="Replay a studio recipe, or run its steps one by one.", no_args_is_help=True
)

FingerprintOption = Annotated[
    str | None,
    typer.Option(
        "--fingerprint",
        help="Refuse the input unless its SHA-256 is this ('sha256:<hex>'), before any work.",
    ),
]


def parse_named(values: list[str] | None, option: str, *, json_values: bool = False) -> dict:
    """``NAME=VALUE`` words as a mapping (values read as JSON when ``json_values``)."""
    out: dict[str, Any] = {}
    for word in values or []:
        # A column name may hold '=', a kind or role never does; a JSON value may.
        name, sep, text = word.partition("=") if json_values else word.rpartition("=")
        if not sep or not name:
            raise ParameterError(f"{option}: expected NAME=VALUE, got {word!r}")
        if json_values:
            try:
                out[name] = json.loads(text)
            except json.JSONDecodeError:
                out[name] = text
        else:
            out[name] = text
    return out


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def studio_command(
    file: Annotated[
        Path | None, typer.Argument(help="Microdata file to open (.csv or .parquet).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port on 127.0.0.1 (default: a free one).")
    ] = None,
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", help="Folder of the exports (default: the current folder)."),
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL only; do not open a browser.")
    ] = False,
) -> None:
    """Open the steward's studio: a local web page to set roles, apply methods and export."""
    import uvicorn

    from sdckit.studio.app import Studio, create_app, remove_uploads

    folder = (output_dir or Path.cwd()).resolve()
    if folder.exists() and not folder.is_dir():
        raise DataError(f"--output-dir {str(folder)!r} is not a folder")
    if file is not None and not Path(file).is_file():
        raise DataError(f"cannot read {str(file)!r}: no such file")
    # a new folder of exports is made, as the docs' walk-through expects
    folder.mkdir(parents=True, exist_ok=True)
    studio = Studio(output_dir=folder)
    if file is not None:
        studio.open(studio.allow(Path(file)))
    host = "127.0.0.1"
    chosen = port if port is not None else _free_port(host)
    url = f"http://{host}:{chosen}/?token={studio.token}"
    typer.echo(f"sdckit studio at {url}")
    typer.echo("Keep this URL to yourself: the token in it opens your data. Ctrl-C stops.")
    if not no_browser:
        threading.Timer(1.0, lambda: webbrowser.open(url)).start()
    try:
        uvicorn.run(create_app(studio), host=host, port=chosen, log_level="warning")
    finally:
        remove_uploads(studio)


@recipe_app.command("run")
def recipe_run_command(
    recipe: Annotated[Path, typer.Argument(help="The recipe (.toml) the studio exported.")],
    input: InputFile,
    output: MaskedOutput,
    quiet: QuietOption = False,
) -> None:
    """Replay a recipe on its input file; the release is the studio's, byte for byte."""
    from sdckit.studio.recipe import check_fingerprint, load_recipe, run_recipe

    found = load_recipe(recipe)
    check_fingerprint(input, found.fingerprint)
    check_outputs(output, inputs=[input, recipe])
    released = run_recipe(found, input, output)
    if not quiet:
        err_console.print(
            f"replayed {len(found.steps)} step(s); wrote {len(released)} rows x "
            f"{released.shape[1]} columns to {output}"
        )


@recipe_app.command("step")
def recipe_step_command(
    method: Annotated[
        str, typer.Argument(help="A registered masking method (sdckit recipe methods).")
    ],
    input: InputFile,
    output: MaskedOutput,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help='NAME=VALUE, the value as JSON (5, 0.5, "mdav", ["a"]).'),
    ] = None,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="COLUMN=KIND for the schema (repeat).")
    ] = None,
    role: Annotated[
        list[str] | None, typer.Option("--role", help="COLUMN=ROLE for the schema (repeat).")
    ] = None,
    seed: SeedOption = None,
    fingerprint: FingerprintOption = None,
    quiet: QuietOption = False,
) -> None:
    """Apply one registered masking method by name (one step of a recipe)."""
    from sdckit.studio.recipe import check_fingerprint, check_params, replay_step

    if fingerprint is not None:
        check_fingerprint(input, fingerprint)
    check_outputs(output, inputs=[input])
    params = check_params(method, parse_named(param, "--param", json_values=True))
    kinds = parse_named(kind, "--kind")
    roles = parse_named(role, "--role")
    data = read_table(input)
    result: MaskResult = replay_step(data, method, params, seed=seed, kinds=kinds, roles=roles)
    write_output(result.data, output)
    if not quiet:
        err_console.print(result.summary(), markup=False)


@recipe_app.command("release")
def recipe_release_command(
    input: InputFile,
    output: MaskedOutput,
    column: Annotated[
        list[str], typer.Option("--column", help="A released column, in order (repeat).")
    ],
    fingerprint: FingerprintOption = None,
) -> None:
    """Write the released columns of a file (the last command of a recipe)."""
    from sdckit.studio.recipe import check_fingerprint, release_columns

    if fingerprint is not None:
        check_fingerprint(input, fingerprint)
    check_outputs(output, inputs=[input])
    write_output(release_columns(read_table(input), column), output)


@recipe_app.command("methods")
def recipe_methods_command() -> None:
    """List the registered masking methods a step can run."""
    from sdckit.microdata.base import available_maskers

    for name, description in available_maskers().items():
        typer.echo(f"{name:<22} {description}")


def register(app: typer.Typer) -> None:
    """Add ``studio`` and the ``recipe`` group to the app."""
    app.command("studio")(studio_command)
    app.add_typer(recipe_app, name="recipe")
