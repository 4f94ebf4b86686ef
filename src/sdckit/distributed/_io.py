"""Parquet directories in and out, with a schema inferred on a sample and enforced per file.

Every input file is one Dask partition (``dask.dataframe.from_map``), so a
partition is always named by its file in error messages and its position in
the sorted file list is a stable partition index, whatever the number of
workers: the per-partition random streams are keyed by it.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sdckit.distributed._progress import ProgressCallback
from sdckit.distributed._progress import compute as run_compute
from sdckit.errors import DataError, ParameterError

__all__ = ["ParquetSource", "read_parquet", "write_parquet"]

#: Rows of the first file read to infer the schema.
SAMPLE_ROWS = 10_000


@dataclass(frozen=True)
class ParquetSource:
    """A Parquet dataset read partition by partition (one partition per file).

    Attributes
    ----------
    files : tuple of str
        The input files, sorted; partition ``i`` is ``files[i]``.
    rows : tuple of int
        Number of records of each file (from the Parquet footers).
    frame : dask.dataframe.DataFrame
        The records; reading a partition enforces the schema.
    dtypes : mapping
        The schema: the pandas dtype of every column, inferred on a sample
        of the first file.
    """

    files: tuple[str, ...]
    rows: tuple[int, ...]
    frame: dd.DataFrame
    dtypes: dict[str, Any]

    @property
    def n_records(self) -> int:
        """Total number of records."""
        return int(sum(self.rows))

    @property
    def offsets(self) -> np.ndarray:
        """Global position of the first record of every file."""
        return np.concatenate([[0], np.cumsum(self.rows)]).astype(np.int64)

    def head(self, n: int = SAMPLE_ROWS) -> pd.DataFrame:
        """The first ``n`` records of the first file, in the schema (the sample it is inferred on).

        Parameters
        ----------
        n : int, default 10000
            Number of records.

        Returns
        -------
        DataFrame
            At most ``n`` records (fewer when the first file is shorter).
        """
        batches = _parquet_file(self.files[0]).iter_batches(
            batch_size=max(int(n), 1), columns=list(self.dtypes)
        )
        batch = next(batches, None)
        if batch is None:
            return self.frame._meta.copy()
        return enforce_schema(
            _to_pandas(pa.Table.from_batches([batch])), self.dtypes, self.files[0]
        )

    def summary(self) -> str:
        """Files, records and columns, for a person."""
        return (
            f"{len(self.files)} Parquet file(s), {self.n_records} records, "
            f"{len(self.dtypes)} columns"
        )


def _list_files(path: str | os.PathLike) -> list[str]:
    text = os.fspath(path)
    if any(ch in text for ch in "*?["):
        files = sorted(f for f in glob.glob(text) if os.path.isfile(f))
    elif os.path.isdir(text):
        files = sorted(
            str(p)
            for p in Path(text).rglob("*.parquet")
            if p.is_file() and not any(part.startswith((".", "_")) for part in p.parts[-1:])
        )
    elif os.path.isfile(text):
        files = [text]
    else:
        raise ParameterError(f"input {text!r} is neither a Parquet file, a directory nor a glob")
    if not files:
        others = sorted(p.name for p in Path(text).iterdir())[:3] if os.path.isdir(text) else []
        seen = f" (it holds {', '.join(others)}, ...)" if others else ""
        raise DataError(f"input {text!r} holds no Parquet files (*.parquet){seen}")
    return files


def _parquet_file(path: str) -> pq.ParquetFile:
    """The Parquet footer of one input file, or an error naming the file."""
    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own types for unreadable files
        raise DataError(f"partition file {path!r} cannot be read as Parquet: {exc}") from exc


def _to_pandas(table: Any) -> pd.DataFrame:
    frame = table.to_pandas()
    # categories are a file's own; across partitions a dimension's categories are
    # the distinct values of all files, so dictionary columns are read as values
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(object)
    return frame


def _first_bad(values: pd.Series, converted: pd.Series) -> int:
    bad = converted.isna().to_numpy() & values.notna().to_numpy()
    return int(np.flatnonzero(bad)[0])


def shown_value(value: Any) -> str:
    """A value as a person writes it in a message (whole floats without ``.0``, text quoted)."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def enforce_schema(frame: pd.DataFrame, dtypes: dict[str, Any], where: str) -> pd.DataFrame:
    """Give ``frame`` the schema ``dtypes``, or raise naming the file, the column and the row.

    Parameters
    ----------
    frame : DataFrame
        One partition.
    dtypes : mapping
        Expected pandas dtype of every column.
    where : str
        The partition's file, for messages.

    Returns
    -------
    DataFrame
        The partition with the expected columns, in order, and dtypes.
    """
    missing = [c for c in dtypes if c not in frame.columns]
    extra = [c for c in frame.columns if c not in dtypes]
    if missing or extra:
        raise DataError(
            f"partition file {where!r} does not have the sample's columns: "
            + ", ".join(
                part
                for part in (
                    f"missing {missing}" if missing else "",
                    f"unexpected {extra}" if extra else "",
                )
                if part
            )
        )
    out = {}
    for name, want in dtypes.items():
        column = frame[name]
        have = column.dtype
        if have == want:
            out[name] = column
            continue
        want_kind = want.kind if isinstance(want, np.dtype) else ""
        have_text = pd.api.types.is_object_dtype(have) or pd.api.types.is_string_dtype(have)
        if want_kind and want_kind in "iuf" and have.kind in "iuf":
            values = column.to_numpy()
            if want_kind in "iu":
                if np.isnan(values).any() if values.dtype.kind == "f" else False:
                    row = int(np.flatnonzero(np.isnan(values))[0]) + 1
                    raise DataError(
                        f"partition file {where!r}, column {name!r}: row {row} is missing, but "
                        f"the schema (inferred on a sample) has whole numbers without missing values"
                    )
                if values.dtype.kind == "f" and (values != np.round(values)).any():
                    row = int(np.flatnonzero(values != np.round(values))[0]) + 1
                    raise DataError(
                        f"partition file {where!r}, column {name!r}: row {row} has "
                        f"{shown_value(values[row - 1])}, but the schema (inferred on a sample) has "
                        "whole numbers"
                    )
            out[name] = column.astype(want)
            continue
        if want_kind and want_kind in "iuf" and have_text:
            converted = pd.to_numeric(column, errors="coerce")
            if (converted.isna() & column.notna()).any():
                k = _first_bad(column, converted)
                raise DataError(
                    f"partition file {where!r}, column {name!r}: row {k + 1} has "
                    f"{shown_value(column.iloc[k])}, not a number as the schema (inferred on a "
                    "sample) requires"
                )
            frame_one = pd.DataFrame({name: converted})
            out[name] = enforce_schema(frame_one, {name: want}, where)[name]
            continue
        if pd.api.types.is_string_dtype(want) and have_text:
            not_text = column.notna().to_numpy() & ~column.map(
                lambda v: isinstance(v, str), na_action="ignore"
            ).fillna(True).to_numpy(bool)
            if not_text.any():
                k = int(np.flatnonzero(not_text)[0])
                raise DataError(
                    f"partition file {where!r}, column {name!r}: row {k + 1} has "
                    f"{shown_value(column.iloc[k])}, not text as the schema (inferred on a sample) has"
                )
            out[name] = column.astype(want)
            continue
        raise DataError(
            f"partition file {where!r}, column {name!r}: values of type {have} where the schema "
            f"(inferred on a sample) has {want}"
        )
    return pd.DataFrame(out, index=frame.index)


