"""``sdckit swap``: mask a microdata file by a rho data swap (Kifer 2015, Definition 2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import (
    InputFile,
    NaValuesOption,
    PassThroughOptions,
    SeedOption,
    check_not_passthrough,
    check_outputs,
    parse_list,
    read_input,
    with_option_groups,
    write_mask_result,
)
from sdckit.errors import ParameterError
from sdckit.microdata.swap import swap


@with_option_groups
def swap_command(
    input: InputFile,
    output: Annotated[Path, typer.Option("--output", "-o", help="Swapped output file.")],
    swap_attribute: Annotated[
        str,
        typer.Option(
            "--swap-attribute",
            "-s",
            help="Comma-separated column(s) whose values paired records exchange.",
        ),
    ],
    rate: Annotated[
        float,
        typer.Option("--rate", help="Data swap rate rho in [0, 0.5): round(rho*N) random pairs."),
    ],
    strata: Annotated[
        str | None,
        typer.Option("--strata", help="Comma-separated key columns; swaps stay within equal keys."),
    ] = None,
    pass_through: PassThroughOptions = PassThroughOptions(),
    seed: SeedOption = None,
    diagnostics: Annotated[
        Path | None,
        typer.Option(
            "--diagnostics", help="Also write per-record diagnostics (swapped, partner, changed)."
        ),
    ] = None,
    na_values: NaValuesOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No summary.")] = False,
) -> None:
    """Swap the values of the swap attribute(s) between random pairs of records."""
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    attributes = parse_list(swap_attribute)
    if not attributes:
        raise ParameterError("--swap-attribute names no column")
    # Identifiers and weights pass through: swapping one would pair a record with another's.
    roles = pass_through.roles(data)
    check_not_passthrough(data, attributes, roles, "--swap-attribute")
    result = swap(data, columns=attributes, rate=rate, strata=parse_list(strata), random_state=seed)
    write_mask_result(result, output, diagnostics, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit swap`` to the command line."""
    app.command("swap")(swap_command)
