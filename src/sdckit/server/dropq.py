"""The Drop q rule: remove q random units from every universe before any analysis.

Lucero et al. (2011), Section 3.1.2. q is uniform on {2, ..., k}
and the q units are drawn at random, but the draw is a deterministic function
of the universe's *set of units* and a server secret:

* the same universe - however it is written - always gives the same
  subsample, so an analyst cannot average many answers away ("only one
  subsampled universe for each unique universe, persisting for the lifetime
  of the system");
* different universes get unrelated subsamples, so the drop of U(n) tells
  nothing about the drop of U(n-1) (the protection against differencing);
* without the secret an analyst cannot compute which units, or how many,
  were dropped.

The seed is HMAC-SHA256(secret, sorted unit identifiers): a keyed hash, so
knowing the algorithm and the identifiers is not enough to predict it.
Units are identified by the data's index labels (integers as int64, other
labels by a 64-bit BLAKE2 digest of their text), so the subsample does not
depend on row order.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import secrets as _secrets
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError

__all__ = ["DropQ", "DropQSample", "generate_secret", "unit_keys"]

MIN_SECRET_BYTES = 16


def generate_secret() -> bytes:
    """A fresh 32-byte server secret (the service stores it; it is never shown to analysts).

    Returns
    -------
    bytes
    """
    return _secrets.token_bytes(32)


def unit_keys(index: pd.Index) -> np.ndarray:
    """A 64-bit identifier per unit, from the data's index labels (which must be unique).

    Parameters
    ----------
    index : pandas.Index
        The data's index: integers are used as they are, other labels by a
        64-bit BLAKE2 digest.

    Returns
    -------
    ndarray of int64
    """
    if not index.is_unique:
        dup = index[index.duplicated()][:3].tolist()
        raise DataError(
            f"the data's index must identify units uniquely for Drop q; repeated labels {dup}"
        )
    if pd.api.types.is_integer_dtype(index.dtype):
        return index.to_numpy().astype(np.int64)
    digests = [
        hashlib.blake2b(str(label).encode("utf-8"), digest_size=8).digest() for label in index
    ]
    return np.frombuffer(b"".join(digests), dtype="<i8").astype(np.int64)


@dataclass(frozen=True)
class DropQSample:
    """The subsample kept for one universe (internal: q and the dropped units are secret).

    Attributes
    ----------
    kept : ndarray of int
        Row positions (into the server's data) of the units analysed.
    q : int
        Units dropped.
    """

    kept: np.ndarray
    q: int

    def __repr__(self) -> str:  # never print which or how many units were dropped
        return f"DropQSample(kept={self.kept.size} units)"


class DropQ:
    """Keyed, deterministic Drop q subsampling over one dataset.

    Parameters
    ----------
    keys : ndarray of int64
        One identifier per record (see :func:`unit_keys`).
    secret : bytes
        Server secret, at least 16 bytes.
    k : int
        q is uniform on {2, ..., k}; k >= 2.
    """

    def __init__(self, keys: np.ndarray, secret: bytes, k: int) -> None:
        if not isinstance(secret, bytes | bytearray) or len(secret) < MIN_SECRET_BYTES:
            raise ParameterError(
                f"the Drop q secret must be at least {MIN_SECRET_BYTES} bytes (use generate_secret())"
            )
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
            raise ParameterError(f"drop_q_k must be an integer >= 2, got {k!r}")
        keys = np.asarray(keys, dtype=np.int64)
        self._secret: bytes = bytes(secret)
        self._k: int = int(k)
        # Sorting once lets each query list its units in key order without a sort.
        self._order: np.ndarray = np.argsort(keys, kind="stable")
        self._sorted_keys: np.ndarray = np.ascontiguousarray(keys[self._order]).astype("<i8")

    def __repr__(self) -> str:
        return f"DropQ(k={self._k}, units={self._sorted_keys.size})"

    @property
    def k(self) -> int:
        return self._k

    def seed(self, members: np.ndarray) -> bytes:
        """The keyed digest of a universe's set of units (same set, same digest)."""
        in_order = np.asarray(members, dtype=bool)[self._order]
        payload = self._sorted_keys[in_order].tobytes()
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def subsample(self, members: np.ndarray) -> DropQSample:
        """Drop q units, q uniform on {2..k}, from the universe given as a boolean mask.

        Raises
        ------
        DataError
            When the universe has no more than k units (the Gamma rule, checked
            first, prevents this on a configured server).
        """
        members = np.asarray(members, dtype=bool)
        if members.shape != self._order.shape:
            raise ParameterError(
                f"universe mask has {members.size} entries; the data have {self._order.size} records"
            )
        in_order = members[self._order]
        positions = self._order[in_order]  # row positions of members, in key order
        n = positions.size
        if n <= self._k:
            raise DataError(f"Drop q needs a universe of more than k={self._k} units")
        digest = hmac.new(self._secret, self._sorted_keys[in_order].tobytes(), hashlib.sha256)
        rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest.digest(), "little")))
        q = int(rng.integers(2, self._k + 1))
        drop = rng.choice(n, size=q, replace=False)
        keep = np.ones(n, dtype=bool)
        keep[drop] = False
        return DropQSample(np.sort(positions[keep]), q)
