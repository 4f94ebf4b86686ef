"""``sdckit attack regression``: the regression attacks of Bleninger, Drechsler & Ronning (2011)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer

from sdckit.attacks import LibraryServer, NaiveServer, Target, attack
from sdckit.attacks.regression import DEFAULT_QUANTILES
from sdckit.attacks.report import attack_report
from sdckit.cli._common import (
    check_outputs,
    err_console,
    parse_list,
    parse_range,
    progress_bar,
    read_input,
    write_output,
)
from sdckit.errors import ParameterError, SchemaError

attack_app = typer.Typer(
    help="Attack a release as an intruder would, and report what is learned.",
    no_args_is_help=True,
)


def _library_target(
    data: pd.DataFrame, columns: list[str], metadata: Path | None, config: Path | None
) -> LibraryServer:
    from sdckit.server import AnalysisServer, Metadata, generate_secret

    if metadata is not None:
        meta = Metadata.from_yaml(metadata)
    else:
        categorical = [c for c in columns if not pd.api.types.is_numeric_dtype(data[c].dtype)]
        meta = Metadata.infer(data[columns], beta=40, categorical=categorical)
    server = AnalysisServer(
        data, meta, None if config is None else config, secret=generate_secret()
    )
    return LibraryServer(server)


@attack_app.command("regression")
def regression_command(
    data_path: Path = typer.Argument(
        ..., metavar="DATA", help="The confidential file (CSV or Parquet)."
    ),
    sensitive: str = typer.Option(..., "--sensitive", help="The numeric variable to recover."),
    background: str = typer.Option(
        ...,
        "--background",
        help="Comma-separated variables the intruder knows, the size variable first.",
    ),
    approx: float | None = typer.Option(
        None,
        "--approx",
        help="Approximate knowledge of the size variable: relative tolerance δ (0.025 = ±2.5%), "
        "or the additive γ with --approx-mode additive.",
    ),
    approx_mode: str = typer.Option(
        "multiplicative", "--approx-mode", help="multiplicative (±δ·x) or additive (±γ)."
    ),
    epsilon: float = typer.Option(1e-4, "--epsilon", help="ε of the artificial outlier (eq. 1)."),
    target: str = typer.Option(
        "naive",
        "--target",
        help="naive (unrestricted OLS), library (sdckit's AnalysisServer on DATA) or the URL of "
        "a running service (with --token).",
    ),
    token: str | None = typer.Option(None, "--token", help="API token for a service URL."),
    metadata: Path | None = typer.Option(
        None, "--metadata", help="Metadata YAML for --target library (default: inferred, beta 40)."
    ),
    config: Path | None = typer.Option(
        None, "--config", help="Rules config YAML for --target library (default rules)."
    ),
    quantiles: str = typer.Option(
        ",".join(f"{q:g}" for q in DEFAULT_QUANTILES),
        "--quantiles",
        help="Size quantiles defining the subsets; 0 is all records.",
    ),
    extra: str | None = typer.Option(
        None, "--extra", help="Comma-separated numeric background variables added as regressors."
    ),
    max_targets: int = typer.Option(
        200, "--max-targets", help="Targets per subset for a server (library or URL)."
    ),
    seed: int = typer.Option(0, "--seed", help="Draws the targets of a server attack."),
    output: Path | None = typer.Option(None, "-o", "--output", help="HTML report."),
    table: Path | None = typer.Option(None, "--table", help="The table as CSV or Parquet."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Artificial outliers and strategic dummies with every record as the target (Tables 1-3)."""
    check_outputs(table, inputs=[data_path], reports=[output])
    data = read_input(data_path, quiet=quiet)
    columns = parse_list(background) or []
    if not columns:
        raise ParameterError("--background must name at least one column")
    for c in [sensitive, *columns]:
        if c not in data.columns:
            option = "--sensitive" if c == sensitive else "--background"
            raise SchemaError(f"{option}: column {c!r} is not in {data_path}")
    if not pd.api.types.is_numeric_dtype(data[sensitive].dtype):
        raise SchemaError(
            f"--sensitive: column {sensitive!r} is not numeric; a regression attack recovers a number"
        )
    qs = parse_range(quantiles, "--quantiles")
    extras = parse_list(extra)
    chosen: Target
    if target == "naive":
        chosen = NaiveServer(data)
    elif target == "library":
        chosen = _library_target(data, [sensitive, *columns], metadata, config)
    elif target.startswith(("http://", "https://")):
        if not token:
            raise ParameterError("--token is needed to attack a service URL")
        from sdckit.attacks.client import ServiceTarget

        chosen = ServiceTarget(target, token)
    else:
        raise ParameterError(f"--target must be naive, library or a URL, got {target!r}")
    with progress_bar("attacking", quiet=quiet) as progress:
        result = attack(
            data,
            target=chosen,
            sensitive=sensitive,
            background=columns,
            approx=approx,
            approx_mode=approx_mode,
            epsilon=epsilon,
            quantiles=qs,
            extra=extras,
            max_targets=max_targets,
            random_state=seed,
            progress=progress,
        )
    typer.echo(result.summary())
    if table is not None:
        write_output(result.table, table)
    if output is not None:
        report = attack_report([result], path=output)
        err_console.print(f"wrote the report to {report.path}")


def register(app: typer.Typer) -> None:
    """Add ``sdckit attack ...`` to the command line."""
    app.add_typer(attack_app, name="attack")
