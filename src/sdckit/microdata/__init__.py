"""Masked microdata: RWN and the other masks, behind one interface.

Every method takes a DataFrame and keyword parameters and returns a
:class:`~sdckit.microdata.base.MaskResult`; registered methods can be run by
name with :func:`mask`.
"""

from sdckit._moved import moved_names
from sdckit.microdata.base import MaskResult, available_maskers, get_masker, mask, register_masker
from sdckit.microdata.kanon import KAnonResult, kanon
from sdckit.microdata.microaggregation import MicroaggregationResult, mdav_groups, microaggregate
from sdckit.microdata.noise import NoiseResult, additive_noise, multiplicative_noise
from sdckit.microdata.noise_moments import (
    MixedMoments,
    expected_masked_moments,
    mixed_moments,
    recover_moments,
)
from sdckit.microdata.pram import PramResult, pram, pram_frequencies
from sdckit.microdata.rankswap import RankSwapResult, rank_swap
from sdckit.microdata.recode import Hierarchy, RecodeResult, recode
from sdckit.microdata.recordswap import RecordSwapResult, record_swap
from sdckit.microdata.rwn import RWNResult, rwn
from sdckit.microdata.suppression import SuppressionResult, local_suppression
from sdckit.microdata.swap import SwapResult, swap

__all__ = [
    "Hierarchy",
    "KAnonResult",
    "MaskResult",
    "MicroaggregationResult",
    "MixedMoments",
    "NoiseResult",
    "PramResult",
    "RWNResult",
    "RankSwapResult",
    "RecodeResult",
    "RecordSwapResult",
    "SuppressionResult",
    "SwapResult",
    "additive_noise",
    "available_maskers",
    "expected_masked_moments",
    "get_masker",
    "kanon",
    "local_suppression",
    "mask",
    "mdav_groups",
    "microaggregate",
    "mixed_moments",
    "multiplicative_noise",
    "pram",
    "pram_frequencies",
    "rank_swap",
    "recode",
    "record_swap",
    "recover_moments",
    "register_masker",
    "rwn",
    "swap",
]

# Plumbing that left the package namespace (issue 14): importable for one release.
__getattr__ = moved_names(
    "sdckit.microdata",
    {
        "BruteBackend": "sdckit.neighbors.backends",
        "NeighborBackend": "sdckit.neighbors.backends",
        "TreeBackend": "sdckit.neighbors.backends",
        "make_backend": "sdckit.neighbors.backends",
    },
)
