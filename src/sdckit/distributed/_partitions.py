"""Inputs of the distributed functions, and per-partition random streams."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from sdckit.distributed._io import Coded, ParquetSource, read_codes, read_file, read_parquet
from sdckit.errors import ParameterError

#: Spawn keys of the independent random streams (one family per use).
STREAM_RECORD_KEYS = 0
STREAM_RWN_ASSIGN = 1
STREAM_RWN_MASK = 2


def as_source(data: Any, columns: list[str] | None = None) -> ParquetSource | dd.DataFrame:
    """A :class:`ParquetSource` for a path, the Dask DataFrame itself otherwise."""
    if isinstance(data, ParquetSource):
        return data
    if isinstance(data, dd.DataFrame):
        return data
    if isinstance(data, str | os.PathLike):
        return read_parquet(data, columns=columns)
    raise ParameterError(
        "data must be a directory or glob of Parquet files, a ParquetSource or a Dask DataFrame, "
        f"got {type(data).__name__}"
    )


def frame_of(source: ParquetSource | dd.DataFrame) -> dd.DataFrame:
    """The Dask DataFrame of a source."""
    return source.frame if isinstance(source, ParquetSource) else source


#: ``fast(coded, file)``: a file's counts from its coded columns, or None to count it from
#: the pandas partition instead.
FastCount = Callable[[Coded, str], Any]
#: ``slow(partition, file)``: a file's counts from its records read through the schema.
SlowCount = Callable[[pd.DataFrame, str], pd.DataFrame]


def _count_file(
    path: str,
    dtypes: dict[str, Any],
    groups: list[str],
    values: list[str],
    fast: FastCount,
    slow: SlowCount,
) -> pd.DataFrame:
    coded = read_codes(path, dtypes, groups, values)
    counted = fast(coded, path) if coded is not None else None
    if counted is None:
        part = read_file(path, dtypes, list(dict.fromkeys([*groups, *values])), text_codes=True)
        counted = slow(part, path)
    return counted


def count_files(
    source: ParquetSource,
    groups: list[str],
    values: list[str],
    *,
    fast: FastCount,
    slow: SlowCount,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """The map step of a counting job, one Dask task per file, and the rows of all files.

    Each task reads only ``groups`` and ``values`` of its file as Arrow codes
    (:func:`~sdckit.distributed._io.read_codes`) and counts them with
    ``fast``; a file whose columns are not of the schema's type (or hold
    missing values) is read through the schema instead and counted by
    ``slow``, which converts it or raises naming the file, column and row.
    The tasks are plain functions of a file, without a Dask DataFrame: a
    counting job costs a read of its columns and a ``numpy.bincount`` per
    file.

    Returns
    -------
    DataFrame
        The per-file rows, concatenated (empty if no file has records).
    """
    from sdckit.distributed._progress import compute

    task = dask.delayed(_count_file, pure=True)
    jobs = [task(path, source.dtypes, groups, values, fast, slow) for path in source.files]
    parts = compute(*jobs, progress=progress)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def first_records(source: ParquetSource | dd.DataFrame, n: int = 1000) -> pd.DataFrame:
    """The first ``n`` records, read from the first file only (for schema inference)."""
    if isinstance(source, ParquetSource):
        return source.head(n)
    return source.head(n, npartitions=1, compute=True)


def partition_names(source: ParquetSource | dd.DataFrame) -> list[str]:
    """A name for every partition: its file, or "partition i" (1-based)."""
    if isinstance(source, ParquetSource):
        return list(source.files)
    return [f"partition {i + 1}" for i in range(source.npartitions)]


def stream(seed: int, family: int, index: int) -> np.random.Generator:
    """The random stream of partition ``index`` of one use (``family``), from one seed.

    ``numpy.random.SeedSequence(seed, spawn_key=(family, index))`` is the
    ``index``-th child that ``SeedSequence(seed).spawn`` would give within the
    family, so the stream depends on the seed and the partition's position,
    never on which worker runs it or when.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(family, index)))


