"""Frequency tables and cell key perturbation as map-reduce.

Giessing & Höhne (2011), *Eliminating small cells from census counts
tables*, §2.1 and §4: every cell of a table is a sum of elementary cells, and
a cell key is the sum of its records' keys modulo the key range. Both are
sums, so each partition is reduced to one row per combination of the
classifying variables that occurs in it (record count, weight total,
record-key sum), the partitions' rows are added, and the small combined frame
goes through :func:`sdckit.tables.tabulate` (margins, hierarchies, the
:class:`~sdckit.tables.TableStructure`) and
:func:`sdckit.tables.cell_key_perturb` unchanged. Counts, cell keys and
perturbed counts are identical to the single-machine functions on the same
records; weighted totals are equal up to floating-point rounding (they are
added in another order).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from sdckit.distributed._io import Coded, ParquetSource, shown_value
from sdckit.distributed._partitions import (
    STREAM_RECORD_KEYS,
    as_source,
    check_seed,
    count_codes,
    count_combinations,
    count_files,
    frame_of,
    partition_names,
    stream,
)
from sdckit.distributed._progress import ProgressCallback, compute
from sdckit.errors import DataError, ParameterError
from sdckit.tables import CellKeyResult, PTable, add_record_keys, cell_key_perturb, tabulate
from sdckit.tables.recordkeys import key_units
from sdckit.tables.tabulate import Hierarchy

__all__ = ["add_record_keys_by_partition", "cell_key_perturb_by_partition", "tabulate_by_partition"]

_COUNT, _WEIGHT, _KEY = "__sdckit_count", "__sdckit_weight", "__sdckit_key"


def add_record_keys_by_partition(
    data: str | os.PathLike | ParquetSource | dd.DataFrame,
    *,
    seed: int,
    kind: str = "integer",
    column: str = "record_key",
    key_range: int | None = None,
) -> dd.DataFrame:
    """Add record keys partition by partition, reproducibly.

    Giessing & Höhne (2011), §4: keys are drawn once per record and stored.
    Partition ``i`` draws its keys with :func:`sdckit.tables.add_record_keys`
    from its own stream, ``SeedSequence(seed, spawn_key=(0, i))``, so the keys
    depend on the seed and on the partition layout (the files), never on the
    number of workers. Write the result with
    :func:`sdckit.distributed.write_parquet` and keep it.

    Parameters
    ----------
    data : path, ParquetSource or dask DataFrame
        Microdata; never modified.
    seed : int
        The one seed every partition's stream is derived from.
    kind : {"integer", "uniform"}
        As :func:`sdckit.tables.add_record_keys`.
    column : str, default "record_key"
        Name of the key column (refused if it exists).
    key_range : int, optional
        As :func:`sdckit.tables.add_record_keys`.

    Returns
    -------
    dask.dataframe.DataFrame
        The records with the key column (lazy).
    """
    seed = check_seed(seed, "seed")
    source = as_source(data)
    frame = frame_of(source)
    if column in frame.columns:
        raise ParameterError(
            f"column {column!r} already exists; record keys are drawn once and kept"
        )
    meta = add_record_keys(
        frame._meta_nonempty, seed=0, kind=kind, column=column, key_range=key_range
    ).iloc[:0]

    def keyed(part: pd.DataFrame, partition_info: dict | None = None) -> pd.DataFrame:
        index = int(partition_info["number"]) if partition_info else 0
        return add_record_keys(
            part,
            seed=stream(seed, STREAM_RECORD_KEYS, index),
            kind=kind,
            column=column,
            key_range=key_range,
        )

    return frame.map_partitions(keyed, meta=meta)


def _value_sums(
    where: str,
    weights: str | None,
    weight_values: Any,
    record_key: str | None,
    key_values: Any,
    key_modulus: int | None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The weights (checked finite and non-negative) and record-key units of one file."""
    totals: dict[str, np.ndarray] = {}
    exact: dict[str, np.ndarray] = {}
    if weights is not None:
        w = pd.to_numeric(weight_values, errors="coerce")
        w = np.asarray(w, dtype=np.float64)
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"partition file {where!r}, weights column {weights!r}: row {row + 1} has "
                f"{shown_value(np.asarray(weight_values, dtype=object)[row])}; weights must be finite "
                "and non-negative"
            )
        totals[_WEIGHT] = w
    if record_key is not None:
        try:
            units, _, _ = key_units(key_values, name=record_key, modulus=key_modulus)
        except DataError as exc:
            raise DataError(f"partition file {where!r}: {exc}") from exc
        exact[_KEY] = units
    return totals, exact


