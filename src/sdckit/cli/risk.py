"""``sdckit risk``: re-identification risk of categorical key variables, record by record."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._cluster import (
    ClusterOptions,
    MicrodataOrParquetDir,
    distributed_lib,
    is_partitioned,
    on_cluster,
)
from sdckit.cli._common import (
    HouseholdOption,
    KeysOption,
    MissingOption,
    NaValuesOption,
    QuietOption,
    SamplingWeightOption,
    check_outputs,
    console,
    parse_list,
    read_input,
    with_option_groups,
    write_output,
)
from sdckit.errors import ParameterError


@with_option_groups
def risk_command(
    input: MicrodataOrParquetDir,
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
    cluster: ClusterOptions = ClusterOptions(),
    quiet: QuietOption = False,
) -> None:
    """Frequencies, k-anonymity, individual, global and household risk of the key variables.

    A directory (or glob) of Parquet files gets the key-risk figures (frequencies, sample
    uniques, k-anonymity, l-diversity) as map-reduce on Dask.
    """
    from sdckit.assess import individual_risk, key_risk

    if explain < 0:
        raise ParameterError(f"--explain must be >= 0, got {explain}")
    if is_partitioned(input):
        _key_risk_by_partitions(
            input,
            keys,
            sensitive,
            cluster,
            quiet,
            one_file_only={
                "--weight": weight,
                "--household": household,
                "--missing any": None if missing == "category" else missing,
                "--suda": suda_size,
                "--output": output,
                "--na-values": na_values,
            },
        )
        return
    cluster.refuse_for_one_file(input)
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


def _key_risk_by_partitions(
    input: Path,
    keys: str,
    sensitive: str | None,
    cluster: ClusterOptions,
    quiet: bool,
    *,
    one_file_only: dict[str, object],
) -> None:
    """``sdckit risk DIR/ --keys ...``: the key-risk figures as map-reduce on Dask."""
    given = [option for option, value in one_file_only.items() if value is not None]
    if given:
        raise ParameterError(
            f"{', '.join(given)}: not available for a directory of Parquet files, which gets "
            "the key-risk figures only (frequencies, sample uniques, k-anonymity, l-diversity)"
        )
    key_list = parse_list(keys)
    if not key_list:
        raise ParameterError("--keys: give at least one key variable")
    sensitive_list = parse_list(sensitive) or []
    if len(sensitive_list) > 1:
        raise ParameterError(
            "--sensitive: a directory of Parquet files is assessed for one sensitive variable "
            f"at a time, got {sensitive_list}"
        )
    with on_cluster(cluster, "counting key combinations", quiet=quiet) as callback:
        result = distributed_lib().key_risk_by_partition(
            input,
            key_list,
            sensitive=sensitive_list[0] if sensitive_list else None,
            progress=callback,
        )
    console.print(result.summary(), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sdckit risk`` to the command line."""
    app.command("risk")(risk_command)
