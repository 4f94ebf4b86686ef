"""Reading search logs: the AOL format and any table with user and query columns.

A log is read in chunks and kept as integer codes (one user code and one
query code per line, plus the distinct user ids and query strings), so a log
of millions of lines never sits in memory as one Python object per line.
Lines that cannot be read (too few or too many fields, no user id) are
counted and reported by their 1-based line number as a text editor shows it
(the header is line 1); they are never dropped silently.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdckit._results import FrozenResult
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = ["AOL_COLUMNS", "QueryLog", "read_log"]

#: Column names of the AOL 2006 release (``user-ct-test-collection-NN.txt``).
AOL_COLUMNS = ("AnonID", "Query", "QueryTime", "ItemRank", "ClickURL")

#: Query texts that stand for "no query" (the AOL files write ``-``).
_EMPTY_QUERIES = frozenset({"", "-"})

#: How many bad line numbers a summary prints (all are kept in ``bad_lines``).
_SHOWN_BAD_LINES = 10


@dataclass(frozen=True)
class QueryLog(FrozenResult):
    """A search log as integer codes: who asked which query, line by line.

    Attributes
    ----------
    user_ids : numpy.ndarray
        The distinct user ids as text, in order of first appearance.
    queries : numpy.ndarray
        The distinct query strings, in order of first appearance.
    line_users, line_queries : numpy.ndarray
        For each kept line, the code of its user and of its query (int32).
    user_column, query_column : str
        The names of the user and query columns (kept for the release).
    bad_lines : tuple of int
        1-based line numbers of the lines that could not be read.
    empty_queries : int
        Lines whose query was empty (``-`` in the AOL files): not queries.
    source : str
        Where the log came from (a path or ``"DataFrame"``).
    """

    user_ids: np.ndarray
    queries: np.ndarray
    line_users: np.ndarray
    line_queries: np.ndarray
    user_column: str
    query_column: str
    bad_lines: tuple[int, ...]
    empty_queries: int
    source: str

    @property
    def n_users(self) -> int:
        """Number of distinct users with at least one query."""
        return len(self.user_ids)

    @property
    def n_lines(self) -> int:
        """Number of queries (kept lines)."""
        return len(self.line_users)

    def user_query_counts(self) -> sp.csr_matrix:
        """How often each user asked each distinct query.

        Returns
        -------
        scipy.sparse.csr_matrix
            Users x distinct queries, integer counts.
        """
        ones = np.ones(self.n_lines, dtype=np.int64)
        matrix = sp.csr_matrix(
            (ones, (self.line_users, self.line_queries)),
            shape=(self.n_users, len(self.queries)),
        )
        matrix.sum_duplicates()
        return matrix

    def to_frame(self) -> pd.DataFrame:
        """The log as a two-column table (user id, query), one row per query.

        Returns
        -------
        pandas.DataFrame
            Columns named as in the source log.
        """
        return pd.DataFrame(
            {
                self.user_column: self.user_ids[self.line_users],
                self.query_column: self.queries[self.line_queries],
            }
        )

    def summary(self) -> str:
        """A short report of the log for a person: users, queries, empty queries and bad lines."""
        lines = [
            f"search log {self.source}: {self.n_lines:,} queries from {self.n_users:,} users "
            f"({len(self.queries):,} distinct queries)"
        ]
        if self.empty_queries:
            lines.append(f"  {self.empty_queries:,} empty queries ('-') skipped")
        if self.bad_lines:
            shown = ", ".join(str(n) for n in self.bad_lines[:_SHOWN_BAD_LINES])
            more = "" if len(self.bad_lines) <= _SHOWN_BAD_LINES else ", ..."
            lines.append(f"  {len(self.bad_lines):,} bad lines skipped: line {shown}{more}")
        return "\n".join(lines)


class _Coder:
    """Codes strings as consecutive integers in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def codes(self, values: list[str]) -> np.ndarray:
        index = self.index
        out = np.empty(len(values), dtype=np.int64)
        for position, value in enumerate(values):
            code = index.get(value)
            if code is None:
                code = len(index)
                index[value] = code
            out[position] = code
        return out

    def values(self) -> np.ndarray:
        out = np.empty(len(self.index), dtype=object)
        for value, code in self.index.items():
            out[code] = value
        return out


def _separator(header_line: str) -> str:
    return "\t" if "\t" in header_line else ","


def _csv_reader(lines: Iterable[str], sep: str) -> Any:
    # The AOL files are tab-separated without quoting (a query may hold '"').
    if sep == "\t":
        return csv.reader(lines, delimiter=sep, quoting=csv.QUOTE_NONE)
    return csv.reader(lines, delimiter=sep)


def _column_position(header: list[str], name: str, option: str) -> int:
    if name not in header:
        raise SchemaError(
            f"the log has no column {name!r} (give it with {option}); its columns are {header}"
        )
    return header.index(name)


