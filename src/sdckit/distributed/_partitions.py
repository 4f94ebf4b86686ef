"""Inputs of the distributed functions, and per-partition random streams."""

from __future__ import annotations

import os
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from sdckit.distributed._io import ParquetSource, read_parquet
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
