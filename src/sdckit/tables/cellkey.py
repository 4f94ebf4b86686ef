"""Cell key perturbation of frequency tables (post-tabular, consistent).

Giessing & Höhne (2011), Section 4, after Fraser & Wooton (2006):
each cell's key (the sum of its records' keys modulo the key range) is a
uniform number that selects the cell's noise from its count's row of the
perturbation table: with the row's cumulative probabilities scaled to the key
range, count ``i`` becomes ``j`` when the key lies in ``[M_{i,j-1}, M_{ij})``.
The same records give the same cell key, hence the same noise, in every table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_columns, check_dataframe, check_int
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.tables.ptable import PTable
from sdckit.tables.recordkeys import INTEGER_KEY_MODULUS
from sdckit.tables.release import release_frame
from sdckit.tables.tabulate import Hierarchy, tabulate

__all__ = ["CellKeyResult", "cell_key_perturb", "lookup_noise"]

_CHUNK = 1_000_000


@dataclass(frozen=True)
class CellKeyResult(FrozenResult):
    """Result of :func:`cell_key_perturb`.

    Attributes
    ----------
    table : DataFrame
        What may be published: the dimensions, ``perturbed`` (and
        ``suppressed`` with a threshold, ``perturbed_weighted`` for a weighted
        table) and any other column of the input that is not confidential.
        It never holds the true ``count``, the ``cell_key`` or the ``noise``
        (see :mod:`sdckit.tables.release`).
    internal : DataFrame
        The producer's full table: the input columns (true ``count``,
        ``cell_key``, ``weighted_count``) plus ``noise`` and the published
        columns. Never release it.
    ptable : PTable
        The perturbation table used.
    params : mapping
    stats : mapping
        ``cells``, ``cells_changed``, ``share_changed``, ``max_abs_noise``,
        ``mean_abs_noise``, ``small_cells`` (perturbed 1..js: always 0),
        ``suppressed``.
    """

    table: pd.DataFrame
    internal: pd.DataFrame
    ptable: PTable
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """Cells, share changed, noise size."""
        s = self.stats
        return (
            f"cell key perturbation (D={self.ptable.D}, V={self.ptable.V:g}, js={self.ptable.js}): "
            f"{s['cells']} cells, {s['cells_changed']} changed ({s['share_changed']:.1%}), "
            f"mean |noise| {s['mean_abs_noise']:.3f}, max |noise| {s['max_abs_noise']}, "
            f"perturbed counts in 1..{self.ptable.js}: {s['small_cells']}, suppressed: {s['suppressed']}"
        )


def _cumulative(ptable: PTable) -> np.ndarray:
    """Cumulative probabilities per row over deviations -D..D, reaching exactly 1."""
    probs = ptable.deviation_probabilities()
    cum = np.cumsum(probs, axis=1)
    last_positive = (probs.shape[1] - 1) - np.argmax(probs[:, ::-1] > 0, axis=1)
    after = np.arange(probs.shape[1])[None, :] >= last_positive[:, None]
    cum[after] = 1.0
    return cum


def lookup_noise(counts: np.ndarray, uniform_keys: np.ndarray, ptable: PTable) -> np.ndarray:
    """Noise of each cell from its count and its cell key scaled to ``[0, 1)``.

    The deviation chosen is the first whose cumulative probability in the
    count's row exceeds the key (Giessing & Höhne 2011, Section 4); for a
    table given key by key (``ptable.key_grid``, the ONS layout), the
    deviation stored for key ``floor(key * K)``. The row serving a count is
    :meth:`PTable.rows_for`'s.

    Parameters
    ----------
    counts : array of int
        True counts.
    uniform_keys : array of float
        Cell keys scaled to ``[0, 1)``.
    ptable : PTable
        The perturbation table.

    Returns
    -------
    ndarray of int64
        The noise of each cell.
    """
    counts = np.asarray(counts, dtype=np.int64)
    keys = np.asarray(uniform_keys, dtype=np.float64)
    rows = ptable.rows_for(counts)
    if ptable.key_grid is not None:
        K = ptable.key_grid.shape[1]
        # keys c / K are exact in binary floating point for K a power of two
        index = np.minimum(np.floor(keys * K + 1e-9).astype(np.int64), K - 1)
        return ptable.key_grid[rows, index].astype(np.int64)
    cum = _cumulative(ptable)
    noise = np.empty(len(counts), dtype=np.int64)
    for start in range(0, len(counts), _CHUNK):
        stop = start + _CHUNK
        chosen = (cum[rows[start:stop]] <= keys[start:stop, None]).sum(axis=1)
        noise[start:stop] = chosen - ptable.D
    return noise


def _uniform_from_cell_keys(keys: pd.Series, name: str, key_range: int | None) -> np.ndarray:
    values = keys.to_numpy()
    if values.dtype.kind in "iu":
        modulus = key_range or INTEGER_KEY_MODULUS
        if len(values) and (values.min() < 0 or values.max() >= modulus):
            if key_range:
                raise DataError(
                    f"integer cell keys in {name!r} must lie in 0..{key_range - 1} for this "
                    f"p-table, given key by key: tabulate with key_modulus={key_range} "
                    f"(record keys 0..{key_range - 1}, summed modulo {key_range})"
                )
            raise DataError(f"integer cell keys in {name!r} must lie in [0, 2^31 - 1)")
        return values.astype(np.float64) / modulus
    values = pd.to_numeric(keys, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    if not np.isfinite(values).all() or (values < 0).any() or (values >= 1).any():
        raise DataError(
            f"cell keys in {name!r} must be integers in [0, 2^31 - 1) or floats in [0, 1)"
        )
    return values


def cell_key_perturb(
    table_or_data: pd.DataFrame,
    ptable: PTable,
    *,
    dims: Sequence[str] | None = None,
    record_key: str = "record_key",
    count: str = "count",
    cell_key: str = "cell_key",
    threshold: int | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    margins: bool = True,
    categories: Mapping[str, Sequence[Any]] | None = None,
    total_label: str = "Total",
    weights: str | None = None,
    weighted_count: str = "weighted_count",
) -> CellKeyResult:
    """Perturb a frequency table by the cell key method.

    Giessing & Höhne (2011), Section 4 (selection of the noise) with
    a transition matrix from Section 3.1 (:func:`sdckit.tables.design_ptable`).

    Parameters
    ----------
    table_or_data : DataFrame
        Either a table with columns ``count`` and ``cell_key`` (as built by
        :func:`sdckit.tables.tabulate` with a record key), or microdata with a
        ``record_key`` column, tabulated here over ``dims``. Never modified.
    ptable : PTable
        Perturbation table.
    dims : list of str, optional
        Classifying variables; required for microdata.
    record_key, count, cell_key : str
        Column names.
    threshold : int, optional
        Perturbed counts below ``threshold`` (other than 0) are suppressed:
        ``perturbed`` becomes missing and ``suppressed`` True.
    hierarchies, margins, categories, total_label, weights
        Passed to :func:`sdckit.tables.tabulate` for microdata.
    weighted_count : str, default "weighted_count"
        Column of weighted totals (from :func:`sdckit.tables.tabulate` with
        ``weights``). The cell key noise is drawn for the *unweighted* count
        and the weighted total is published as ``perturbed_weighted =
        weighted_count * perturbed / count`` (the cell's mean weight times the
        perturbed count), the approach of the R package cellKey (Meindl &
        Enderle) for weighted frequency tables: noise of +-D on a weighted
        total of millions would protect nothing (Giessing & Höhne (2011), §4,
        design the noise for counts). Perturbing a weighted total as if it
        were a count is refused.

    Returns
    -------
    CellKeyResult
        Perturbed counts never lie in ``1..ptable.js``.
    """
    frame = check_dataframe(table_or_data, "table_or_data")
    if not isinstance(ptable, PTable):
        raise ParameterError(f"ptable must be a PTable, got {type(ptable).__name__}")
    if threshold is not None:
        threshold = check_int(threshold, "threshold", minimum=1)
    if count == weighted_count or frame.attrs.get("weighted_count_column") == count:
        raise ParameterError(
            f"count={count!r} names weighted totals: cell key noise is designed for counts, and "
            "+-D on a weighted total does not protect the records behind it; perturb the "
            f"unweighted count (the weighted total in {weighted_count!r} is then scaled)"
        )
    table_mode = count in frame.columns and cell_key in frame.columns
    if table_mode:
        table = frame.copy()
    else:
        if dims is None:
            raise ParameterError(
                f"the input has no {count!r} and {cell_key!r} columns, so it is read as microdata "
                "and dims must name the classifying variables"
            )
        if record_key not in frame.columns:
            raise SchemaError(
                f"microdata have no record-key column {record_key!r}; add one with add_record_keys"
            )
        table = tabulate(
            frame,
            dims,
            hierarchies=hierarchies,
            margins=margins,
            categories=categories,
            record_key=record_key,
            total_label=total_label,
            weights=weights,
            key_modulus=ptable.key_range,
        )
        if (count, cell_key) != ("count", "cell_key"):
            table = table.rename(columns={"count": count, "cell_key": cell_key})
    check_columns(table, [count, cell_key], "count/cell_key")
    raw = table[count].to_numpy()
    if raw.dtype.kind not in "iu":
        as_float = pd.to_numeric(table[count], errors="coerce").to_numpy(np.float64)
        if not np.isfinite(as_float).all() or (as_float != np.round(as_float)).any():
            raise DataError(f"column {count!r} must hold whole counts for cell key perturbation")
        raw = as_float.astype(np.int64)
    counts = raw.astype(np.int64)
    if (counts < 0).any():
        raise DataError(f"column {count!r} has negative counts")
    weighted = None
    if weighted_count in table.columns:
        weighted = pd.to_numeric(table[weighted_count], errors="coerce").to_numpy(np.float64)
        if not np.isfinite(weighted).all():
            raise DataError(f"column {weighted_count!r} has missing or non-numeric values")
    keys = _uniform_from_cell_keys(table[cell_key], cell_key, ptable.key_range)
    noise = lookup_noise(counts, keys, ptable)
    perturbed = counts + noise
    table["noise"] = noise
    table["perturbed"] = perturbed
    if weighted is not None:
        # noise on the unweighted count, weighted total scaled by the cell's mean weight
        mean_weight = np.divide(weighted, counts, out=np.zeros(len(counts)), where=counts > 0)
        table["perturbed_weighted"] = mean_weight * perturbed
    n_suppressed = 0
    if threshold is not None:
        suppressed = (perturbed > 0) & (perturbed < threshold)
        published = pd.array(perturbed, dtype="Int64")
        published[suppressed] = pd.NA
        table["perturbed"] = published
        table["suppressed"] = suppressed
        n_suppressed = int(suppressed.sum())
    small = int(((perturbed >= 1) & (perturbed <= ptable.js)).sum())
    stats = {
        "cells": len(table),
        "cells_changed": int((noise != 0).sum()),
        "share_changed": float((noise != 0).mean()) if len(table) else 0.0,
        "max_abs_noise": int(np.abs(noise).max()) if len(table) else 0,
        "mean_abs_noise": float(np.abs(noise).mean()) if len(table) else 0.0,
        "small_cells": small,
        "suppressed": n_suppressed,
    }
    params = {
        "dims": list(dims) if dims is not None else None,
        "threshold": threshold,
        "from_microdata": not table_mode,
    }
    table.attrs["confidential"] = [c for c in (count, cell_key, weighted_count) if c in table]
    published = release_frame(table)
    return CellKeyResult(published, table, ptable, params, stats)
