"""Microaggregation: MDAV and univariate individual ranking.

Microaggregation partitions the records into groups of at least k similar
records and replaces every record's values by its group's representative
(the group mean), so each released record is shared by at least k records:
k-anonymity on the aggregated variables (Erola et al. 2011,
Section 2.1, which states the problem as minimising the within-group sum of
squared errors subject to group sizes between k and 2k).

MDAV (*Maximum Distance to Average Vector*, Domingo-Ferrer & Mateo-Sanz
2002, the heuristic Erola et al. (2011) Section 2.1 names) builds the groups as follows,
on the standardised numeric variables:

1. while at least 3k records remain: take the centroid c of the remaining
   records; the record r farthest from c forms a group with its k-1 nearest
   remaining records; then the record s farthest from r (among those left)
   forms a group with its k-1 nearest remaining records;
2. if between 2k and 3k-1 records remain, the record farthest from their
   centroid forms a group with its k-1 nearest, and the rest form the last
   group; otherwise the remaining k..2k-1 records form the last group.

Every group therefore has between k and 2k-1 records.

The textbook algorithm makes a full distance pass over the remaining records
at every step, so its time grows as n^2 / k. Here data of up to
``block_size`` records (10,000 by default) get exactly the textbook groups
(ties broken by the smaller row); larger data are first cut into spatially
compact blocks by median splits on the widest variable (a k-d partition,
"blocking"), and MDAV runs within each block, so time grows as
n * block_size / k. Groups never cross a block boundary, which costs a little
within-group homogeneity near the cuts (``sse_ratio`` reports it) and
nothing in the guarantee: every group still has k..2k-1 records.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_int,
    check_random_state,
)
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.microdata._weights import resolve_sample_weights, sample_weight_vector
from sdckit.microdata.base import MaskResult, deprecated_spellings, register_masker
from sdckit.schema import Kind, Schema, build_design

__all__ = ["MicroaggregationResult", "mdav_groups", "microaggregate"]

_METHODS = ("mdav", "individual_ranking")


@dataclass(frozen=True)
class MicroaggregationResult(MaskResult):
    """Result of :func:`microaggregate`.

    ``diagnostics`` has, per record, ``group`` (the MDAV group number, in the
    order the groups were formed) and ``group_size``; for individual ranking
    one ``group_<column>`` per variable instead. ``stats`` holds the number of
    groups, the smallest and largest group size, and the within-group sum of
    squared errors over the total sum of squares (``sse_ratio``, the usual
    information-loss figure: 0 means nothing changed).
    """

    @property
    def groups(self) -> pd.Series:
        """Group number of every record (MDAV)."""
        if "group" not in self.diagnostics:
            raise ParameterError(
                "individual ranking forms groups per variable: read diagnostics['group_<column>']"
            )
        return self.diagnostics["group"]

    def summary(self) -> str:
        """Parameters, group sizes and the information loss."""
        return super().summary()


# ---------------------------------------------------------------------------
# distance kernels (the same arithmetic everywhere, so bounds are exact)


def _exact_sq(points: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Squared distances of the rows of ``points`` to ``q``, summed variable by variable."""
    diff = points[:, 0] - q[0]
    out = diff * diff
    for j in range(1, points.shape[1]):
        diff = points[:, j] - q[j]
        out += diff * diff
    return out


