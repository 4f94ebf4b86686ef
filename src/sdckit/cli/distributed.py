"""``sdckit distributed ...``: the work that outgrows one machine, on Dask.

Every command reads a directory (or glob) of Parquet files, one Dask
partition per file, and runs on a local cluster (``--workers``,
``--memory-limit``) or on an existing one (``--scheduler ADDRESS`` or
``$DASK_SCHEDULER_ADDRESS``); the dashboard address is printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer

from sdckit.cli._common import (
    check_outputs,
    err_console,
    parse_list,
    with_option_groups,
    write_output,
)
from sdckit.cli.tables import PtableDesign, parse_hierarchies
from sdckit.errors import ParameterError
from sdckit.tables import check_release

distributed_app = typer.Typer(
    help="Parquet directories on Dask: RWN by partitions, tables and key risk as map-reduce.",
    no_args_is_help=True,
)

_SCHEDULER_HELP = "Address of an existing Dask scheduler (default: $DASK_SCHEDULER_ADDRESS, else a local cluster)."


def _lib() -> ModuleType:
    """sdckit.distributed, imported when a command runs (Dask is an optional extra)."""
    try:
        import sdckit.distributed as lib
    except ImportError as exc:
        raise ParameterError(
            f"the distributed commands need Dask ({exc}); install sdckit[distributed]"
        ) from exc
    return lib


# The options every command shares.
PartsInput = Annotated[Path, typer.Argument(help="Directory (or glob) of Parquet files.")]
SchedulerOption = Annotated[str | None, typer.Option("--scheduler", help=_SCHEDULER_HELP)]
WorkersOption = Annotated[int, typer.Option("--workers", help="Workers of the local cluster.")]
MemoryOption = Annotated[str, typer.Option("--memory-limit", help="Memory limit per local worker.")]
ThreadsOption = Annotated[int, typer.Option("--threads", help="Threads per local worker.")]
ProcessesOption = Annotated[
    bool,
    typer.Option("--processes/--no-processes", help="Local workers as processes (or as threads)."),
]
RecordsWeightsOption = Annotated[str | None, typer.Option("--weights", help="Record weights.")]
DimsOption = Annotated[str, typer.Option("--dims", help="Comma-separated classifying variables.")]
_NEIGHBORS_HELP = (
    "Neighbour search inside every partition, as `sdckit rwn`: exact, hnsw, ivf, sample or "
    "pairs (pairs: the paper's Method 3.2)."
)
NeighborsOption = Annotated[str, typer.Option("--neighbors", help=_NEIGHBORS_HELP)]
SampleSizeOption = Annotated[int | None, typer.Option("--sample-size", help="m (sample, pairs).")]
RecallSampleOption = Annotated[int | None, typer.Option("--recall-sample", help="Recall check.")]


@dataclass(frozen=True)
class ClusterOptions:
    """Where a command runs: on an existing Dask scheduler, or on a local cluster of this shape."""

    scheduler: SchedulerOption = None
    workers: WorkersOption = 2
    memory_limit: MemoryOption = "4GB"
    threads: ThreadsOption = 1
    processes: ProcessesOption = True


@contextmanager
def _cluster(cluster: ClusterOptions, quiet: bool) -> Iterator[None]:
    lib = _lib()
    address = lib.scheduler_address(cluster.scheduler)
    with lib.dask_client(
        scheduler=address,
        n_workers=cluster.workers,
        memory_limit=cluster.memory_limit,
        threads_per_worker=cluster.threads,
        processes=cluster.processes,
    ) as client:
        if not quiet:
            where = (
                f"scheduler {address}"
                if address
                else f"local cluster of {cluster.workers} worker(s)"
            )
            err_console.print(f"Dask {where}; dashboard: {client.dashboard_link}", highlight=False)
        if quiet:
            yield
        else:
            with err_console.status("computing on Dask (progress on the dashboard) ..."):
                yield


@distributed_app.command("rwn")
@with_option_groups
def rwn_command(
    input: PartsInput,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output directory to create.")],
    partitions: Annotated[int, typer.Option("--partitions", help="u, the number of partitions.")],
    partitioning: Annotated[
        str, typer.Option("--partitioning", help="random or spatial.")
    ] = "random",
    k: Annotated[
        int, typer.Option("--k", help="Nearest other records in every neighbourhood.")
    ] = 5,
    eps: Annotated[
        float | None, typer.Option("--eps", help="Neighbourhood radius (scaled space).")
    ] = None,
    q: Annotated[float, typer.Option("--q", help="Probability that each cell is modified.")] = 1.0,
    columns: Annotated[
        str | None, typer.Option("--columns", help="Columns to mask (default: all).")
    ] = None,
    neighbors: NeighborsOption = "exact",
    sample_size: SampleSizeOption = None,
    recall_sample: RecallSampleOption = None,
    seed: Annotated[
        int, typer.Option("--seed", help="The one seed of every partition's stream.")
    ] = 0,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the output directory.")
    ] = False,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", help="No summary.")] = False,
) -> None:
    """RWN by partitions (Perry, Matloff & Tendick 2022, §11.3): each partition masked alone."""
    source = _lib().read_parquet(input)
    with _cluster(cluster, quiet):
        result = _lib().rwn_by_partition(
            source,
            n_partitions=partitions,
            partitioning=partitioning,
            output=output,
            overwrite=overwrite,
            k=k,
            eps=eps,
            q=q,
            columns=parse_list(columns),
            neighbors=neighbors,
            sample_size=sample_size,
            recall_sample=recall_sample,
            random_state=seed,
        )
    if not quiet:
        err_console.print(result.summary(), highlight=False)


@distributed_app.command("add-keys")
@with_option_groups
def add_keys_command(
    input: PartsInput,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output directory to create.")],
    seed: Annotated[int, typer.Option("--seed", help="The one seed of every partition's keys.")],
    kind: Annotated[str, typer.Option("--kind", help="integer or uniform.")] = "integer",
    column: Annotated[str, typer.Option("--column", help="Name of the key column.")] = "record_key",
    key_range: Annotated[
        int | None, typer.Option("--key-range", help="Integer keys 0..R-1.")
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", help="No messages.")] = False,
) -> None:
    """Add record keys partition by partition (drawn once, kept with the data)."""
    source = _lib().read_parquet(input)
    with _cluster(cluster, quiet):
        keyed = _lib().add_record_keys_by_partition(
            source, seed=seed, kind=kind, column=column, key_range=key_range
        )
        _lib().write_parquet(keyed, output, inputs=source.files)
    if not quiet:
        err_console.print(
            f"wrote {source.n_records} records with {column!r} to {output}/", highlight=False
        )


@distributed_app.command("tabulate")
@with_option_groups
def tabulate_command(
    input: PartsInput,
    output: Annotated[Path, typer.Option("--output", "-o", help="Table file (.csv or .parquet).")],
    dims: DimsOption,
    record_key: Annotated[
        str | None, typer.Option("--record-key", help="Record-key column.")
    ] = None,
    weights: RecordsWeightsOption = None,
    hierarchies: Annotated[
        Path | None, typer.Option("--hierarchies", help="As `tables tabulate`.")
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", help="No messages.")] = False,
) -> None:
    """Frequency table with margins as map-reduce; writes the TRUE counts (internal, the input to perturb)."""
    check_outputs(output, inputs=[])
    dim_list = parse_list(dims) or []
    with _cluster(cluster, quiet):
        table = _lib().tabulate_by_partition(
            input,
            dim_list,
            hierarchies=parse_hierarchies(hierarchies),
            weights=weights,
            record_key=record_key,
        )
    write_output(table, output)
    if not quiet:
        err_console.print(
            "this table holds the true counts: it is internal, not a release "
            "(perturb it before publishing)",
            highlight=False,
        )


@distributed_app.command("perturb")
@with_option_groups
def perturb_command(
    input: Annotated[
        Path, typer.Argument(help="Directory (or glob) of Parquet files with record keys.")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Protected table (.csv or .parquet).")
    ],
    dims: DimsOption,
    ptable: Annotated[
        Path | None, typer.Option("--ptable", help="Perturbation table file.")
    ] = None,
    design: PtableDesign = PtableDesign(),
    record_key: Annotated[
        str, typer.Option("--record-key", help="Record-key column.")
    ] = "record_key",
    threshold: Annotated[
        int | None, typer.Option("--threshold", help="Suppress counts below this.")
    ] = None,
    weights: RecordsWeightsOption = None,
    hierarchies: Annotated[
        Path | None, typer.Option("--hierarchies", help="As `tables perturb`.")
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", help="No summary.")] = False,
) -> None:
    """Cell key perturbation as map-reduce; the output holds the dimensions and perturbed values only."""
    check_outputs(output, inputs=[p for p in (ptable,) if p is not None])
    table = design.ptable(ptable)
    with _cluster(cluster, quiet):
        result = _lib().cell_key_perturb_by_partition(
            input,
            table,
            dims=parse_list(dims) or [],
            record_key=record_key,
            threshold=threshold,
            hierarchies=parse_hierarchies(hierarchies),
            weights=weights,
        )
    check_release(result.table, what="perturbed table")
    write_output(result.table, output)
    if not quiet:
        err_console.print(result.summary(), highlight=False)


@distributed_app.command("keys")
@with_option_groups
def keys_command(
    input: PartsInput,
    keys: Annotated[str, typer.Option("--keys", help="Comma-separated key variables.")],
    sensitive: Annotated[
        str | None, typer.Option("--sensitive", help="Sensitive variable.")
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", help="No cluster messages.")] = False,
) -> None:
    """Key risk as map-reduce: sample uniques, k-anonymity, l-diversity."""
    key_list = parse_list(keys)
    if not key_list:
        raise ParameterError("--keys: give at least one key variable")
    with _cluster(cluster, quiet):
        result = _lib().key_risk_by_partition(input, key_list, sensitive=sensitive)
    typer.echo(result.summary())


def register(app: typer.Typer) -> None:
    """Add ``sdckit distributed ...`` to the command line."""
    app.add_typer(distributed_app, name="distributed")
