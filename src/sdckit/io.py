"""Reading and writing microdata files (CSV and Parquet), always atomically.

A file is written to a temporary sibling and renamed into place, so a crash
never leaves a half-written output and an existing file is replaced whole.
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError

__all__ = ["atomic_write", "check_output_path", "read_table", "write_table"]

_FORMATS = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _FORMATS:
        raise ParameterError(
            f"cannot tell the file format of {str(path)!r}: use a .csv or .parquet extension"
        )
    return _FORMATS[suffix]


def read_table(path: str | os.PathLike, *, na_values: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file into a DataFrame.

    CSV text columns are kept as strings; use :mod:`sdckit.schema` to declare
    categoricals explicitly. CSV files are read so that nothing is lost or
    shifted silently:

    * the field separator is ``,`` unless the header holds no comma but a
      ``;``, tab or ``|`` (files written with a decimal comma use ``;``);
    * only an empty field is missing in a text column: ``NA`` (Namibia),
      ``null`` or ``N/A`` there are values and are written back unchanged. In
      a column whose other values are all numbers, the usual missing-value
      words (``NA``, ``NaN``, ``null``, ``N/A``...) are missing, as R and
      pandas write them. ``na_values`` replaces this rule: the empty field and
      exactly those words are missing, in every column;
    * a column holding codes with leading zeros (``02134``) stays text, so the
      codes are written back unchanged;
    * duplicated column names are an error naming them (pandas would rename
      the second ``income`` to ``income.1`` and a release would carry both);
    * a row with more fields than the header is an error naming the row
      (pandas would otherwise turn the first column into the row index and
      shift every value one column to the left).

    Parameters
    ----------
    path : path
        A ``.csv`` (or ``.txt``) or ``.parquet`` (``.pq``) file.
    na_values : iterable of str, optional
        Words read as missing in a CSV file, besides the empty field.

    Returns
    -------
    DataFrame
        One row per record, columns as in the file's header.

    Raises
    ------
    DataError
        The file does not exist, cannot be parsed, or has duplicated column
        names.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"input file {str(p)!r} does not exist")
    if p.is_dir():
        raise DataError(f"input {str(p)!r} is a directory, not a file")
    fmt = _format_of(p)
    if na_values is not None:
        if isinstance(na_values, str):
            na_values = [na_values]
        na_values = [str(v) for v in na_values]
    try:
        if fmt == "csv":
            return _read_csv(p, na_values)
        data = pd.read_parquet(p)
    except DataError:
        raise
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(f"could not read {str(p)!r}: {exc}") from exc
    _check_unique_names(list(data.columns), p)
    if not data.index.is_unique:
        label = data.index[data.index.duplicated()][0]
        label = label.item() if isinstance(label, np.generic) else label
        raise DataError(
            f"{str(p)!r} has a row index that is not unique (label {label!r} appears more than "
            "once); records must be told apart: reset the index before writing the file"
        )
    return data


def _check_unique_names(names: list, path: Path) -> None:
    seen: set = set()
    duplicated: list = []
    for name in names:
        if name in seen and name not in duplicated:
            duplicated.append(name)
        seen.add(name)
    if duplicated:
        listed = ", ".join(repr(str(n)) for n in duplicated)
        raise DataError(
            f"{str(path)!r} has duplicated column name(s) {listed}; every column needs its own "
            "name (rename them in the file)"
        )


_SEPARATORS = (";", "\t", "|")
_LEADING_ZERO = r"^\s*[+-]?0\d"


def _csv_separator(path: Path) -> str:
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        header = fh.readline()
    if "," in header:
        return ","
    counts = {sep: header.count(sep) for sep in _SEPARATORS}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ","


def _header_names(path: Path, sep: str) -> list[str]:
    """The header's field names as written (pandas would rename duplicates)."""
    import csv

    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        row = next(csv.reader(fh, delimiter=sep), [])
    if row and row[0].startswith("\ufeff"):
        row[0] = row[0][1:]
    return row


#: Words pandas reads as missing by default; sdckit does so only in numeric columns.
_NUMERIC_NA_WORDS = frozenset(
    {
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)


def _read_csv(path: Path, na_values: list[str] | None = None) -> pd.DataFrame:
    sep = _csv_separator(path)
    _check_unique_names(_header_names(path, sep), path)
    missing = ["", *(na_values or [])]
    options = {"sep": sep, "index_col": False, "keep_default_na": False, "na_values": missing}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        # index_col=False: never take the first column as the index because
        # some rows are longer than the header (it would shift every value).
        data = pd.read_csv(path, **options)
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        raise DataError(f"could not read {str(path)!r}: {_long_row(path, sep, data.shape[1])}")
    if na_values is None:
        # A numeric column with R's or pandas' missing-value words (NA, NaN,
        # null...) is numeric with missing values; a text column keeps them.
        numeric_with_na = [
            col for col in data.columns if _is_text(data[col]) and _numbers_and_na_words(data[col])
        ]
        if numeric_with_na:
            reread = pd.read_csv(path, sep=sep, index_col=False, usecols=numeric_with_na)
            for col in numeric_with_na:
                data[col] = reread[col].to_numpy()
    numeric = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c].dtype)]
    numeric = [c for c in numeric if not pd.api.types.is_bool_dtype(data[c].dtype)]
    if numeric and _may_have_leading_zeros(path, sep):
        # Codes with leading zeros (postcodes, ids) would lose them as numbers.
        text = pd.read_csv(
            path, sep=sep, index_col=False, usecols=numeric, dtype=str, keep_default_na=False
        )
        for col in numeric:
            if text[col].str.contains(_LEADING_ZERO, regex=True).any():
                values = pd.read_csv(path, **{**options, "usecols": [col], "dtype": {col: str}})
                data[col] = values[col].to_numpy()
    return data