def _cells(
    part: pd.DataFrame,
    where: str,
    dims: list[str],
    weights: str | None,
    record_key: str | None,
    key_modulus: int | None,
) -> pd.DataFrame:
    """One row per combination of ``dims`` in a pandas partition: count, weight total, key sum."""
    for dim in dims:
        missing = part[dim].isna().to_numpy()
        if missing.any():
            row = int(np.flatnonzero(missing)[0]) + 1
            raise DataError(
                f"partition file {where!r}, column {dim!r}: {int(missing.sum())} missing values "
                f"(the first in row {row} of the file); tabulate needs complete categories"
            )
    totals, exact = _value_sums(
        where,
        weights,
        part[weights] if weights is not None else None,
        record_key,
        part[record_key] if record_key is not None else None,
        key_modulus,
    )
    counted = count_combinations(part, dims, count=_COUNT, totals=totals, exact=exact)
    if counted is not None:
        return counted
    cells = part[dims].copy()
    cells[_COUNT] = np.ones(len(part), dtype=np.int64)
    for name, values in {**totals, **exact}.items():
        cells[name] = values
    return cells.groupby(dims, sort=False, dropna=False, observed=True).sum().reset_index()


def _partition_cells(
    part: pd.DataFrame,
    dims: list[str],
    weights: str | None,
    record_key: str | None,
    key_modulus: int | None,
    names: list[str],
    partition_info: dict | None = None,
) -> pd.DataFrame:
    """:func:`_cells` of a partition of a Dask DataFrame (named by its position)."""
    where = names[int(partition_info["number"])] if partition_info else "partition"
    return _cells(part, where, dims, weights, record_key, key_modulus)


def _coded_cells(
    coded: Coded,
    where: str,
    *,
    dims: list[str],
    dtypes: dict[str, Any],
    weights: str | None,
    record_key: str | None,
    key_modulus: int | None,
) -> pd.DataFrame | None:
    """:func:`_cells` of a file read as Arrow codes (None: count it from pandas instead)."""
    numbers = coded.numbers
    totals, exact = _value_sums(
        where,
        weights,
        numbers.get(weights) if weights is not None else None,
        record_key,
        numbers.get(record_key) if record_key is not None else None,
        key_modulus,
    )
    types = {d: dtypes[d] for d in dims}
    return count_codes(
        coded.codes, coded.levels, dims, types, n=coded.n, count=_COUNT, totals=totals, exact=exact
    )


