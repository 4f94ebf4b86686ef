"""``sdckit risk``: re-identification risk of categorical key variables, record by record."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import (
    HouseholdOption,
    InputFile,
    KeysOption,
    MissingOption,
    NaValuesOption,
    QuietOption,
    SamplingWeightOption,
    check_outputs,
    console,
    parse_list,
    read_input,
    write_output,
)
from sdckit.errors import ParameterError


def risk_command(
    input: InputFile,
    keys: KeysOption,
    weight: SamplingWeightOption = None,
    household: HouseholdOption = None,
    missing: MissingOption = "category",
    sensitive: Annotated[
        str | None,
        typer.Option("--sensitive", help="Comma-separated sensitive variables (l-diversity...)."),
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="Risk for f_k > 2: 'approx' (sdcMicro's) or 'exact'.")
    ] = "approx",
    explain: Annotated[
        int,
        typer.Option("--explain", help="Explain, in words, this many of the riskiest records."),
    ] = 3,
    suda_size: Annotated[
        int | None,
        typer.Option(
            "--suda",
            help="Also find the minimal sample uniques of at most this many keys and print the "
            "SUDA scores (0: every size).",
        ),
    ] = None,
    sampling_fraction: Annotated[
        float,
        typer.Option("--sampling-fraction", help="Share of the population sampled (DIS-SUDA)."),
    ] = 0.01,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the per-record measures (row, f_k, F_k, risk, household risk, "
            "explanation, which names the record's key values; no other column) to this CSV or Parquet file.",
        ),
    ] = None,
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Frequencies, k-anonymity, individual, global and household risk of the key variables."""
    from sdckit.assess import individual_risk, key_risk

    if explain < 0:
        raise ParameterError(f"--explain must be >= 0, got {explain}")
    check_outputs(output, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    key_list = parse_list(keys) or []
    frequencies = key_risk(
        data, key_list, sensitive=parse_list(sensitive), missing=missing, weight=weight
    )
    risk = individual_risk(
        data, key_list, weight=weight, household=household, missing=missing, method=method
    )
    console.print(risk.summary(), highlight=False)
    console.print(frequencies.summary(), highlight=False)
    for diversity in frequencies.diversities.values():
        console.print(diversity.summary(), highlight=False)
    riskiest = risk.risk.to_numpy().argsort(kind="stable")[::-1][:explain]
    for position in riskiest:
        console.print("- " + risk.explain(int(position)), highlight=False)
    found = None
    if suda_size is not None:
        from sdckit.assess import suda

        found = suda(
            data, key_list, max_size=suda_size or None, sampling_fraction=sampling_fraction
        )
        console.print(found.summary(), highlight=False)
    if output is not None:
        table = risk.table()
        table["explanation"] = risk.explanations()
        if found is not None:
            table["suda_score"] = found.scores.to_numpy()
            table["dis_suda_score"] = found.dis_scores.to_numpy()
        write_output(table, output)


def register(app: typer.Typer) -> None:
    """Add ``sdckit risk`` to the command line."""
    app.command("risk")(risk_command)
