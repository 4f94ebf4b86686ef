"""How good an approximate or sampled neighbour search is, measured against exact search.

Recall is measured, never assumed: a random sample of records is searched
exactly (a KD-tree on the whole design) and by the backend, and recall@k is
the share of the backend's k neighbours that are among the true k nearest
other records. Ties count as found: a neighbour at a distance no larger
than the true k-th nearest distance is as near as a true neighbour (exact
duplicates and discrete data make such ties common).

For the sampled neighbourhoods of Perry, Matloff & Tendick (2022), Section
11, recall is low by design (about m/n); the distance ratio — how far the
backend's k-th neighbour is against the true k-th nearest — says how much
wider than the exact neighbourhood the sampled one is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from sdckit.errors import ParameterError
from sdckit.neighbors.backends import NeighborBackend, TreeBackend
from sdckit.neighbors.search import exclude_self

__all__ = ["RecallEstimate", "estimate_recall"]


@dataclass(frozen=True)
class RecallEstimate:
    """Recall@k of a neighbour search on a sample of records.

    Attributes
    ----------
    recall : float
        Mean share of the backend's k neighbours at most as far as the true k-th nearest.
    distance_ratio : float
        Median, over the sampled records, of the backend's k-th neighbour
        distance over the true k-th nearest distance (1 for exact search).
    sample_size : int
        Records sampled.
    k : int
        Neighbours compared.
    seconds : float
        Time the estimate took (exact tree included).
    standard_error : float
        Standard error of ``recall`` as an estimate of the recall over all
        records: the standard deviation of the sampled records' shares over
        the square root of their number, with the finite-population
        correction (0 when every record was searched).
    """

    recall: float
    distance_ratio: float
    sample_size: int
    k: int
    seconds: float
    standard_error: float = 0.0


def estimate_recall(
    backend: NeighborBackend,
    matrix: np.ndarray,
    *,
    k: int,
    sample_size: int = 1000,
    metric: str = "euclidean",
    random_state: int | np.random.Generator | None = None,
) -> RecallEstimate:
    """Recall@k of a fitted backend on a random sample of records, against exact search.

    Parameters
    ----------
    backend : NeighborBackend
        A backend fitted on ``matrix``.
    matrix : ndarray
        The design matrix, one record per row.
    k : int
        Neighbours per record (at least 1, fewer than the records).
    sample_size : int, default 1000
        Records sampled (at most all of them).
    metric : {"euclidean", "manhattan", "chebyshev"}, default "euclidean"
        The distance of the exact search.
    random_state : None, int or numpy Generator
        Seed of the sample.

    Returns
    -------
    RecallEstimate
    """
    n = len(matrix)
    if k < 1 or k >= n:
        raise ParameterError(f"recall needs 1 <= k < n ({n}), got k={k}")
    if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1:
        raise ParameterError(f"recall_sample must be a positive int, got {sample_size!r}")
    start = time.perf_counter()
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(n, size=min(sample_size, n), replace=False)).astype(np.int64)
    exact = TreeBackend("kd_tree", metric)
    exact.fit(matrix)
    true_d = exclude_self(rows, *exact.kneighbors(rows, k + 1))[0]
    found_d = exclude_self(rows, *backend.kneighbors(rows, k + 1))[0]
    kth = true_d[:, -1]
    tolerance = 1e-9 * np.maximum(kth, 1.0)
    shares = (found_d <= (kth + tolerance)[:, None]).sum(axis=1) / k
    recall = float(shares.mean())
    m = len(rows)
    spread = float(shares.std(ddof=1)) if m > 1 else 0.0
    standard_error = spread / np.sqrt(m) * np.sqrt(max(0.0, (n - m) / max(n - 1, 1)))
    positive = kth > 0
    ratio = float(np.median(found_d[positive, -1] / kth[positive])) if positive.any() else 1.0
    return RecallEstimate(
        recall=recall,
        distance_ratio=ratio,
        sample_size=len(rows),
        k=k,
        seconds=time.perf_counter() - start,
        standard_error=float(standard_error),
    )
