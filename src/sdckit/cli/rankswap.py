"""``sdckit rankswap``: swap each variable's values between records close in rank (Moore 1996)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import (
    IdOption,
    InputFile,
    NaValuesOption,
    QuietOption,
    SeedOption,
    WeightColumnOption,
    check_not_passthrough,
    check_outputs,
    column_roles,
    parse_list,
    progress_bar,
    read_input,
    refuse_suspect_columns,
    refuse_text_in_numbers,
    write_mask_result,
)
from sdckit.microdata.rankswap import rank_swap
from sdckit.schema import Kind, Schema


def rankswap_command(
    input: InputFile,
    output: Annotated[Path, typer.Option("--output", "-o", help="Masked output file.")],
    p: Annotated[
        float,
        typer.Option(
            "--p", help="Largest rank distance of a swap, in PERCENT of the records (5 = 5 %)."
        ),
    ] = 5.0,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns", help="Comma-separated numeric or ordinal columns (default: all of them)."
        ),
    ] = None,
    ids: IdOption = None,
    weight_column: WeightColumnOption = None,
    seed: SeedOption = None,
    diagnostics: Annotated[
        Path | None, typer.Option("--diagnostics", help="Also write per-record rank shifts here.")
    ] = None,
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Rank swapping: values move at most p percent of the records in rank."""
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    cols = parse_list(columns)
    roles = column_roles(data, ids=ids, weights=weight_column)
    check_not_passthrough(data, cols, roles, "--columns")
    refuse_text_in_numbers(
        data, cols or [c for c in data.columns if c not in roles], hint=", or leave it out"
    )
    schema = Schema.infer(data, roles=roles)
    if cols is None:
        rankable = (Kind.NUMERIC, Kind.ORDINAL)
        defaults = [c for c in schema.maskable() if schema[c].kind in rankable]
        refuse_suspect_columns(
            data,
            defaults,
            hint="Say what they are: --id or --weight-column to pass them through, or "
            "--columns to name the columns to swap.",
        )
    with progress_bar("rank swapping (variables)", quiet=quiet) as callback:
        result = rank_swap(
            data,
            columns=cols,
            window_percent=p,
            schema=schema,
            random_state=seed,
            progress=callback,
        )
    write_mask_result(result, output, diagnostics, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit rankswap`` to the command line."""
    app.command("rankswap")(rankswap_command)