def _mdav_block(points: np.ndarray, k: int) -> np.ndarray:
    """Textbook MDAV on one block: group numbers 0, 1, ... for its records.

    Every search is a full pass over the records still ungrouped (grouped
    records are masked out and compacted away now and then, keeping ascending
    row order). The pass uses the fast form ``|x|^2 - 2 x.q + |q|^2`` (one
    matrix-vector product) only to shortlist the records within a rounding
    margin of the answer; the shortlist is ranked with the plain per-variable
    formula, ties going to the smaller row, so the groups are the textbook's.
    The distances to r serve twice: for r's group and, once it is removed, to
    find s, the record farthest from r.
    """
    m, d = points.shape
    labels = np.full(m, -1, dtype=np.int64)
    rows = np.arange(m)
    x = np.ascontiguousarray(points)
    norm = _exact_sq(x, np.zeros(d))
    # Rounding error of the fast form is a few ulps of |x|^2 + |q|^2; the margin is far wider.
    largest_norm = float(norm.max())
    alive = np.ones(m, dtype=bool)
    far_norm = norm.copy()  # -inf once grouped: never the farthest
    near_norm = norm.copy()  # +inf once grouped: never a neighbour
    total = x.sum(axis=0)
    n_alive = m
    group = 0

    def margin_for(q: np.ndarray) -> float:
        return 1e-9 * (largest_norm + float(q @ q) + 1.0)

    def farthest(approx: np.ndarray, q: np.ndarray) -> int:
        shortlist = np.flatnonzero(approx >= approx.max() - margin_for(q))
        if len(shortlist) == 1:
            return int(shortlist[0])
        return int(shortlist[np.argmax(_exact_sq(x[shortlist], q))])

    def fast(q: np.ndarray, norms: np.ndarray) -> np.ndarray:
        # |x|^2 - 2 x.q, in place; the constant |q|^2 changes no comparison
        out = x @ q
        out *= -2.0
        out += norms
        return out

    def nearest(i: int) -> tuple[np.ndarray, np.ndarray]:
        # position i and its k-1 nearest ungrouped records (ties: smaller row)
        q = x[i].copy()
        approx = fast(q, near_norm)
        approx[i] = -np.inf
        kth = np.partition(approx, k - 1)[k - 1]
        shortlist = np.flatnonzero(approx <= kth + margin_for(q))
        exact = _exact_sq(x[shortlist], q)
        exact[shortlist == i] = -1.0  # r always heads its own group
        return shortlist[np.argsort(exact, kind="stable")[:k]], approx

    def take(positions: np.ndarray) -> None:
        nonlocal group, total, n_alive
        labels[rows[positions]] = group
        group += 1
        alive[positions] = False
        far_norm[positions] = -np.inf
        near_norm[positions] = np.inf
        total = total - x[positions].sum(axis=0)
        n_alive -= len(positions)

    while n_alive >= 3 * k:
        if 2 * n_alive < len(rows):
            keep = np.flatnonzero(alive)
            rows, x = rows[keep], x[keep]
            far_norm, near_norm = far_norm[keep], near_norm[keep]
            alive = np.ones(len(keep), dtype=bool)
            total = x.sum(axis=0)  # also stops the running sum from drifting
        centroid = total / n_alive
        r = farthest(fast(centroid, far_norm), centroid)
        r_point = x[r].copy()
        members, from_r = nearest(r)
        take(members)
        from_r[~alive] = -np.inf  # grouped records (r's group included) are never s
        take(nearest(farthest(from_r, r_point))[0])
    remaining = np.flatnonzero(alive)
    if n_alive >= 2 * k:
        sub = x[remaining]
        centroid = sub.mean(axis=0)
        r = int(np.argmax(_exact_sq(sub, centroid)))
        dist = _exact_sq(sub, sub[r])
        dist[r] = -1.0
        members = np.argsort(dist, kind="stable")[:k]
        labels[rows[remaining[members]]] = group
        group += 1
        remaining = np.delete(remaining, members)
    labels[rows[remaining]] = group
    return labels


def _spatial_blocks(points: np.ndarray, block_size: int) -> list[np.ndarray]:
    """Rows cut into compact blocks of at most ``block_size`` records.

    Recursive median splits on the widest variable (a k-d partition); every
    block keeps at least half of ``block_size`` records. Blocks come in
    ascending order of their smallest row.
    """
    blocks: list[np.ndarray] = []
    stack = [np.arange(len(points))]
    while stack:
        rows = stack.pop()
        if len(rows) <= block_size:
            blocks.append(np.sort(rows))
            continue
        sub = points[rows]
        dim = int(np.argmax(sub.max(axis=0) - sub.min(axis=0)))
        half = len(rows) // 2
        split = np.argpartition(sub[:, dim], half)
        stack.append(rows[split[half:]])
        stack.append(rows[split[:half]])
    blocks.sort(key=lambda b: int(b[0]))
    return blocks


