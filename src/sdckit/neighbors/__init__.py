"""The one neighbour-search layer of sdckit, below masking and assessment.

RWN's neighbourhoods (Perry, Matloff & Tendick (2022), Section 5) and the
assessment's distance-to-closest-record and record-linkage measures
(Oganian (2011), Section 5) all search through a :class:`NeighborBackend`,
block by block through one executor (:func:`map_chunks`) whose ``n_jobs``
has one meaning (:func:`resolve_n_jobs`: None or -1 is one thread per core,
a positive int that many threads, booleans refused), and drop a record from
its own neighbours by one rule (:func:`exclude_self`). A faster backend
added here therefore serves masking and assessment alike: besides the exact
trees, faiss's approximate HNSW and IVF indexes (:class:`HNSWBackend`,
:class:`IVFBackend`) and the sampled neighbourhoods of Perry, Matloff &
Tendick (2022), Section 11 (:class:`SampleBackend`, Method 1;
:class:`PairSampleBackend`, Method 2), chosen by name with
:func:`make_strategy`; :func:`estimate_recall` measures any of them against
exact search.

This package imports nothing of sdckit but :mod:`sdckit.errors`.
"""

from sdckit._moved import moved_names
from sdckit.neighbors.approximate import HNSWBackend, IVFBackend
from sdckit.neighbors.backends import BruteBackend, NeighborBackend, TreeBackend, make_backend
from sdckit.neighbors.executor import resolve_n_jobs
from sdckit.neighbors.recall import RecallEstimate, estimate_recall
from sdckit.neighbors.sampled import PairSampleBackend, SampleBackend
from sdckit.neighbors.search import (
    count_within,
    iter_neighborhoods,
    nearest_other_record,
    nearest_records,
)
from sdckit.neighbors.strategies import make_strategy

__all__ = [
    "BruteBackend",
    "HNSWBackend",
    "IVFBackend",
    "NeighborBackend",
    "PairSampleBackend",
    "RecallEstimate",
    "SampleBackend",
    "TreeBackend",
    "count_within",
    "estimate_recall",
    "iter_neighborhoods",
    "make_backend",
    "make_strategy",
    "nearest_other_record",
    "nearest_records",
    "resolve_n_jobs",
]

# Plumbing that left the package namespace (issue 14): importable for one release.
__getattr__ = moved_names(
    "sdckit.neighbors",
    {
        "NeighborhoodChunk": "sdckit.neighbors.search",
        "exclude_self": "sdckit.neighbors.search",
        "map_chunks": "sdckit.neighbors.executor",
        "resolve_backend": "sdckit.neighbors.backends",
    },
)