def read_log(
    data: str | os.PathLike[str] | pd.DataFrame,
    *,
    user_column: str = "AnonID",
    query_column: str = "Query",
    chunk_size: int = 100_000,
    progress: Callable[[int, int], None] | None = None,
) -> QueryLog:
    """Read a search log (AOL format or any table with user and query columns).

    Parameters
    ----------
    data : path or pandas.DataFrame
        A CSV or tab-separated text file with a header line (the AOL
        ``user-ct-test-collection-NN.txt`` files or a CSV copy), or a table.
        The separator is a tab when the header line holds one, else a comma.
        Tab-separated files are read without quoting, as the AOL files are
        written (a query may contain ``"``).
    user_column, query_column : str
        Names of the user-id and query columns (AOL: ``AnonID``, ``Query``).
        Other columns (times, clicks) are not read: the protection releases
        query strings only.
    chunk_size : int
        Lines coded per chunk.
    progress : callable, optional
        ``progress(done, total)`` in bytes read.

    Returns
    -------
    QueryLog
        The coded log with its bad line numbers and empty-query count.

    Raises
    ------
    SchemaError
        A named column is missing.
    DataError
        The file cannot be read, or no line holds a query.
    """
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ParameterError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if isinstance(data, pd.DataFrame):
        return _read_frame(data, user_column, query_column)
    path = Path(data)
    try:
        handle = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise DataError(f"cannot read the log {str(path)!r}: {exc.strerror or exc}") from exc
    with handle:
        return _read_file(handle, path, user_column, query_column, chunk_size, progress)


def _read_file(
    handle: Any,
    path: Path,
    user_column: str,
    query_column: str,
    chunk_size: int,
    progress: Callable[[int, int], None] | None,
) -> QueryLog:
    try:
        header_line = handle.readline()
    except UnicodeDecodeError as exc:
        raise DataError(f"the log {str(path)!r} is not UTF-8 text") from exc
    if not header_line.strip():
        raise DataError(f"the log {str(path)!r} is empty")
    sep = _separator(header_line)
    header = next(_csv_reader([header_line], sep))
    header = [name.strip() for name in header]
    user_at = _column_position(header, user_column, "--user-column")
    query_at = _column_position(header, query_column, "--query-column")
    needed = max(user_at, query_at) + 1
    width = len(header)
    total = max(path.stat().st_size, 1)
    consumed = [len(header_line)]

    def lines() -> Iterator[str]:
        for line in handle:
            consumed[0] += len(line)
            yield line

    reader = _csv_reader(lines(), sep)
    users, queries = _Coder(), _Coder()
    user_parts: list[np.ndarray] = []
    query_parts: list[np.ndarray] = []
    bad: list[int] = []
    empty = 0
    chunk_users: list[str] = []
    chunk_queries: list[str] = []
    line_number = 1

    def flush() -> None:
        user_parts.append(users.codes(chunk_users))
        query_parts.append(queries.codes(chunk_queries))
        chunk_users.clear()
        chunk_queries.clear()
        if progress is not None:
            progress(min(consumed[0], total), total)

    try:
        for row in reader:
            # A quoted field may span lines: the row starts after the previous one.
            first_line = line_number + 1
            line_number = reader.line_num + 1
            if not row:
                continue
            if len(row) < needed or len(row) > width:
                bad.append(first_line)
                continue
            user = row[user_at].strip()
            if not user:
                bad.append(first_line)
                continue
            query = row[query_at].strip()
            if query in _EMPTY_QUERIES:
                empty += 1
                continue
            chunk_users.append(user)
            chunk_queries.append(query)
            if len(chunk_users) >= chunk_size:
                flush()
    except UnicodeDecodeError as exc:
        raise DataError(
            f"the log {str(path)!r} is not UTF-8 text (after line {line_number})"
        ) from exc
    except csv.Error as exc:
        raise DataError(f"the log {str(path)!r}, line {line_number + 1}: {exc}") from exc
    flush()
    return _finish(
        users, queries, user_parts, query_parts, user_column, query_column, bad, empty, str(path)
    )


def _read_frame(frame: pd.DataFrame, user_column: str, query_column: str) -> QueryLog:
    header = [str(c) for c in frame.columns]
    _column_position(header, user_column, "user_column")
    _column_position(header, query_column, "query_column")
    user_values = frame[user_column]
    query_values = frame[query_column]
    user_text = user_values.astype(str).str.strip().to_numpy(dtype=object)
    user_missing = user_values.isna().to_numpy() | (user_text == "")
    query_text = query_values.fillna("").astype(str).str.strip().to_numpy(dtype=object)
    empty_query = np.isin(query_text, list(_EMPTY_QUERIES))
    keep = ~user_missing & ~empty_query
    bad = tuple(int(i) + 2 for i in np.flatnonzero(user_missing))
    users, queries = _Coder(), _Coder()
    parts_u = [users.codes(list(user_text[keep]))]
    parts_q = [queries.codes(list(query_text[keep]))]
    empty = int((empty_query & ~user_missing).sum())
    return _finish(
        users, queries, parts_u, parts_q, user_column, query_column, list(bad), empty, "DataFrame"
    )


def _finish(
    users: _Coder,
    queries: _Coder,
    user_parts: list[np.ndarray],
    query_parts: list[np.ndarray],
    user_column: str,
    query_column: str,
    bad: list[int],
    empty: int,
    source: str,
) -> QueryLog:
    line_users = np.concatenate(user_parts).astype(np.int32) if user_parts else np.zeros(0)
    line_queries = np.concatenate(query_parts).astype(np.int32) if query_parts else np.zeros(0)
    if len(line_users) == 0:
        detail = f" ({len(bad)} bad lines, {empty} empty queries)" if bad or empty else ""
        raise DataError(f"the log {source} holds no query{detail}")
    return QueryLog(
        user_ids=users.values(),
        queries=queries.values(),
        line_users=line_users,
        line_queries=line_queries,
        user_column=user_column,
        query_column=query_column,
        bad_lines=tuple(bad),
        empty_queries=empty,
        source=source,
    )
