"""RWN by partitions: Perry, Matloff & Tendick (2022), §11.3, Method 3.

"Partition the dataset into u equal partitions and then apply the original
method" to each (their item 1): the neighbourhoods are sought within a
partition, so the work per partition falls from O(n^2) to O((n/u)^2). Every
partition is masked by the single-machine :func:`sdckit.microdata.rwn` with
the same parameters; their item 2, "apply the Method 2 above" (a random
sample of pairs) inside each partition, is ``neighbors="pairs"``, and any other
neighbour search of ``rwn`` can be used the same way.

Two ways to form the partitions:

* ``"random"`` (the paper's): records are dealt into u partitions of equal
  size (sizes differ by at most one) in a random order drawn file by file;
* ``"spatial"``: records are sorted on the design and cut into u blocks of
  about equal size, so that a record's true neighbours tend to share its
  partition. The sort key is the first principal component of the numeric
  and ordinal distance variables scaled to [0, 1] (categorical variables do
  not enter the blocking; they still enter the distances inside a block), and
  the cut points are quantiles of a systematic sample of every file.

Every random stream is derived from one seed with ``numpy.random.SeedSequence``
keyed by position (the dealing of file ``i``, the masking of partition
``g``), and a partition's records are put in file-and-row order before
masking, so the output depends on the seed and the files, never on the
number of workers or the order in which they finish.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_int
from sdckit.distributed._io import ParquetSource, write_parquet
from sdckit.distributed._partitions import (
    STREAM_RWN_ASSIGN,
    STREAM_RWN_MASK,
    as_source,
    check_seed,
    first_records,
    frame_of,
    stream,
)
from sdckit.distributed._progress import ProgressCallback, compute
from sdckit.errors import DataError, ParameterError
from sdckit.microdata import rwn
from sdckit.neighbors.strategies import STRATEGIES
from sdckit.schema import Kind, Schema

__all__ = ["PartitionedRWNResult", "rwn_by_partition"]

_FILE, _ROW, _GROUP = "__sdckit_file", "__sdckit_row", "__sdckit_group"
_GLOBAL = "__sdckit_position"
_INTERNAL = [_FILE, _ROW, _GROUP, _GLOBAL]
#: Records each file contributes to the sample that sets the spatial cut points.
_SAMPLE_PER_FILE = 20_000
PARTITIONINGS = ("random", "spatial")


@dataclass(frozen=True)
class PartitionedRWNResult(FrozenResult):
    """Result of :func:`rwn_by_partition`.

    Attributes
    ----------
    partitions : DataFrame
        One row per partition: ``partition``, ``records``,
        ``share_of_cells_modified``, ``share_of_cells_changed``,
        ``mean_neighborhood_size``, ``median_distance_to_closest`` (in the
        partition's own scaled design), ``records_with_empty_neighborhood``,
        and ``recall_at_k`` for a non-exact neighbour search.
    params : mapping
        The partitioning parameters and the parameters given to ``rwn``.
    stats : mapping
        ``records``, ``partitions``, ``share_of_cells_changed`` (all
        records), ``smallest_partition``, ``largest_partition``.
    output : Path or None
        The Parquet directory written (one file per input file, rows in the
        input order).
    data : DataFrame or None
        The masked records in the input order, when no output directory was
        given.
    """

    partitions: pd.DataFrame
    params: Mapping[str, Any]
    stats: Mapping[str, Any]
    output: Path | None = None
    data: pd.DataFrame | None = None

    def summary(self) -> str:
        """Partitioning, records, share of cells changed, partition sizes."""
        s, p = self.stats, self.params
        where = f"written to {self.output}" if self.output is not None else "in memory"
        recall = []
        if "recall_at_k" in self.partitions.columns:
            recall = [
                f"  {p['neighbors']} neighbour search: recall at k against exact search "
                f"{float(self.partitions['recall_at_k'].min()):.3f}.."
                f"{float(self.partitions['recall_at_k'].max()):.3f} over the partitions"
            ]
        return "\n".join(
            [
                f"RWN by {s['partitions']} {p['partitioning']} partitions (Perry, Matloff & "
                f"Tendick 2022, §11.3): {s['records']} records, "
                f"{s['share_of_cells_changed']:.1%} of masked cells changed; {where}",
                f"  partition sizes {s['smallest_partition']}..{s['largest_partition']}, "
                f"mean neighbourhood size "
                f"{float(self.partitions['mean_neighborhood_size'].mean()):.1f}",
                *recall,
            ]
        )


def _with_positions(part: pd.DataFrame, partition_info: dict | None = None) -> pd.DataFrame:
    index = int(partition_info["number"]) if partition_info else 0
    out = part.reset_index(drop=True)
    out[_FILE] = np.full(len(out), index, dtype=np.int64)
    out[_ROW] = np.arange(len(out), dtype=np.int64)
    return out


def _deal_random(
    part: pd.DataFrame, offsets: np.ndarray, u: int, seed: int, partition_info: dict | None = None
) -> pd.DataFrame:
    """Equal partitions: global position modulo u, shuffled within the file."""
    index = int(partition_info["number"]) if partition_info else 0
    labels = (int(offsets[index]) + np.arange(len(part), dtype=np.int64)) % u
    rng = stream(seed, STREAM_RWN_ASSIGN, index)
    out = part.copy()
    out[_GROUP] = rng.permutation(labels)
    return out


def _projection(
    part: pd.DataFrame, numeric: list[str], low: np.ndarray, span: np.ndarray, axis: np.ndarray
) -> np.ndarray:
    values = part[numeric].to_numpy(np.float64)
    scaled = (values - low) / span
    return np.nan_to_num(scaled, nan=0.5) @ axis


def _sample_projection(
    part: pd.DataFrame,
    numeric: list[str],
    low: np.ndarray,
    span: np.ndarray,
    axis: np.ndarray,
) -> np.ndarray:
    step = max(1, len(part) // _SAMPLE_PER_FILE)
    return _projection(part.iloc[::step], numeric, low, span, axis)


def _deal_spatial(
    part: pd.DataFrame,
    numeric: list[str],
    low: np.ndarray,
    span: np.ndarray,
    axis: np.ndarray,
    cuts: np.ndarray,
) -> pd.DataFrame:
    out = part.copy()
    out[_GROUP] = np.searchsorted(cuts, _projection(part, numeric, low, span, axis), side="right")
    return out


def _mask_groups(
    part: pd.DataFrame, seed: int, rwn_params: dict[str, Any], columns: list[str]
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Mask every partition (group) held by one shuffled Dask partition."""
    masked, rows = [], []
    for group, records in part.groupby(_GROUP, sort=True):
        ordered = records.sort_values([_FILE, _ROW], kind="stable").reset_index(drop=True)
        if len(ordered) < 2:
            raise DataError(
                f"partition {int(group) + 1} has {len(ordered)} record(s); use fewer partitions"
            )
        result = rwn(
            ordered[columns],
            random_state=stream(seed, STREAM_RWN_MASK, int(group)),
            **rwn_params,
        )
        out = result.data
        out[_FILE] = ordered[_FILE].to_numpy()
        out[_ROW] = ordered[_ROW].to_numpy()
        masked.append(out)
        diag = result.diagnostics
        rows.append(
            {
                "partition": int(group) + 1,
                "records": len(ordered),
                "share_of_cells_modified": float(result.stats["share_of_cells_modified"]),
                "share_of_cells_changed": float(result.stats["share_of_cells_changed"]),
                "mean_neighborhood_size": float(diag["neighborhood_size"].mean()),
                "median_distance_to_closest": float(diag["distance_to_closest"].median()),
                "records_with_empty_neighborhood": int(diag["empty_neighborhood"].sum()),
                "cells": int(result.stats["cells_masked_columns"]),
                **(
                    {"recall_at_k": float(result.stats["recall_at_k"])}
                    if "recall_at_k" in result.stats
                    else {}
                ),
            }
        )
    frame = pd.concat(masked) if masked else part.drop(columns=_GROUP).iloc[:0]
    return frame, rows


def _spatial_axis(
    frame: dd.DataFrame, numeric: list[str], progress: ProgressCallback | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Min, range, first principal axis of the scaled variables, and one sample per file."""
    low, high = compute(frame[numeric].min(), frame[numeric].max(), progress=progress)
    low_a = low.to_numpy(np.float64)
    span = high.to_numpy(np.float64) - low_a
    span[~(span > 0)] = 1.0
    (cov,) = compute(frame[numeric].cov(), progress=progress)
    scale = np.outer(span, span)
    matrix = np.nan_to_num(cov.to_numpy(np.float64) / scale)
    _, vectors = np.linalg.eigh(matrix)
    axis = vectors[:, -1]
    # a fixed sign, so the blocks do not depend on the eigen-solver's choice
    axis = axis if axis[np.argmax(np.abs(axis))] > 0 else -axis
    delayed = frame[numeric].to_delayed()
    samples = compute(
        *[dask.delayed(_sample_projection)(d, numeric, low_a, span, axis) for d in delayed],
        progress=progress,
    )
    return low_a, span, axis, np.concatenate(samples) if samples else np.zeros(0)


def rwn_by_partition(
    data: str | os.PathLike | ParquetSource | dd.DataFrame,
    *,
    n_partitions: int,
    partitioning: str = "random",
    output: str | os.PathLike | None = None,
    overwrite: bool = False,
    k: int = 5,
    eps: float | None = None,
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
    neighbors: str | None = None,
    sample_size: int | None = None,
    recall_sample: int | None = None,
    random_state: int = 0,
    progress: ProgressCallback | None = None,
) -> PartitionedRWNResult:
    """Mask a partitioned file by RWN, partition by partition (Perry, Matloff & Tendick (2022), §11.3).

    The records are split into ``n_partitions`` partitions (``"random"``:
    the paper's equal random partitions; ``"spatial"``: blocks along the first
    principal component of the scaled numeric design, so that neighbours tend
    to share a partition), each partition is masked by
    :func:`sdckit.microdata.rwn` with the parameters given, and the masked
    records are put back in their files and rows. Each record's neighbourhood
    is sought only within its partition; the guarantees of RWN (values copied
    from the same column of a nearby record) hold within each partition.

    Parameters
    ----------
    data : path, ParquetSource or dask DataFrame
        Microdata; never modified.
    n_partitions : int
        u, the number of partitions (independent of the number of files and
        of workers).
    partitioning : {"random", "spatial"}, default "random"
        How records are dealt into partitions.
    output : str or path, optional
        Parquet directory to write (one file per input file, rows in input
        order), atomically; without it the masked records are returned in
        ``.data`` (small files only).
    overwrite : bool, default False
        Replace an existing output directory.
    k, eps, q, modprop, weights, scale, metric, balance_steps, columns, distance_columns, schema, empty, missing, algorithm
        Passed to :func:`sdckit.microdata.rwn` for every partition (``k``
        must be at least 1).
    neighbors : {"exact", "hnsw", "ivf", "sample", "pairs"}, optional
        The neighbour search inside every partition, as
        :func:`sdckit.microdata.rwn` (default exact). ``"pairs"`` is the
        paper's §11.3 item 2 (Method 2 inside each partition), ``"sample"``
        Method 1 inside each partition; their samples are drawn from the
        partition's own stream.
    sample_size, recall_sample
        As :func:`sdckit.microdata.rwn`, per partition (the recall of a
        non-exact search is checked on ``recall_sample`` records of every
        partition and reported in ``.partitions["recall_at_k"]``).
    random_state : int, default 0
        The one seed from which the dealing of every file and the masking of
        every partition draw their own streams.
    progress : callable, optional
        ``progress(done, total)``: the tasks of each pass over the files
        (the blocking of ``"spatial"`` makes passes of its own) finished out
        of all, as the Dask scheduler reports them.

    Returns
    -------
    PartitionedRWNResult
        Per-partition diagnostics, and the output directory or the data.
    """
    u = check_int(n_partitions, "n_partitions", minimum=1)
    if partitioning not in PARTITIONINGS:
        raise ParameterError(f"partitioning must be 'random' or 'spatial', got {partitioning!r}")
    k = check_int(k, "k", minimum=1)
    if neighbors is not None and neighbors not in STRATEGIES:
        raise ParameterError(
            f"neighbors must be one of {', '.join(map(repr, STRATEGIES))}, got {neighbors!r}"
        )
    seed = check_seed(random_state)
    source = as_source(data)
    frame = frame_of(source)
    all_columns = [str(c) for c in frame.columns]
    clash = [c for c in all_columns if c in _INTERNAL]
    if clash:
        raise ParameterError(f"columns {clash} are reserved for the partitioning")
    if isinstance(source, ParquetSource):
        rows = np.asarray(source.rows, dtype=np.int64)
    else:
        rows = np.asarray(frame.map_partitions(len).compute(), dtype=np.int64)
    n = int(rows.sum())
    if n < 2 * u:
        raise ParameterError(
            f"n_partitions={u} leaves fewer than 2 records per partition ({n} records)"
        )
    offsets = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    rwn_params: dict[str, Any] = {
        "k": k,
        "eps": eps,
        "q": q,
        "modprop": modprop,
        "weights": dict(weights) if weights is not None else None,
        "scale": scale,
        "metric": metric,
        "balance_steps": balance_steps,
        "columns": list(columns) if columns is not None else None,
        "distance_columns": list(distance_columns) if distance_columns is not None else None,
        "schema": schema,
        "empty": empty,
        "missing": missing,
        "algorithm": algorithm,
        "neighbors": neighbors,
        "sample_size": sample_size,
        "recall_sample": recall_sample,
        "n_jobs": 1,  # the workers are the parallelism
    }
    positioned = frame.map_partitions(
        _with_positions,
        meta=_with_positions(frame._meta),
    )
    if partitioning == "random":
        dealt = positioned.map_partitions(
            _deal_random, offsets, u, seed, meta=_deal_random(positioned._meta, offsets, u, seed)
        )
    else:
        sample_schema = schema or Schema.infer(first_records(source))
        distance = (
            list(distance_columns)
            if distance_columns is not None
            else list(columns)
            if columns is not None
            else sample_schema.maskable()
        )
        numeric = [
            c
            for c in distance
            if c in sample_schema
            and sample_schema[c].kind in (Kind.NUMERIC, Kind.ORDINAL)
            and frame._meta[c].dtype.kind in "iufb"
        ]
        if not numeric:
            raise ParameterError(
                "partitioning='spatial' sorts on the numeric distance variables, and there are "
                "none; use partitioning='random'"
            )
        low, span, axis, sample = _spatial_axis(positioned, numeric, progress)
        cuts = np.quantile(sample, np.arange(1, u) / u) if u > 1 else np.zeros(0)
        dealt = positioned.map_partitions(
            _deal_spatial,
            numeric,
            low,
            span,
            axis,
            cuts,
            meta=_deal_spatial(positioned._meta, numeric, low, span, axis, cuts),
        )
    # one shuffled partition per RWN partition where the hash allows; a task shuffle:
    # u is small, and it needs no scheduler plugin
    shuffled = dealt.shuffle(on=_GROUP, npartitions=u, shuffle_method="tasks")
    work = [
        dask.delayed(_mask_groups, nout=2)(piece, seed, rwn_params, all_columns)
        for piece in shuffled.to_delayed()
    ]
    meta = positioned._meta
    masked = dd.from_delayed([w[0] for w in work], meta=meta, verify_meta=False)
    starts = dict(enumerate(offsets[:-1].tolist()))
    masked = masked.assign(
        **{_GLOBAL: masked[_ROW] + masked[_FILE].map(starts, meta=(_FILE, "int64"))}
    )
    nonempty = offsets[np.concatenate([rows > 0, [True]])]
    divisions = [*nonempty[:-1].tolist(), int(nonempty[-1]) - 1]
    restored = masked.set_index(_GLOBAL, divisions=divisions, shuffle_method="tasks").drop(
        columns=[_FILE, _ROW]
    )
    restored = restored.map_partitions(lambda p: p.reset_index(drop=True), meta=frame._meta)
    diagnostics_job = [w[1] for w in work]
    out_path = None
    data_out = None
    if output is not None:
        inputs = list(source.files) if isinstance(source, ParquetSource) else []
        holder: dict[str, Any] = {}

        def run(job: Any) -> None:
            holder["diagnostics"] = compute(job, diagnostics_job, progress=progress)[1]

        out_path = write_parquet(restored, output, inputs=inputs, overwrite=overwrite, compute=run)
        diagnostics = holder["diagnostics"]
    else:
        data_out, diagnostics = compute(restored, diagnostics_job, progress=progress)
        data_out = data_out.reset_index(drop=True)
    table = pd.DataFrame([row for rows_ in diagnostics for row in rows_])
    table = table.sort_values("partition").reset_index(drop=True)
    cells = table.pop("cells").to_numpy(np.float64)
    stats = {
        "records": n,
        "partitions": len(table),
        "share_of_cells_changed": float(
            (table["share_of_cells_changed"].to_numpy() * cells).sum() / cells.sum()
        ),
        "smallest_partition": int(table["records"].min()),
        "largest_partition": int(table["records"].max()),
    }
    params = {
        "n_partitions": u,
        "partitioning": partitioning,
        "random_state": seed,
        **{key: value for key, value in rwn_params.items() if key != "schema"},
    }
    return PartitionedRWNResult(
        partitions=table, params=params, stats=stats, output=out_path, data=data_out
    )
