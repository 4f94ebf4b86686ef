"""Neighbourhood search for RWN: a re-export of :mod:`sdckit.neighbors`.

The search moved to the bottom-layer package :mod:`sdckit.neighbors`, which
masking and assessment share; this module keeps ``from
sdckit.microdata.neighbors import ...`` working.
"""

from sdckit.neighbors import (
    BruteBackend,
    NeighborBackend,
    TreeBackend,
    iter_neighborhoods,
    make_backend,
)
from sdckit.neighbors.search import NeighborhoodChunk

__all__ = [
    "BruteBackend",
    "NeighborBackend",
    "NeighborhoodChunk",
    "TreeBackend",
    "iter_neighborhoods",
    "make_backend",
]