def mdav_groups(
    points: np.ndarray,
    k: int,
    *,
    block_size: int | None = 10_000,
    progress: Callable[[int, int], None] | None = None,
    blas_threads: int | None = 1,
) -> np.ndarray:
    """MDAV partition of ``points`` (already scaled) into groups of k..2k-1 records.

    Domingo-Ferrer & Mateo-Sanz (2002), as summarised in Erola et al.
    (2011), Section 2.1; see the module docstring for the steps.

    Parameters
    ----------
    points : ndarray of shape (n, d)
        Finite coordinates, one row per record.
    k : int
        Minimum group size (>= 1, <= n).
    block_size : int or None, default 10000
        With n <= block_size (or None) the textbook MDAV runs on all records
        (time grows as n^2 / k). Larger data are first cut into spatially
        compact blocks of block_size/2..block_size records by median splits,
        and MDAV runs in each block: time grows as n * block_size / k. Groups
        never cross blocks; every group still has k..2k-1 records. Must be at
        least 4k.
    progress : callable, optional
        Called as ``progress(records_grouped, n)`` after each block.
    blas_threads : int or None, default 1
        BLAS threads while grouping. MDAV's work is many small
        matrix-vector products (one per search, over the records left), for
        which a BLAS thread pool costs more than it gains, the more so on a
        shared machine; 1 caps the pool for the duration of the call
        (threadpoolctl), None leaves it as it is. ``benchmarks/microaggregation.py
        --blas`` measures both.

    Returns
    -------
    ndarray of int64, shape (n,)
        Group number of every record, in order of formation.
    """
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2:
        raise ParameterError(f"points must be a 2-d array, got shape {points.shape}")
    n = points.shape[0]
    k = check_int(k, "k", minimum=1)
    if n < k:
        raise ParameterError(f"k={k} is larger than the number of records ({n})")
    if block_size is not None:
        block_size = check_int(block_size, "block_size", minimum=4 * k)
    if not np.isfinite(points).all():
        raise DataError("points hold missing or infinite values")
    if block_size is None or n <= block_size:
        blocks = [np.arange(n)]
    else:
        blocks = _spatial_blocks(points, block_size)
    if blas_threads is not None:
        blas_threads = check_int(blas_threads, "blas_threads", minimum=1)
    labels = np.empty(n, dtype=np.int64)
    offset, done = 0, 0
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        for rows in blocks:
            block_labels = _mdav_block(points[rows], k)
            labels[rows] = block_labels + offset
            offset += int(block_labels.max()) + 1
            done += len(rows)
            if progress is not None:
                progress(done, n)
    return labels


