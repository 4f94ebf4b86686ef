"""Searches built on a backend: neighbourhoods of every record, nearest records, counts in a radius.

Perry, Matloff & Tendick (2022), Section 5 step 2: the neighbourhood of
record i is the set of *other* records that are either its k nearest
neighbours or all records within distance eps of it, whichever set is
larger; Matloff & Tendick (2015) uses the eps-ball alone (k = 0). The
assessment asks simpler questions of the same backends: the distance from
each record to the closest other record of its file, to the closest record
of another file, and how many records lie within a radius (the ties of the
record-linkage intruder, Oganian (2011), Section 5).

Everything runs in blocks through :func:`sdckit.neighbors.map_chunks`, so
memory stays O(block * neighbourhood size), never O(n^2).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from sdckit.errors import DataError
from sdckit.neighbors.backends import NeighborBackend, make_backend
from sdckit.neighbors.executor import chunk_doc, map_chunks

__all__ = [
    "NeighborhoodChunk",
    "count_within",
    "exclude_self",
    "iter_neighborhoods",
    "nearest_other_record",
    "nearest_records",
]


@dataclass(frozen=True)
class NeighborhoodChunk:
    """Neighbourhoods of a block of consecutive records, in CSR form.

    The neighbours of ``rows[i]`` are ``indices[indptr[i]:indptr[i + 1]]``;
    the record itself is never among them. ``truncated[i]`` is True where the
    eps-ball held more records than the backend's ``neighborhood_cap`` and
    was cut to its nearest ones (None when the backend has no cap).
    """

    rows: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    nearest_distance: np.ndarray  # distance to the closest other record (inf if none)
    truncated: np.ndarray | None = None

    @property
    def sizes(self) -> np.ndarray:
        """Neighbourhood size of each row."""
        return np.diff(self.indptr)


def exclude_self(
    rows: np.ndarray, dist: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Remove each query record from its own (k + 1)-nearest-neighbour answer.

    The one self-exclusion rule of sdckit. A record is normally the first of
    its own neighbours; among exact duplicates it may come later, or not at
    all when more than k + 1 records tie at distance 0. Its own entry is
    dropped wherever it appears; when it is absent the farthest entry is
    dropped instead, which leaves the k nearest *other* records either way.
    Duplicates thus stay at distance 0 from each other, as they should.

    Parameters
    ----------
    rows : ndarray of int
        Row number of each query record in the searched matrix.
    dist, idx : ndarray
        Distances and indices of the k + 1 nearest records, len(rows) x (k + 1),
        sorted by distance.

    Returns
    -------
    tuple of ndarray
        Distances and indices of the k nearest other records, len(rows) x k.
    """
    m, k_plus_one = idx.shape
    is_self = idx == rows[:, None]
    no_self = ~is_self.any(axis=1)
    is_self[no_self, -1] = True  # self tied beyond k+1 among duplicates: drop the farthest
    first = np.argmax(is_self, axis=1)
    keep = np.ones_like(is_self)
    keep[np.arange(m), first] = False
    k = k_plus_one - 1
    return dist[keep].reshape(m, k), idx[keep].reshape(m, k)


