"""Textbook MDAV, the plain algorithm: the oracle of the tests and the baseline of the benchmark.

Domingo-Ferrer & Mateo-Sanz (2002), MDAV: every search is a full pass over
the records still ungrouped, with the per-variable squared distance of
:mod:`sdckit.microdata.microaggregation` (the same arithmetic, so the groups
of the fast implementation must be these, ties going to the smaller row).
Not part of the public API.
"""

from __future__ import annotations

import numpy as np

from sdckit.microdata.microaggregation import squared_distances

__all__: list[str] = []


def textbook_mdav(x: np.ndarray, k: int) -> np.ndarray:
    """Group numbers 0, 1, ... of the rows of ``x`` by plain MDAV with minimum group size ``k``."""
    labels = np.full(len(x), -1)
    remaining = np.arange(len(x))
    group = 0

    def take_around(r: int) -> None:
        # r and its k-1 nearest remaining records (ties: smaller row) become the next group
        nonlocal remaining, group
        d = squared_distances(x[remaining], x[r])
        d[remaining == r] = -1.0
        members = remaining[np.argsort(d, kind="stable")[:k]]
        labels[members] = group
        group += 1
        remaining = np.setdiff1d(remaining, members)

    def farthest_from_centroid() -> int:
        return int(remaining[np.argmax(squared_distances(x[remaining], x[remaining].mean(axis=0)))])

    while len(remaining) >= 3 * k:
        r = farthest_from_centroid()
        take_around(r)
        take_around(int(remaining[np.argmax(squared_distances(x[remaining], x[r]))]))
    if len(remaining) >= 2 * k:
        take_around(farthest_from_centroid())
    labels[remaining] = group
    return labels
