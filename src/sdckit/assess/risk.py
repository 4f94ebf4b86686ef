"""Risk: what a masked release still gives away.

Sources
-------
* Perry, Matloff & Tendick (2022), Section 8.2-8.3: outliers an
  intruder may recognise (Mahalanobis distance; Cook's distance in a
  regression) and "inliers" (distance to the closest record).
* Oganian (2011), Section 5: re-identification by record linkage,
  the share of records an intruder holding some of the original attributes
  links correctly to the masked file; here the distance-based intruder links
  each original record to its nearest masked record.
* Mateo-Sanz, Sebe & Domingo-Ferrer (2004), method SDID, as in sdcMicro's
  ``dRisk``: interval disclosure.
* For categorical key variables: frequency counts of key combinations,
  sample uniques, k-anonymity (Sweeney 2002) and l-diversity
  (Machanavajjhala et al. 2007) of a sensitive variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from sdckit._pairs import (
    check_pair_schema,
    complete_rows,
    joint_design,
    numeric_columns,
    numeric_matrix,
    pair_doc,
    resolve_schema,
)
from sdckit._results import FrozenResult
from sdckit._validation import (
    check_columns,
    check_dataframe,
    check_int,
    check_positive,
    describe_row,
    plain_value,
)
from sdckit.assess._result import MeasureResult
from sdckit.assess.categorical import (
    Diversity,
    check_keys,
    check_weights,
    frequencies,
    sensitive_diversity,
)
from sdckit.assess.categorical import (
    max_numeric_key_levels as max_numeric_key_levels,
)
from sdckit.assess.distances import LinkSearch, link_search, within_distances
from sdckit.assess.utility import fit_regression
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.neighbors import NeighborBackend
from sdckit.neighbors.backends import resolve_backend
from sdckit.schema import Schema

__all__ = [
    "DistanceToClosest",
    "ExtremeRecords",
    "IntervalDisclosure",
    "KeyRisk",
    "KeyRiskComparison",
    "RecordLinkage",
    "compare_cooks_distance",
    "compare_key_risk",
    "compare_mahalanobis",
    "distance_to_closest",
    "interval_disclosure",
    "key_risk",
    "mahalanobis_distances",
    "record_linkage",
]


# ---------------------------------------------------------------------------
# Outliers: Mahalanobis and Cook's distances
# ---------------------------------------------------------------------------


def _mahalanobis(matrix: np.ndarray, squared: bool) -> np.ndarray:
    complete = complete_rows(matrix)
    x = matrix[complete]
    if len(x) < 2:
        raise DataError("Mahalanobis distances need at least 2 complete records")
    centred = x - x.mean(axis=0)
    cov = np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
    # The pseudo-inverse keeps a constant or collinear variable from blowing up the distances.
    precision = np.linalg.pinv(cov, hermitian=True)
    d2 = np.einsum("ij,jk,ik->i", centred, precision, centred)
    out = np.full(len(matrix), np.nan)
    out[complete] = np.maximum(d2, 0.0)
    return out if squared else np.sqrt(out)


def mahalanobis_distances(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    squared: bool = False,
) -> pd.Series:
    """Mahalanobis distance of each record from the centre of the data.

    d_i = sqrt((x_i - xbar)' S^-1 (x_i - xbar)) with the sample mean xbar and
    covariance S (divisor n - 1) of the complete records; S^-1 is the
    Moore-Penrose pseudo-inverse when S is singular. ``squared=True`` gives
    d_i^2, which is what R's ``mahalanobis()`` returns. Records with a
    missing value get NaN. Perry, Matloff & Tendick (2022), Section 8.2, example (a), and Figure 7.

    Parameters
    ----------
    data : DataFrame
        One file.
    columns : iterable of str, optional
        Numeric or ordinal variables; default every numeric/ordinal column.
    schema : Schema, optional
        Inferred from ``data`` when omitted.
    squared : bool, default False
        Return d_i^2 instead of d_i.

    Returns
    -------
    Series
        One distance per record, indexed like ``data``.
    """
    check_dataframe(data, min_rows=2)
    schema = resolve_schema(data, schema)
    cols = numeric_columns(data, schema, columns)
    if not cols:
        raise SchemaError("Mahalanobis distances need at least one numeric column")
    values = _mahalanobis(numeric_matrix(data, cols, schema), squared)
    return pd.Series(values, index=data.index, name="mahalanobis")


@dataclass(frozen=True)
class ExtremeRecords(MeasureResult):
    """An outlyingness measure per record in the original and in the masked data.

    Attributes
    ----------
    measure : str
        ``"Mahalanobis distance"`` or ``"Cook's distance"``.
    original, masked : Series
        The measure of every record (same index as the data).
    top : int
        How many records ``top_original`` / ``top_masked`` list.
    """

    measure: str
    original: pd.Series
    masked: pd.Series
    top: int = 5

    @property
    def top_original(self) -> list:
        """Labels of the most extreme records of the original data, most extreme first."""
        return list(self.original.nlargest(self.top).index)

    @property
    def top_masked(self) -> list:
        """Labels of the most extreme records of the masked data."""
        return list(self.masked.nlargest(self.top).index)

    @property
    def most_extreme(self):
        """Label of the original data's most extreme record."""
        return self.original.idxmax()

    @property
    def max_original(self) -> float:
        return float(self.original.max())

    @property
    def max_masked(self) -> float:
        return float(self.masked.max())

    @property
    def rank_in_masked(self) -> int:
        """Rank (1 = most extreme) of the original's most extreme record in the masked data."""
        value = self.masked.get(self.most_extreme, np.nan)
        if not np.isfinite(value):
            return len(self.masked)
        return int((self.masked > value).sum()) + 1

    @property
    def still_most_extreme(self) -> bool:
        """Whether the original's most extreme record is still the most extreme after masking."""
        return self.rank_in_masked == 1

    LABELS: ClassVar[Mapping[str, str]] = {
        "mahalanobis_max_original": "largest Mahalanobis distance, original",
        "mahalanobis_max_masked": "largest Mahalanobis distance, masked",
        "mahalanobis_rank_of_top": "rank after masking of the most extreme record (Mahalanobis)",
        "cooks_max_original": "largest Cook's distance, original",
        "cooks_max_masked": "largest Cook's distance, masked",
        "cooks_rank_of_top": "rank after masking of the most influential record (Cook's)",
    }

    @property
    def key(self) -> str:
        """Short name of the measure in headline keys: ``"mahalanobis"``, ``"cooks"``, ...."""
        known = {"Mahalanobis distance": "mahalanobis", "Cook's distance": "cooks"}
        return known.get(self.measure) or "".join(
            c if c.isalnum() else "_" for c in self.measure.lower()
        )

    def headline(self) -> dict[str, float]:
        """The key figures: largest value in both files and the rank after masking of the
        original's most extreme record, prefixed by :attr:`key`."""
        return {
            f"{self.key}_max_original": self.max_original,
            f"{self.key}_max_masked": self.max_masked,
            f"{self.key}_rank_of_top": float(self.rank_in_masked),
        }

    def note(self) -> str:
        rec = self.most_extreme
        before = self.max_original
        after = float(self.masked.get(rec, np.nan))
        where = _record(self.masked.index, rec)
        if self.still_most_extreme:
            return (
                f"The record at {where} has the largest {self.measure} in the original data ({before:.3g}); "
                f"after masking it still does ({after:.3g}): it still stands out."
            )
        return (
            f"The record at {where} has the largest {self.measure} in the original data "
            f"({before:.3g}); after masking it is number {self.rank_in_masked} ({after:.3g}), "
            f"and the largest value is {self.max_masked:.3g} (the record at "
            f"{_record(self.masked.index, self.masked.idxmax())})."
        )

    def summary(self) -> str:
        return (
            f"{self.measure}: max {self.max_original:.4g} -> {self.max_masked:.4g}; "
            f"most extreme original record {self.most_extreme} ranks {self.rank_in_masked} after masking"
        )


@pair_doc
def compare_mahalanobis(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    top: int = 5,
) -> ExtremeRecords:
    """Mahalanobis distances in both files: does the outlier still stand out? (Perry, Matloff & Tendick 2022, Fig. 7)

    Each file's distances use its own mean and covariance, since an intruder
    looks for the outlier within the file released.

    Parameters
    ----------
    {{numeric_pair}}
    top : int, default 5
        How many of the most extreme records to list.

    Returns
    -------
    ExtremeRecords
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    top = check_int(top, "top", minimum=1)
    d0 = mahalanobis_distances(original, columns=columns, schema=schema)
    d1 = mahalanobis_distances(masked, columns=columns, schema=schema)
    return ExtremeRecords("Mahalanobis distance", d0, d1, top)


@pair_doc
def compare_cooks_distance(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    response: str,
    predictors: Iterable[str],
    *,
    schema: Schema | None = None,
    top: int = 5,
) -> ExtremeRecords:
    """Cook's distances of ``response ~ predictors`` in both files (Perry, Matloff & Tendick 2022, Figure 6).

    D_i = e_i^2 / (p s^2) * h_ii / (1 - h_ii)^2 (statsmodels' OLSInfluence).
    Records not used by a fit (missing values) get NaN.

    Parameters
    ----------
    {{pair}}
    response : str
        The numeric response.
    predictors : iterable of str
        The predictors.
    {{schema}}
    top : int, default 5
        How many of the most influential records to list.

    Returns
    -------
    ExtremeRecords
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    top = check_int(top, "top", minimum=1)
    fit0 = fit_regression(original, response, predictors, schema=schema)
    fit1 = fit_regression(masked, response, predictors, schema=schema)
    return ExtremeRecords(
        "Cook's distance",
        fit0.cooks_distance.reindex(original.index),
        fit1.cooks_distance.reindex(masked.index),
        top,
    )


# ---------------------------------------------------------------------------
# Distance to the closest record, and distance-based record linkage
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DistanceToClosest(MeasureResult):
    """Distances to the closest record, in the design scaled alike for both files.

    Attributes
    ----------
    within_original : Series
        Distance from each original record to the closest *other* original
        record: small for an ordinary record, large for an isolated one.
    within_masked : Series
        The same within the masked file.
    original_to_masked : Series
        Distance from each original record to the closest masked record: an
        intruder holding the original values finds a candidate this close.
    columns : list of str
    scale : str or None
    """

    within_original: pd.Series
    within_masked: pd.Series
    original_to_masked: pd.Series
    columns: list[str]
    scale: str | None

    @classmethod
    def from_search(
        cls,
        index: pd.Index,
        columns: list[str],
        scale: str | None,
        x0: np.ndarray,
        x1: np.ndarray,
        found: LinkSearch,
        *,
        backend: NeighborBackend,
        chunk_size: int = 8192,
        n_jobs: int | None = None,
    ) -> DistanceToClosest:
        """The measure from the designs of both files and their linkage search.

        Parameters
        ----------
        index : Index
            The files' row index.
        columns : list of str
            The variables of the designs.
        scale : str or None
            How the designs were scaled.
        x0, x1 : ndarray
            Designs of the original and masked files (scaled alike).
        found : LinkSearch
            From :func:`sdckit.assess.distances.link_search` on ``x0, x1``.
        backend : NeighborBackend
            The search for the distances within each file (refitted here).
        chunk_size : int, default 8192
            Records per search block.
        n_jobs : None, -1 or positive int
            Search threads.

        Returns
        -------
        DistanceToClosest
        """

        def within(matrix: np.ndarray) -> np.ndarray:
            return within_distances(matrix, backend=backend, chunk_size=chunk_size, n_jobs=n_jobs)

        return cls(
            within_original=pd.Series(within(x0), index=index, name="within_original"),
            within_masked=pd.Series(within(x1), index=index, name="within_masked"),
            original_to_masked=pd.Series(found.nearest, index=index, name="original_to_masked"),
            columns=columns,
            scale=scale,
        )

    @property
    def most_isolated(self):
        """Label of the original record farthest from any other original record."""
        return self.within_original.idxmax()

    LABELS: ClassVar[Mapping[str, str]] = {
        "dcr_median_original": "median distance to closest record, original",
        "dcr_median_masked": "median distance to closest record, masked",
        "dcr_median_original_to_masked": "median distance original -> closest masked",
    }

    def headline(self) -> dict[str, float]:
        """The key figures: median distance to the closest record within each file and across."""
        return {
            "dcr_median_original": float(self.within_original.median()),
            "dcr_median_masked": float(self.within_masked.median()),
            "dcr_median_original_to_masked": float(self.original_to_masked.median()),
        }

    def note(self) -> str:
        rec = self.most_isolated
        return (
            f"The record at {_record(self.within_original.index, rec)} is the most isolated in "
            "the original data (distance "
            f"{self.within_original[rec]:.3g} to its closest record; median "
            f"{self.within_original.median():.3g}). In the masked data the median distance "
            f"to the closest record is {self.within_masked.median():.3g}, and the closest "
            f"masked record to an original one is {self.original_to_masked.median():.3g} away "
            "in the median."
        )

    def summary(self) -> str:
        def q(s: pd.Series) -> str:
            return f"median {s.median():.4g}, 95% {s.quantile(0.95):.4g}, max {s.max():.4g}"

        return "\n".join(
            [
                f"distance to the closest record ({len(self.columns)} variables, scale={self.scale}):",
                f"  within original:     {q(self.within_original)}",
                f"  within masked:       {q(self.within_masked)}",
                f"  original -> masked:  {q(self.original_to_masked)}",
            ]
        )


@dataclass(frozen=True)
class RecordLinkage(MeasureResult):
    """The distance-based record-linkage intruder (Oganian 2011, Section 5).

    The intruder holds the original values of ``columns`` for every record
    and links each to its nearest masked record. A record is re-identified
    when that nearest record is its own masked version; when several masked
    records are equally near, the intruder picks one at random, so the
    record counts as 1/(number tied).

    Attributes
    ----------
    columns : list of str
        The variables the intruder knows.
    rate : float
        Expected share of records correctly linked (the re-identification rate).
    linked : Series
        Per record: probability it is linked correctly (0, 1, or 1/ties);
        NaN for records with missing values (excluded from the rate).
    distance_to_own : Series
        Distance from each original record to its own masked version.
    distance_to_nearest : Series
        Distance from each original record to the nearest masked record.
    """

    columns: list[str]
    rate: float
    linked: pd.Series
    distance_to_own: pd.Series
    distance_to_nearest: pd.Series

    @classmethod
    def from_search(cls, index: pd.Index, columns: list[str], found: LinkSearch) -> RecordLinkage:
        """The measure from a linkage search.

        Parameters
        ----------
        index : Index
            The files' row index.
        columns : list of str
            The variables the intruder knows.
        found : LinkSearch
            From :func:`sdckit.assess.distances.link_search`.

        Returns
        -------
        RecordLinkage
        """
        valid = np.isfinite(found.score)
        if not valid.any():
            raise DataError(
                "record linkage: no original record has complete values in the linkage columns"
            )
        return cls(
            columns=columns,
            rate=float(found.score[valid].mean()),
            linked=pd.Series(found.score, index=index, name="linked"),
            distance_to_own=pd.Series(found.own, index=index, name="distance_to_own"),
            distance_to_nearest=pd.Series(found.nearest, index=index, name="distance_to_nearest"),
        )

    @property
    def n_linked(self) -> float:
        """Expected number of records correctly linked."""
        return float(np.nansum(self.linked.to_numpy()))

    LABELS: ClassVar[Mapping[str, str]] = {
        "linkage_rate": "record-linkage re-identification rate",
    }

    def headline(self) -> dict[str, float]:
        """The key figures: the re-identification rate."""
        return {"linkage_rate": self.rate}

    def note(self) -> str:
        n = int(self.linked.notna().sum())
        return (
            f"An intruder who knows {', '.join(self.columns)} of every record and links it to the "
            f"nearest masked record re-identifies {self.rate:.1%} of the records "
            f"(about {self.n_linked:.0f} of {n}); by chance alone it would be about {1 / max(n, 1):.2%}."
        )

    def summary(self) -> str:
        # n_linked is an expected count (a tie among m nearest records counts 1/m):
        # shown rounded, as a person counts records.
        n = int(self.linked.notna().sum())
        return (
            f"distance-based record linkage on {len(self.columns)} variable(s): "
            f"{self.rate:.4f} of records re-identified (about {self.n_linked:.0f} of {n} records)"
        )


class _Linked(NamedTuple):
    """An original/masked pair checked, its joint design built and the linkage search run."""

    index: pd.Index
    columns: list[str]
    x0: np.ndarray
    x1: np.ndarray
    found: LinkSearch
    backend: NeighborBackend
    chunk_size: int


def _link_pair(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    columns: Iterable[str] | None,
    schema: Schema | None,
    scale: str | None,
    weights: Mapping[str, float] | None,
    backend: NeighborBackend | str | None,
    chunk_size: int,
    n_jobs: int | None,
) -> _Linked:
    original, masked, resolved = check_pair_schema(original, masked, schema)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    search = resolve_backend(backend)
    if columns is None:
        cols = [c for c in resolved.maskable() if c in masked.columns]
    else:
        cols = check_columns(original, columns, "columns")
    if not cols:
        raise SchemaError("no columns to measure distances on")
    x0, x1 = joint_design(
        original,
        masked,
        cols,
        resolved,
        scale=scale,
        weights=dict(weights) if weights is not None else None,
    )
    found = link_search(x0, x1, backend=search, chunk_size=chunk_size, n_jobs=n_jobs)
    return _Linked(original.index, cols, x0, x1, found, search, chunk_size)


@pair_doc
def distance_to_closest(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    weights: Mapping[str, float] | None = None,
    backend: NeighborBackend | str | None = None,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> DistanceToClosest:
    """Distances to the closest record within and across the files (Perry, Matloff & Tendick 2022, Figure 8).

    Distances are Euclidean in the design of :func:`sdckit.schema.build_design`
    (numeric columns scaled, by default to [0, 1], categoricals as dummies),
    with the scaling constants computed on both files together so the three
    sets of distances are comparable. Exact KD-tree searches in chunks by
    default: memory is O(n), never O(n^2).

    Parameters
    ----------
    {{pair}}
    columns : iterable of str, optional
        Variables to measure distances on; default every maskable column.
    {{schema}}
    {{distance_search}}

    Returns
    -------
    DistanceToClosest
    """
    linked = _link_pair(
        original, masked, columns, schema, scale, weights, backend, chunk_size, n_jobs
    )
    return DistanceToClosest.from_search(
        linked.index,
        linked.columns,
        scale,
        linked.x0,
        linked.x1,
        linked.found,
        backend=linked.backend,
        chunk_size=linked.chunk_size,
        n_jobs=n_jobs,
    )


@pair_doc
def record_linkage(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    weights: Mapping[str, float] | None = None,
    backend: NeighborBackend | str | None = None,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
) -> RecordLinkage:
    """Re-identification rate of the distance-based linkage intruder (Oganian 2011, Section 5).

    Parameters
    ----------
    {{pair}}
    columns : iterable of str, optional
        The attributes the intruder knows (a subset of the original's, as in
        Oganian's set-up); default every maskable column.
    {{schema}}
    {{distance_search}}

    Returns
    -------
    RecordLinkage
        ``rate`` is 1.0 when the masked file equals the original (and has no
        duplicated records) and about 1/n when the masked file is unrelated
        to the original.
    """
    linked = _link_pair(
        original, masked, columns, schema, scale, weights, backend, chunk_size, n_jobs
    )
    return RecordLinkage.from_search(linked.index, linked.columns, linked.found)


# ---------------------------------------------------------------------------
# Interval disclosure
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IntervalDisclosure(MeasureResult):
    """Interval disclosure in the style of sdcMicro's ``dRisk`` (method SDID).

    An interval of half-width ``k`` standard deviations (of the original
    variable) is put around every masked value; a record is at risk when
    each of its original values lies inside the interval around its masked
    value.

    Attributes
    ----------
    k : float
    rate : float
        Share of records at risk.
    per_variable : Series
        Per variable, the share of values inside their interval.
    at_risk : Series of bool
        Per record.
    """

    k: float
    rate: float
    per_variable: pd.Series
    at_risk: pd.Series

    LABELS: ClassVar[Mapping[str, str]] = {"interval_disclosure": "interval disclosure rate"}

    def headline(self) -> dict[str, float]:
        """The key figures: the share of records at risk."""
        return {"interval_disclosure": self.rate}

    def summary(self) -> str:
        return (
            f"interval disclosure (k = {self.k:g} sd): {self.rate:.4f} of records have every "
            f"original value within the interval around the masked value"
        )


@pair_doc
def interval_disclosure(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    k: float = 0.01,
) -> IntervalDisclosure:
    """Share of records whose original values all lie within k sd of their masked values.

    For numeric variable j with original standard deviation s_j, value
    x_ij is disclosed when |x_ij - x'_ij| <= k s_j, and a record is at risk
    when every one of its values is. The method is SDID of Mateo-Sanz, Sebe &
    Domingo-Ferrer (2004). sdcMicro's ``dRisk`` implements it differently in
    three ways, so its figures are not ours:

    * its default is k = 0.05, ours k = 0.01 (a narrower interval: fewer
      records counted at risk for the same release);
    * it scales by the standard deviation of the *masked* data, we by the
      *original's*: the interval is then the same ruler for every release of
      one file, whereas with the masked sd a masking that adds more noise
      widens its own interval and is credited with more risk for it;
    * it counts a record at risk when at most one of its values falls outside
      (and ignores missing values), we only when all are inside (a missing
      masked value is never inside).

    Pass ``k=0.05`` for sdcMicro's interval width (still on the original sd).

    Parameters
    ----------
    {{numeric_pair}}
    k : float, default 0.01
        Interval half-width in standard deviations of the original variable.

    Returns
    -------
    IntervalDisclosure
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    k = check_positive(k, "k", allow_zero=True)
    cols = numeric_columns(original, schema, columns)
    if not cols:
        raise SchemaError("interval disclosure needs at least one numeric column")
    x0 = numeric_matrix(original, cols, schema)
    x1 = numeric_matrix(masked, cols, schema)
    sd = np.nanstd(x0, axis=0, ddof=1)
    with np.errstate(invalid="ignore"):
        inside = np.abs(x0 - x1) <= k * sd
    at_risk = inside.all(axis=1)
    return IntervalDisclosure(
        k=k,
        rate=float(at_risk.mean()),
        per_variable=pd.Series(inside.mean(axis=0), index=cols),
        at_risk=pd.Series(at_risk, index=original.index, name="at_risk"),
    )


# ---------------------------------------------------------------------------
# Categorical key variables: frequencies, k-anonymity, l-diversity
# ---------------------------------------------------------------------------


def key_figure_lines(risk: Any, records: str = "") -> list[str]:
    """The first lines of a key-risk summary: combinations, uniques, k-anonymity, violations.

    Shared by :meth:`KeyRisk.summary` and
    :meth:`sdckit.distributed.DistributedKeyRisk.summary`, so that the
    single-machine and the partitioned figures read alike.

    Parameters
    ----------
    risk : KeyRisk or DistributedKeyRisk
        Any result with the attributes ``keys``, ``n_combinations``,
        ``sample_uniques``, ``k_anonymity``, ``violations`` and
        ``expected_reidentifications`` (typed ``Any``: the partitioned result
        lives in a layer above this module).
    records : str, default ""
        Appended to the first line (the partitioned result adds its number of records).

    Returns
    -------
    list of str
        Three lines, the last two indented.
    """
    return [
        f"key variables {', '.join(risk.keys)}: {risk.n_combinations} combinations, "
        f"{risk.sample_uniques} sample unique(s), {risk.k_anonymity}-anonymous{records}",
        "  records violating k-anonymity: "
        + ", ".join(f"k={k}: {v}" for k, v in risk.violations.items()),
        f"  expected re-identifications (sum 1/f_k): {risk.expected_reidentifications:.1f}",
    ]


@dataclass(frozen=True)
class KeyRisk(FrozenResult):
    """Frequency counts of key combinations in one file.

    Attributes
    ----------
    keys : list of str
        The categorical key variables (quasi-identifiers).
    frequencies : Series
        f_k of each record: how many records share its combination of keys
        (under ``missing="any"``, how many records its keys match).
    n_combinations : int
        Number of distinct key combinations (a missing value counted as a value).
    sample_uniques : int
        Records whose combination is unique (f_k = 1).
    k_anonymity : int
        The file is k-anonymous for this k = min f_k.
    violations : dict
        ``{k: records with f_k < k}`` for k = 2, 3, 5.
    expected_reidentifications : float
        sum_i 1 / f_k(i): the expected number of records an intruder who
        knows the keys and that the person is in the file re-identifies by
        picking at random within the combination.
    sensitive : str or None
        The (first) sensitive variable.
    diversity : Series or None
        Per record: the number of distinct values of ``sensitive`` in its key
        combination (its class's l).
    l_diversity : int or None
        min over combinations of the number of distinct values of ``sensitive``.
    missing : str
        ``"category"`` (a missing key value is a category of its own) or
        ``"any"`` (it matches any value).
    population_frequencies : Series or None
        With sampling weights, F_k of each record: the sum of the weights of
        the records its keys match.
    diversities : mapping of str to Diversity
        Distinct, entropy and recursive l-diversity and t-closeness of every
        sensitive variable (:func:`sdckit.assess.categorical.sensitive_diversity`).
    """

    keys: list[str]
    frequencies: pd.Series
    n_combinations: int
    sample_uniques: int
    k_anonymity: int
    violations: dict[int, int]
    expected_reidentifications: float
    sensitive: str | None = None
    diversity: pd.Series | None = None
    l_diversity: int | None = None
    missing: str = "category"
    population_frequencies: pd.Series | None = None
    diversities: Mapping[str, Diversity] = field(default_factory=dict)

    def summary(self) -> str:
        lines = key_figure_lines(self)
        if self.missing == "any":
            lines.append("  missing key values match any value")
        if self.population_frequencies is not None:
            lines.append(
                "  smallest population frequency F_k (sum of weights): "
                f"{float(self.population_frequencies.min()):.4g}"
            )
        if self.sensitive is not None and not self.diversities:
            lines.append(f"  sensitive {self.sensitive!r}: {self.l_diversity}-diverse")
        # Distinct l per sensitive variable, as always; the other measures in ``diversities``.
        lines.extend(
            f"  sensitive {d.sensitive!r}: {d.l_distinct}-diverse"
            for d in self.diversities.values()
        )
        return "\n".join(lines)


def key_risk(
    data: pd.DataFrame,
    keys: Iterable[str],
    *,
    sensitive: str | Iterable[str] | None = None,
    schema: Schema | None = None,
    missing: str = "category",
    weight: str | None = None,
    c: float = 2.0,
) -> KeyRisk:
    """Frequency counts, sample uniques, k-anonymity and l-diversity of one file.

    By default a missing key value counts as a category of its own; with
    ``missing="any"`` it matches any value, the convention of sdcMicro and
    mu-Argus for suppressed cells (Hundepool et al. 2012, §3.4.2), so that a
    file made k-anonymous by local suppression can be certified. Key
    variables are expected to be categorical or ordinal; a numeric key is
    accepted only if it takes few distinct values
    (:func:`max_numeric_key_levels`: at most 100, and at most half the number
    of records), since nearly every value of a continuous variable is unique.
    Declare such a column categorical in the schema to use its values as
    categories anyway.

    Parameters
    ----------
    data : DataFrame
        One file.
    keys : iterable of str
        The key variables (quasi-identifiers), at least one.
    sensitive : str or iterable of str, optional
        Sensitive variable(s), for l-diversity and t-closeness; not keys.
    schema : Schema, optional
        Inferred from ``data`` when omitted.
    missing : {"category", "any"}, default "category"
        How a missing key value counts.
    weight : str, optional
        Column of sampling weights, for the population frequencies F_k.
    c : float, default 2.0
        The constant of recursive (c, l)-diversity.

    Returns
    -------
    KeyRisk
    """
    keys, schema = check_keys(data, keys, schema)
    sensitives = [] if sensitive is None else check_columns(data, sensitive, "sensitive")
    for name in sensitives:
        if name in keys:
            raise ParameterError(f"sensitive variable {name!r} is also a key")
    weights = None if weight is None else check_weights(data, weight, keys)
    groups, freq_float, big_f = frequencies(data, keys, missing=missing, weights=weights)
    freq = freq_float.astype(np.int64)
    diversities = {
        name: sensitive_diversity(data, keys, name, missing=missing, c=c, schema=schema)
        for name in sensitives
    }
    first = diversities[sensitives[0]] if sensitives else None
    return KeyRisk(
        keys=keys,
        frequencies=pd.Series(freq, index=data.index, name="frequency"),
        n_combinations=groups.n_groups,
        sample_uniques=int((freq == 1).sum()),
        k_anonymity=int(freq.min()),
        violations={k: int((freq < k).sum()) for k in (2, 3, 5)},
        expected_reidentifications=float((1.0 / freq).sum()),
        sensitive=sensitives[0] if sensitives else None,
        diversity=None if first is None else first.distinct.rename("l_diversity"),
        l_diversity=None if first is None else first.l_distinct,
        missing=groups.missing,
        population_frequencies=None
        if weights is None
        else pd.Series(big_f, index=data.index, name="population_frequency"),
        diversities=diversities,
    )


@dataclass(frozen=True)
class KeyRiskComparison(FrozenResult):
    """:class:`KeyRisk` of the original and of the masked file."""

    original: KeyRisk
    masked: KeyRisk

    LABELS: ClassVar[Mapping[str, str]] = {
        "sample_uniques_original": "sample uniques, original",
        "sample_uniques_masked": "sample uniques, masked",
        "k_anonymity_masked": "k-anonymity of the masked file",
        "l_diversity_masked": "l-diversity of the masked file",
    }

    def headline(self) -> dict[str, float]:
        """The key figures, ``{name: number}``.

        Returns
        -------
        dict
            Sample uniques of both files, k-anonymity (and l-diversity) of the masked file.
        """
        out = {
            "sample_uniques_original": float(self.original.sample_uniques),
            "sample_uniques_masked": float(self.masked.sample_uniques),
            "k_anonymity_masked": float(self.masked.k_anonymity),
        }
        if self.masked.l_diversity is not None:
            out["l_diversity_masked"] = float(self.masked.l_diversity)
        return out

    def note(self) -> str:
        """A plain-language sentence for a report.

        Returns
        -------
        str
        """
        o, m = self.original, self.masked
        text = (
            f"On the keys {', '.join(o.keys)}, the original has {o.sample_uniques} sample unique(s) "
            f"and is {o.k_anonymity}-anonymous; the masked file has {m.sample_uniques} and is "
            f"{m.k_anonymity}-anonymous."
        )
        if o.sensitive is not None:
            text += (
                f" The sensitive variable {o.sensitive!r} is {o.l_diversity}-diverse before "
                f"and {m.l_diversity}-diverse after."
            )
        return text

    def summary(self) -> str:
        return "original:\n" + self.original.summary() + "\nmasked:\n" + self.masked.summary()


def compare_key_risk(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    keys: Iterable[str],
    *,
    sensitive: str | None = None,
    schema: Schema | None = None,
) -> KeyRiskComparison:
    """:func:`key_risk` of both files.

    Parameters
    ----------
    original, masked : DataFrame
        The original file and its release (same rows, same order).
    keys : iterable of str
        The key variables (quasi-identifiers), at least one.
    sensitive : str, optional
        A sensitive variable, for l-diversity.
    schema : Schema, optional
        Inferred from ``original`` when omitted.

    Returns
    -------
    KeyRiskComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    return KeyRiskComparison(
        original=key_risk(original, keys, sensitive=sensitive, schema=schema),
        masked=key_risk(masked, keys, sensitive=sensitive, schema=schema),
    )


def _record(index: pd.Index, label: object) -> str:
    """Where a record is, as a person finds it in the file: "row 5" (1-based), with its label."""
    try:
        position = index.get_loc(label)
    except KeyError:
        return f"index {plain_value(label)!r}"
    if not isinstance(position, (int, np.integer)):
        return f"index {plain_value(label)!r}"
    return describe_row(index, int(position))
