"""Information loss of protected tables, and the perturbed-deviation publication.

Giessing & Höhne (2011), Sections 6-7:

* Table 5: the distribution of the non-zero cells of a table by absolute
  deviation between true and protected counts, and the mean absolute
  deviation; plus false zeros (true count > 0 published as 0) and false
  non-zeros (true 0 published as > 0).
* Table 6: a cell-level reliability indicator that does not disclose the
  deviation itself: each cell's deviation is perturbed with an invariant
  transition matrix (Shlomo & Young 2008) built on the deviations' own
  frequency distribution, so the frequency table of the published
  deviations matches that of the true ones in expectation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._validation import RandomState, check_columns, check_fraction, check_random_state
from sdckit.errors import DataError, ParameterError
from sdckit.tables.invariant import banded_transition, invariant_transform

__all__ = [
    "DeviationPublication",
    "InfoLossResult",
    "compare_information_loss",
    "information_loss",
    "perturb_deviations",
]


@dataclass(frozen=True)
class InfoLossResult:
    """Result of :func:`information_loss`.

    Attributes
    ----------
    distribution : DataFrame
        Index ``abs_deviation``; columns ``cells`` and ``percent`` over the
        cells whose true count is non-zero (as Table 5).
    mean_abs_deviation : float
        Over the non-zero true cells.
    max_abs_deviation : int
    false_zeros : int
        True count > 0, protected count 0.
    false_nonzeros : int
        True count 0, protected count > 0.
    cells : int
        All cells compared.
    nonzero_cells : int
    compared : tuple of str
        The true column and the protected column that were compared.
    """

    distribution: pd.DataFrame
    mean_abs_deviation: float
    max_abs_deviation: int
    false_zeros: int
    false_nonzeros: int
    cells: int
    nonzero_cells: int
    compared: tuple[str, str] = ("", "")

    def summary(self) -> str:
        """Mean and max deviation, false zeros and non-zeros, and the distribution."""
        dist = ", ".join(f"{int(d)}: {p:.2f}%" for d, p in self.distribution["percent"].items())
        truth, released = self.compared
        head = f"true {truth!r} vs protected {released!r}: " if truth else ""
        return head + (
            f"{self.nonzero_cells} non-zero cells of {self.cells}: mean |deviation| "
            f"{self.mean_abs_deviation:.3f}, max {self.max_abs_deviation}; false zeros "
            f"{self.false_zeros}, false non-zeros {self.false_nonzeros}; distribution {dist}"
        )


def _values(frame: pd.DataFrame, column: str, what: str) -> np.ndarray:
    if column not in frame.columns:
        raise DataError(f"{what} table has no column {column!r}")
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(values).all():
        raise DataError(f"column {column!r} of the {what} table has missing or non-numeric values")
    return values


def information_loss(
    original: pd.DataFrame,
    protected: pd.DataFrame | str,
    *,
    dims: Sequence[str] | None = None,
    value: str = "count",
    protected_value: str | None = None,
) -> InfoLossResult:
    """Compare a protected table with the original (Giessing & Höhne 2011, Section 6, Table 5).

    Parameters
    ----------
    original : DataFrame
        Tidy table with the true counts in ``value``.
    protected : DataFrame or str
        Either a column of ``original`` holding the protected counts (e.g.
        ``"perturbed"``, ``"restored"``), or a second tidy table whose cells
        are matched to ``original`` on ``dims`` (a cell missing from it is an
        error).
    dims : list of str
        Classifying columns (needed when ``protected`` is a table).
    value : str, default "count"
        Column of the true counts.
    protected_value : str, optional
        Column of the protected table to compare. Default: ``restored`` if
        the protected table has it, else ``perturbed``, else ``value`` (a
        table tabulated from protected microdata, e.g. after SAFE).

    Returns
    -------
    InfoLossResult
        The distribution of absolute deviations and the summary figures.
    """
    if isinstance(protected, str):
        if protected == value:
            raise ParameterError(
                f"the protected column {protected!r} is the true column itself; "
                "name the column of protected counts"
            )
        truth = _values(original, value, "original")
        released = _values(original, protected, "original")
        compared = (value, protected)
    else:
        if dims is None:
            raise ParameterError("dims is needed to match the cells of two tables")
        dims = check_columns(original, dims, "dims")
        check_columns(protected, dims, "dims")
        if protected_value is None:
            pv = next((c for c in ("restored", "perturbed") if c in protected.columns), value)
        else:
            pv = protected_value
        if pv not in protected.columns:
            raise DataError(f"the protected table has no column {pv!r}")
        compared = (value, pv)
        left = original[[*list(dims), value]].astype({d: str for d in dims})
        right = protected[[*list(dims), pv]].astype({d: str for d in dims})
        right = right.rename(columns={pv: "__protected"})
        merged = left.merge(right, on=list(dims), how="left", validate="one_to_one")
        if merged["__protected"].isna().any():
            row = merged.loc[merged["__protected"].isna(), list(dims)].iloc[0].to_dict()
            raise DataError(f"the protected table lacks cell {row}")
        truth = merged[value].to_numpy(np.float64)
        released = merged["__protected"].to_numpy(np.float64)
    deviation = np.abs(released - truth)
    nonzero = truth != 0
    dev_nz = np.rint(deviation[nonzero]).astype(np.int64)
    counts = np.bincount(dev_nz) if len(dev_nz) else np.zeros(1, dtype=np.int64)
    present = np.flatnonzero(counts)
    distribution = pd.DataFrame(
        {
            "cells": counts[present],
            "percent": 100 * counts[present] / max(len(dev_nz), 1),
        },
        index=pd.Index(present, name="abs_deviation"),
    )
    return InfoLossResult(
        distribution=distribution,
        mean_abs_deviation=float(deviation[nonzero].mean()) if nonzero.any() else 0.0,
        max_abs_deviation=int(deviation.max()) if len(deviation) else 0,
        false_zeros=int((nonzero & (released == 0)).sum()),
        false_nonzeros=int((~nonzero & (released != 0)).sum()),
        cells=len(truth),
        nonzero_cells=int(nonzero.sum()),
        compared=compared,
    )


def compare_information_loss(results: Mapping[str, InfoLossResult]) -> pd.DataFrame:
    """Table 5 layout: percent of non-zero cells by absolute deviation, one column per method.

    Giessing & Höhne (2011), Section 6, Table 5; the mean absolute
    deviation, false zeros and false non-zeros are the last rows.

    Parameters
    ----------
    results : mapping
        ``{method name: InfoLossResult}`` (from :func:`information_loss`).

    Returns
    -------
    DataFrame
        Rows: absolute deviations, then the three summary rows; one column
        per method.
    """
    columns = {name: r.distribution["percent"] for name, r in results.items()}
    table = pd.DataFrame(columns).fillna(0.0).sort_index()
    table.index = table.index.astype(str)
    extra = pd.DataFrame(
        {
            name: [r.mean_abs_deviation, r.max_abs_deviation, r.false_zeros, r.false_nonzeros]
            for name, r in results.items()
        },
        index=["mean abs. dev.", "max abs. dev.", "false zeros", "false non-zeros"],
    )
    return pd.concat([table, extra])


@dataclass(frozen=True)
class DeviationPublication:
    """Result of :func:`perturb_deviations`.

    Attributes
    ----------
    perturbed : ndarray
        The published (perturbed) deviation of every cell.
    frequencies : DataFrame
        Index ``d``; columns ``n_d`` (true), ``n_d_star`` (published) and
        their difference, as Table 6.
    matrix : ndarray
        The invariant transition matrix used (states ``d_min..d_max``).
    """

    perturbed: np.ndarray
    frequencies: pd.DataFrame
    matrix: np.ndarray

    def summary(self) -> str:
        """Largest difference between true and published frequencies."""
        diff = self.frequencies["difference"].abs()
        return (
            f"{len(self.perturbed)} deviations published; states {self.frequencies.index.min()}.."
            f"{self.frequencies.index.max()}; max |n_d - n_d*| = {int(diff.max())}"
        )


def perturb_deviations(
    deviations: np.ndarray | pd.Series,
    *,
    alpha: float = 0.8,
    band: int = 1,
    stay: float = 0.6,
    keys: np.ndarray | None = None,
    random_state: RandomState = None,
) -> DeviationPublication:
    """Perturb cell deviations with an invariant matrix so their frequency table is kept.

    Giessing & Höhne (2011), Section 7 and Table 6, with the
    invariant matrix of Shlomo & Young (2008) on states ``d_min..d_max``.

    Parameters
    ----------
    deviations : array of int
        True deviation (protected - original) of every cell.
    alpha : float, default 0.8
        ``R* = alpha R + (1 - alpha) I``.
    band, stay : int, float
        Initial matrix: ``stay`` on the diagonal, the rest spread over the
        states within ``band`` (see :func:`sdckit.tables.banded_transition`).
    keys : array, optional
        One uniform key in ``[0, 1)`` per cell (e.g. cell keys) to make the
        draw reproducible per cell; default: drawn from ``random_state``.
    random_state : None, int or Generator
        Used when ``keys`` is not given; same seed, same output.

    Returns
    -------
    DeviationPublication
        The published deviations and the matrix used.
    """
    d = np.asarray(deviations)
    if d.ndim != 1 or len(d) == 0:
        raise ParameterError("deviations must be a non-empty one-dimensional array")
    if not np.all(np.isfinite(d)) or (d != np.round(d)).any():
        raise DataError("deviations must be whole numbers")
    d = d.astype(np.int64)
    alpha = check_fraction(alpha, "alpha")
    low, high = int(d.min()), int(d.max())
    states = np.arange(low, high + 1)
    freq = np.bincount(d - low, minlength=len(states)).astype(float)
    P = banded_transition(len(states), D=band, stay=stay)
    R = invariant_transform(P, freq, alpha)
    if keys is None:
        u = check_random_state(random_state).random(len(d))
    else:
        u = np.asarray(keys, dtype=float)
        if u.shape != d.shape or (u < 0).any() or (u >= 1).any():
            raise ParameterError("keys must be one number in [0, 1) per deviation")
    cum = np.cumsum(R, axis=1)
    last_positive = (R.shape[1] - 1) - np.argmax(R[:, ::-1] > 0, axis=1)
    cum[np.arange(R.shape[1])[None, :] >= last_positive[:, None]] = 1.0
    chosen = (cum[d - low] <= u[:, None]).sum(axis=1)
    chosen = np.minimum(chosen, len(states) - 1)
    perturbed = states[chosen]
    published = np.bincount(chosen, minlength=len(states))
    frequencies = pd.DataFrame(
        {"n_d": freq.astype(np.int64), "n_d_star": published},
        index=pd.Index(states, name="d"),
    )
    frequencies["difference"] = frequencies["n_d"] - frequencies["n_d_star"]
    return DeviationPublication(perturbed, frequencies, R)
