"""Key risk of a partitioned file as map-reduce.

The frequency ``f_k`` of a combination of key variables is a sum over
partitions of its frequency in each; the l-diversity of a combination is the
number of distinct sensitive values among the distinct (combination,
sensitive value) pairs of all partitions. Each partition is reduced to those
counts and pairs, the results are combined, and every figure of
:func:`sdckit.assess.key_risk` (frequencies, sample uniques, k-anonymity,
violations, expected re-identifications, l-diversity) follows from the
combined table of combinations.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit.assess.risk import key_figure_lines, max_numeric_key_levels
from sdckit.distributed._io import Coded, ParquetSource
from sdckit.distributed._partitions import (
    as_source,
    count_codes,
    count_combinations,
    count_files,
    first_records,
    frame_of,
)
from sdckit.distributed._progress import ProgressCallback, compute
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import Kind, Schema

__all__ = ["DistributedKeyRisk", "key_risk_by_partition"]

_FREQ = "frequency"


@dataclass(frozen=True)
class DistributedKeyRisk(FrozenResult):
    """Key risk of a partitioned file: the figures of :class:`sdckit.assess.KeyRisk`.

    The per-record frequencies of the single-machine result are replaced by
    the table of combinations (a record's ``f_k`` is its combination's
    ``frequency``), which is as small as the number of combinations.

    Attributes
    ----------
    keys : list of str
        The key variables (quasi-identifiers).
    combinations : DataFrame
        One row per combination of the keys: the keys, ``frequency`` and,
        with a sensitive variable, ``l_diversity``. It names combinations of
        the confidential file: internal, never a release.
    n_records : int
        Number of records.
    n_combinations : int
        Number of distinct combinations.
    sample_uniques : int
        Records whose combination is unique (f_k = 1).
    k_anonymity : int
        min f_k.
    violations : mapping
        ``{k: records with f_k < k}`` for k = 2, 3, 5.
    expected_reidentifications : float
        sum over records of 1 / f_k.
    sensitive : str or None
        The sensitive variable.
    l_diversity : int or None
        min over combinations of the number of distinct sensitive values.
    """

    keys: list[str]
    combinations: pd.DataFrame
    n_records: int
    n_combinations: int
    sample_uniques: int
    k_anonymity: int
    violations: dict[int, int]
    expected_reidentifications: float
    sensitive: str | None = None
    l_diversity: int | None = None

    def record_frequencies(self) -> np.ndarray:
        """The f_k of every record, sorted (the distribution of ``KeyRisk.frequencies``).

        Returns
        -------
        ndarray of int64
            One value per record, ascending.
        """
        freq = self.combinations[_FREQ].to_numpy(np.int64)
        return np.sort(np.repeat(freq, freq))

    def summary(self) -> str:
        """Combinations, sample uniques, k-anonymity, violations, l-diversity.

        Returns
        -------
        str
            Several lines, as :meth:`sdckit.assess.KeyRisk.summary`.
        """
        lines = key_figure_lines(self, f" ({self.n_records} records)")
        if self.sensitive is not None:
            lines.append(f"  sensitive {self.sensitive!r}: {self.l_diversity}-diverse")
        return "\n".join(lines)


def _partition_keys(part: pd.DataFrame, keys: list[str], sensitive: str | None) -> pd.DataFrame:
    """Per partition: each combination's frequency, or each (combination, sensitive) pair's."""
    group = [*keys, sensitive] if sensitive is not None else keys
    counted = count_combinations(part, group, count=_FREQ)
    if counted is not None:
        return counted
    sizes = part.groupby(group, sort=False, dropna=False, observed=True).size()
    return sizes.rename(_FREQ).reset_index()


def _coded_keys(
    coded: Coded, where: str, *, columns: list[str], dtypes: dict[str, Any]
) -> pd.DataFrame | None:
    """:func:`_partition_keys` of a file read as Arrow codes (None: count it from pandas)."""
    types = {c: dtypes[c] for c in columns}
    return count_codes(coded.codes, coded.levels, columns, types, n=coded.n, count=_FREQ)


def key_risk_by_partition(
    data: str | os.PathLike | ParquetSource | dd.DataFrame,
    keys: Iterable[str],
    *,
    sensitive: str | None = None,
    schema: Schema | None = None,
    progress: ProgressCallback | None = None,
) -> DistributedKeyRisk:
    """:func:`sdckit.assess.key_risk` of a partitioned file, as map-reduce.

    Each partition is reduced to the frequency of every combination of the
    keys (and of every (combination, sensitive value) pair); the frequencies
    are added over partitions. A missing key value counts as a category of
    its own, and a numeric key with more distinct values than
    :func:`sdckit.assess.risk.max_numeric_key_levels` allows is refused, as in
    the single-machine function. Frequency counts and k-anonymity follow
    Sweeney (2002); l-diversity Machanavajjhala et al. (2007).

    Parameters
    ----------
    data : path, ParquetSource or dask DataFrame
        Microdata; never modified.
    keys : list of str
        Key variables (quasi-identifiers).
    sensitive : str, optional
        Sensitive variable for l-diversity.
    schema : Schema, optional
        Column kinds; inferred from the first records when omitted.
    progress : callable, optional
        ``progress(done, total)``: the job's tasks finished out of all, as
        the Dask scheduler reports them.

    Returns
    -------
    DistributedKeyRisk
        The figures of :func:`sdckit.assess.key_risk` and the table of
        combinations.
    """
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise ParameterError("keys: give at least one key variable")
    source = as_source(data)
    frame = frame_of(source)
    wanted = [*keys, sensitive] if sensitive is not None else list(keys)
    unknown = [c for c in wanted if c not in frame.columns]
    if unknown:
        raise ParameterError(
            f"{unknown} are not columns of the data (it has {list(frame.columns)})"
        )
    if sensitive is not None and sensitive in keys:
        raise ParameterError(f"sensitive variable {sensitive!r} is also a key")
    if isinstance(source, ParquetSource):
        parts = count_files(
            source,
            wanted,
            [],
            fast=functools.partial(_coded_keys, columns=wanted, dtypes=source.dtypes),
            slow=lambda part, where: _partition_keys(part, keys, sensitive),
            progress=progress,
        )
    else:
        meta = _partition_keys(frame._meta[wanted], keys, sensitive)
        per_partition = frame[wanted].map_partitions(_partition_keys, keys, sensitive, meta=meta)
        (parts,) = compute(per_partition, progress=progress)
    if not len(parts):
        raise DataError("the data have no records")
    group = wanted
    combined = parts.groupby(group, sort=False, dropna=False).sum().reset_index()
    if sensitive is not None:
        by_keys = combined.groupby(keys, sort=False, dropna=False)
        table = by_keys[_FREQ].sum().rename(_FREQ).to_frame()
        table["l_diversity"] = by_keys.size()
        table = table.reset_index()
    else:
        table = combined
    freq = table[_FREQ].to_numpy(np.int64)
    n_records = int(freq.sum())
    if schema is None:
        schema = Schema.infer(first_records(source)[keys])
    for key in keys:
        distinct = int(table[key].nunique())
        if schema[key].kind is Kind.NUMERIC and distinct > max_numeric_key_levels(n_records):
            raise SchemaError(
                f"key {key!r} is numeric with {distinct} distinct values in {n_records} records "
                f"(more than {max_numeric_key_levels(n_records)}): nearly every value points at "
                "few records. Recode it into categories (bands) before using it as a key, or "
                "declare it categorical to use its values as they are"
            )
    l_div = int(table["l_diversity"].min()) if sensitive is not None else None
    return DistributedKeyRisk(
        keys=keys,
        combinations=table,
        n_records=n_records,
        n_combinations=len(table),
        sample_uniques=int((freq == 1).sum()),
        k_anonymity=int(freq.min()),
        violations={k: int(freq[freq < k].sum()) for k in (2, 3, 5)},
        # every record of a combination contributes 1/f_k: f_k * (1/f_k) per combination
        expected_reidentifications=float((freq * (1.0 / freq)).sum()),
        sensitive=sensitive,
        l_diversity=l_div,
    )
