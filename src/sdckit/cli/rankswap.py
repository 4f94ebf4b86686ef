"""``sdckit rankswap``: swap each variable's values between records close in rank (Moore 1996)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import (
    InputFile,
    MaskedOutput,
    NaValuesOption,
    PassThroughOptions,
    QuietOption,
    SeedOption,
    check_outputs,
    mask_and_write,
    masking_schema,
    parse_list,
    read_input,
    with_option_groups,
)
from sdckit.microdata.rankswap import rank_swap
from sdckit.schema import Kind


@with_option_groups
def rankswap_command(
    input: InputFile,
    output: MaskedOutput,
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
    pass_through: PassThroughOptions = PassThroughOptions(),
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
    roles = pass_through.roles(data)
    schema = masking_schema(data, cols, roles, kinds=[Kind.NUMERIC, Kind.ORDINAL], what="swap.")
    mask_and_write(
        "rank swapping (variables)",
        rank_swap,
        data,
        output,
        diagnostics,
        quiet=quiet,
        columns=cols,
        window_percent=p,
        schema=schema,
        random_state=seed,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit rankswap`` to the command line."""
    app.command("rankswap")(rankswap_command)