def check_seed(seed: Any, name: str = "random_state") -> int:
    """A whole-number seed (a Generator cannot be split reproducibly across workers)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ParameterError(
            f"{name} must be a whole number >= 0 (one seed from which every partition's stream "
            f"is derived), got {seed!r}"
        )
    return int(seed)


#: Above this many possible combinations (per record), the codes are sorted, not counted.
_DIRECT_PER_RECORD = 4


def _exact_sums(codes: np.ndarray, units: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 sums of non-negative units below 2^32 per code.

    One float64 ``bincount`` is exact while no sum can exceed 2^53 (fewer than
    2^21 records of units below 2^32); beyond, two bincounts of 16-bit halves.
    """
    if len(units) <= 2**21:
        return np.bincount(codes, weights=units.astype(np.float64), minlength=size).astype(np.int64)
    low = np.bincount(codes, weights=(units & 0xFFFF).astype(np.float64), minlength=size)
    high = np.bincount(codes, weights=(units >> 16).astype(np.float64), minlength=size)
    return high.astype(np.int64) * 65536 + low.astype(np.int64)


def count_combinations(
    part: pd.DataFrame,
    columns: list[str],
    *,
    count: str,
    totals: dict[str, np.ndarray] | None = None,
    exact: dict[str, np.ndarray] | None = None,
) -> pd.DataFrame | None:
    """One row per combination of ``columns`` present in ``part``: its records and sums.

    The map step of the tables and of the key risk on a pandas partition:
    every column is factorised (a missing value is a category of its own) and
    the codes are counted by :func:`count_codes`. Equal to a pandas group-by
    with ``dropna=False``, about twice as fast on text columns.

    Returns None when the combinations cannot be coded in 63 bits (the caller
    groups with pandas).
    """
    codes: list[np.ndarray] = []
    levels: list[pd.Index] = []
    for name in columns:
        column_codes, uniques = pd.factorize(part[name], use_na_sentinel=False)
        codes.append(column_codes)
        levels.append(pd.Index(uniques) if not isinstance(uniques, pd.Index) else uniques)
    dtypes = {}
    for name in columns:
        dtype = part[name].dtype
        if isinstance(dtype, pd.CategoricalDtype):  # codes of text: back to the text's dtype
            dtype = dtype.categories.dtype
        dtypes[name] = dtype
    return count_codes(
        codes, levels, columns, dtypes, n=len(part), count=count, totals=totals, exact=exact
    )


def count_codes(
    codes: list[np.ndarray],
    levels: list[pd.Index],
    columns: list[str],
    dtypes: dict[str, Any],
    *,
    n: int,
    count: str,
    totals: dict[str, np.ndarray] | None = None,
    exact: dict[str, np.ndarray] | None = None,
) -> pd.DataFrame | None:
    """One row per combination of coded columns: its records, ``totals`` and ``exact`` sums.

    ``codes[j]`` holds, for each of the ``n`` records, the position of its
    value of ``columns[j]`` in ``levels[j]`` (levels may hold values no record
    has, and a value twice: the reduce step adds such rows). The codes are
    combined into one integer per record and the records, the ``totals``
    (floats) and the ``exact`` sums (non-negative integers below 2^32, summed
    exactly) of each combination are counted with ``numpy.bincount`` (a sort
    where the possible combinations far outnumber the records).

    Returns None when the combinations cannot be coded in 63 bits.
    """
    # no columns: one combination; otherwise a fresh copy of the first codes (never the input)
    combined = codes[0].astype(np.int64) if codes else np.zeros(n, dtype=np.int64)
    size = 1
    for j, (column_codes, uniques) in enumerate(zip(codes, levels, strict=True)):
        cardinality = max(len(uniques), 1)
        if size * cardinality >= 2**62:
            return None
        if j > 0:
            combined *= cardinality
            combined += column_codes
        size *= cardinality
    if size <= _DIRECT_PER_RECORD * n + 1024:
        records = np.bincount(combined, minlength=size)
        present = np.flatnonzero(records)
        group = combined
    else:
        present, group = np.unique(combined, return_inverse=True)
        size = len(present)
        records = np.bincount(group, minlength=size)
    keep: slice | np.ndarray = slice(None) if len(present) == size else present
    out: dict[str, Any] = {}
    remainder = present.copy()
    for name, uniques in zip(reversed(columns), reversed(levels), strict=True):
        remainder, code = np.divmod(remainder, max(len(uniques), 1))
        out[name] = uniques.take(code)
    frame = pd.DataFrame({name: out[name] for name in columns})
    frame[count] = records[keep].astype(np.int64)
    for name, values in (totals or {}).items():
        frame[name] = np.bincount(group, weights=values, minlength=size)[keep]
    for name, values in (exact or {}).items():
        frame[name] = _exact_sums(group, values, size)[keep]
    for name in columns:
        frame[name] = frame[name].astype(dtypes[name])
    return frame
