"""``sdckit rwn``: mask a microdata file by Randomization Within Neighborhoods."""

from __future__ import annotations

from pathlib import Path

import typer

from sdckit.cli._common import (
    check_outputs,
    parse_assignments,
    parse_list,
    progress_bar,
    read_input,
    write_mask_result,
)
from sdckit.errors import ParameterError
from sdckit.microdata.rwn import rwn
from sdckit.schema import Schema


def rwn_command(
    input: Path = typer.Argument(..., help="Microdata file (.csv or .parquet)."),
    output: Path = typer.Option(
        ..., "--output", "-o", help="Masked output file (.csv or .parquet)."
    ),
    k: int = typer.Option(
        5, "--k", help="Nearest other records in every neighbourhood (0 = radius only)."
    ),
    eps: float | None = typer.Option(
        None, "--eps", help="Neighbourhood radius in the scaled space."
    ),
    q: float = typer.Option(1.0, "--q", help="Probability that each cell is modified."),
    modprop: float | None = typer.Option(
        None, "--modprop", help="Share of whole records modified (seed 000)."
    ),
    weight: list[str] | None = typer.Option(
        None, "--weight", help="Variable weight for distances, COL=W (repeatable)."
    ),
    scale: str = typer.Option("minmax", "--scale", help="minmax, standard or none."),
    metric: str = typer.Option("euclidean", "--metric", help="euclidean, manhattan or chebyshev."),
    columns: str | None = typer.Option(
        None, "--columns", help="Comma-separated columns to mask (default: all)."
    ),
    exclude: str | None = typer.Option(
        None, "--exclude", help="Comma-separated columns passed through unchanged (e.g. ids)."
    ),
    categorical: str | None = typer.Option(
        None,
        "--categorical",
        help="Comma-separated columns of codes to treat as categories (one-hot in distances), "
        "e.g. numeric region or occupation codes.",
    ),
    keep_isolated: bool = typer.Option(
        False, "--keep-isolated", help="Keep original values where a neighbourhood is empty."
    ),
    impute: bool = typer.Option(
        False, "--impute", help="Compute distances on an imputed copy when values are missing."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (same seed, same output)."),
    diagnostics: Path | None = typer.Option(
        None, "--diagnostics", help="Also write per-record diagnostics here."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or summary."),
) -> None:
    """Mask microdata by Randomization Within Neighborhoods (Perry, Matloff & Tendick 2022)."""
    if scale not in ("minmax", "standard", "none"):
        raise ParameterError(f"--scale must be minmax, standard or none, got {scale!r}")
    # Fail before the work, not after it, on an output that cannot be written.
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input)
    cols = parse_list(columns)
    excluded = parse_list(exclude) or []
    if excluded:
        unknown = [c for c in excluded if c not in data.columns]
        if unknown:
            raise ParameterError(f"--exclude: unknown column(s) {unknown}")
        cols = [c for c in (cols or list(data.columns)) if c not in excluded]
    schema = None
    declared = parse_list(categorical) or []
    if declared:
        unknown = [c for c in declared if c not in data.columns]
        if unknown:
            raise ParameterError(f"--categorical: unknown column(s) {unknown}")
        scope = cols if cols is not None else list(data.columns)
        outside = [c for c in declared if c not in scope]
        if outside:
            raise ParameterError(
                f"--categorical: column(s) {outside} are not masked (excluded or outside --columns)"
            )
        schema = Schema.infer(data[scope], kinds=dict.fromkeys(declared, "categorical"))
    with progress_bar("RWN", quiet=quiet) as callback:
        result = rwn(
            data,
            k=k,
            eps=eps,
            q=q,
            modprop=modprop,
            weights=parse_assignments(weight, "--weight") or None,
            scale=None if scale == "none" else scale,
            metric=metric,
            columns=cols,
            schema=schema,
            empty="keep" if keep_isolated else "missing",
            missing="impute" if impute else "error",
            random_state=seed,
            progress=callback,
        )
    write_mask_result(result, output, diagnostics, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit rwn`` to the command line."""
    app.command("rwn")(rwn_command)
