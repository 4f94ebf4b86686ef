"""Masked microdata: RWN and the other masks, behind one interface.

Every method takes a DataFrame and keyword parameters and returns a
:class:`~sdckit.microdata.base.MaskResult`; registered methods can be run by
name with :func:`mask`.
"""

from sdckit.microdata.base import MaskResult, available_maskers, get_masker, mask, register_masker
from sdckit.microdata.neighbors import BruteBackend, NeighborBackend, TreeBackend, make_backend
from sdckit.microdata.rwn import RWNResult, rwn
from sdckit.microdata.swap import SwapResult, swap

__all__ = [
    "BruteBackend",
    "MaskResult",
    "NeighborBackend",
    "RWNResult",
    "SwapResult",
    "TreeBackend",
    "available_maskers",
    "get_masker",
    "make_backend",
    "mask",
    "register_masker",
    "rwn",
    "swap",
]
