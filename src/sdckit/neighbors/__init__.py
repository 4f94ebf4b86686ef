"""The one neighbour-search layer of sdckit, below masking and assessment.

RWN's neighbourhoods (Perry, Matloff & Tendick (2022), Section 5) and the
assessment's distance-to-closest-record and record-linkage measures
(Oganian (2011), Section 5) all search through a :class:`NeighborBackend`,
block by block through one executor (:func:`map_chunks`) whose ``n_jobs``
has one meaning (:func:`resolve_n_jobs`: None or -1 is one thread per core,
a positive int that many threads, booleans refused), and drop a record from
its own neighbours by one rule (:func:`exclude_self`). A faster backend
added here therefore serves masking and assessment alike.

This package imports nothing of sdckit but :mod:`sdckit.errors`.
"""

from sdckit.neighbors.backends import (
    BruteBackend,
    NeighborBackend,
    TreeBackend,
    make_backend,
    resolve_backend,
)
from sdckit.neighbors.executor import map_chunks, resolve_n_jobs
from sdckit.neighbors.search import (
    NeighborhoodChunk,
    count_within,
    exclude_self,
    iter_neighborhoods,
    nearest_other_record,
    nearest_records,
)

__all__ = [
    "BruteBackend",
    "NeighborBackend",
    "NeighborhoodChunk",
    "TreeBackend",
    "count_within",
    "exclude_self",
    "iter_neighborhoods",
    "make_backend",
    "map_chunks",
    "nearest_other_record",
    "nearest_records",
    "resolve_backend",
    "resolve_n_jobs",
]
