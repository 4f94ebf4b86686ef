"""Cell key perturbation of magnitude tables: sums and means, consistent across tables.

The count method of Giessing & Höhne (2011), §4, selects each cell's noise by
its cell key; for sums of a variable (turnover, income) the noise must scale
with the cell's values, and above all with its largest contributions, which
are what an intruder (often the second-largest contributor) wants to learn.
The method here is the one the Australian Bureau of Statistics uses in
TableBuilder (Thompson, Broadfoot & Elazar 2013) as generalised by Giessing
(2016) and the R package cellKey:

    perturbed sum = sum + scale * sum_{k=1..K} m_k * |x_(k)| * e_k

where ``x_(1), x_(2), ...`` are the cell's largest contributions (by absolute
value), ``m = (1, 0.5, ...)`` their weights, and ``e_k`` a zero-mean noise
in ``±[min_noise, 1)`` read from a key ``u_k = (cell key + record key of
x_(k)) mod 1``. Everything is a function of the cell's set of records and
their stored record keys, so a cell has the same perturbed sum in every table
and every query in which it appears (no averaging away by repeated queries,
no differencing of logically identical cells). ``min_noise`` keeps the noise
away from 0, so the largest contribution is never published exactly.

Means are published as perturbed sum / perturbed count, with the count
perturbed by the count method (:func:`sdckit.tables.cell_key_perturb`) from
the same cell key.

:func:`perturb_sums` is the array interface (record keys, values, a cell id
per record -> perturbed sums per cell), meant for callers such as an analysis
server; :func:`magnitude_perturb` builds a whole table with margins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._validation import check_columns, check_dataframe, check_int, check_positive
from sdckit.errors import DataError, ParameterError
from sdckit.tables.cellkey import lookup_noise
from sdckit.tables.ptable import PTable
from sdckit.tables.recordkeys import key_units
from sdckit.tables.release import TableRelease, release_frame
from sdckit.tables.tabulate import Hierarchy, TableStructure, leaf_categories

__all__ = [
    "MagnitudeResult",
    "magnitude_information_loss",
    "magnitude_perturb",
    "perturb_sums",
]

_CLASSES = [(1, 2), (3, 9), (10, 49), (50, 249), (250, np.inf)]


@dataclass(frozen=True)
class MagnitudeResult(TableRelease):
    """Result of :func:`magnitude_perturb` and :func:`perturb_sums`.

    Attributes
    ----------
    table : DataFrame
        What may be published: the dimensions (or the cell id),
        ``perturbed_sum``, and with a p-table ``perturbed_count`` and
        ``perturbed_mean``.
    internal : DataFrame
        Also the true ``count``, ``true_sum``, ``cell_key`` and ``sum_noise``.
        Never release it.
    params, stats : mapping
    """

    def summary(self) -> str:
        """Cells, the size of the noise relative to the sums."""
        s = self.stats
        return (
            f"magnitude cell key perturbation (scale {self.params['scale']:g}, top "
            f"{self.params['top_k']} contributions): {s['cells']} cells, {s['nonempty_cells']} "
            f"non-empty; median |relative deviation| {s['median_abs_relative_deviation']:.2%}, "
            f"cells whose sum was published unchanged: {s['unchanged_nonempty']}"
        )


def _noise_from_keys(u: np.ndarray, min_noise: float) -> np.ndarray:
    """Zero-mean noise in ±[min_noise, 1) from a uniform key: the key's half gives the sign."""
    sign = np.where(u >= 0.5, 1.0, -1.0)
    return sign * (min_noise + (1.0 - min_noise) * ((2.0 * u) % 1.0))