def _is_text(dtype: Any) -> bool:
    return pd.api.types.is_string_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)


def _text_codes(column: pd.Series) -> bool:
    """Whether a column read from a dictionary holds text (its categories are strings)."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return False
    return pd.api.types.infer_dtype(column.dtype.categories, skipna=True) in ("string", "empty")


def read_file(
    path: str, dtypes: dict[str, Any], columns: list[str] | None, text_codes: bool = False
) -> pd.DataFrame:
    """One file as a pandas partition, the schema enforced (text as categories with ``text_codes``)."""
    # Dask passes the columns a computation needs (projection: ``columns`` in the signature)
    wanted = {c: dtypes[c] for c in columns} if columns is not None else dtypes
    names = _parquet_file(path).schema_arrow.names
    missing = [c for c in wanted if c not in names]
    if missing:
        raise DataError(
            f"partition file {path!r} does not have the sample's columns: missing {missing}"
        )
    coded = [c for c, dtype in wanted.items() if text_codes and _is_text(dtype)]
    table = pq.read_table(path, columns=list(wanted), read_dictionary=coded or None)
    if not coded:
        return enforce_schema(_to_pandas(table), wanted, path)
    # text read from the Parquet dictionary pages as categories: no string is decoded
    raw = table.to_pandas()
    kept = {c: raw.pop(c) for c in coded if _text_codes(raw[c])}
    rest = enforce_schema(
        _to_pandas(pa.Table.from_pandas(raw, preserve_index=False))
        if len(kept) < len(coded)
        else raw,
        {c: d for c, d in wanted.items() if c not in kept},
        path,
    )
    return pd.DataFrame({c: kept[c] if c in kept else rest[c] for c in wanted}, index=rest.index)


class Coded(NamedTuple):
    """One file's columns as codes and levels, and its numeric columns (see :func:`read_codes`)."""

    codes: list[np.ndarray]
    levels: list[pd.Index]
    numbers: dict[str, np.ndarray]
    n: int