@chunk_doc
def nearest_records(
    reference: np.ndarray,
    queries: np.ndarray,
    *,
    k: int = 1,
    backend: NeighborBackend | None = None,
    fitted: bool = False,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances and row numbers of the ``k`` nearest ``reference`` rows to each query row.

    Parameters
    ----------
    reference : ndarray
        The records searched among, one per row.
    queries : ndarray
        The records looked up, with the same columns.
    k : int, default 1
        Number of neighbours.
    backend : NeighborBackend, optional
        The search (default: an exact KD-tree).
    fitted : bool, default False
        True when ``backend`` is already fitted on ``reference``.
    {{chunking}}

    Returns
    -------
    tuple of ndarray
        Distances and row numbers, each len(queries) x k, sorted by distance.
    """
    if backend is None:
        backend = make_backend("auto")
    if not fitted:
        backend.fit(reference)
    m = len(queries)
    dist = np.empty((m, k))
    idx = np.empty((m, k), dtype=np.int64)

    def work(start: int, stop: int) -> None:
        d, i = backend.query(queries[start:stop], k)
        dist[start:stop] = d
        idx[start:stop] = i

    for _ in map_chunks(work, m, chunk_size=chunk_size, n_jobs=n_jobs):
        pass
    return dist, idx


@chunk_doc
def nearest_other_record(
    matrix: np.ndarray,
    *,
    backend: NeighborBackend | None = None,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Distance from each row to the closest *other* row of the same matrix.

    Duplicated records have distance 0 to each other, as they should: such a
    record is not isolated (see :func:`exclude_self`).

    Parameters
    ----------
    matrix : ndarray
        The records, one per row (at least 2).
    backend : NeighborBackend, optional
        The search (default: an exact KD-tree); fitted here on ``matrix``.
    {{chunking}}

    Returns
    -------
    ndarray
        One distance per row.
    """
    n = len(matrix)
    if n < 2:
        raise DataError("distance to the closest record needs at least 2 records")
    dist, idx = nearest_records(
        matrix, matrix, k=2, backend=backend, chunk_size=chunk_size, n_jobs=n_jobs
    )
    others = exclude_self(np.arange(n), dist, idx)[0]
    return others[:, 0]


@chunk_doc
def count_within(
    backend: NeighborBackend,
    queries: np.ndarray,
    radius: np.ndarray,
    *,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Number of indexed records within ``radius[i]`` of each query row.

    Parameters
    ----------
    backend : NeighborBackend
        A fitted backend.
    queries : ndarray
        The records looked up, one per row.
    radius : ndarray
        One radius per query.
    {{chunking}}

    Returns
    -------
    ndarray of int
    """
    m = len(queries)
    counts = np.empty(m, dtype=np.int64)

    def work(start: int, stop: int) -> None:
        counts[start:stop] = backend.count_within(queries[start:stop], radius[start:stop])

    for _ in map_chunks(work, m, chunk_size=chunk_size, n_jobs=n_jobs):
        pass
    return counts


# ---------------------------------------------------------------------------
# Neighbourhoods of every record (RWN)
# ---------------------------------------------------------------------------


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
    dist, idx = exclude_self(rows, dist, idx)
    nearest = dist[:, 0] if dist.shape[1] else np.full(m, np.inf)
    # Canonical order (by record number): the draws then depend only on the
    # neighbourhood, not on how a backend happened to order it.
    knn_idx = np.sort(idx[:, :k], axis=1)

    if eps is None:
        indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
        return [NeighborhoodChunk(rows, indptr, knn_idx.reshape(-1).astype(np.int64), nearest)]

    r = eps[rows]
    ball_sizes = backend.radius_counts(rows, r).astype(np.int64) - 1  # minus the record itself
    # An approximate backend fetches at most neighborhood_cap (+1, to tell) others:
    # a larger ball is cut to its nearest, and the cut is reported, never silent.
    cap = getattr(backend, "neighborhood_cap", None)
    truncated = None
    if cap is not None:
        truncated = ball_sizes > cap
        ball_sizes = np.minimum(ball_sizes, cap)
    use_ball = ball_sizes > k
    sizes = np.where(use_ball, ball_sizes, k)
    # A wide eps can give huge balls: fetch them a few rows at a time, so memory
    # is bounded by max_entries indices rather than rows x ball size.
    parts = []
    for a, b in _split_by_total(sizes, max_entries):
        part = _csr_part(
            backend, rows[a:b], sizes[a:b], use_ball[a:b], knn_idx[a:b], nearest[a:b], r[a:b], k
        )
        if truncated is not None:
            part = replace(part, truncated=truncated[a:b])
        parts.append(part)
    return parts


def _split_by_total(sizes: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` ranges whose sizes sum to at most ``budget`` (one row at least)."""
    cumulative = np.cumsum(sizes)
    bounds: list[tuple[int, int]] = []
    start = 0
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
        which = np.repeat(np.arange(len(ball_rows)), lengths)
        keep = flat != rows[ball_rows][which]
        flat, which = flat[keep], which[keep]
        # A capped backend returns its balls nearest first: keep each one's first `size`.
        kept = np.bincount(which, minlength=len(ball_rows))
        rank = np.arange(len(flat)) - np.repeat(np.cumsum(kept) - kept, kept)
        keep = rank < sizes[ball_rows][which]
        flat, which = flat[keep], which[keep]
        flat = flat[np.lexsort((flat, which))]
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

    Blocks of ``chunk_size`` records are computed on ``n_jobs`` threads and
    yielded in order, at most ``2 * n_jobs`` in flight
    (:func:`sdckit.neighbors.map_chunks`); a block whose eps-balls together
    exceed ``max_entries`` neighbour indices comes in several parts. Memory
    therefore stays bounded by about ``2 * n_jobs * max(chunk_size * k,
    max_entries)`` indices.

    Parameters
    ----------
    matrix : ndarray
        The design matrix, one record per row.
    k : int
        Neighbours per record (0 for the eps-ball alone).
    eps : ndarray or None
        Per-record radius, or None for k nearest neighbours only.
    backend : NeighborBackend
        The search.
    chunk_size : int, default 2048
        Records per block.
    n_jobs : None, -1 or positive int
        Threads (:func:`sdckit.neighbors.resolve_n_jobs`).
    fitted : bool, default False
        True when ``backend`` is already fitted on ``matrix``.
    max_entries : int, default 2**24
        Most neighbour indices one part holds.

    Returns
    -------
    iterator
        ``((block number, part number), NeighborhoodChunk)`` pairs, in record order.
    """
    n = matrix.shape[0]
    if not fitted:
        backend.fit(matrix)

    def work(start: int, stop: int) -> list[NeighborhoodChunk]:
        rows = np.arange(start, stop, dtype=np.int64)
        return _chunk_neighborhoods(backend, rows, k, eps, n, max_entries)

    blocks = map_chunks(work, n, chunk_size=chunk_size, n_jobs=n_jobs)
    return _numbered(blocks)


def _numbered(
    blocks: Iterator[list[NeighborhoodChunk]],
) -> Iterator[tuple[tuple[int, int], NeighborhoodChunk]]:
    for number, parts in enumerate(blocks):
        for part, chunk in enumerate(parts):
            yield (number, part), chunk
