"""Timing shared by the benchmark scripts: the best of a few runs.

Imported as ``from _timing import ...``: a script run as
``python benchmarks/NAME.py`` has this folder first on its path. The best
(shortest) run is the least disturbed by other work on a shared machine;
each benchmark divides it by a baseline timed the same way in the same run.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_run(func: Callable[[], T], repeats: int = 3) -> tuple[float, T]:
    """The shortest of ``repeats`` calls of ``func`` in seconds, and what the last call returned.

    Garbage is collected before each call, outside the timed part.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - start)
    return best, value


def best_of(func: Callable[[], object], repeats: int = 3) -> float:
    """The shortest of ``repeats`` calls of ``func``, in seconds."""
    return best_run(func, repeats)[0]