def read_codes(
    path: str, dtypes: dict[str, Any], groups: list[str], values: list[str]
) -> Coded | None:
    """One file's ``groups`` columns as integer codes and levels, and its ``values`` as numbers.

    The counting jobs' read, Arrow and numpy only: the needed columns, text
    from the Parquet dictionary pages (codes: the dictionary indices), whole
    numbers coded by their offset from the file's smallest value; no pandas
    frame, no string decoded per record.

    Parameters
    ----------
    path : str
        The Parquet file.
    dtypes : mapping
        The schema (pandas dtypes inferred on the sample).
    groups : list of str
        Columns to code.
    values : list of str
        Numeric columns returned as numpy arrays of the schema's dtype.

    Returns
    -------
    Coded or None
        ``(codes, levels, numbers, n)``; None when a column is missing,
        of another type than the schema's, or has a missing value, or the
        file is empty: the caller then reads the file through the schema
        (which converts the column or raises naming the file, column and row).
    """
    text = [c for c in groups if _is_text(dtypes[c])]
    try:
        parquet = pq.ParquetFile(path, read_dictionary=text or None)
    except Exception:  # unreadable: the schema-enforcing read names the file
        return None
    wanted = list(dict.fromkeys([*groups, *values]))
    if any(c not in parquet.schema_arrow.names for c in wanted) or not parquet.metadata.num_rows:
        return None
    table = parquet.read(columns=wanted).unify_dictionaries()
    n = table.num_rows
    if any(table.column(c).null_count for c in wanted):
        return None
    codes: list[np.ndarray] = []
    levels: list[pd.Index] = []
    for name in groups:
        coded = _arrow_codes(table.column(name).combine_chunks(), dtypes[name], n)
        if coded is None:
            return None
        codes.append(coded[0])
        levels.append(coded[1])
    numbers: dict[str, np.ndarray] = {}
    for name in values:
        kind, arrow_type = np.dtype(dtypes[name]).kind, table.column(name).type
        if not (
            pa.types.is_integer(arrow_type) or (kind == "f" and pa.types.is_floating(arrow_type))
        ):
            return None
        numbers[name] = table.column(name).to_numpy().astype(dtypes[name], copy=False)
    return Coded(codes, levels, numbers, n)


def _arrow_codes(column: Any, dtype: Any, n: int) -> tuple[np.ndarray, pd.Index] | None:
    """Codes and levels of one Arrow column, or None if its type is not the schema's."""
    arrow_type = column.type
    if _is_text(dtype):
        if not pa.types.is_dictionary(arrow_type) or not (
            pa.types.is_string(arrow_type.value_type)
            or pa.types.is_large_string(arrow_type.value_type)
        ):
            return None
        dictionary = column.dictionary.to_numpy(zero_copy_only=False)
        # the dictionary indices as they are (int8-int32): the combination upcasts them
        return column.indices.to_numpy(), pd.Index(dictionary, dtype=object)
    kind = dtype.kind if isinstance(dtype, np.dtype) else ""
    if (
        kind in ("i", "u")
        and pa.types.is_integer(arrow_type)
        and not pa.types.is_uint64(arrow_type)
    ):
        numbers = column.to_numpy().astype(np.int64, copy=False)
        extremes = pc.min_max(column)  # one pass in Arrow
        low, high = int(extremes["min"].as_py()), int(extremes["max"].as_py())
        if high - low <= 4 * n + 1024:  # dense: the offset is the code
            codes = numbers - low if low else numbers
            return codes, pd.Index(np.arange(low, high + 1, dtype=np.int64))
        found, uniques = pd.factorize(numbers)
        return found.astype(np.int64), pd.Index(uniques)
    if kind == "f" and pa.types.is_floating(arrow_type):
        found, uniques = pd.factorize(column.to_numpy(), use_na_sentinel=False)
        return found.astype(np.int64), pd.Index(uniques)
    return None


