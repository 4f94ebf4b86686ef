"""The one chunked, threaded executor of neighbour searches, and the one ``n_jobs`` rule.

Every search in sdckit (RWN's neighbourhoods, the assessment's distances to
the closest record and its linkage intruder) runs block by block through
:func:`map_chunks`: memory stays bounded by a few blocks, never O(n^2), and
the blocks run on threads, since scikit-learn's trees and numpy's matrix
products release the GIL.

``n_jobs`` means the same everywhere (:func:`resolve_n_jobs`):

* ``None`` or ``-1``: one thread per core (``os.cpu_count()``);
* a positive int: that many threads (1 runs in the calling thread);
* anything else is refused with a :class:`~sdckit.errors.ParameterError`,
  ``True`` and ``False`` included: a flag is not a number of threads, and
  silently reading ``True`` as 1 (what RWN once did) or as "all cores"
  would both surprise someone.
"""

from __future__ import annotations

import numbers
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sdckit.errors import ParameterError

__all__ = ["map_chunks", "resolve_n_jobs"]

T = TypeVar("T")

F = TypeVar("F", bound=Callable[..., object])

# The chunk_size and n_jobs entries of a chunked search's Parameters section, as a
# top-level function's docstring indents them.
_CHUNKING = """chunk_size : int, default 8192
        Queries per block.
    n_jobs : None, -1 or positive int
        Threads (:func:`sdckit.neighbors.resolve_n_jobs`)."""


def chunk_doc(func: F) -> F:
    """Write a chunked search's ``chunk_size`` and ``n_jobs`` entries at its ``{{chunking}}`` line.

    The neighbour layer imports nothing of sdckit above :mod:`sdckit.errors`,
    so this is its own small form of :func:`sdckit._docs.shared_doc`.

    Parameters
    ----------
    func : callable
        A top-level function whose Parameters section holds the line ``    {{chunking}}``.

    Returns
    -------
    callable
        ``func``, its docstring completed.
    """
    func.__doc__ = (func.__doc__ or "").replace("{{chunking}}", _CHUNKING)
    return func


def resolve_n_jobs(n_jobs: object) -> int:
    """The number of threads ``n_jobs`` asks for.

    Parameters
    ----------
    n_jobs : None, -1 or positive int
        None and -1 mean one thread per core; a positive int is the number of
        threads. Booleans, 0, other negative numbers and non-integers are
        refused.

    Returns
    -------
    int
        At least 1.
    """
    if n_jobs is None:
        return os.cpu_count() or 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise ParameterError(
            f"n_jobs must be None, -1 or a positive int (the number of threads), got {n_jobs!r}"
        )
    jobs = int(n_jobs)
    if jobs == -1:
        return os.cpu_count() or 1
    if jobs < 1:
        raise ParameterError(
            f"n_jobs must be None, -1 or a positive int (the number of threads), got {jobs}"
        )
    return jobs


def map_chunks(
    work: Callable[[int, int], T],
    n: int,
    *,
    chunk_size: int,
    n_jobs: object = None,
) -> Iterator[T]:
    """Yield ``work(start, stop)`` for consecutive blocks of ``range(n)``, in order.

    Blocks of ``chunk_size`` items run on up to :func:`resolve_n_jobs`
    threads (never more threads than blocks; one block or one thread runs
    in the calling thread), with at most ``2 * threads`` blocks in flight, so
    memory stays bounded by that many results however large ``n`` is.

    Parameters
    ----------
    work : callable
        Called as ``work(start, stop)`` for each block; must be safe to run
        on several threads at once.
    n : int
        Number of items.
    chunk_size : int
        Items per block (at least 1).
    n_jobs : None, -1 or positive int
        Threads, as :func:`resolve_n_jobs` reads it.

    Returns
    -------
    iterator
        The blocks' results, in block order. The work is done as the
        iterator is consumed.
    """
    if (
        isinstance(chunk_size, bool)
        or not isinstance(chunk_size, numbers.Integral)
        or chunk_size < 1
    ):
        raise ParameterError(f"chunk_size must be a positive int, got {chunk_size!r}")
    jobs = resolve_n_jobs(n_jobs)
    bounds = [(start, min(start + int(chunk_size), n)) for start in range(0, n, int(chunk_size))]
    return _run(work, bounds, min(jobs, max(len(bounds), 1)))


def _run(work: Callable[[int, int], T], bounds: list[tuple[int, int]], jobs: int) -> Iterator[T]:
    if jobs == 1:
        for start, stop in bounds:
            yield work(start, stop)
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending: deque[Future[T]] = deque()
        blocks = iter(bounds)
        for start, stop in blocks:
            pending.append(pool.submit(work, start, stop))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            result = pending.popleft().result()
            following = next(blocks, None)
            if following is not None:
                pending.append(pool.submit(work, *following))
            yield result
