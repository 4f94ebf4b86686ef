"""Parquet directories on Dask, for the commands that accept them (rwn, tables, risk).

A command given a directory (or a glob) of Parquet files runs the
``sdckit.distributed`` version of its work, on a local cluster
(``--workers``, ``--memory-limit``) or on an existing one (``--scheduler
ADDRESS`` or ``$DASK_SCHEDULER_ADDRESS``); the dashboard address is printed
and a progress bar follows the scheduler's task counts.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer

from sdckit.cli._common import err_console, progress_bar
from sdckit.errors import DataError, ParameterError

_FOR_DIRECTORIES = "Parquet directory input: "

#: The input argument of a command that also accepts a set of Parquet files.
MicrodataOrParquetDir = Annotated[
    Path,
    typer.Argument(
        help="Microdata file (.csv or .parquet), or a directory (or glob) of Parquet files."
    ),
]


@dataclass(frozen=True)
class ClusterOptions:
    """Where a Parquet directory is processed: an existing Dask scheduler, or a local cluster."""

    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help=_FOR_DIRECTORIES + "address of an existing Dask scheduler (default: "
            "$DASK_SCHEDULER_ADDRESS, else a local cluster).",
        ),
    ] = None
    workers: Annotated[
        int, typer.Option("--workers", help=_FOR_DIRECTORIES + "workers of the local cluster.")
    ] = 2
    memory_limit: Annotated[
        str, typer.Option("--memory-limit", help=_FOR_DIRECTORIES + "memory limit per worker.")
    ] = "4GB"
    threads: Annotated[
        int, typer.Option("--threads", help=_FOR_DIRECTORIES + "threads per local worker.")
    ] = 1
    processes: Annotated[
        bool,
        typer.Option(
            "--processes/--no-processes",
            help=_FOR_DIRECTORIES + "local workers as processes (or as threads).",
        ),
    ] = True

    def refuse_for_one_file(self, path: Path) -> None:
        """Refuse cluster options given for a single input file (they would be ignored)."""
        if self != ClusterOptions():
            raise ParameterError(
                f"--scheduler, --workers, --memory-limit, --threads and --processes apply to a "
                f"directory of Parquet files; {str(path)!r} is one file, read on this machine"
            )

    def check_local(self) -> None:
        """Refuse a local cluster shape that cannot be started, naming the option (before any work)."""
        from dask.utils import parse_bytes

        for option, value in (("--workers", self.workers), ("--threads", self.threads)):
            if value < 1:
                raise ParameterError(f"{option} must be a whole number >= 1, got {value}")
        try:
            parse_bytes(self.memory_limit)
        except (ValueError, TypeError):
            raise ParameterError(
                f"--memory-limit must be an amount of memory such as 4GB or 500MB, got "
                f"{self.memory_limit!r}"
            ) from None


def distributed_lib() -> ModuleType:
    """``sdckit.distributed``, imported when a command runs (Dask is an optional extra)."""
    try:
        import sdckit.distributed as lib
    except ImportError as exc:
        raise ParameterError(
            f"a directory of Parquet files is processed with Dask ({exc}); install "
            "sdckit[distributed]"
        ) from exc
    return lib


def is_partitioned(path: Path) -> bool:
    """Whether ``path`` names a directory of files, or a glob, rather than one file."""
    if path.is_dir():
        return True
    return not path.exists() and any(ch in str(path) for ch in "*?[")


def check_output_directory(output: Path) -> None:
    """Before any work: a directory output must not exist, and its parent must."""
    if output.exists():
        raise ParameterError(
            f"output {str(output)!r} exists; sdckit replaces no directory: remove it or name "
            "another"
        )
    if not output.resolve().parent.is_dir():
        raise DataError(f"output directory {str(output.parent)!r} does not exist")


def seed_or_random(seed: int | None) -> int:
    """The ``--seed`` given, else a fresh random one (as a single file's run, not repeatable).

    The distributed functions derive every partition's stream from one whole
    seed; without ``--seed`` it is drawn from the operating system and not
    shown (the streams of a release are the producer's secret).
    """
    if seed is None:
        return secrets.randbits(63)
    if seed < 0:
        raise ParameterError(f"--seed must be a whole number >= 0, got {seed}")
    return seed


@contextmanager
def on_cluster(
    cluster: ClusterOptions, description: str, *, quiet: bool
) -> Iterator[Callable[[int, int], None] | None]:
    """A Dask client for a command; yields the progress callback of its bar (None when quiet)."""
    cluster.check_local()
    lib = distributed_lib()
    address = lib.scheduler_address(cluster.scheduler)
    with lib.dask_client(
        scheduler=address,
        n_workers=cluster.workers,
        memory_limit=cluster.memory_limit,
        threads_per_worker=cluster.threads,
        processes=cluster.processes,
        worker_logs=False,
    ) as client:
        if not quiet:
            where = (
                f"scheduler {address}"
                if address
                else f"local cluster of {cluster.workers} worker(s), {cluster.memory_limit} each"
            )
            err_console.print(
                f"Dask {where}; dashboard: {client.dashboard_link}",
                highlight=False,
                soft_wrap=True,
            )
        with progress_bar(description, quiet=quiet) as callback:
            yield callback
