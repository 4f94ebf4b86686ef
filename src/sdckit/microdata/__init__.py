"""Masked microdata: RWN and the other masks, behind one interface.

Every method takes a DataFrame and keyword parameters and returns a
:class:`~sdckit.microdata.base.MaskResult`; registered methods can be run by
name with :func:`mask`.
"""

from sdckit.microdata.base import MaskResult, available_maskers, get_masker, mask, register_masker
from sdckit.microdata.microaggregation import MicroaggregationResult, mdav_groups, microaggregate
from sdckit.microdata.neighbors import BruteBackend, NeighborBackend, TreeBackend, make_backend
from sdckit.microdata.noise import NoiseResult, additive_noise, multiplicative_noise
from sdckit.microdata.rankswap import RankSwapResult, rank_swap
from sdckit.microdata.rwn import RWNResult, rwn
from sdckit.microdata.swap import SwapResult, swap

__all__ = [
    "BruteBackend",
    "MaskResult",
    "MicroaggregationResult",
    "NeighborBackend",
    "NoiseResult",
    "RWNResult",
    "RankSwapResult",
    "SwapResult",
    "TreeBackend",
    "additive_noise",
    "available_maskers",
    "get_masker",
    "make_backend",
    "mask",
    "mdav_groups",
    "microaggregate",
    "multiplicative_noise",
    "rank_swap",
    "register_masker",
    "rwn",
    "swap",
]
