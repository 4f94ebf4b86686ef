"""``sdckit rankswap``: swap each variable's values between records close in rank (Moore 1996)."""

from __future__ import annotations

from typing import Annotated

import typer

from sdckit.cli._common import (
    InputFile,
    MaskedOutput,
    MaskingRunOptions,
    PassThroughOptions,
    mask_and_write,
    masking_schema,
    parse_list,
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
    run: MaskingRunOptions = MaskingRunOptions(),
) -> None:
    """Rank swapping: values move at most p percent of the records in rank."""
    data = run.read(input, output)
    cols = parse_list(columns)
    roles = pass_through.roles(data)
    schema = masking_schema(data, cols, roles, kinds=[Kind.NUMERIC, Kind.ORDINAL], what="swap.")
    mask_and_write(
        "rank swapping (variables)",
        rank_swap,
        data,
        output,
        run.diagnostics,
        quiet=run.quiet,
        columns=cols,
        window_percent=p,
        schema=schema,
        random_state=run.seed,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit rankswap`` to the command line."""
    app.command("rankswap")(rankswap_command)