def _individual_ranking_groups(values: np.ndarray, k: int) -> np.ndarray:
    """Groups of k consecutive ranks; the last group takes the remainder (k..2k-1)."""
    n = len(values)
    order = np.argsort(values, kind="stable")
    n_groups = max(n // k, 1)
    rank_group = np.minimum(np.arange(n) // k, n_groups - 1)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = rank_group
    return labels


def _group_means(values: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    n_groups = int(labels.max()) + 1
    wsum = np.bincount(labels, weights=weights, minlength=n_groups)
    xsum = np.bincount(labels, weights=weights * values, minlength=n_groups)
    return (xsum / wsum)[labels]


def _group_mode(series: pd.Series, labels: np.ndarray) -> pd.Series:
    """Most frequent value of each group (smallest level first on ties; missing counts as a value)."""
    codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
    n_levels = len(uniques) + 1
    codes = np.where(codes < 0, len(uniques), codes)
    key = labels * n_levels + codes
    values, counts = np.unique(key, return_counts=True)
    g, c = values // n_levels, values % n_levels
    order = np.lexsort((c, -counts, g))
    first = np.ones(len(order), dtype=bool)
    first[1:] = g[order][1:] != g[order][:-1]
    mode_code = np.empty(int(labels.max()) + 1, dtype=np.int64)
    mode_code[g[order][first]] = c[order][first]
    positions = mode_code[labels]
    # Rebuild through the original values so the dtype (and categories) survive.
    first_row = np.full(n_levels, -1, dtype=np.int64)
    first_row[codes[::-1]] = np.arange(len(codes))[::-1]
    taken = series.array.take(first_row[positions])
    return pd.Series(taken, index=series.index, name=series.name)


@register_masker(
    "microaggregation",
    "Microaggregation: MDAV or individual ranking (group means)",
    ranges={"group_size": (2, None)},
)
@deprecated_spellings("columns", "group_size", k="group_size")
def microaggregate(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    group_size: int = 3,
    method: str = "mdav",
    categorical: str = "error",
    scale: str | None = "standard",
    weights: Mapping[str, float] | None = None,
    sample_weights: str | None = None,
    schema: Schema | None = None,
    block_size: int | None = 10_000,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> MicroaggregationResult:
    """Microaggregate numeric variables: MDAV groups or individual ranking, values -> group means.

    MDAV: Domingo-Ferrer & Mateo-Sanz (2002), the heuristic named in Erola et
    al. (2011) Section 2.1; individual ranking: each variable
    sorted on its own and cut into groups of k consecutive ranks. Both give
    groups of k..2k-1 records, k being ``group_size``.

    Parameters
    ----------
    data : DataFrame
        Microdata, never modified.
    columns : iterable of str, optional
        Variables to aggregate. Default: every numeric column whose role is
        not id, weight or ignore. Other columns pass through unchanged.
    group_size : int, default 3
        Minimum group size k (>= 2, at most the number of records); groups
        have k..2k-1 records. Spelled ``k`` in sdckit 0.1 (still accepted
        for one release, with a DeprecationWarning).
    method : {"mdav", "individual_ranking"}
        ``"mdav"`` groups whole records on all numeric ``columns`` at once, so
        the masked columns are k-anonymous; ``"individual_ranking"`` groups
        each variable separately (better utility, no k-anonymity across
        variables).
    categorical : {"error", "mode"}, default "error"
        A categorical or ordinal column among ``columns`` raises a
        :class:`SchemaError` by default; with ``"mode"`` it takes the most
        frequent value of its MDAV group (ties: smallest level). Categorical
        columns never enter distances.
    scale : {"standard", "minmax", None}, default "standard"
        Scaling of the variables before distances (z-scores by default).
    weights : mapping, optional
        ``{column: weight >= 0}`` multiplying each variable in the distances
        (as in :func:`sdckit.microdata.rwn`).
    sample_weights : str, optional
        A survey-weight column: group representatives become weighted means,
        so weighted totals within each group are preserved. The column itself
        passes through unchanged. When omitted, a column with the role
        "weight" in ``schema`` is used.
    schema : Schema, optional
        Column kinds and roles; inferred when omitted.
    block_size : int or None, default 10000
        MDAV runs exactly (textbook groups) on data of up to block_size
        records; larger data are cut into spatially compact blocks of at most
        block_size records and MDAV runs in each (see :func:`mdav_groups`).
        ``None`` forces one block (quadratic time).
    random_state : None, int or Generator
        Accepted for the common interface; both methods are deterministic.
    progress : callable, optional
        ``progress(done, total)`` during MDAV.

    Returns
    -------
    MicroaggregationResult
        Same index, columns and dtypes (integer columns get rounded group
        means); diagnostics ``group``/``group_size`` (MDAV) or
        ``group_<column>`` (individual ranking); stats with ``sse_ratio`` =
        within-group SSE / total SSE on the scaled variables.
    """
    check_dataframe(data, unique_index=True)
    n = len(data)
    if method not in _METHODS:
        raise ParameterError(f"method must be one of {list(_METHODS)}, got {method!r}")
    if categorical not in ("error", "mode"):
        raise ParameterError(f"categorical must be 'error' or 'mode', got {categorical!r}")
    k = check_int(group_size, "group_size", minimum=2)
    if k > n:
        raise ParameterError(f"group_size={k} is larger than the number of records ({n})")
    check_random_state(random_state)  # same convention as every method; MDAV draws nothing
    schema = schema if schema is not None else Schema.infer(data)
    schema.check_matches(data)
    sample_weights = resolve_sample_weights(schema, sample_weights)
    if columns is None:
        cols = [c for c in schema.maskable() if schema[c].kind is Kind.NUMERIC]
        if sample_weights is not None:
            cols = [c for c in cols if c != sample_weights]
    else:
        cols = check_columns(data, columns, "columns")
    if not cols:
        raise ParameterError("no columns to microaggregate: give columns=[...]")
    non_numeric = [c for c in cols if schema[c].kind is not Kind.NUMERIC]
    numeric = [c for c in cols if schema[c].kind is Kind.NUMERIC]
    if non_numeric and categorical == "error":
        raise SchemaError(
            f"microaggregation averages numbers; column(s) {non_numeric} are categorical or "
            "ordinal. Drop them from columns, or pass categorical='mode' to replace them by "
            "the most frequent value of each MDAV group"
        )
    if non_numeric and method == "individual_ranking":
        raise SchemaError(
            f"individual ranking needs numeric columns; {non_numeric} are not (use method='mdav' "
            "with categorical='mode')"
        )
    if not numeric:
        raise SchemaError(
            f"MDAV needs at least one numeric column for its distances; columns {cols} have none"
        )
    if sample_weights is not None and sample_weights in cols:
        raise ParameterError(f"sample_weights column {sample_weights!r} cannot also be aggregated")
    w = sample_weight_vector(data, sample_weights)
    na = data[cols].isna().sum()
    if na.any():
        listed = ", ".join(f"{c!r} ({int(v)})" for c, v in na[na > 0].items())
        raise DataError(f"missing values in column(s) {listed}; impute or drop them first")
    design = build_design(data, columns=numeric, schema=schema, scale=scale, weights=weights)
    matrix = design.matrix
    weight_vector = w if w is not None else np.ones(n)

    out = data.copy()
    diag: dict[str, np.ndarray] = {}
    if method == "mdav":
        labels = mdav_groups(matrix, k, block_size=block_size, progress=progress)
        sizes = np.bincount(labels)
        diag["group"] = labels
        diag["group_size"] = sizes[labels]
        centroids = np.column_stack(
            [_group_means(matrix[:, j], labels, weight_vector) for j in range(matrix.shape[1])]
        )
        sse = float(((matrix - centroids) ** 2).sum())
        for col in numeric:
            out[col] = _cast_like(
                data[col], _group_means(_as_float(data[col]), labels, weight_vector)
            )
        for col in non_numeric:
            out[col] = _group_mode(data[col], labels)
        stats: dict[str, Any] = {
            "groups": len(sizes),
            "smallest_group": int(sizes.min()),
            "largest_group": int(sizes.max()),
        }
    else:
        sse = 0.0
        group_counts = []
        for j, col in enumerate(numeric):
            labels = _individual_ranking_groups(matrix[:, j], k)
            diag[f"group_{col}"] = labels
            group_counts.append(int(labels.max()) + 1)
            sse += float(
                ((matrix[:, j] - _group_means(matrix[:, j], labels, weight_vector)) ** 2).sum()
            )
            out[col] = _cast_like(
                data[col], _group_means(_as_float(data[col]), labels, weight_vector)
            )
            sizes = np.bincount(labels)
        stats = {
            "groups_per_variable": min(group_counts),
            "smallest_group": int(sizes.min()),
            "largest_group": int(sizes.max()),
        }
    centred = matrix - np.average(matrix, axis=0, weights=weight_vector)
    sst = float((centred**2).sum())
    stats.update(
        {
            "within_group_sse": sse,
            "total_sse": sst,
            "sse_ratio": sse / sst if sst > 0 else 0.0,
        }
    )
    # Group means keep each column's (weighted) mean exactly, but an integer
    # column holds its group means rounded, so its mean moves a little: say by how much.
    shifts = {
        col: abs(
            float(np.average(_as_float(out[col]), weights=weight_vector))
            - float(np.average(_as_float(data[col]), weights=weight_vector))
        )
        for col in numeric
    }
    worst = max(shifts, key=lambda col: shifts[col])
    stats["largest_mean_change"] = shifts[worst]
    stats["largest_mean_change_column"] = str(worst)
    params = {
        "columns": cols,
        "group_size": k,
        "method": method,
        "categorical": categorical,
        "scale": scale,
        "weights": dict(design.weights),
        "sample_weights": sample_weights,
        "random_state": random_state if isinstance(random_state, numbers.Integral) else None,
    }
    diagnostics = pd.DataFrame(diag, index=data.index)
    return MicroaggregationResult(
        data=out, diagnostics=diagnostics, params=params, method="microaggregation", stats=stats
    )


def _as_float(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series).to_numpy(dtype=np.float64)


def _cast_like(original: pd.Series, values: np.ndarray) -> pd.Series:
    """Values in the original column's dtype (integers: group means rounded half to even)."""
    dtype = original.dtype
    if pd.api.types.is_integer_dtype(dtype):
        values = np.rint(values)
    return pd.Series(values, index=original.index, name=original.name).astype(dtype)
