"""Randomization Within Neighborhoods (RWN).

Perry, Matloff & Tendick (2022), *RWN: A Novel Neighborhood-Based Method for
Statistical Disclosure Control* (Perry, Matloff & Tendick 2022), Section 5; and its precursor
Matloff & Tendick (2015), Section 2.

For every record i and every masked variable j, with probability q the value
w_ij is replaced by variable j's value in a record drawn uniformly from i's
neighbourhood S_i, a *different* draw for every j. S_i holds the k nearest
other records, or all other records within eps, whichever set is larger
(Perry, Matloff & Tendick 2022, Section 5 step 2). By the theorem of their Section 6, as the
neighbourhoods shrink the joint distribution of the released record tends to
that of the original, although each variable is drawn independently: the
multivariate relations survive without being modelled.

Values are only ever copied from the same column, never invented, so a
categorical variable keeps whole categories and integer columns stay integer.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_fraction,
    check_int,
    check_random_state,
)
from sdckit.errors import DataError, ParameterError
from sdckit.microdata.base import MaskResult, register_masker
from sdckit.neighbors import (
    NeighborBackend,
    estimate_recall,
    iter_neighborhoods,
    make_backend,
    make_strategy,
)
from sdckit.neighbors.backends import EXACT_ALGORITHMS, check_backend_name
from sdckit.schema import Design, Kind, Schema, build_design, check_distance_weights

__all__ = ["RWNResult", "rwn"]


@dataclass(frozen=True)
class RWNResult(MaskResult):
    """Result of :func:`rwn`.

    ``diagnostics`` has, per record: ``neighborhood_size`` (size of S_i),
    ``distance_to_closest`` (design distance to the nearest other record),
    ``cells_modified`` (cells selected for replacement), ``cells_changed``
    (cells whose value actually differs afterwards) and
    ``empty_neighborhood`` (True where S_i was empty).
    """

    def expected_selection_share(self) -> float | None:
        """q, times modprop when whole records are selected first."""
        q = float(self.params["q"])
        modprop = self.params.get("modprop")
        return q * (float(modprop) if modprop is not None else 1.0)

    @property
    def neighborhood_sizes(self) -> pd.Series:
        """Size of each record's neighbourhood."""
        return self.diagnostics["neighborhood_size"]

    def summary(self) -> str:
        """Parameters, neighbourhood sizes, the share of cells changed and the search's recall."""
        sizes = self.diagnostics["neighborhood_size"]
        lines = [
            super().summary(),
            f"  neighbourhood size: min {int(sizes.min())} / median {float(sizes.median()):g} / max {int(sizes.max())}",
        ]
        if "recall_at_k" in self.stats:
            lines.append(
                f"  neighbour search {self.params['neighbors']}: recall@{self.params['k'] or 1} "
                f"{self.stats['recall_at_k']:.3f} "
                f"(± {self.stats.get('recall_standard_error', 0.0):.3f}) against exact search on "
                f"{self.stats['recall_sample']} records; k-th neighbour "
                f"{self.stats['neighbor_distance_ratio']:.2f} x as far as the true k-th nearest"
            )
        if self.stats.get("neighborhoods_truncated"):
            lines.append(
                f"  WARNING: {self.stats['neighborhoods_truncated']} eps-neighbourhood(s) held more "
                f"than {self.stats['neighborhood_cap']} records and were cut to the nearest "
                "(diagnostics: neighborhood_truncated)"
            )
        return "\n".join(lines)


def _check_eps(eps: Any, n: int) -> np.ndarray | None:
    if eps is None:
        return None
    if isinstance(eps, numbers.Real) and not isinstance(eps, bool):
        if not np.isfinite(float(eps)) or float(eps) < 0:
            raise ParameterError(f"eps must be a finite number >= 0, got {eps!r}")
        return np.full(n, float(eps))
    try:
        arr = (
            np.asarray(eps, dtype=np.float64)
            if not isinstance(eps, pd.Series)
            else eps.to_numpy(np.float64)
        )
    except (TypeError, ValueError):
        raise ParameterError(
            f"eps must be a number or one number per record ({n}); it holds non-numbers"
        ) from None
    if arr.ndim != 1 or len(arr) != n:
        raise ParameterError(
            f"eps must be a number or one value per record ({n}), got an array of shape {arr.shape}"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"eps must be finite and >= 0 for every record; record {pos} has {arr[pos]!r}"
        )
    return arr


