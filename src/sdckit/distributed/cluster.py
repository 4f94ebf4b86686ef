"""Where the work runs: a local Dask cluster by default, any Dask cluster by address.

The library functions of :mod:`sdckit.distributed` compute on Dask's current
scheduler; :func:`dask_client` sets one up for the duration of a ``with``
block: a :class:`distributed.LocalCluster` on this machine (processes with a
memory limit each), or an existing cluster's scheduler given by address or by
the ``DASK_SCHEDULER_ADDRESS`` environment variable (Dask's own convention).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from distributed import Client, LocalCluster
from sdckit.errors import ParameterError

__all__ = ["SCHEDULER_ENV", "dask_client", "scheduler_address"]

#: Environment variable naming an existing scheduler (Dask's convention).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The scheduler to connect to: ``scheduler``, else ``$DASK_SCHEDULER_ADDRESS``, else None.

    Parameters
    ----------
    scheduler : str, optional
        An address such as ``tcp://10.0.0.5:8786``.

    Returns
    -------
    str or None
        None means: start a local cluster.
    """
    if scheduler:
        return scheduler
    return os.environ.get(SCHEDULER_ENV) or None


@contextmanager
def dask_client(
    *,
    scheduler: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    memory_limit: str | int = "4GB",
    processes: bool = True,
    dashboard_address: str | None = ":0",
    worker_logs: bool = True,
) -> Iterator[Client]:
    """A Dask client for a ``with`` block: an existing cluster, or a local one.

    Parameters
    ----------
    scheduler : str, optional
        Address of an existing scheduler; default ``$DASK_SCHEDULER_ADDRESS``,
        and a local cluster when neither is set.
    n_workers : int, default 2
        Workers of the local cluster.
    threads_per_worker : int, default 1
        Threads of each local worker.
    memory_limit : str or int, default "4GB"
        Memory limit of each local worker (Dask spills, then pauses, then
        restarts a worker that exceeds it).
    processes : bool, default True
        Local workers as processes (False: threads in this process).
    dashboard_address : str or None, default ":0"
        Where the local dashboard listens (":0": any free port; None: no
        dashboard).
    worker_logs : bool, default True
        Let the local workers log warnings and errors (a failed task is logged
        by its worker, then raised here); False keeps them silent, as the
        command line does, which prints the raised error in one line.

    Returns
    -------
    iterator of distributed.Client
        The client, the default scheduler inside the block;
        ``client.dashboard_link`` is the dashboard's address.
    """
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ParameterError(f"n_workers must be a whole number >= 1, got {n_workers!r}")
    address = scheduler_address(scheduler)
    if address is not None:
        with Client(address, set_as_default=True) as client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            memory_limit=memory_limit,
            processes=processes,
            dashboard_address=dashboard_address,
            silence_logs=logging.WARNING if worker_logs else logging.CRITICAL,
        ) as cluster,
        Client(cluster, set_as_default=True) as client,
    ):
        yield client
