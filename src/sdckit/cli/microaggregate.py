"""``sdckit microaggregate``: MDAV or individual-ranking microaggregation."""

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
from sdckit.microdata.microaggregation import microaggregate


def microaggregate_command(
    input: Path = typer.Argument(..., help="Microdata file (.csv or .parquet)."),
    output: Path = typer.Option(..., "--output", "-o", help="Masked output file."),
    k: int = typer.Option(3, "--k", help="Minimum group size (groups have k..2k-1 records)."),
    method: str = typer.Option(
        "mdav", "--method", help="mdav (k-anonymous groups) or individual-ranking."
    ),
    columns: str | None = typer.Option(
        None, "--columns", help="Comma-separated columns to aggregate (default: numeric ones)."
    ),
    categorical: str = typer.Option(
        "error",
        "--categorical",
        help="What a categorical column in --columns gets: error, or mode (the group's mode).",
    ),
    scale: str = typer.Option("standard", "--scale", help="standard, minmax or none."),
    weight: list[str] | None = typer.Option(
        None, "--weight", help="Variable weight in distances, COL=W (repeatable)."
    ),
    sample_weights: str | None = typer.Option(
        None, "--sample-weights", help="Survey-weight column: weighted group means."
    ),
    block_size: int = typer.Option(
        10_000,
        "--block-size",
        help="Exact MDAV up to this many records; larger data in blocks (0 = never block).",
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Accepted for symmetry; MDAV is deterministic."
    ),
    diagnostics: Path | None = typer.Option(
        None, "--diagnostics", help="Also write per-record groups here."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or summary."),
) -> None:
    """Microaggregate: replace values by the means of groups of at least k similar records."""
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input)
    if scale not in ("standard", "minmax", "none"):
        raise ParameterError(f"--scale must be standard, minmax or none, got {scale!r}")
    if block_size < 0:
        raise ParameterError(f"--block-size must be >= 0, got {block_size}")
    with progress_bar("microaggregation (records)", quiet=quiet) as callback:
        result = microaggregate(
            data,
            parse_list(columns),
            k,
            method=method.replace("-", "_"),
            categorical=categorical,
            scale=None if scale == "none" else scale,
            weights=parse_assignments(weight, "--weight") or None,
            sample_weights=sample_weights,
            block_size=block_size or None,
            random_state=seed,
            progress=callback,
        )
    write_mask_result(result, output, diagnostics, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit microaggregate`` to the command line."""
    app.command("microaggregate")(microaggregate_command)
