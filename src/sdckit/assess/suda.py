"""SUDA: minimal sample uniques, SUDA and DIS-SUDA scores, each key's contribution.

A *sample unique* on a set S of key variables is a record whose values on S no
other record shares; a *minimal sample unique* (MSU) is such a set none of
whose proper subsets is unique for the record (Elliot, Manning & Ford 2002).
A record with an MSU of one or two keys is a *special unique*: an intruder
needs to know little to single it out.

**Search.** Uniqueness is monotone — a record unique on S is unique on every
superset — so S is an MSU of a record exactly when the record is unique on S
and on none of the |S| subsets with one key fewer (Manning, Haglin & Keane
2008, §3, the property SUDA2 is built on). The search here goes through the
subsets level by level, up to ``max_size`` keys: each subset's records are
counted in one pass (integer codes combined by mixed radix,
:mod:`sdckit._keys`) and its MSUs are the unique records not unique one level
below. It finds exactly the MSUs of the definition (the tests compare it with
an enumeration of every record's subsets); its cost is one count per subset,
sum_{m <= M} C(p, m) counts of n records, which on 10 keys and M = 4 is 385
passes.

**Scores.** An MSU of k keys (p keys in all, MSUs sought up to M) scores

    w(k) = prod_{i=k}^{M-1} (p - i)        ((p - k)! when M = p),

so smaller MSUs weigh more; a record's SUDA score is the sum over its MSUs
(Elliot et al. 2002; sdcMicro's ``suda2`` with ``original_scores``). A
key's *contribution* to a record's score is the share of that score carried
by MSUs that contain it (asked for by Statistics Singapore, sdcMicro #71);
the shares of one record add up to the mean size of its MSUs, not to 1.

*Checked against sdcMicro.* Its ``suda2`` (``original_scores = TRUE``, the
default since version 5.0.2, "as described in the paper by Elliot et al.")
weights an MSU of k keys by prod_{j=k}^{p-1} (p - j) = (p - k)!, searching
every size (M = p): the weight above at M = p. Its package tests expect the
attribute contributions 50%, 37.5%, 37.5% on a three-record example and a
score of 180 for the first record of its ``testdata2`` on seven keys; sdckit
gives both (``tests/assess/test_suda.py``). With M < p the weight above keeps
the same ratios between sizes; a form prod_{i=k}^{M} (p - i), seen in
secondary descriptions, differs from it by the constant factor p - M only
(and would be 0 for every MSU at M = p, so it cannot be meant there).
Contributions and DIS-SUDA (below) do not depend on that factor.

**DIS-SUDA.** The file's DIS probability — that a unique match of a sample
unique is a correct match — is estimated as in Skinner & Elliot (2002, §3):
θ̂ = π n_1 / (π n_1 + 2 (1 - π) n_2), with π the sampling fraction and n_1,
n_2 the numbers of key combinations (all keys together) held by one and by
two records. sdckit spreads θ̂ over the records in proportion to their SUDA
score, scaled so that the mean DIS-SUDA score of the records with an MSU
equals θ̂, and caps it at 1; this calibration is ours, stated here because
the published DIS-SUDA calibrations differ between implementations (sdcMicro's
spreads θ̂ through a power of the score that depends on p, so its per-record
DIS-SUDA scores differ from these).

A missing key value is a value of its own here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._keys import combine_codes, key_codes
from sdckit._results import FrozenResult
from sdckit._validation import check_fraction, check_int
from sdckit.assess.categorical import check_keys
from sdckit.errors import ParameterError
from sdckit.schema import Schema

__all__ = ["Suda", "msu_weight", "suda"]


def msu_weight(size: int, n_keys: int, max_size: int) -> float:
    """The SUDA weight w(k) = prod_{i=k}^{M-1} (p - i) of an MSU of ``size`` keys.

    Parameters
    ----------
    size : int
        k, the MSU's number of keys (1 <= k <= M).
    n_keys : int
        p, the number of key variables.
    max_size : int
        M, the largest MSU size sought (M <= p).

    Returns
    -------
    float
    """
    return float(math.prod(n_keys - i for i in range(size, max_size)))


@dataclass(frozen=True)
class Suda(FrozenResult):
    """Minimal sample uniques and SUDA scores of every record.

    Attributes
    ----------
    keys : list of str
        The key variables.
    max_size : int
        M, the largest MSU size sought.
    scores : Series
        Each record's SUDA score (0 for a record with no MSU up to M).
    dis_scores : Series
        Each record's DIS-SUDA score (see the module's docstring).
    msu_counts : DataFrame
        Per record, its number of MSUs of each size (columns 1..M).
    contributions : DataFrame
        Per record and key, the share of the record's score carried by MSUs
        containing the key (0 where the score is 0).
    attribute_contributions : Series
        Per key, the share of the file's total score carried by MSUs
        containing it.
    dis : float
        θ̂, the file's DIS probability.
    sampling_fraction : float
        π used for θ̂.
    msus : DataFrame or None
        With ``keep_msus``: one row per MSU, ``record`` (0-based position),
        ``size`` and ``keys`` (a tuple of key names).
    """

    keys: list[str]
    max_size: int
    scores: pd.Series
    dis_scores: pd.Series
    msu_counts: pd.DataFrame
    contributions: pd.DataFrame
    attribute_contributions: pd.Series
    dis: float
    sampling_fraction: float
    msus: pd.DataFrame | None = None

    @property
    def special_uniques(self) -> int:
        """Records with an MSU of at most two keys."""
        small = [c for c in self.msu_counts.columns if c <= 2]
        return int((self.msu_counts[small].sum(axis=1) > 0).sum())

    def explain(self, position: int) -> str:
        """A record's MSUs in words.

        Parameters
        ----------
        position : int
            0-based position of the record.

        Returns
        -------
        str
        """
        counts = self.msu_counts.iloc[position]
        total = int(counts.sum())
        if total == 0:
            return (
                f"row {position + 1} has no minimal sample unique of at most {self.max_size} "
                "keys: no combination of that many key values singles it out"
            )
        smallest = int(counts[counts > 0].index.min())
        text = (
            f"row {position + 1} is unique in the file on {total} minimal combination(s) of "
            f"keys, the smallest of {smallest} key(s)"
        )
        if self.msus is not None:
            mine = self.msus[(self.msus.record == position) & (self.msus["size"] == smallest)]
            text += ": " + "; ".join(" × ".join(k) for k in mine["keys"])
        top = self.contributions.iloc[position].idxmax()
        return text + f"; SUDA score {self.scores.iloc[position]:.4g}, most from {top}"

    def summary(self) -> str:
        """Text for a person: MSUs by size, special uniques, scores, contributions."""
        n = len(self.scores)
        with_msu = int((self.scores > 0).sum())
        by_size = self.msu_counts.sum()
        lines = [
            f"SUDA on {' × '.join(self.keys)} (MSUs up to {self.max_size} keys), {n} records",
            f"  records with an MSU: {with_msu} ({100 * with_msu / max(n, 1):.3g}%); "
            f"special uniques (an MSU of 1 or 2 keys): {self.special_uniques}",
            "  MSUs by size: " + ", ".join(f"{k}: {int(v)}" for k, v in by_size.items()),
            f"  SUDA score: max {self.scores.max():.4g}, mean over records with an MSU "
            f"{self.scores[self.scores > 0].mean() if with_msu else 0.0:.4g}",
            f"  DIS probability (sampling fraction {self.sampling_fraction:g}): {self.dis:.4g}; "
            f"largest DIS-SUDA score {self.dis_scores.max():.4g}",
            "  share of the total score from MSUs containing each key: "
            + ", ".join(f"{k} {100 * v:.3g}%" for k, v in self.attribute_contributions.items()),
        ]
        return "\n".join(lines)


def suda(
    data: pd.DataFrame,
    keys: Iterable[str] | str,
    *,
    max_size: int | None = None,
    sampling_fraction: float = 0.01,
    keep_msus: bool = False,
    schema: Schema | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Suda:
    """Minimal sample uniques and SUDA scores of every record (Elliot et al. 2002).

    See the module's docstring for the search, the scores and DIS-SUDA.

    Parameters
    ----------
    data : DataFrame
        The file.
    keys : iterable of str
        The categorical key variables.
    max_size : int, optional
        M, the largest MSU size sought (default: every key, M = p).
    sampling_fraction : float, default 0.01
        π, the share of the population in the file, for the DIS probability.
    keep_msus : bool, default False
        Also return every MSU (``Suda.msus``); memory grows with their number.
    schema : Schema, optional
        Column kinds (a numeric key declared categorical is accepted).
    progress : callable, optional
        ``progress(done, total)`` over the subsets counted.

    Returns
    -------
    Suda
    """
    keys, schema = check_keys(data, keys, schema)
    p = len(keys)
    size_limit = p if max_size is None else check_int(max_size, "max_size", minimum=1)
    if size_limit > p:
        raise ParameterError(f"max_size = {size_limit} is larger than the number of keys ({p})")
    pi = check_fraction(sampling_fraction, "sampling_fraction", open_low=True)
    n = len(data)
    codes = key_codes(data, keys) + 1
    subsets = [s for m in range(1, size_limit + 1) for s in itertools.combinations(range(p), m)]
    counts = np.zeros((n, size_limit), dtype=np.int64)
    score = np.zeros(n)
    by_key = np.zeros((n, p))
    kept: list[tuple[np.ndarray, int, tuple[str, ...]]] = []
    previous: dict[tuple[int, ...], np.ndarray] = {}
    done = 0
    for m in range(1, size_limit + 1):
        current: dict[tuple[int, ...], np.ndarray] = {}
        weight = msu_weight(m, p, size_limit)
        for subset in itertools.combinations(range(p), m):
            group, n_groups = combine_codes(codes[:, list(subset)])
            unique = np.bincount(group, minlength=n_groups)[group] == 1
            if m < size_limit:
                current[subset] = unique
            rows = np.flatnonzero(unique)
            if m > 1 and len(rows):
                below = np.zeros(len(rows), dtype=bool)
                for drop in range(m):
                    below |= previous[subset[:drop] + subset[drop + 1 :]][rows]
                rows = rows[~below]
            if len(rows):
                counts[rows, m - 1] += 1
                score[rows] += weight
                by_key[np.ix_(rows, np.asarray(subset))] += weight
                if keep_msus:
                    kept.append((rows, m, tuple(keys[j] for j in subset)))
            done += 1
            if progress is not None:
                progress(done, len(subsets))
        previous = current
    index = data.index
    group, n_groups = combine_codes(codes)
    sizes = np.bincount(group, minlength=n_groups)
    n1 = float((sizes == 1).sum())
    n2 = float(2 * (sizes == 2).sum())
    theta = pi * n1 / (pi * n1 + (1 - pi) * n2) if n1 > 0 else 0.0
    scored = score > 0
    dis_scores = np.zeros(n)
    if scored.any():
        dis_scores[scored] = np.minimum(theta * score[scored] / score[scored].mean(), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(scored[:, None], by_key / np.where(scored, score, 1.0)[:, None], 0.0)
    total = score.sum()
    msus = None
    if keep_msus:
        msus = pd.DataFrame(
            [(int(r), m, names) for rows, m, names in kept for r in rows],
            columns=["record", "size", "keys"],
        )
    return Suda(
        keys=keys,
        max_size=size_limit,
        scores=pd.Series(score, index=index, name="suda_score"),
        dis_scores=pd.Series(dis_scores, index=index, name="dis_suda_score"),
        msu_counts=pd.DataFrame(counts, index=index, columns=range(1, size_limit + 1)),
        contributions=pd.DataFrame(shares, index=index, columns=keys),
        attribute_contributions=pd.Series(
            by_key.sum(axis=0) / total if total > 0 else np.zeros(p), index=keys
        ),
        dis=float(theta),
        sampling_fraction=pi,
        msus=msus,
    )
