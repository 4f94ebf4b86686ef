"""``sdckit rwn``: mask a microdata file by Randomization Within Neighborhoods."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from sdckit.cli import _cluster
from sdckit.cli._common import (
    CategoricalCodesOption,
    DistanceWeightOption,
    MaskedOutput,
    NaValuesOption,
    PassThroughOptions,
    QuietOption,
    ScaleOption,
    SeedOption,
    check_known,
    check_not_passthrough,
    check_outputs,
    err_console,
    parse_assignments,
    parse_list,
    progress_bar,
    read_input,
    refuse_suspect_columns,
    refuse_text_in_numbers,
    scale_choice,
    with_option_groups,
    write_mask_result,
    write_output,
)
from sdckit.errors import ParameterError
from sdckit.microdata.rwn import rwn
from sdckit.neighbors import NeighborBackend, make_strategy
from sdckit.neighbors.backends import EXACT_ALGORITHMS, check_backend_name
from sdckit.schema import Schema


def _is_temporal(series: pd.Series) -> bool:
    dtype = series.dtype
    return pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)


@with_option_groups
def rwn_command(
    input: _cluster.MicrodataOrParquetDir,
    output: MaskedOutput,
    k: Annotated[
        int,
        typer.Option("--k", help="Nearest other records in every neighbourhood (0 = radius only)."),
    ] = 5,
    eps: Annotated[
        float | None, typer.Option("--eps", help="Neighbourhood radius in the scaled space.")
    ] = None,
    q: Annotated[float, typer.Option("--q", help="Probability that each cell is modified.")] = 1.0,
    modprop: Annotated[
        float | None,
        typer.Option("--modprop", help="Share of whole records modified (Matloff & Tendick 2015)."),
    ] = None,
    weight: DistanceWeightOption = None,
    scale: ScaleOption = "minmax",
    metric: Annotated[
        str, typer.Option("--metric", help="euclidean, manhattan or chebyshev.")
    ] = "euclidean",
    columns: Annotated[
        str | None,
        typer.Option("--columns", help="Comma-separated columns to mask (default: all)."),
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option("--exclude", help="Comma-separated columns passed through unchanged."),
    ] = None,
    pass_through: PassThroughOptions = PassThroughOptions(),
    categorical: CategoricalCodesOption = None,
    balance_steps: Annotated[
        bool,
        typer.Option(
            "--balance-steps/--no-balance-steps",
            help="Shrink the distance weight of categories and coarse codes so that they are "
            "really masked (default); --no-balance-steps uses plain 0/1 dummies (docs/rwn.md).",
        ),
    ] = True,
    keep_isolated: Annotated[
        bool,
        typer.Option(
            "--keep-isolated", help="Keep original values where a neighbourhood is empty."
        ),
    ] = False,
    impute: Annotated[
        bool,
        typer.Option(
            "--impute", help="Compute distances on an imputed copy when values are missing."
        ),
    ] = False,
    neighbors: Annotated[
        str,
        typer.Option(
            "--neighbors",
            help="Neighbour search: exact (or kd_tree, ball_tree, brute), hnsw or ivf (faiss "
            "approximate indexes), sample "
            "(Method 1: neighbours from a random sample of --sample-size records) or pairs "
            "(Method 2: among a random sample of n*m/2 pairs); docs/rwn.md, 'Large files'.",
        ),
    ] = "exact",
    sample_size: Annotated[
        int | None,
        typer.Option(
            "--sample-size",
            help="m for --neighbors sample (default 10000; 400 with --fresh-sample) or pairs "
            "(default 64).",
        ),
    ] = None,
    fresh_sample: Annotated[
        bool,
        typer.Option(
            "--fresh-sample",
            help="With --neighbors sample: every record draws its own random sample of "
            "--sample-size records (Perry, Matloff & Tendick 2022, Section 11.1).",
        ),
    ] = False,
    recall_sample: Annotated[
        int | None,
        typer.Option(
            "--recall-sample",
            help="Records on which a non-exact search is checked against exact search "
            "(default 1000; 0 skips the check).",
        ),
    ] = None,
    seed: SeedOption = None,
    diagnostics: Annotated[
        Path | None,
        typer.Option(
            "--diagnostics",
            help="Also write per-record diagnostics here (per-partition ones with --partitions).",
        ),
    ] = None,
    na_values: NaValuesOption = None,
    partitions: Annotated[
        int | None,
        typer.Option(
            "--partitions",
            help="u: mask a directory (or glob) of Parquet files in u partitions, each alone, "
            "on Dask (Perry, Matloff & Tendick 2022, Section 11.3); -o names the output "
            "directory (docs/distributed.md).",
        ),
    ] = None,
    partitioning: Annotated[
        str,
        typer.Option(
            "--partitioning",
            help="With --partitions: random (the paper's equal random partitions) or spatial "
            "(blocks along the design, so that neighbours share a partition).",
        ),
    ] = "random",
    cluster: _cluster.ClusterOptions = _cluster.ClusterOptions(),
    quiet: QuietOption = False,
) -> None:
    """Mask microdata by Randomization Within Neighborhoods (Perry, Matloff & Tendick 2022).

    A directory (or glob) of Parquet files is masked by partitions on Dask (--partitions).
    """
    params: dict[str, Any] = {
        "k": k,
        "eps": eps,
        "q": q,
        "modprop": modprop,
        "weights": parse_assignments(weight, "--weight") or None,
        "scale": scale_choice(scale),
        "metric": metric,
        "balance_steps": balance_steps,
        "empty": "keep" if keep_isolated else "missing",
        "missing": "impute" if impute else "error",
        "recall_sample": recall_sample,
    }
    selection = (columns, exclude, pass_through, categorical)
    if partitions is not None or _cluster.is_partitioned(input):
        if fresh_sample:
            raise ParameterError(
                "--fresh-sample applies to one file; with --partitions every partition "
                "samples from its own records (--neighbors sample or pairs)"
            )
        if na_values is not None:
            raise ParameterError("--na-values applies to CSV input, not to Parquet files")
        params.update(neighbors=_strategy_name(neighbors, sample_size), sample_size=sample_size)
        _rwn_by_partitions(
            input,
            output,
            (partitions, partitioning),
            cluster,
            diagnostics,
            seed,
            quiet,
            selection=selection,
            params=params,
        )
        return
    cluster.refuse_for_one_file(input)
    if partitioning != "random":
        raise ParameterError("--partitioning applies with --partitions only")
    # Fail before the work, not after it, on an output that cannot be written.
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    cols, schema = _masked_columns(data, *selection)
    with progress_bar("RWN", quiet=quiet) as callback:
        search = _neighbor_search(neighbors, metric, sample_size, fresh_sample, seed, callback)
        result = rwn(
            data,
            columns=cols,
            schema=schema,
            neighbors=search,
            random_state=seed,
            progress=None if callback is None else _stage(callback, "RWN"),
            **params,
        )
    write_mask_result(result, output, diagnostics, quiet=quiet)


def _masked_columns(
    data: pd.DataFrame,
    columns: str | None,
    exclude: str | None,
    pass_through: PassThroughOptions,
    categorical: str | None,
) -> tuple[list[str], Schema]:
    """The columns to mask (``--columns`` less those passing through) and their schema.

    Refuses, naming the option: unknown columns, a column given two roles, text
    in a numeric column and, untold, columns that look like identifiers.
    """
    cols = parse_list(columns)
    roles = pass_through.roles(data, exclude=exclude)
    check_not_passthrough(
        data, cols, {c: r for c, r in roles.items() if r != "ignore"}, "--columns"
    )
    declared = parse_list(categorical) or []
    check_known(data, declared, "--categorical")
    told = cols is not None
    if cols is None:
        # Dates and durations pass through (as the library does by default).
        cols = [c for c in data.columns if c not in roles and not _is_temporal(data[c])]
    else:
        cols = [c for c in cols if c not in roles]
    outside = [c for c in declared if c not in cols]
    if outside:
        raise ParameterError(
            f"--categorical: column(s) {outside} are not masked (excluded or outside --columns)"
        )
    refuse_text_in_numbers(
        data,
        [c for c in cols if c not in declared],
        hint=", or declare the column categorical with --categorical",
    )
    if not told:
        refuse_suspect_columns(
            data,
            [c for c in cols if c not in declared],
            hint="Say what they are: --id or --weight-column to pass them through, "
            "--categorical for codes, --exclude to leave a column alone, or --columns to "
            "name the columns to mask.",
        )
    if not cols:
        raise ParameterError("no columns to mask: every column is an id, a weight or excluded")
    return cols, Schema.infer(data[cols], kinds=dict.fromkeys(declared, "categorical"))


def _rwn_by_partitions(
    input: Path,
    output: Path,
    partitioning_options: tuple[int | None, str],
    cluster: _cluster.ClusterOptions,
    diagnostics: Path | None,
    seed: int | None,
    quiet: bool,
    *,
    selection: tuple[str | None, str | None, PassThroughOptions, str | None],
    params: dict[str, Any],
) -> None:
    """``sdckit rwn DIR/ -o OUTDIR/ --partitions u``: RWN by partitions on Dask."""
    partitions, partitioning = partitioning_options
    cluster.check_local()
    if partitioning not in ("random", "spatial"):
        raise ParameterError(f"--partitioning must be random or spatial, got {partitioning!r}")
    _cluster.check_output_directory(output)
    check_outputs(diagnostics)
    lib = _cluster.distributed_lib()
    source = lib.read_parquet(input)
    if partitions is None:
        raise ParameterError(
            f"{str(input)!r} is a set of Parquet files: give --partitions u, the number of "
            "partitions masked each alone (docs/distributed.md)"
        )
    most = source.n_records // 2
    if not 1 <= partitions <= most:
        raise ParameterError(
            f"--partitions must be between 1 and {most} (every partition needs at least 2 of "
            f"the {source.n_records} records), got {partitions}"
        )
    cols, schema = _masked_columns(source.head(), *selection)
    chosen = _cluster.seed_or_random(seed)
    with _cluster.on_cluster(cluster, f"RWN by {partitions} partitions", quiet=quiet) as callback:
        result = lib.rwn_by_partition(
            source,
            n_partitions=partitions,
            partitioning=partitioning,
            output=output,
            columns=cols,
            schema=schema,
            random_state=chosen,
            progress=callback,
            **params,
        )
    if diagnostics is not None:
        write_output(result.partitions, diagnostics)
    if not quiet:
        err_console.print(result.summary(), highlight=False)


def _strategy_name(name: str, sample_size: int | None) -> str:
    """The neighbour search of every partition, by name, checked as for one file."""
    _check_sample_size(check_backend_name(name, "--neighbors"), sample_size)
    if name in EXACT_ALGORITHMS:
        raise ParameterError(
            f"--neighbors {name}: with --partitions give exact (the algorithm is chosen per "
            "partition), hnsw, ivf, sample or pairs"
        )
    return name


def _check_sample_size(name: str, sample_size: int | None) -> None:
    """Refuse a ``--sample-size`` below 2, or given to a search other than sample or pairs."""
    if sample_size is not None and sample_size < 2:
        raise ParameterError(f"--sample-size must be at least 2, got {sample_size}")
    if sample_size is not None and name not in ("sample", "pairs"):
        raise ParameterError(f"--sample-size applies to --neighbors sample or pairs, not {name}")


def _stage(callback: Callable[..., None], description: str) -> Callable[[int, int], None]:
    """The progress callback of one stage: the shared bar under this stage's name."""

    def update(done: int, total: int) -> None:
        callback(done, total, description)

    return update


def _neighbor_search(
    name: str,
    metric: str,
    sample_size: int | None,
    fresh: bool,
    seed: int | None,
    callback: Callable[..., None] | None,
) -> NeighborBackend:
    """The backend ``--neighbors`` names, with a progress bar for its index build."""
    algorithm = "auto"
    if check_backend_name(name, "--neighbors") in EXACT_ALGORITHMS:  # an exact search by name
        name, algorithm = "exact", name
    _check_sample_size(name, sample_size)
    if fresh and name != "sample":
        raise ParameterError("--fresh-sample applies to --neighbors sample only")
    stage = f"building the {name} index" if name in ("hnsw", "ivf") else "sampling pairs"
    return make_strategy(
        name,
        metric=metric,
        algorithm=algorithm,
        sample_size=sample_size,
        fresh_sample=fresh,
        random_state=seed,
        progress=None if callback is None else _stage(callback, stage),
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit rwn`` to the command line."""
    app.command("rwn")(rwn_command)
