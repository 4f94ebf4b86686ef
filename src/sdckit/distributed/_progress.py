"""Computing Dask collections with progress: the scheduler's own task counts, fed to a callback.

On a distributed cluster the progress comes from the scheduler
(``distributed.diagnostics.progressbar.ProgressBar``, the machinery of
``distributed.progress``): the number of tasks of the job finished out of
all of them, every 100 ms. Without a cluster (Dask's local schedulers), a
``dask.callbacks.Callback`` counts the finished tasks the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dask
from dask.callbacks import Callback

#: ``progress(done, total)``: tasks finished out of all tasks of the job.
ProgressCallback = Callable[[int, int], None]


def _current_client() -> Any:
    """The distributed client Dask would compute on now, or None (a local scheduler)."""
    from dask.base import get_scheduler

    from distributed import Client

    owner = getattr(get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


class _TaskCounter(Callback):
    """Finished tasks of a job on Dask's local schedulers."""

    def __init__(self, progress: ProgressCallback) -> None:
        super().__init__()
        self._progress = progress
        self._total = 0
        self._done = 0

    def _start_state(self, dsk: Any, state: Any) -> None:
        self._total = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
        self._progress(0, self._total)

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, id: Any) -> None:
        self._done += 1
        self._progress(self._done, max(self._total, self._done))


def _follow(futures: list[Any], progress: ProgressCallback) -> None:
    """Report the scheduler's progress of ``futures`` until they finish or fail."""
    from distributed.diagnostics.progressbar import TextProgressBar

    class _Bar(TextProgressBar):  # the console bar of distributed.progress, drawn by sdckit
        def _draw_bar(self, remaining: int, all: int, **kwargs: Any) -> None:
            progress(int(all) - int(remaining), int(all))

        def _draw_stop(self, **kwargs: Any) -> None:
            pass

    _Bar(futures, complete=True)


def compute(*collections: Any, progress: ProgressCallback | None = None) -> tuple[Any, ...]:
    """``dask.compute(*collections)`` (shared parts computed once), reporting progress.

    Parameters
    ----------
    *collections
        Dask collections (or lists of delayed objects).
    progress : callable, optional
        ``progress(done, total)`` with the job's finished and total task counts.

    Returns
    -------
    tuple
        One computed value per collection.
    """
    with warnings.catch_warnings():
        # delayed objects beside a dataframe expression: dask materialises both graphs
        # together, which is what is wanted here
        warnings.filterwarnings("ignore", message="Computing mixed collections")
        client = _current_client()
        if progress is None:
            return dask.compute(*collections)
        if client is None:
            with _TaskCounter(progress):
                return dask.compute(*collections)
        futures = client.compute(list(collections))
        try:
            _follow(futures, progress)
            return tuple(client.gather(futures))
        finally:
            for future in futures:
                if hasattr(future, "release"):
                    future.release()