def _top_contributions(
    cell: np.ndarray, values: np.ndarray, units: np.ndarray, n_cells: int, top_k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the ``top_k`` largest |values| and their record key units (0 when absent)."""
    order = np.lexsort((-np.abs(values), cell))
    sorted_cells = cell[order]
    starts = np.searchsorted(sorted_cells, np.arange(n_cells))
    ends = np.searchsorted(sorted_cells, np.arange(n_cells), side="right")
    top = np.zeros((n_cells, top_k))
    keys = np.zeros((n_cells, top_k), dtype=np.int64)
    for k in range(top_k):
        has = starts + k < ends
        pick = order[np.minimum(starts + k, len(order) - 1)]
        top[:, k] = np.where(has, values[pick], 0.0)
        keys[:, k] = np.where(has, units[pick], 0)
    return top, keys


def _merge_top(tops: np.ndarray, keys: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest ``top_k`` along the second-to-last axis of stacked children's lists."""
    shape = tops.shape
    flat_t = tops.reshape(*shape[:-2], shape[-2] * shape[-1])
    flat_k = keys.reshape(*shape[:-2], shape[-2] * shape[-1])
    # ties broken by the key so the choice does not depend on the order of the children
    order = np.lexsort((flat_k, -np.abs(flat_t)), axis=-1)[..., :top_k]
    return np.take_along_axis(flat_t, order, -1), np.take_along_axis(flat_k, order, -1)


def _check_params(scale: float, top_k: int, min_noise: float) -> tuple[float, int, float]:
    scale = check_positive(scale, "scale")
    top_k = check_int(top_k, "top_k", minimum=1)
    if top_k > 10:
        raise ParameterError(f"top_k must be at most 10, got {top_k}")
    min_noise = float(min_noise)
    if not 0.0 <= min_noise < 1.0:
        raise ParameterError(f"min_noise must lie in [0, 1), got {min_noise:g}")
    return scale, top_k, min_noise


def _finish(
    frame: pd.DataFrame,
    counts: np.ndarray,
    sums: np.ndarray,
    key_sum: np.ndarray,
    modulus: int,
    top: np.ndarray,
    top_keys: np.ndarray,
    *,
    ptable: PTable | None,
    scale: float,
    top_k: int,
    min_noise: float,
    params: dict,
) -> MagnitudeResult:
    cell_key = (key_sum % modulus) / modulus
    weights = 1.0 / 2.0 ** np.arange(top_k)
    u = ((key_sum[:, None] + top_keys) % modulus) / modulus
    noise = scale * (weights * np.abs(top) * _noise_from_keys(u, min_noise)).sum(axis=1)
    noise[counts == 0] = 0.0
    perturbed = sums + noise
    internal = frame.copy()
    internal["count"] = counts
    internal["true_sum"] = sums
    internal["cell_key"] = cell_key
    internal["sum_noise"] = noise
    internal["perturbed_sum"] = perturbed
    if ptable is not None:
        if not isinstance(ptable, PTable):
            raise ParameterError(f"ptable must be a PTable, got {type(ptable).__name__}")
        pcount = counts + lookup_noise(counts, cell_key, ptable)
        internal["perturbed_count"] = pcount
        with np.errstate(invalid="ignore", divide="ignore"):
            internal["perturbed_mean"] = np.where(pcount > 0, perturbed / pcount, np.nan)
    nonempty = counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(noise[nonempty]) / np.abs(sums[nonempty])
    rel = rel[np.isfinite(rel)]
    stats = {
        "cells": len(frame),
        "nonempty_cells": int(nonempty.sum()),
        "median_abs_relative_deviation": float(np.median(rel)) if len(rel) else 0.0,
        "unchanged_nonempty": int((noise[nonempty] == 0).sum()),
    }
    params = {**params, "scale": scale, "top_k": top_k, "min_noise": min_noise}
    return MagnitudeResult(release_frame(internal), internal, params, stats)


def perturb_sums(
    values: np.ndarray | pd.Series,
    record_keys: np.ndarray | pd.Series,
    cells: np.ndarray | pd.Series,
    *,
    ptable: PTable | None = None,
    scale: float = 0.1,
    top_k: int = 2,
    min_noise: float = 0.5,
) -> MagnitudeResult:
    """Perturbed sums of ``values`` by cell, keyed on the records' stored keys.

    The array interface of the magnitude method (see the module docstring):
    a caller such as an analysis server passes, for the records of a query,
    their values, their stored record keys and any cell label per record; the
    same set of records always gets the same perturbed sum.

    Parameters
    ----------
    values : array of float
        One value per record (finite).
    record_keys : array
        The stored record keys (:func:`sdckit.tables.add_record_keys`).
    cells : array
        A cell label per record (any hashable values).
    ptable : PTable, optional
        Also perturb the counts (same cell keys) and publish means.
    scale : float, default 0.1
        Noise as a share of the largest contributions.
    top_k : int, default 2
        Largest contributions the noise is scaled to (weights 1, 1/2, 1/4, ...).
    min_noise : float in [0, 1), default 0.5
        Smallest |e|: the largest contribution moves by at least
        ``scale * min_noise`` of itself.

    Returns
    -------
    MagnitudeResult
        One row per cell label (index: the labels, sorted when sortable).
    """
    scale, top_k, min_noise = _check_params(scale, top_k, min_noise)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ParameterError("values must be one-dimensional")
    if not np.isfinite(x).all():
        k = int(np.flatnonzero(~np.isfinite(x))[0])
        raise DataError(f"values must be finite numbers; record {k + 1} has {x[k]}")
    units, modulus, _ = key_units(
        record_keys if isinstance(record_keys, pd.Series) else np.asarray(record_keys),
        name="record_keys",
    )
    labels = np.asarray(cells)
    if not (len(x) == len(units) == len(labels)):
        raise ParameterError(
            f"values, record_keys and cells must have one entry per record "
            f"(got {len(x)}, {len(units)}, {len(labels)})"
        )
    codes, uniques = pd.factorize(pd.Series(labels), sort=True)
    n_cells = len(uniques)
    counts = np.bincount(codes, minlength=n_cells)
    sums = np.bincount(codes, weights=x, minlength=n_cells)
    key_sum = np.zeros(n_cells, dtype=np.int64)
    np.add.at(key_sum, codes, units)
    top, top_keys = _top_contributions(codes, x, units, n_cells, top_k)
    frame = pd.DataFrame(index=pd.Index(uniques, name="cell"))
    return _finish(
        frame,
        counts,
        sums,
        key_sum % modulus,
        modulus,
        top,
        top_keys,
        ptable=ptable,
        scale=scale,
        top_k=top_k,
        min_noise=min_noise,
        params={"source": "arrays"},
    )


def magnitude_perturb(
    data: pd.DataFrame,
    dims: Sequence[str],
    value: str,
    *,
    record_key: str = "record_key",
    ptable: PTable | None = None,
    scale: float = 0.1,
    top_k: int = 2,
    min_noise: float = 0.5,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    margins: bool = True,
    total_label: str = "Total",
) -> MagnitudeResult:
    """Magnitude table of ``value`` over ``dims`` with all margins, cell-key perturbed.

    Every cell (margins and hierarchy levels included) gets its sum, its
    ``top_k`` largest contributions and its cell key by merging its
    children's, so the work is one pass over the records plus small array
    operations; the noise is then as in :func:`perturb_sums`, and a margin
    cell equals the same records' cell in any other table.

    Parameters
    ----------
    data : DataFrame
        Microdata with a record-key column; never modified.
    dims : list of str
    value : str
        The numeric variable summed.
    record_key, ptable, scale, top_k, min_noise
        As in :func:`perturb_sums`.
    hierarchies, margins, total_label
        As in :func:`sdckit.tables.tabulate`.

    Returns
    -------
    MagnitudeResult
        The publishable table (perturbed sums), the internal table and the
        figures of the noise.
    """
    data = check_dataframe(data)
    dims = check_columns(data, dims, "dims")
    check_columns(data, [value, record_key], "value/record_key")
    scale, top_k, min_noise = _check_params(scale, top_k, min_noise)
    x = pd.to_numeric(data[value], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(x).all():
        k = int(np.flatnonzero(~np.isfinite(x))[0])
        raise DataError(
            f"column {value!r} must hold numbers; row {k + 1} has {data[value].iloc[k]!r}"
        )
    units, modulus, _ = key_units(data[record_key], name=record_key)
    leaves, codes = [], []
    for dim in dims:
        lv, cd, compact = leaf_categories(data, dim, None)
        if compact:  # integer codes given their whole range: keep the values that occur
            occurs = np.unique(cd)
            lv = [lv[i] for i in occurs]
            cd = np.searchsorted(occurs, cd)
        leaves.append(lv)
        codes.append(cd)
    shape = tuple(len(lv) for lv in leaves)
    n_elementary = int(np.prod(shape, dtype=np.int64))
    cell = np.ravel_multi_index(codes, shape) if len(dims) > 1 else codes[0]
    counts = np.bincount(cell, minlength=n_elementary).reshape(shape)
    sums = np.bincount(cell, weights=x, minlength=n_elementary).reshape(shape)
    key_sum = np.zeros(n_elementary, dtype=np.int64)
    np.add.at(key_sum, cell, units)
    top, top_keys = _top_contributions(cell, x, units, n_elementary, top_k)
    structure = TableStructure.from_categories(
        dims, leaves, hierarchies=hierarchies, margins=margins, total_label=total_label
    )
    counts = structure.aggregate(counts)
    sums = structure.aggregate(sums)
    key_sum = structure.aggregate(key_sum.reshape(shape) % modulus) % modulus
    top = top.reshape(*shape, top_k)
    top_keys = top_keys.reshape(*shape, top_k)
    for axis in range(len(dims)):
        n_leaf, n_out = structure.n_leaves[axis], len(structure.categories[axis])
        out_shape = list(top.shape)
        out_shape[axis] = n_out
        new_t, new_k = np.zeros(out_shape), np.zeros(out_shape, dtype=np.int64)
        vt, vk = np.moveaxis(new_t, axis, 0), np.moveaxis(new_k, axis, 0)
        vt[:n_leaf], vk[:n_leaf] = np.moveaxis(top, axis, 0), np.moveaxis(top_keys, axis, 0)
        for parent in range(n_leaf, n_out):
            kids = list(structure.children[axis][parent])
            merged = _merge_top(np.moveaxis(vt[kids], 0, -2), np.moveaxis(vk[kids], 0, -2), top_k)
            vt[parent], vk[parent] = merged
        top, top_keys = new_t, new_k
    frame = structure.labels()
    result = _finish(
        frame,
        counts.ravel(),
        sums.ravel(),
        key_sum.ravel(),
        modulus,
        top.reshape(-1, top_k),
        top_keys.reshape(-1, top_k),
        ptable=ptable,
        scale=scale,
        top_k=top_k,
        min_noise=min_noise,
        params={"dims": list(dims), "value": value},
    )
    result.table.attrs["structure"] = structure
    result.internal.attrs["structure"] = structure
    return result


def magnitude_information_loss(internal: pd.DataFrame) -> pd.DataFrame:
    """Relative deviation of perturbed sums (and means) by cell size class.

    Parameters
    ----------
    internal : DataFrame
        ``MagnitudeResult.internal`` (columns ``count``, ``true_sum``,
        ``perturbed_sum``, optionally ``perturbed_mean``).

    Returns
    -------
    DataFrame
        One row per count class (1-2, 3-9, 10-49, 50-249, 250+): ``cells``,
        mean and max of ``|perturbed_sum - true_sum| / |true_sum|`` and, with
        means, the mean relative deviation of the mean.
    """
    check_columns(internal, ["count", "true_sum", "perturbed_sum"], "magnitude table")
    counts = internal["count"].to_numpy()
    truth = internal["true_sum"].to_numpy(np.float64)
    released = internal["perturbed_sum"].to_numpy(np.float64)
    rows = []
    for low, high in _CLASSES:
        sel = (counts >= low) & (counts <= high) & (truth != 0)
        if not sel.any():
            continue
        rel = np.abs(released[sel] - truth[sel]) / np.abs(truth[sel])
        row = {
            "count_class": f"{low}-{int(high)}" if np.isfinite(high) else f"{low}+",
            "cells": int(sel.sum()),
            "mean_rel_dev_sum": float(rel.mean()),
            "max_rel_dev_sum": float(rel.max()),
        }
        if "perturbed_mean" in internal:
            true_mean = truth[sel] / counts[sel]
            pm = internal["perturbed_mean"].to_numpy(np.float64)[sel]
            ok = np.isfinite(pm)
            row["mean_rel_dev_mean"] = (
                float((np.abs(pm[ok] - true_mean[ok]) / np.abs(true_mean[ok])).mean())
                if ok.any()
                else float("nan")
            )
        rows.append(row)
    return pd.DataFrame(rows).set_index("count_class")