def read_parquet(
    path: str | os.PathLike,
    *,
    columns: Sequence[str] | None = None,
    sample_rows: int = SAMPLE_ROWS,
) -> ParquetSource:
    """Read a directory of Parquet files (or a glob) as a Dask DataFrame, one partition per file.

    The schema (the pandas dtype of every column) is inferred on the first
    ``sample_rows`` records of the first file and enforced on every
    partition when it is read: whole numbers are widened, numbers written as
    text converted, and anything else (text in a numeric column, a missing or
    fractional value in a whole-number column, a missing column) raises a
    :class:`~sdckit.errors.DataError` naming the partition file, the column
    and the row. Dictionary-encoded (categorical) columns are read as their
    values. Files are never modified.

    Parameters
    ----------
    path : str or path
        A directory (every ``*.parquet`` below it, hidden and ``_``-prefixed
        files skipped), a glob, or one file.
    columns : list of str, optional
        Read only these columns.
    sample_rows : int, default 10000
        Records of the first file used to infer the schema.

    Returns
    -------
    ParquetSource
        The files, their record counts, the schema and the Dask DataFrame.
    """
    files = _list_files(path)
    cols = list(columns) if columns is not None else None
    first = _parquet_file(files[0])
    if cols is not None:
        names = first.schema_arrow.names
        unknown = [c for c in cols if c not in names]
        if unknown:
            raise ParameterError(f"columns: {unknown} are not in {files[0]!r} (it has {names})")
    batches = first.iter_batches(batch_size=max(int(sample_rows), 1), columns=cols)
    try:
        sample_batch = next(batches)
        sample = _to_pandas(pa.Table.from_batches([sample_batch]))
    except StopIteration:
        sample = _to_pandas(first.schema_arrow.empty_table())
        if cols is not None:
            sample = sample[cols]
    dtypes = {str(c): sample[c].dtype for c in sample.columns}
    rows = tuple(int(_parquet_file(f).metadata.num_rows) for f in files)
    meta = sample.iloc[:0].reset_index(drop=True)
    frame = dd.from_map(
        read_file,
        files,
        dtypes=dtypes,
        columns=cols,
        meta=meta,
        divisions=[None] * (len(files) + 1),
        enforce_metadata=False,
        label="read-parquet-sdckit",
    )
    return ParquetSource(tuple(files), rows, frame, dtypes)


def _check_output(output: Path, inputs: Sequence[str], overwrite: bool) -> None:
    resolved = output.resolve()
    for f in inputs:
        fp = Path(f).resolve()
        if fp == resolved or resolved in fp.parents:
            raise ParameterError(
                f"output {str(output)!r} would replace or hold the input {f!r}; choose another directory"
            )
    if output.exists() and not overwrite:
        raise ParameterError(f"output {str(output)!r} exists; remove it or pass overwrite=True")
    if output.exists() and not output.is_dir():
        raise ParameterError(f"output {str(output)!r} exists and is not a directory")
    if not output.parent.is_dir():
        raise DataError(f"output directory {str(output.parent)!r} does not exist")


def write_parquet(
    frame: dd.DataFrame,
    output: str | os.PathLike,
    *,
    inputs: Sequence[str] = (),
    overwrite: bool = False,
    write_index: bool = False,
    compute: Callable[[Any], Any] | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """Write a Dask DataFrame as a directory of Parquet files, atomically.

    The files are written into a hidden temporary directory beside
    ``output`` (``.NAME.tmp-*``) and the directory is renamed to ``output``
    only when every partition is written: a run killed halfway leaves no
    directory named ``output``, and a failed run removes its temporary
    directory.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The records; partition ``i`` becomes ``part.i.parquet``.
    output : str or path
        The directory to create.
    inputs : list of str
        Input files, which the output may not replace or contain.
    overwrite : bool, default False
        Replace an existing ``output`` directory (only once the new one is
        complete).
    write_index : bool, default False
        Store the DataFrame index.
    compute : callable, optional
        Runs the write (receives the delayed write); default ``dask.compute``.
    progress : callable, optional
        ``progress(done, total)``: the job's tasks finished out of all, as
        the Dask scheduler reports them (with the default ``compute``).

    Returns
    -------
    Path
        ``output``.
    """
    out = Path(output)
    _check_output(out, inputs, overwrite)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        job = frame.to_parquet(
            str(tmp), write_index=write_index, compute=False, write_metadata_file=False
        )
        if compute is None:
            run_compute(job, progress=progress)
        else:
            compute(job)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
