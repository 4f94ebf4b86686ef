"""The bijection between the pairs of n records and the integers, for Method 2 of RWN.

Perry, Matloff & Tendick (2022), Section 11.2 sample n·m/2 of the
n(n-1)/2 pairs (i, j), i < j, by drawing random integers r and mapping each
to a pair. The mapping printed in their step 3 cannot be right: step 3(b)
sets ``j <- 2 + v`` for even v = floor(sqrt(8r + 1)), which for r = 2
(v = 4) gives j = 6 and i = 2 - 10 = -8. The pairs are instead numbered
column by column of the strict upper triangle,

    r(i, j) = j(j - 1)/2 + i,    0 <= i < j < n    (0-based),

so the pairs whose larger member is j hold the consecutive numbers
[j(j - 1)/2, j(j + 1)/2). Its inverse is

    j = floor((1 + sqrt(8r + 1)) / 2),    i = r - j(j - 1)/2,

which is what the paper's steps 1-2 compute when 8r + 1 is a perfect square
(the paper counts from 1). The square root is taken in floating point and
corrected by exact integer comparisons, so the inverse is exact for every r
of n <= :data:`MAX_RECORDS` (3·10^9) records; the tests check it
exhaustively for small n and by round trip at n = 10^9.
"""

from __future__ import annotations

import numpy as np

from sdckit.errors import ParameterError

__all__ = ["MAX_RECORDS", "n_pairs", "pair_from_index", "pair_index"]

#: Largest n handled: the products j(j + 1) formed while inverting a pair
#: number stay below 2^63 (signed 64-bit integers).
MAX_RECORDS = 3_000_000_000


def n_pairs(n: int) -> int:
    """Number of unordered pairs of ``n`` records, n(n - 1)/2.

    Parameters
    ----------
    n : int
        Number of records, at most :data:`MAX_RECORDS`.

    Returns
    -------
    int
    """
    if n < 0 or n > MAX_RECORDS:
        raise ParameterError(f"n must be between 0 and {MAX_RECORDS:,}, got {n:,}")
    return n * (n - 1) // 2


def pair_index(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The number r of each pair (i, j), 0 <= i < j: r = j(j - 1)/2 + i.

    Parameters
    ----------
    i, j : ndarray of int
        The smaller and the larger record number of each pair (0-based).

    Returns
    -------
    ndarray of int64
        Pair numbers in [0, n(n - 1)/2).
    """
    i64 = np.asarray(i, dtype=np.int64)
    j64 = np.asarray(j, dtype=np.int64)
    if np.any(i64 < 0) or np.any(i64 >= j64):
        raise ParameterError("pair_index needs 0 <= i < j for every pair")
    result: np.ndarray = j64 * (j64 - 1) // 2 + i64
    return result


def pair_from_index(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pair (i, j), 0 <= i < j, numbered ``r`` (the inverse of :func:`pair_index`).

    Parameters
    ----------
    r : ndarray of int
        Pair numbers, 0 <= r < n(n - 1)/2 for n at most :data:`MAX_RECORDS`.

    Returns
    -------
    tuple of ndarray of int64
        ``(i, j)``: the smaller and the larger record number of each pair.
    """
    r64 = np.asarray(r, dtype=np.int64)
    if np.any(r64 < 0) or np.any(r64 >= n_pairs(MAX_RECORDS)):
        raise ParameterError(f"pair numbers must lie in [0, {n_pairs(MAX_RECORDS):,})")
    # Floating-point first guess, then exact integer corrections (the guess is
    # off by at most one for r < 2^63).
    j = np.floor((1.0 + np.sqrt(8.0 * r64.astype(np.float64) + 1.0)) / 2.0).astype(np.int64)
    for _ in range(2):
        j = np.where(j * (j - 1) // 2 > r64, j - 1, j)
        j = np.where((j + 1) * j // 2 <= r64, j + 1, j)
    i = r64 - j * (j - 1) // 2
    return i, j
