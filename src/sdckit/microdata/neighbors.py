"""Neighbourhood search for neighbourhood-based masking (RWN and its relatives).

Perry, Matloff & Tendick (2022), Section 5 step 2: the neighbourhood
of record i is the set of *other* records that are either its k nearest
neighbours or all records within distance eps of it, whichever set is larger.
Matloff & Tendick (2015) uses the eps-ball alone (k = 0).

The search is done chunk by chunk so memory stays O(chunk * neighbourhood
size), never O(n^2). The search itself sits behind :class:`NeighborBackend`,
so exact trees (the default), brute force or, later, approximate and
partitioned search (Perry, Matloff & Tendick 2022, Sections 10-11) plug in without touching RWN.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sdckit.errors import ParameterError

__all__ = [
    "BruteBackend",
    "NeighborBackend",
    "NeighborhoodChunk",
    "TreeBackend",
    "iter_neighborhoods",
    "make_backend",
]

_TREE_METRICS = {"euclidean", "manhattan", "chebyshev", "minkowski"}


class NeighborBackend(Protocol):
    """What a neighbour-search backend provides.

    All queries take *row numbers* of the fitted matrix; results include the
    query row itself where the geometry says so (self-exclusion is done by
    :func:`iter_neighborhoods`, which knows the row ids).
    """

    name: str

    def fit(self, matrix: np.ndarray) -> None:
        """Index the n x m design matrix."""

    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Distances and indices (len(rows) x k, sorted) of the k nearest records."""

    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Number of records within ``radius[i]`` of each row (itself included)."""

    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        """Indices of the records within ``radius[i]`` of each row (itself included)."""


class TreeBackend:
    """Exact search with scikit-learn's KD-tree or ball tree."""

    def __init__(self, algorithm: str = "kd_tree", metric: str = "euclidean", leaf_size: int = 40):
        if algorithm not in ("kd_tree", "ball_tree"):
            raise ParameterError(f"algorithm must be 'kd_tree' or 'ball_tree', got {algorithm!r}")
        if metric not in _TREE_METRICS:
            raise ParameterError(f"metric must be one of {sorted(_TREE_METRICS)}, got {metric!r}")
        self.name = algorithm
        self.metric = metric
        self.leaf_size = leaf_size
        self._tree = None  # a fitted sklearn KDTree or BallTree
        self._matrix: np.ndarray | None = None

    def fit(self, matrix: np.ndarray) -> None:
        # Imported here: scikit-learn is heavy, and the command line should start fast.
        from sklearn.neighbors import BallTree, KDTree

        cls = KDTree if self.name == "kd_tree" else BallTree
        self._matrix = matrix
        self._tree = cls(matrix, leaf_size=self.leaf_size, metric=self.metric)

    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._tree.query(self._matrix[rows], k=k, sort_results=True)

    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        return self._tree.query_radius(self._matrix[rows], r=radius, count_only=True)

    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        return list(self._tree.query_radius(self._matrix[rows], r=radius))


class BruteBackend:
    """Exact Euclidean search by blocked matrix products (fast for small n or many columns)."""

    name = "brute"

    def __init__(self, metric: str = "euclidean"):
        if metric != "euclidean":
            raise ParameterError(
                f"the brute backend supports metric='euclidean' only, got {metric!r}"
            )
        self.metric = metric
        self._matrix: np.ndarray | None = None
        self._sq: np.ndarray | None = None

    def fit(self, matrix: np.ndarray) -> None:
        self._matrix = matrix
        self._sq = np.einsum("ij,ij->i", matrix, matrix)

    def _distances(self, rows: np.ndarray) -> np.ndarray:
        q = self._matrix[rows]
        d2 = self._sq[rows, None] + self._sq[None, :] - 2.0 * (q @ self._matrix.T)
        np.maximum(d2, 0.0, out=d2)
        d2[np.arange(len(rows)), rows] = 0.0  # exact zero to self despite rounding
        return np.sqrt(d2, out=d2)

    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        d = self._distances(rows)
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        pd_ = np.take_along_axis(d, part, axis=1)
        order = np.argsort(pd_, axis=1, kind="stable")
        return np.take_along_axis(pd_, order, axis=1), np.take_along_axis(part, order, axis=1)

    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        return (self._distances(rows) <= radius[:, None]).sum(axis=1)

    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        within = self._distances(rows) <= radius[:, None]
        return [np.flatnonzero(r) for r in within]


