"""Reading and writing microdata files (CSV and Parquet), always atomically.

A file is written to a temporary sibling and renamed into place, so a crash
never leaves a half-written output and an existing file is replaced whole.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from sdckit.errors import DataError, ParameterError

__all__ = ["atomic_write", "read_table", "write_table"]

_FORMATS = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _FORMATS:
        raise ParameterError(
            f"cannot tell the file format of {str(path)!r}: use a .csv or .parquet extension"
        )
    return _FORMATS[suffix]


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file into a DataFrame.

    CSV text columns with few distinct values are kept as strings (object);
    use :mod:`sdckit.schema` to declare categoricals explicitly.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"input file {str(p)!r} does not exist")
    fmt = _format_of(p)
    try:
        if fmt == "csv":
            return pd.read_csv(p)
        return pd.read_parquet(p)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(f"could not read {str(p)!r}: {exc}") from exc


def atomic_write(path: str | os.PathLike, writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` then rename ``tmp_path`` onto ``path`` atomically."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.exists():
        raise DataError(f"output directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        writer(tmp_path)
        os.replace(tmp_path, p)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return p


def write_table(data: pd.DataFrame, path: str | os.PathLike, *, index: bool = False) -> Path:
    """Write ``data`` to CSV or Parquet (chosen by extension), atomically."""
    p = Path(path)
    fmt = _format_of(p)
    if fmt == "csv":
        return atomic_write(p, lambda t: data.to_csv(t, index=index))
    return atomic_write(p, lambda t: data.to_parquet(t, index=index))