def _take(series: pd.Series, positions: np.ndarray) -> pd.Series:
    """Values of ``series`` at ``positions`` (-1 -> missing), keeping the dtype where possible."""
    array = series.array
    needs_fill = bool((positions < 0).any())
    if needs_fill and isinstance(array, pd.arrays.NumpyExtensionArray):
        kind = array.dtype.numpy_dtype.kind
        if kind in "iu":
            array = pd.array(
                array.to_numpy(),
                dtype=f"{'U' if kind == 'u' else ''}Int{array.dtype.numpy_dtype.itemsize * 8}",
            )
        elif kind == "b":
            array = pd.array(array.to_numpy(), dtype="boolean")
    taken = array.take(positions, allow_fill=needs_fill)
    return pd.Series(taken, index=series.index, name=series.name)


@register_masker(
    "rwn",
    "Randomization Within Neighborhoods (Perry, Matloff & Tendick 2022)",
    ranges={"k": (0, None), "q": (0, 1), "modprop": (0, 1), "chunk_size": (1, None)},
)
def rwn(
    data: pd.DataFrame,
    *,
    k: int = 5,
    eps: float | Iterable[float] | None = None,
    q: float = 1.0,
    modprop: float | None = None,
    weights: Mapping[str, float] | None = None,
    scale: str | None = "minmax",
    metric: str = "euclidean",
    balance_steps: bool = True,
    columns: Iterable[str] | None = None,
    distance_columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    empty: str = "missing",
    missing: str = "error",
    algorithm: str = "auto",
    backend: str | NeighborBackend | None = None,
    neighbors: str | NeighborBackend | None = None,
    sample_size: int | None = None,
    recall_sample: int | None = None,
    chunk_size: int = 2048,
    n_jobs: int | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> RWNResult:
    """Mask microdata by Randomization Within Neighborhoods.

    Perry, Matloff & Tendick (2022), Section 5; Matloff & Tendick (2015), Section 2 for the pure-radius variant and ``modprop``.

    Parameters
    ----------
    data : DataFrame
        Microdata, one record per row. Never modified.
    k : int, default 5
        Number of nearest other records in every neighbourhood (its minimum
        size). ``k=0`` with ``eps`` gives Matloff & Tendick's (2015) pure-radius method.
    eps : float or array of length n, optional
        Radius in the scaled design space; the neighbourhood is the eps-ball
        when that holds more than k other records. One value per record is
        allowed (Matloff & Tendick 2015, Discussion).
    q : float in [0, 1], default 1
        Probability that each cell is modified, independently (Perry, Matloff & Tendick 2022).
    modprop : float in [0, 1], optional
        Matloff & Tendick's (2015) alternative: exactly ``round(modprop * n)`` whole records,
        chosen at random, are modified (their cells each with probability q);
        the others are released unchanged.
    weights : mapping, optional
        ``{column: weight >= 0}`` multiplying each variable's contribution to
        distances (the ``wts`` of Matloff & Tendick 2015).
    scale : {"minmax", "standard", None}, default "minmax"
        How variables are put on one footing before distances (see
        :func:`sdckit.schema.build_design`).
    metric : str, default "euclidean"
        ``"euclidean"``, ``"manhattan"``, ``"chebyshev"``.
    balance_steps : bool, default True
        Keep coarse variables from dominating the distances. With one-hot
        dummies a category mismatch costs sqrt(2), more than a numeric
        variable's whole [0, 1] range, and one step of a code with few levels
        costs a large share of it; neighbours then nearly always share every
        category and code, and those columns stay practically unmasked (e.g.
        sex changed in 0.2% of Adult's cells at k = 5). With ``True``, every
        distance variable whose typical smallest difference (a category
        mismatch, one step of a code) exceeds the reference distance — the
        median distance from a record to its k-th nearest other record,
        measured on the numeric and ordinal distance variables alone — is
        given a smaller weight, so that its step costs just that distance: a neighbour differing in one
        category then competes with the neighbours that differ in the numeric
        variables instead of being excluded. This is an automatic form of
        Matloff & Tendick's advice (2015, §4) to shrink the weights of discrete
        variables so that they do not dominate the metric. Variables named in
        ``weights`` keep the weight given. The shrunk variables and factors are
        in ``stats["balanced_variables"]``. ``False``: plain design, as in
        Matloff & Tendick (2015).
    columns : iterable of str, optional
        Variables to mask. Default: every column whose role is not id,
        weight or ignore. Other columns pass through unchanged.
    distance_columns : iterable of str, optional
        Variables defining distances; default ``columns``.
    schema : Schema, optional
        Column kinds and roles; inferred from dtypes when omitted.
    empty : {"missing", "keep"}, default "missing"
        What a modified cell of a record with an empty neighbourhood (only
        possible with k=0) becomes: missing (the choice of Matloff & Tendick 2015, protecting the
        isolated record) or its original value.
    missing : {"error", "impute"}, default "error"
        Missing values in the distance variables raise an error naming the
        columns; ``"impute"`` computes distances on a copy with medians
        (numeric) or modes (categorical) filled in, while still copying the
        real values, missing ones included.
    algorithm : {"auto", "kd_tree", "ball_tree", "brute"}
        Exact neighbour search backend; ignored when ``backend`` is given. A
        strategy's name (``"exact"``, ``"hnsw"``, ``"ivf"``, ``"sample"``,
        ``"pairs"``) is read as ``neighbors``.
    backend : NeighborBackend or str, optional
        A custom neighbour-search backend, or any name
        :func:`sdckit.neighbors.make_backend` knows (read as ``algorithm``
        or ``neighbors``, as :func:`sdckit.assess.assess` takes it).
    neighbors : {"exact", "hnsw", "ivf", "sample", "pairs"} or NeighborBackend, optional
        The neighbourhood strategy for large files (docs/rwn.md, "Large
        files"): ``"exact"`` (default; the ``algorithm`` named); faiss's
        approximate ``"hnsw"`` or ``"ivf"`` index; Perry, Matloff & Tendick's
        (2022) Section 11.1 Method 1, ``"sample"`` (neighbours from one random
        sample of ``sample_size`` records; a fresh sample per record with
        ``SampleBackend(fresh=True)``), or Section 11.2 Method 2, ``"pairs"``
        (neighbours among a random sample of n·m/2 pairs). A backend object
        (:mod:`sdckit.neighbors`) sets its own parameters. Not together with
        ``backend``.
    sample_size : int, optional
        m for ``"sample"`` (default 10,000) and ``"pairs"`` (default 64); larger than k.
    recall_sample : int, optional
        Records on which a non-exact search is checked against exact search
        (``stats["recall_at_k"]``, ``stats["neighbor_distance_ratio"]``);
        default 1,000 (all records when fewer); 0 skips the check.
    chunk_size : int, default 2048
        Records per search block; memory is O(chunk_size * neighbourhood size).
        The output depends on the seed and on chunk_size.
    n_jobs : int, optional
        Threads for the search (default: all cores).
    random_state : None, int or numpy Generator
        Same seed, same output.
    progress : callable, optional
        Called as ``progress(done, total)`` after each block of records.

    Returns
    -------
    RWNResult
        Masked data (same index, columns and dtypes; an integer or boolean
        column receiving missing values becomes pandas' nullable type) and
        per-record diagnostics.
    """
    check_dataframe(data, min_rows=2, unique_index=True)
    n = len(data)
    k = check_int(k, "k", minimum=0)
    q = check_fraction(q, "q")
    eps_arr = _check_eps(eps, n)
    if k == 0 and eps_arr is None:
        raise ParameterError("k=0 needs eps: give a radius, or a k >= 1")
    if k >= n:
        raise ParameterError(f"k={k} must be smaller than the number of records ({n})")
    if modprop is not None:
        modprop = check_fraction(modprop, "modprop")
    if empty not in ("missing", "keep"):
        raise ParameterError(f"empty must be 'missing' or 'keep', got {empty!r}")
    if missing not in ("error", "impute"):
        raise ParameterError(f"missing must be 'error' or 'impute', got {missing!r}")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    if not isinstance(balance_steps, bool):
        raise ParameterError(f"balance_steps must be True or False, got {balance_steps!r}")
    rng = check_random_state(random_state)

    if columns is not None:
        columns = check_columns(data, columns, "columns")
        if not columns:
            raise ParameterError("columns is empty: name at least one column to mask")
    if distance_columns is not None:
        distance_columns = check_columns(data, distance_columns, "distance_columns")
        if not distance_columns:
            raise ParameterError(
                "distance_columns is empty: name at least one column to define neighbourhoods"
            )
    if schema is None:
        # Only the columns RWN uses need a kind: a column outside `columns` and
        # `distance_columns` (a date, say) passes through without being judged.
        used = None if columns is None else [*columns, *(distance_columns or [])]
        schema = Schema.infer(data if used is None else data[list(dict.fromkeys(used))])
    else:
        schema.check_matches(data)
    mask_cols = columns if columns is not None else schema.maskable()
    if not mask_cols:
        raise ParameterError("no columns to mask: every column is id, weight or ignore")
    dist_cols = distance_columns if distance_columns is not None else mask_cols
    design_data = data[dist_cols]
    na_counts = design_data.isna().sum()
    if na_counts.any():
        if missing == "error":
            listed = ", ".join(f"{c!r} ({int(v)})" for c, v in na_counts[na_counts > 0].items())
            raise DataError(
                f"missing values in distance column(s) {listed}; drop or impute them, or pass "
                "missing='impute' (--impute on the command line) to compute distances on an "
                "imputed copy"
            )
        design_data = _impute(design_data, schema)
    user_weights = check_distance_weights(weights, list(dist_cols))
    design_weights, reference, shrunk = _balanced_weights(
        design_data,
        dist_cols,
        schema,
        scale=scale,
        user=user_weights,
        explicit=set(weights or {}),
        metric=metric,
        k=max(k, 1),
        balance=balance_steps,
    )
    design = build_design(
        design_data, columns=dist_cols, schema=schema, scale=scale, weights=design_weights
    )

    backend = _resolve_neighbors(
        neighbors,
        backend,
        algorithm=algorithm,
        metric=metric,
        sample_size=sample_size,
        k=k,
        eps=eps_arr,
        random_state=rng,
    )
    if recall_sample is not None:
        recall_sample = check_int(recall_sample, "recall_sample", minimum=0)
    exact_search = getattr(backend, "exact", True)

    # Which cells are modified: per-record selection (modprop), then per-cell q.
    record_selected = np.ones(n, dtype=bool)
    if modprop is not None:
        chosen = rng.choice(n, size=round(modprop * n), replace=False)
        record_selected = np.zeros(n, dtype=bool)
        record_selected[chosen] = True
    base_seed = int(rng.integers(0, 2**63 - 1))

    p = len(mask_cols)
    source_rows = np.empty((n, p), dtype=np.int64)  # donor row per cell; own row if unmodified
    sizes = np.empty(n, dtype=np.int64)
    nearest = np.empty(n, dtype=np.float64)
    cells_modified = np.empty(n, dtype=np.int64)
    truncated = np.zeros(n, dtype=bool)
    backend.fit(design.matrix)
    recall = None
    if not exact_search and recall_sample != 0:
        recall = estimate_recall(
            backend,
            design.matrix,
            k=max(k, 1),
            sample_size=min(1000 if recall_sample is None else recall_sample, n),
            metric=metric,
            random_state=base_seed,
        )
    for (block, part), chunk in iter_neighborhoods(
        design.matrix,
        k=k,
        eps=eps_arr,
        backend=backend,
        chunk_size=chunk_size,
        n_jobs=n_jobs,
        fitted=True,
    ):
        # One generator per block: the output does not depend on thread scheduling.
        crng = np.random.default_rng([base_seed, block, part])
        rows = chunk.rows
        csize = chunk.sizes[:, None]
        modified = (crng.random((len(rows), p)) < q) & record_selected[rows, None]
        # A uniform draw from each record's neighbourhood, independently per variable.
        offset = np.minimum(np.floor(crng.random((len(rows), p)) * csize), np.maximum(csize - 1, 0))
        has_nbrs = csize > 0
        flat_pos = np.where(has_nbrs, chunk.indptr[:-1, None] + offset.astype(np.int64), 0)
        donors = chunk.indices[flat_pos] if chunk.indices.size else np.zeros_like(flat_pos)
        donors = np.where(has_nbrs, donors, rows[:, None] if empty == "keep" else -1)
        chosen = np.where(modified, donors, rows[:, None])
        source_rows[rows] = chosen
        sizes[rows] = chunk.sizes
        nearest[rows] = chunk.nearest_distance
        if chunk.truncated is not None:
            truncated[rows] = chunk.truncated
        # Replaced cells (left missing ones included; kept ones of isolated records not).
        cells_modified[rows] = (chosen != rows[:, None]).sum(axis=1)
        if progress is not None:
            progress(int(rows[-1]) + 1, n)

    out = data.copy()
    own = np.arange(n)
    changed = np.zeros(n, dtype=np.int64)
    for j, col in enumerate(mask_cols):
        positions = source_rows[:, j]
        if (positions == own).all():
            continue
        out[col] = _take(data[col], positions)
        # Compare through factorised codes (missing = -1): fast for any dtype.
        codes = pd.factorize(data[col], use_na_sentinel=True)[0]
        new_codes = np.where(positions >= 0, codes[np.maximum(positions, 0)], -1)
        changed += new_codes != codes
    cells_left_missing = int((source_rows < 0).sum())

    diagnostics = pd.DataFrame(
        {
            "neighborhood_size": sizes,
            "distance_to_closest": nearest,
            "cells_modified": cells_modified,
            "cells_changed": changed,
            "empty_neighborhood": sizes == 0,
        },
        index=data.index,
    )
    if not exact_search:
        diagnostics["neighborhood_truncated"] = truncated
    params = {
        "k": k,
        "eps": eps if eps is None or isinstance(eps, numbers.Real) else "per-record",
        "q": q,
        "modprop": modprop,
        "weights": user_weights,
        "scale": scale,
        "metric": metric,
        "balance_steps": balance_steps,
        "columns": mask_cols,
        "distance_columns": dist_cols,
        "empty": empty,
        "missing": missing,
        "algorithm": getattr(backend, "name", algorithm) if exact_search else algorithm,
        "neighbors": "exact" if exact_search else getattr(backend, "name", "custom"),
        "sample_size": getattr(backend, "sample_size", None),
        "recall_sample": recall_sample,
        "chunk_size": chunk_size,
    }
    total_cells = n * p
    stats = {
        "cells_masked_columns": total_cells,
        "share_of_cells_modified": float(cells_modified.sum()) / total_cells,
        "share_of_cells_changed": float(changed.sum()) / total_cells,
        "records_with_empty_neighborhood": int((sizes == 0).sum()),
        "cells_left_missing": cells_left_missing,
        "constant_columns": design.constant_columns,
    }
    if recall is not None:
        stats["recall_at_k"] = recall.recall
        stats["recall_standard_error"] = recall.standard_error
        stats["neighbor_distance_ratio"] = recall.distance_ratio
        stats["recall_sample"] = recall.sample_size
        stats["recall_seconds"] = recall.seconds
    cap = getattr(backend, "neighborhood_cap", None)
    if cap is not None and eps_arr is not None:
        stats["neighborhood_cap"] = cap
        stats["neighborhoods_truncated"] = int(truncated.sum())
    if shrunk:
        stats["balanced_variables"] = {v: round(f, 4) for v, f in shrunk.items()}
        stats["reference_distance"] = reference
    return RWNResult(data=out, diagnostics=diagnostics, params=params, method="rwn", stats=stats)


def _resolve_neighbors(
    neighbors: str | NeighborBackend | None,
    backend: str | NeighborBackend | None,
    *,
    algorithm: str,
    metric: str,
    sample_size: int | None,
    k: int,
    eps: np.ndarray | None,
    random_state: np.random.Generator,
) -> NeighborBackend:
    """The backend ``neighbors`` / ``backend`` / ``algorithm`` ask for, its parameters checked.

    Each of the three takes every name :func:`sdckit.neighbors.make_backend`
    knows: an exact search's name is read as ``algorithm``, a strategy's as
    ``neighbors``.
    """
    if neighbors is not None and backend is not None:
        raise ParameterError(
            "give neighbors or backend, not both (a backend object fits neighbors)"
        )
    if isinstance(backend, str):  # a name, as assess takes it
        if check_backend_name(backend, "backend", objects=True) in EXACT_ALGORITHMS:
            algorithm = backend
        else:
            neighbors = backend
        backend = None
    if check_backend_name(algorithm) not in EXACT_ALGORITHMS:  # a strategy's name
        if neighbors is not None and neighbors != algorithm and algorithm != "exact":
            raise ParameterError(
                f"algorithm={algorithm!r} and neighbors={neighbors!r} name two different "
                "searches; give one"
            )
        neighbors, algorithm = neighbors or algorithm, "auto"
    if sample_size is not None:
        sample_size = check_int(sample_size, "sample_size", minimum=1)
        if not isinstance(neighbors, str) or neighbors not in ("sample", "pairs"):
            raise ParameterError(
                f"sample_size applies to neighbors='sample' or 'pairs', not {neighbors!r}"
            )
    if isinstance(neighbors, str):
        chosen = make_strategy(
            neighbors,
            metric=metric,
            sample_size=sample_size,
            algorithm=algorithm,
            random_state=(
                int(random_state.integers(0, 2**63 - 1))
                if neighbors in ("sample", "pairs")
                else None
            ),
        )
    elif neighbors is not None:
        chosen = neighbors
    elif backend is not None:
        chosen = backend
    else:
        chosen = make_backend(algorithm, metric)
    m = getattr(chosen, "sample_size", None)
    if m is not None and m <= k:
        raise ParameterError(f"sample_size must be larger than k ({k}), got {m}")
    cap = getattr(chosen, "neighborhood_cap", None)
    if cap is not None and eps is not None and cap < k:
        raise ParameterError(
            f"max_neighbors={cap} of the {getattr(chosen, 'name', 'neighbour')} search must be "
            f"at least k ({k}) when eps is given"
        )
    return chosen


# Records whose k-th neighbour distance sets the reference distance (evenly spread rows).
_CALIBRATION_RECORDS = 2000


def _smallest_steps(design: Design, metric: str) -> dict:
    """Each variable's typical smallest nonzero difference in the design.

    For every distinct value of a variable (a row of its design block: one
    number, or a category's dummy vector) the distance to the nearest other
    distinct value; the median of that over the records. A category mismatch
    with 0/1 dummies is sqrt(2) (Euclidean); one step of a code with 16 levels
    scaled to [0, 1] is 1/15; a continuous variable's step is tiny.
    """
    steps: dict = {}
    sources = np.asarray(design.feature_sources, dtype=object)
    for variable in design.variables:
        block = design.matrix[:, sources == variable]
        block = block[~np.isnan(block).any(axis=1)]
        if not len(block):
            steps[variable] = 0.0
            continue
        if block.shape[1] == 1:
            # 1-D unique is a plain sort; np.unique(axis=0) is many times slower.
            flat, counts = np.unique(block[:, 0], return_counts=True)
            values = flat[:, None]
        else:
            values, counts = np.unique(block, axis=0, return_counts=True)
        if len(values) < 2:
            steps[variable] = 0.0
            continue
        if values.shape[1] == 1:
            u = values[:, 0]  # sorted by np.unique
            gaps = np.diff(u)
            left = np.concatenate([[np.inf], gaps])
            right = np.concatenate([gaps, [np.inf]])
            nearest = np.minimum(left, right)
        elif len(values) <= 4000:
            from scipy.spatial.distance import cdist  # only for categorical blocks

            pair = cdist(values, values, metric="cityblock" if metric == "manhattan" else metric)
            np.fill_diagonal(pair, np.inf)
            nearest = pair.min(axis=1)
        else:  # pragma: no cover - thousands of levels: one-hot mismatch of unit dummies
            nearest = np.full(len(values), float(np.abs(values).max()) * np.sqrt(2.0))
        order = np.argsort(nearest)
        cum = np.cumsum(counts[order])
        steps[variable] = float(nearest[order][np.searchsorted(cum, cum[-1] / 2.0)])
    return steps


def _balanced_weights(
    frame: pd.DataFrame,
    variables: list,
    schema: Schema,
    *,
    scale: str | None,
    user: dict,
    explicit: set,
    metric: str,
    k: int,
    balance: bool,
) -> tuple[dict, float | None, dict]:
    """Distance weights with coarse variables balanced (``balance_steps``).

    ``user`` holds the validated weight of every distance variable; the
    variables in ``explicit`` were given a weight by the user and keep it.

    Returns the weights to build the design with, the reference distance (None
    when nothing was balanced) and ``{variable: factor}`` for each variable
    whose weight was shrunk.
    """
    if not balance:
        return user, None, {}
    numeric = [v for v in variables if schema[v].kind is not Kind.CATEGORICAL and user[v] > 0]
    if not numeric or len(variables) < 2:
        return user, None, {}
    n = len(frame)
    kk = min(k, n - 1)
    fine = build_design(
        frame, columns=numeric, schema=schema, scale=scale, weights={v: user[v] for v in numeric}
    )
    rows = np.unique(np.linspace(0, n - 1, min(n, _CALIBRATION_RECORDS)).astype(np.int64))
    finder = make_backend("kd_tree", metric)
    finder.fit(fine.matrix)
    # kk + 1: the query record is its own nearest neighbour at distance 0.
    kth = finder.kneighbors(rows, kk + 1)[0][:, kk]
    positive = kth[kth > 0]
    if not positive.size:
        return user, None, {}  # the numeric variables do not separate records at this k
    reference = float(np.median(kth))
    if reference <= 0:
        reference = float(np.median(positive))
    design = build_design(frame, columns=variables, schema=schema, scale=scale, weights=user)
    steps = _smallest_steps(design, metric)
    balanced = dict(user)
    factors: dict = {}
    for variable, step in steps.items():
        if variable in explicit or user[variable] == 0 or step <= reference:
            continue
        factors[variable] = reference / step
        balanced[variable] = user[variable] * factors[variable]
    return balanced, reference, factors


def _impute(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Fill missing values (median / mode) on a copy used only for distances."""
    filled = {}
    for col in frame.columns:
        s = frame[col]
        if not s.isna().any():
            filled[col] = s
            continue
        if s.notna().sum() == 0:
            raise DataError(f"column {col!r} has only missing values; it cannot define distances")
        if schema[col].kind is Kind.NUMERIC:
            filled[col] = s.fillna(pd.to_numeric(s, errors="coerce").median())
        else:
            filled[col] = s.fillna(s.mode(dropna=True).iloc[0])
    return pd.DataFrame(filled, index=frame.index)
