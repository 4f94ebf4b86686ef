"""``sdckit pram`` and ``sdckit recordswap``: PRAM of categorical variables, targeted record swapping."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from sdckit.cli._common import (
    HouseholdOption,
    InputFile,
    MaskedOutput,
    MaskingRunOptions,
    parse_list,
    with_option_groups,
    write_output,
)
from sdckit.cli.kanon import key_value_pairs
from sdckit.errors import DataError, ParameterError


def _read_matrix(path: str) -> pd.DataFrame:
    """A transition matrix from a CSV: a header of the values after, a row per value before."""
    try:
        return pd.read_csv(path, index_col=0, dtype=str)
    except FileNotFoundError:
        raise DataError(f"--matrix: no such file {path!r}") from None


def _long_transitions(result) -> pd.DataFrame:
    """Every matrix used, one row per (column, stratum, value before, value after)."""
    strata = result.params.get("strata") or []
    rows = []
    for column, by_stratum in result.transitions.items():
        for label, matrix in by_stratum.items():
            values = label if isinstance(label, tuple) else (label,)
            keys = dict(zip(strata, values, strict=False))
            for before in matrix.index:
                for after in matrix.columns:
                    rows.append(
                        {
                            "column": column,
                            **keys,
                            "before": before,
                            "after": after,
                            "probability": float(matrix.loc[before, after]),
                        }
                    )
    return pd.DataFrame(rows, columns=["column", *strata, "before", "after", "probability"])


@with_option_groups
def pram_command(
    input: InputFile,
    output: MaskedOutput,
    columns: Annotated[
        str, typer.Option("--columns", help="Comma-separated categorical variables to randomise.")
    ],
    strata: Annotated[
        str | None,
        typer.Option(
            "--strata",
            help="Comma-separated columns; values are only replaced by values the column takes "
            "in the same stratum.",
        ),
    ] = None,
    min_diagonal: Annotated[
        float | None,
        typer.Option(
            "--min-diagonal",
            help="Invariant PRAM: the smallest probability of keeping a value, in (0, 1) "
            "(default 0.8).",
        ),
    ] = None,
    matrix: Annotated[
        list[str] | None,
        typer.Option(
            "--matrix",
            help="COLUMN=FILE: a given transition matrix (CSV: header of the values after, one "
            "row per value before, rows summing to 1) instead of invariant PRAM. Repeat per column.",
        ),
    ] = None,
    transitions: Annotated[
        Path | None,
        typer.Option(
            "--transitions",
            help="Also write the matrices used (per column and stratum), for analysts' "
            "estimates; the invariant matrix reveals each stratum's frequency ratios.",
        ),
    ] = None,
    run: MaskingRunOptions = MaskingRunOptions(),
) -> None:
    """Randomise categorical variables by PRAM (invariant unless --matrix), within strata."""
    from sdckit.microdata import pram

    data = run.read(input, output, transitions)
    names = parse_list(columns)
    if not names:
        raise ParameterError("--columns names no column")
    given = {k: _read_matrix(v) for k, v in key_value_pairs(matrix, "--matrix").items()} or None
    result = pram(
        data,
        columns=names,
        strata=parse_list(strata),
        min_diagonal=min_diagonal,
        transition=given,
        random_state=run.seed,
    )
    run.write(result, output)
    if transitions is not None:
        write_output(_long_transitions(result), transitions)


@with_option_groups
def recordswap_command(
    input: InputFile,
    output: MaskedOutput,
    geography: Annotated[
        str,
        typer.Option(
            "--geography", help="Comma-separated area columns, coarsest first (region,district)."
        ),
    ],
    keys: Annotated[
        str | None,
        typer.Option("--keys", help="Comma-separated risk variables (counted within each area)."),
    ] = None,
    household: HouseholdOption = None,
    similarity: Annotated[
        str | None,
        typer.Option("--similarity", help="Comma-separated household variables a donor shares."),
    ] = None,
    swap_rate: Annotated[
        float, typer.Option("--swap-rate", help="Least share of households swapped.")
    ] = 0.05,
    k: Annotated[
        int, typer.Option("--k", help="At risk: fewer records than this share area and keys.")
    ] = 3,
    run: MaskingRunOptions = MaskingRunOptions(),
) -> None:
    """Swap the geography of households at risk with similar households in other areas."""
    from sdckit.microdata import record_swap

    data = run.read(input, output)
    areas = parse_list(geography)
    if not areas:
        raise ParameterError("--geography names no column")
    result = record_swap(
        data,
        columns=areas,
        keys=parse_list(keys),
        household=household,
        similarity=parse_list(similarity),
        swap_rate=swap_rate,
        k_anonymity=k,
        random_state=run.seed,
    )
    run.write(result, output)


def register(app: typer.Typer) -> None:
    """Add ``sdckit pram`` and ``sdckit recordswap`` to the command line."""
    app.command("pram")(pram_command)
    app.command("recordswap")(recordswap_command)
