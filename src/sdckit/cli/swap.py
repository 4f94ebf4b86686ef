"""``sdckit swap``: mask a microdata file by a rho data swap (Kifer 2015, Definition 2.1)."""

from __future__ import annotations

from typing import Annotated

import typer

from sdckit.cli._common import (
    InputFile,
    MaskedOutput,
    MaskingRunOptions,
    PassThroughOptions,
    check_not_passthrough,
    parse_list,
    with_option_groups,
)
from sdckit.errors import ParameterError
from sdckit.microdata.swap import swap


@with_option_groups
def swap_command(
    input: InputFile,
    output: MaskedOutput,
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
    run: MaskingRunOptions = MaskingRunOptions(),
) -> None:
    """Swap the values of the swap attribute(s) between random pairs of records."""
    data = run.read(input, output)
    attributes = parse_list(swap_attribute)
    if not attributes:
        raise ParameterError("--swap-attribute names no column")
    # Identifiers and weights pass through: swapping one would pair a record with another's.
    roles = pass_through.roles(data)
    check_not_passthrough(data, attributes, roles, "--swap-attribute")
    result = swap(
        data, columns=attributes, rate=rate, strata=parse_list(strata), random_state=run.seed
    )
    run.write(result, output)


def register(app: typer.Typer) -> None:
    """Add ``sdckit swap`` to the command line."""
    app.command("swap")(swap_command)