def _is_text(column: pd.Series) -> bool:
    dtype = column.dtype
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _numbers_and_na_words(column: pd.Series) -> bool:
    """Whether a text column holds numbers and missing-value words only (at least one of each)."""
    values = column.dropna().astype(str)
    words = values.str.strip().isin(_NUMERIC_NA_WORDS)
    if not words.any() or words.all():
        return False
    return bool(pd.to_numeric(values[~words], errors="coerce").notna().all())


def _may_have_leading_zeros(path: Path, sep: str) -> bool:
    """A quick scan of the raw bytes: does any field start with ``0`` and another digit?

    Fields may be quoted, padded with blanks or signed. A hit only costs a
    second, column-wise pass; no hit (the usual case) costs one vectorised scan.
    """
    is_start = np.zeros(256, dtype=bool)  # byte lookup tables
    is_start[list(f'{sep}\n\r "'.encode())] = True
    is_sign = np.zeros(256, dtype=bool)
    is_sign[list(b"+-")] = True
    block_size = 1 << 24
    tail = b"\n\n"
    with path.open("rb") as fh:
        while block := fh.read(block_size):
            buf = np.frombuffer(tail + block, dtype=np.uint8)
            tail = block[-3:]  # a field cut by the block boundary is seen whole next time
            if len(buf) < 3:
                continue
            at = np.flatnonzero(buf[2:-1] == ord("0")) + 2  # a 0 with two bytes before it
            after = buf[at + 1]
            before = buf[at - 1]
            hit = (after >= ord("0")) & (after <= ord("9"))
            hit &= is_start[before] | (is_sign[before] & is_start[buf[at - 2]])
            if hit.any():
                return True
    return False


def _long_row(path: Path, sep: str, width: int) -> str:
    """Say which data row has more fields than the header (for the error message)."""
    fields = pd.read_csv(
        path,
        sep=sep,
        header=None,
        skiprows=1,
        index_col=False,
        usecols=[width],
        on_bad_lines="skip",
        dtype=str,
    )
    rows = (
        np.flatnonzero(fields.iloc[:, 0].notna().to_numpy())
        if fields.shape[1]
        else np.array([], dtype=np.intp)
    )
    where = f"data row {int(rows[0]) + 1} (line {int(rows[0]) + 2})" if len(rows) else "a row"
    return (
        f"{where} has more fields than the header's {width} columns "
        f"(separator {sep!r}); fix the file or its header"
    )


def check_output_path(path: str | os.PathLike) -> Path:
    """Check before any work that ``path`` can be written: known extension, existing directory.

    Parameters
    ----------
    path : path
        The output file to be.

    Returns
    -------
    Path
    """
    p = Path(path)
    _format_of(p)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise DataError(f"output directory {str(directory)!r} does not exist")
    if p.is_dir():
        raise DataError(f"output {str(p)!r} is a directory; give a file name")
    return p


_UMASK_LOCK = threading.Lock()


def _current_umask() -> int:
    """The process's umask (reading it means setting it: done under a lock, restored at once)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` then rename ``tmp_path`` onto ``path`` atomically.

    Parameters
    ----------
    path : path
        The file to write; replaced only when ``writer`` succeeded.
    writer : callable
        ``writer(tmp_path)`` writes the whole file at ``tmp_path`` (a new
        file in the same directory).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    DataError
        The directory does not exist, ``path`` is a directory, or the file
        cannot be created or replaced (permissions, full disk). Nothing is
        left behind: the temporary file is removed on any failure.
    """
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise DataError(f"output directory {str(directory)!r} does not exist")
    if p.is_dir():
        raise DataError(f"output {str(p)!r} is a directory; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise DataError(f"cannot write into {str(directory)!r}: {exc.strerror or exc}") from exc
    tmp_path = Path(tmp)
    try:
        # mkstemp creates the file readable by its owner only; a release must
        # get the permissions any new file of the user gets (0666 less the umask).
        os.fchmod(fd, 0o666 & ~_current_umask())
    except OSError:  # a file system without permissions (some network shares)
        pass
    finally:
        os.close(fd)
    try:
        writer(tmp_path)
        os.replace(tmp_path, p)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        raise DataError(f"could not write {str(p)!r}: {exc.strerror or exc}") from exc
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return p


def write_table(data: pd.DataFrame, path: str | os.PathLike, *, index: bool = False) -> Path:
    """Write ``data`` to CSV or Parquet (chosen by extension), atomically.

    Parameters
    ----------
    data : DataFrame
        The table to write.
    path : path
        A ``.csv`` (or ``.txt``) or ``.parquet`` (``.pq``) file.
    index : bool, default False
        Also write the row index.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    DataError
        The file cannot be written, or a column cannot be stored in Parquet
        (e.g. arbitrary Python objects); no partial file is left.
    """
    p = Path(path)
    fmt = _format_of(p)
    if fmt == "csv":
        return atomic_write(p, lambda t: data.to_csv(t, index=index))
    import pyarrow as pa

    try:
        return atomic_write(p, lambda t: data.to_parquet(t, index=index))
    except (pa.ArrowException, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"could not write {str(p)!r} as Parquet: {exc}") from exc