def make_backend(algorithm: str = "auto", metric: str = "euclidean") -> NeighborBackend:
    """Build a backend by name: ``"auto"``, ``"kd_tree"``, ``"ball_tree"`` or ``"brute"``.

    ``"auto"`` is a KD-tree, the exact search Perry, Matloff & Tendick (2022) Section 10 assumes.
    """
    if algorithm in ("auto", "kd_tree"):
        return TreeBackend("kd_tree", metric)
    if algorithm == "ball_tree":
        return TreeBackend("ball_tree", metric)
    if algorithm == "brute":
        return BruteBackend(metric)
    raise ParameterError(
        f"algorithm must be 'auto', 'kd_tree', 'ball_tree' or 'brute', got {algorithm!r}"
    )


@dataclass(frozen=True)
class NeighborhoodChunk:
    """Neighbourhoods of a block of consecutive records, in CSR form.

    The neighbours of ``rows[i]`` are ``indices[indptr[i]:indptr[i + 1]]``;
    the record itself is never among them.
    """

    rows: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    nearest_distance: np.ndarray  # distance to the closest other record (inf if none)

    @property
    def sizes(self) -> np.ndarray:
        """Neighbourhood size of each row."""
        return np.diff(self.indptr)


def _drop_self(rows: np.ndarray, dist: np.ndarray, idx: np.ndarray, k: int):
    """From a (k + 1)-NN answer, remove each row's own index (or the farthest if absent)."""
    is_self = idx == rows[:, None]
    no_self = ~is_self.any(axis=1)
    is_self[no_self, -1] = True  # self tied beyond k+1 among duplicates: drop the farthest
    first = np.argmax(is_self, axis=1)
    keep = np.ones_like(is_self)
    keep[np.arange(len(rows)), first] = False
    return dist[keep].reshape(len(rows), k), idx[keep].reshape(len(rows), k)


def _chunk_neighborhoods(
    backend: NeighborBackend,
    rows: np.ndarray,
    k: int,
    eps: np.ndarray | None,
    n: int,
    max_entries: int,
) -> list[NeighborhoodChunk]:
    """Neighbourhoods of one block of rows, split so no part holds more than ``max_entries`` indices."""
    m = len(rows)
    # Always query at least one other record: the nearest distance is a diagnostic too.
    k_query = min(max(k, 1) + 1, n)
    dist, idx = backend.kneighbors(rows, k_query)
    dist, idx = _drop_self(rows, dist, idx, k_query - 1)
    nearest = dist[:, 0] if dist.shape[1] else np.full(m, np.inf)
    # Canonical order (by record number): the draws then depend only on the
    # neighbourhood, not on how a backend happened to order it.
    knn_idx = np.sort(idx[:, :k], axis=1)

    if eps is None:
        indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
        return [NeighborhoodChunk(rows, indptr, knn_idx.reshape(-1).astype(np.int64), nearest)]

    r = eps[rows]
    ball_sizes = backend.radius_counts(rows, r).astype(np.int64) - 1  # minus the record itself
    use_ball = ball_sizes > k
    sizes = np.where(use_ball, ball_sizes, k)
    # A wide eps can give huge balls: fetch them a few rows at a time, so memory
    # is bounded by max_entries indices rather than rows x ball size.
    return [
        _csr_part(
            backend, rows[a:b], sizes[a:b], use_ball[a:b], knn_idx[a:b], nearest[a:b], r[a:b], k
        )
        for a, b in _split_by_total(sizes, max_entries)
    ]


