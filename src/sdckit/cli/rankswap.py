"""``sdckit rankswap``: swap each variable's values between records close in rank (Moore 1996)."""

from __future__ import annotations

from pathlib import Path

import typer

from sdckit.cli._common import (
    check_outputs,
    parse_list,
    progress_bar,
    read_input,
    write_mask_result,
)
from sdckit.microdata.rankswap import rank_swap


def rankswap_command(
    input: Path = typer.Argument(..., help="Microdata file (.csv or .parquet)."),
    output: Path = typer.Option(..., "--output", "-o", help="Masked output file."),
    p: float = typer.Option(
        5.0,
        "--p",
        help="Largest rank distance of a swap, in PERCENT of the records (5 = 5 %).",
    ),
    columns: str | None = typer.Option(
        None,
        "--columns",
        help="Comma-separated numeric or ordinal columns (default: all of them).",
    ),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (same seed, same output)."),
    diagnostics: Path | None = typer.Option(
        None, "--diagnostics", help="Also write per-record rank shifts here."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or summary."),
) -> None:
    """Rank swapping: values move at most p percent of the records in rank."""
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input)
    with progress_bar("rank swapping (variables)", quiet=quiet) as callback:
        result = rank_swap(data, parse_list(columns), p=p, random_state=seed, progress=callback)
    write_mask_result(result, output, diagnostics, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit rankswap`` to the command line."""
    app.command("rankswap")(rankswap_command)
