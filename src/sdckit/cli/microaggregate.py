"""``sdckit microaggregate``: MDAV or individual-ranking microaggregation."""

from __future__ import annotations

from typing import Annotated

import typer

from sdckit.cli._common import (
    DiagnosticsOption,
    DistanceWeightOption,
    InputFile,
    MaskedOutput,
    NaValuesOption,
    PassThroughOptions,
    QuietOption,
    ScaleOption,
    check_outputs,
    mask_and_write,
    masking_schema,
    parse_assignments,
    parse_list,
    read_input,
    renamed_option,
    scale_choice,
    with_option_groups,
)
from sdckit.errors import ParameterError
from sdckit.microdata.microaggregation import microaggregate
from sdckit.schema import Kind


@with_option_groups
def microaggregate_command(
    input: InputFile,
    output: MaskedOutput,
    group_size: Annotated[
        int,
        typer.Option("--group-size", help="Minimum group size k (groups have k..2k-1 records)."),
    ] = 3,
    k: Annotated[
        int | None, typer.Option("--k", hidden=True, help="Deprecated: --group-size.")
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="mdav (k-anonymous groups) or individual-ranking.")
    ] = "mdav",
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns", help="Comma-separated columns to aggregate (default: numeric ones)."
        ),
    ] = None,
    categorical: Annotated[
        str,
        typer.Option(
            "--categorical",
            help="What a categorical column in --columns gets: error, or mode (the group's mode).",
        ),
    ] = "error",
    scale: ScaleOption = "standard",
    weight: DistanceWeightOption = None,
    sample_weights: Annotated[
        str | None,
        typer.Option(
            "--sample-weights",
            help="Survey-weight column: weighted group means (default: the --weight-column, if one).",
        ),
    ] = None,
    pass_through: PassThroughOptions = PassThroughOptions(),
    block_size: Annotated[
        int,
        typer.Option(
            "--block-size",
            help="Exact MDAV up to this many records; larger data in blocks (0 = never block).",
        ),
    ] = 10_000,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Accepted for symmetry; MDAV is deterministic.")
    ] = None,
    diagnostics: DiagnosticsOption = None,
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Microaggregate: replace values by the means of groups of at least k similar records."""
    group_size = renamed_option(group_size, k, default=3, new_flag="--group-size", old_flag="--k")
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    if block_size < 0:
        raise ParameterError(f"--block-size must be >= 0, got {block_size}")
    cols = parse_list(columns)
    roles = pass_through.roles(data)
    if sample_weights is not None:
        if sample_weights not in data.columns:
            raise ParameterError(f"--sample-weights: unknown column {sample_weights!r}")
        if roles.get(sample_weights) == "id":
            raise ParameterError(f"--sample-weights: column {sample_weights!r} is also an --id")
        roles[sample_weights] = "weight"
    elif sum(r == "weight" for r in roles.values()) > 1:
        raise ParameterError(
            "several --weight-column columns: say which one weights the group means with "
            "--sample-weights (the others pass through unchanged)"
        )
    schema = masking_schema(
        data,
        cols,
        roles,
        kinds=[Kind.NUMERIC],
        what="average (codes are not numbers: leave them out).",
    )
    mask_and_write(
        "microaggregation (records)",
        microaggregate,
        data,
        output,
        diagnostics,
        quiet=quiet,
        columns=cols,
        group_size=group_size,
        method=method.replace("-", "_"),
        categorical=categorical,
        scale=scale_choice(scale),
        weights=parse_assignments(weight, "--weight") or None,
        sample_weights=sample_weights,
        schema=schema,
        block_size=block_size or None,
        random_state=seed,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit microaggregate`` to the command line."""
    app.command("microaggregate")(microaggregate_command)