def _split_by_total(sizes: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` ranges whose sizes sum to at most ``budget`` (one row at least)."""
    cumulative = np.cumsum(sizes)
    bounds, start = [], 0
    while start < len(sizes):
        before = cumulative[start - 1] if start else 0
        stop = max(int(np.searchsorted(cumulative, before + budget, side="right")), start + 1)
        bounds.append((start, stop))
        start = stop
    return bounds


def _csr_part(
    backend: NeighborBackend,
    rows: np.ndarray,
    sizes: np.ndarray,
    use_ball: np.ndarray,
    knn_idx: np.ndarray,
    nearest: np.ndarray,
    radius: np.ndarray,
    k: int,
) -> NeighborhoodChunk:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int64)
    # k-NN rows: write their k neighbours in place.
    knn_rows = np.flatnonzero(~use_ball)
    if k and len(knn_rows):
        pos = indptr[knn_rows][:, None] + np.arange(k)
        indices[pos.reshape(-1)] = knn_idx[knn_rows].reshape(-1)
    # eps-ball rows: fetch the balls and drop the record itself.
    ball_rows = np.flatnonzero(use_ball)
    if len(ball_rows):
        balls = backend.radius_neighbors(rows[ball_rows], radius[ball_rows])
        lengths = np.fromiter(map(len, balls), dtype=np.int64, count=len(balls))
        flat = np.concatenate(balls).astype(np.int64)
        owner = np.repeat(rows[ball_rows], lengths)
        keep = flat != owner
        flat, owner = flat[keep], owner[keep]
        flat = flat[np.lexsort((flat, owner))]
        indices[_ranges(indptr[ball_rows], sizes[ball_rows])] = flat
    return NeighborhoodChunk(rows, indptr, indices, nearest)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each pair, without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return offsets + np.arange(total, dtype=np.int64)


def iter_neighborhoods(
    matrix: np.ndarray,
    *,
    k: int,
    eps: np.ndarray | None,
    backend: NeighborBackend,
    chunk_size: int = 2048,
    n_jobs: int | None = None,
    fitted: bool = False,
    max_entries: int = 1 << 24,
) -> Iterator[tuple[tuple[int, int], NeighborhoodChunk]]:
    """Yield ``((block, part), NeighborhoodChunk)`` for consecutive blocks of records.

    Blocks of ``chunk_size`` records are computed on ``n_jobs`` threads (the
    tree queries release the GIL) and yielded in order, at most ``2 * n_jobs``
    in flight; a block whose eps-balls together exceed ``max_entries``
    neighbour indices comes in several parts. Memory therefore stays bounded
    by about ``2 * n_jobs * max(chunk_size * k, max_entries)`` indices.
    """
    n = matrix.shape[0]
    if not fitted:
        backend.fit(matrix)
    n_jobs = _resolve_jobs(n_jobs)
    starts = range(0, n, chunk_size)

    def work(start: int) -> list[NeighborhoodChunk]:
        rows = np.arange(start, min(start + chunk_size, n), dtype=np.int64)
        return _chunk_neighborhoods(backend, rows, k, eps, n, max_entries)

    if n_jobs == 1:
        for number, start in enumerate(starts):
            for part, chunk in enumerate(work(start)):
                yield (number, part), chunk
        return
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        pending = []
        it = iter(enumerate(starts))
        for number, start in it:
            pending.append((number, pool.submit(work, start)))
            if len(pending) >= 2 * n_jobs:
                break
        while pending:
            number, fut = pending.pop(0)
            for part, chunk in enumerate(fut.result()):
                yield (number, part), chunk
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt[0], pool.submit(work, nxt[1])))


def _resolve_jobs(n_jobs: int | None) -> int:
    cpus = os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return cpus
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ParameterError(f"n_jobs must be None, -1 or a positive int, got {n_jobs!r}")
    return n_jobs


ProgressCallback = Callable[[int, int], None]