def combined_cells(
    source: ParquetSource | dd.DataFrame,
    dims: list[str],
    *,
    weights: str | None = None,
    record_key: str | None = None,
    key_modulus: int | None = None,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """The map-reduce: every partition's combinations, added over the partitions."""
    frame = frame_of(source)
    wanted = list(dims) + [c for c in (weights, record_key) if c is not None]
    unknown = [c for c in wanted if c not in frame.columns]
    if unknown:
        raise ParameterError(
            f"{unknown} are not columns of the data (it has {list(frame.columns)})"
        )
    values = [c for c in (weights, record_key) if c is not None]
    if isinstance(source, ParquetSource):
        parts = count_files(
            source,
            list(dims),
            values,
            fast=functools.partial(
                _coded_cells,
                dims=list(dims),
                dtypes=source.dtypes,
                weights=weights,
                record_key=record_key,
                key_modulus=key_modulus,
            ),
            slow=functools.partial(
                _cells,
                dims=list(dims),
                weights=weights,
                record_key=record_key,
                key_modulus=key_modulus,
            ),
            progress=progress,
        )
    else:
        meta = _partition_cells(
            frame._meta[wanted], list(dims), weights, record_key, key_modulus, ["meta"]
        )
        per_partition = frame[wanted].map_partitions(
            _partition_cells,
            list(dims),
            weights,
            record_key,
            key_modulus,
            partition_names(source),
            meta=meta,
        )
        (parts,) = compute(per_partition, progress=progress)
    if not len(parts):
        raise DataError("the data have no records")
    combined = parts.groupby(list(dims), sort=False, dropna=False).sum().reset_index()
    for dim in dims:
        combined[dim] = combined[dim].astype(frame._meta[dim].dtype)
    return combined


def tabulate_by_partition(
    data: str | os.PathLike | ParquetSource | dd.DataFrame,
    dims: Sequence[str] | str,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    weights: str | None = None,
    margins: bool = True,
    categories: Mapping[str, Sequence[Any]] | None = None,
    record_key: str | None = None,
    total_label: str = "Total",
    key_modulus: int | None = None,
    progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """:func:`sdckit.tables.tabulate` of a partitioned file, as map-reduce.

    Each partition is reduced to its combinations of ``dims`` with their
    record count, weight total and record-key sum; the sums are added over
    partitions, and :func:`sdckit.tables.tabulate` builds the table from the
    combined combinations (each weighted by its count, its record key the key
    sum modulo the key range), so margins, hierarchies and the structure are
    exactly the single-machine ones (Giessing & Höhne (2011), §2.1 and §4).

    Parameters
    ----------
    data : path, ParquetSource or dask DataFrame
        Microdata; never modified.
    dims : list of str
        Classifying variables (no missing values).
    hierarchies, margins, categories, total_label, key_modulus
        As :func:`sdckit.tables.tabulate`.
    weights : str, optional
        Column of non-negative weights: adds ``weighted_count`` (equal to the
        single-machine total up to floating-point rounding).
    record_key : str, optional
        Column of record keys: adds ``cell_key``.
    progress : callable, optional
        ``progress(done, total)``: the job's tasks finished out of all, as
        the Dask scheduler reports them.

    Returns
    -------
    DataFrame
        The table of :func:`sdckit.tables.tabulate` (true counts: internal,
        never a release), with ``.attrs["structure"]``.
    """
    dims = [dims] if isinstance(dims, str) else list(dims)
    if not dims:
        raise ParameterError("dims must name at least one column")
    source = as_source(data)
    combined = combined_cells(
        source,
        dims,
        weights=weights,
        record_key=record_key,
        key_modulus=key_modulus,
        progress=progress,
    )
    counts = combined[_COUNT].to_numpy(np.int64)
    if counts.max() * 1.0 >= 2.0**53:
        raise ParameterError("a cell holds more than 2^53 records; counts would not be exact")
    frame = combined[dims].copy()
    frame[_COUNT] = counts
    key_name = None
    if record_key is not None:
        sums = combined[_KEY].to_numpy(np.int64)
        key_dtype = frame_of(source)._meta[record_key].dtype
        _, modulus, uniform = key_units(
            np.zeros(0, dtype=key_dtype), name=record_key, modulus=key_modulus
        )
        reduced = sums % modulus
        frame[record_key] = reduced / modulus if uniform else reduced
        key_name = record_key
    table = tabulate(
        frame,
        dims,
        hierarchies=hierarchies,
        weights=_COUNT,
        margins=margins,
        categories=categories,
        record_key=key_name,
        total_label=total_label,
        key_modulus=key_modulus,
    )
    structure = table.attrs["structure"]
    # the combinations weighted by their record counts: the weighted total is the count
    table["count"] = np.rint(table.pop("weighted_count").to_numpy()).astype(np.int64)
    if weights is not None:
        frame[_COUNT] = combined[_WEIGHT].to_numpy(np.float64)
        weighted = tabulate(
            frame[[*dims, _COUNT]],
            dims,
            hierarchies=hierarchies,
            weights=_COUNT,
            margins=margins,
            categories=categories,
            total_label=total_label,
        )
        table["weighted_count"] = weighted["weighted_count"].to_numpy()
    order = [*dims, "count"] + [c for c in ("weighted_count", "cell_key") if c in table.columns]
    table = table[order]
    table.attrs["structure"] = structure
    return table


def cell_key_perturb_by_partition(
    data: str | os.PathLike | ParquetSource | dd.DataFrame,
    ptable: PTable,
    *,
    dims: Sequence[str],
    record_key: str = "record_key",
    threshold: int | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    margins: bool = True,
    categories: Mapping[str, Sequence[Any]] | None = None,
    total_label: str = "Total",
    weights: str | None = None,
    progress: ProgressCallback | None = None,
) -> CellKeyResult:
    """:func:`sdckit.tables.cell_key_perturb` of a partitioned file.

    The table is built by :func:`tabulate_by_partition` and perturbed by
    :func:`sdckit.tables.cell_key_perturb` (Giessing & Höhne (2011), §4), so
    every perturbed count equals the single-machine one.

    Parameters
    ----------
    data : path, ParquetSource or dask DataFrame
        Microdata with a record-key column; never modified.
    ptable : PTable
        Perturbation table (its key range fixes the key modulus).
    dims : list of str
        Classifying variables.
    record_key, threshold, hierarchies, margins, categories, total_label, weights
        As :func:`sdckit.tables.cell_key_perturb`.
    progress : callable, optional
        As :func:`tabulate_by_partition`.

    Returns
    -------
    CellKeyResult
        ``.table`` is the release, ``.internal`` the producer's copy.
    """
    if not isinstance(ptable, PTable):
        raise ParameterError(f"ptable must be a PTable, got {type(ptable).__name__}")
    table = tabulate_by_partition(
        data,
        dims,
        hierarchies=hierarchies,
        weights=weights,
        margins=margins,
        categories=categories,
        record_key=record_key,
        total_label=total_label,
        key_modulus=ptable.key_range,
        progress=progress,
    )
    return cell_key_perturb(table, ptable, dims=list(dims), threshold=threshold)
