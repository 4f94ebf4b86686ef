"""The searches behind the distance-to-closest-record and record-linkage measures.

Both measures ask the same question of the masked file ("which masked
record is nearest to this original one?"), so :func:`assess` runs the
search once and builds both results from it; :mod:`sdckit.assess.risk` and
:mod:`sdckit.assess.assessment` share these public helpers rather than
each other's private ones. Every search goes through a
:class:`~sdckit.neighbors.NeighborBackend`, so a backend given to
:func:`~sdckit.assess.assess` (or configured by name) serves every
distance-based measure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdckit._pairs import complete_rows
from sdckit.neighbors import (
    NeighborBackend,
    count_within,
    nearest_other_record,
    nearest_records,
)
from sdckit.neighbors.executor import chunk_doc

__all__ = ["LinkSearch", "link_search", "within_distances"]


@dataclass(frozen=True)
class LinkSearch:
    """Per original record: the nearest masked record's distance, the distance to its own
    masked version, and the probability the linkage intruder links it correctly.

    Attributes
    ----------
    nearest : ndarray
        Distance to the nearest masked record (NaN for incomplete records).
    own : ndarray
        Distance to the record's own masked version (NaN if either is incomplete).
    score : ndarray
        1/(number of masked records tied nearest) when the own version is
        among them, else 0; NaN for incomplete records (Oganian (2011), Section 5).
    """

    nearest: np.ndarray
    own: np.ndarray
    score: np.ndarray


@chunk_doc
def link_search(
    x0: np.ndarray,
    x1: np.ndarray,
    *,
    backend: NeighborBackend,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> LinkSearch:
    """Link each original record to its nearest masked record (Oganian (2011), Section 5).

    Parameters
    ----------
    x0, x1 : ndarray
        Designs of the original and masked files, scaled alike, row i of one
        the same record as row i of the other.
    backend : NeighborBackend
        The search; fitted here on the complete masked records.
    {{chunking}}

    Returns
    -------
    LinkSearch
    """
    n = len(x0)
    ok0, ok1 = complete_rows(x0), complete_rows(x1)
    nearest = np.full(n, np.nan)
    own = np.full(n, np.nan)
    score = np.full(n, np.nan)
    if not ok1.any() or not ok0.any():
        return LinkSearch(nearest, own, score)
    target_rows = np.flatnonzero(ok1)
    query_rows = np.flatnonzero(ok0)
    dist, _ = nearest_records(
        x1[target_rows], x0[query_rows], k=1, backend=backend, chunk_size=chunk_size, n_jobs=n_jobs
    )
    nearest[query_rows] = dist[:, 0]
    own_d = np.sqrt(
        ((x0[query_rows] - x1[query_rows]) ** 2).sum(axis=1)
    )  # NaN if own is incomplete
    own[query_rows] = own_d
    # Float tolerance: the tree and the direct formula round differently.
    tol = 1e-9 * (1.0 + dist[:, 0])
    candidate = np.isfinite(own_d) & (own_d <= dist[:, 0] + tol)
    result = np.zeros(len(query_rows))
    if candidate.any():
        radius = own_d[candidate] + tol[candidate]
        # The backend is still fitted on the masked records.
        ties = count_within(
            backend, x0[query_rows[candidate]], radius, chunk_size=chunk_size, n_jobs=n_jobs
        )
        result[candidate] = 1.0 / np.maximum(ties, 1)
    score[query_rows] = result
    return LinkSearch(nearest, own, score)


@chunk_doc
def within_distances(
    matrix: np.ndarray,
    *,
    backend: NeighborBackend,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Distance from each complete record to the closest other complete record of its file.

    Parameters
    ----------
    matrix : ndarray
        One file's design.
    backend : NeighborBackend
        The search; fitted here on the complete records.
    {{chunking}}

    Returns
    -------
    ndarray
        One distance per record; NaN for incomplete records, and for all
        when fewer than two records are complete.
    """
    ok = complete_rows(matrix)
    out = np.full(len(matrix), np.nan)
    if ok.sum() >= 2:
        out[ok] = nearest_other_record(
            matrix[ok], backend=backend, chunk_size=chunk_size, n_jobs=n_jobs
        )
    return out
