"""Reading search logs: the AOL format and any table with user and query columns.

A log is parsed in chunks by pandas' C parser and kept as integer codes (one
int32 user code and one int32 query code per line, plus the distinct user ids
and query strings), so a log of millions of lines never sits in memory as one
Python object per line; the per-(user, query) counts every method needs are
built block by block of users from those codes (:meth:`QueryLog.pair_counts`).
Query times and clicked addresses are read only when asked for (a time
column, a click column), as minutes and integer codes.

Lines that cannot be read (too many fields, no user id, a time that is not a
date) are counted and reported by their 1-based line number as a text editor
shows it (the header is line 1); they are never dropped silently. A line too
short to hold its query field is counted with the empty queries. In a CSV
whose quoted fields span lines, numbers count records, not physical lines.
"""

from __future__ import annotations

import csv
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdckit._results import FrozenResult
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = ["AOL_COLUMNS", "MISSING_TIME", "QueryLog", "read_log"]

#: Column names of the AOL 2006 release (``user-ct-test-collection-NN.txt``).
AOL_COLUMNS = ("AnonID", "Query", "QueryTime", "ItemRank", "ClickURL")

#: Query texts that stand for "no query" (the AOL files write ``-``).
_EMPTY_QUERIES = frozenset({"", "-"})

#: How many bad line numbers a summary prints (all are kept in ``bad_lines``).
_SHOWN_BAD_LINES = 10

#: ``line_times`` value of a line without a time.
MISSING_TIME = np.iinfo(np.int32).min

#: Lines handled at once when per-user counts are built.
_PAIR_BLOCK_LINES = 4_000_000


class UserPairs(NamedTuple):
    """Each user's distinct queries, users in code order (a CSR layout).

    ``indptr[u]:indptr[u + 1]`` are user u's pairs; ``query`` their query
    codes (ascending within a user), ``count`` how often she asked each, and
    ``first_line`` the first line where she asked it.
    """

    indptr: np.ndarray
    query: np.ndarray
    counts: np.ndarray
    first_line: np.ndarray


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
    time_column, click_column : str or None
        The time and click columns, when they were read.
    line_times : numpy.ndarray or None
        With a time column: each line's time in whole minutes since
        1970-01-01 (int32; :data:`MISSING_TIME` for a line without one).
    clicks : numpy.ndarray or None
        With a click column: the distinct clicked addresses.
    line_clicks : numpy.ndarray or None
        With a click column: each line's click code (int32, an index into
        ``clicks``; -1 for a line without a click).
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
    time_column: str | None = None
    click_column: str | None = None
    line_times: np.ndarray | None = None
    clicks: np.ndarray | None = None
    line_clicks: np.ndarray | None = None

    @property
    def n_users(self) -> int:
        """Number of distinct users with at least one query."""
        return len(self.user_ids)

    @property
    def n_lines(self) -> int:
        """Number of queries (kept lines)."""
        return len(self.line_users)

    @cached_property
    def line_order(self) -> np.ndarray | None:
        """The lines sorted by user (stable), or None when they already are.

        Logs such as the AOL files list each user's lines together, so no
        sort (and no array of line numbers) is needed for them.

        Returns
        -------
        numpy.ndarray or None
            Line numbers, 0-based, grouped by user code.
        """
        users = self.line_users
        if len(users) < 2 or bool(np.all(users[1:] >= users[:-1])):
            return None
        return np.argsort(users, kind="stable")

    def user_line_blocks(
        self, max_lines: int | None = None
    ) -> Iterator[tuple[int, int, np.ndarray]]:
        """Consecutive ranges of users, with their lines, of about ``max_lines`` lines.

        Parameters
        ----------
        max_lines : int, optional
            Lines per block (a user with more lines is one block); default
            4 x 10^6.

        Yields
        ------
        first_user, end_user : int
            The users ``first_user .. end_user - 1``.
        lines : numpy.ndarray
            Their lines (0-based), grouped by user, in log order per user.
        """
        if max_lines is None:
            max_lines = _PAIR_BLOCK_LINES
        per_user = np.bincount(self.line_users, minlength=self.n_users)
        starts = np.zeros(self.n_users + 1, dtype=np.int64)
        np.cumsum(per_user, out=starts[1:])
        order = self.line_order
        first = 0
        while first < self.n_users:
            end = int(np.searchsorted(starts, starts[first] + max_lines, side="right")) - 1
            end = min(max(end, first + 1), self.n_users)
            lo, hi = int(starts[first]), int(starts[end])
            lines = np.arange(lo, hi) if order is None else order[lo:hi]
            yield first, end, lines
            first = end

    @cached_property
    def pairs(self) -> UserPairs:
        """Each user's distinct queries with their counts and first lines.

        Built block by block of users from the line codes, so the work
        memory is that of one block, not of the whole log.

        Returns
        -------
        UserPairs
            The CSR layout of the users x distinct queries counts.
        """
        n_queries = max(len(self.queries), 1)
        per_user = np.zeros(self.n_users, dtype=np.int64)
        parts: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        for first, end, lines in self.user_line_blocks():
            keys = (self.line_users[lines].astype(np.int64) - first) * n_queries
            keys += self.line_queries[lines]
            unique, first_at, count = np.unique(keys, return_index=True, return_counts=True)
            per_user[first:end] = np.bincount(unique // n_queries, minlength=end - first)
            parts[0].append((unique % n_queries).astype(np.int32))
            parts[1].append(count.astype(np.int32))
            parts[2].append(lines[first_at].astype(np.int64))
        indptr = np.zeros(self.n_users + 1, dtype=np.int64)
        np.cumsum(per_user, out=indptr[1:])
        return UserPairs(
            indptr,
            _join(parts[0], np.int32),
            _join(parts[1], np.int32),
            _join(parts[2], np.int64),
        )

    def user_query_counts(self) -> sp.csr_matrix:
        """How often each user asked each distinct query.

        Returns
        -------
        scipy.sparse.csr_matrix
            Users x distinct queries, integer counts.
        """
        pairs = self.pairs
        indptr = pairs.indptr
        if indptr[-1] < np.iinfo(np.int32).max:
            indptr = indptr.astype(np.int32)  # one index dtype: scipy copies nothing
        return sp.csr_matrix(
            (pairs.counts, pairs.query, indptr), shape=(self.n_users, len(self.queries))
        )

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


class _Coded(NamedTuple):
    """One column of a chunk as codes: line i holds ``values[local[i]]``.

    ``values`` are the chunk's distinct raw texts, stripped of surrounding
    white space (two raw texts may strip to the same value), so each distinct
    text is stripped once, not each line.
    """

    local: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, raw: np.ndarray) -> _Coded:
        local, uniques = pd.factorize(raw, use_na_sentinel=False)
        stripped = np.array([u.strip() if isinstance(u, str) else u for u in uniques], dtype=object)
        return cls(np.asarray(local), stripped)

    def per_line(self, test: np.ndarray) -> np.ndarray:
        """A test computed on ``values``, per line."""
        return test[self.local]

    def equals(self, text: str) -> np.ndarray:
        """Per line, whether its value is ``text``."""
        return self.per_line(self.values == text)


class _Coder:
    """Codes strings as consecutive integers in order of first appearance.

    A chunk comes factorised by pandas (a C hash table, :class:`_Coded`);
    only its distinct values go through the Python dictionary of codes.
    """

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def codes(self, column: _Coded, keep: np.ndarray) -> np.ndarray:
        """The codes of the kept lines of a chunk's column."""
        # The distinct values of the kept lines, in order of first appearance there.
        local, seen = pd.factorize(column.local[keep])
        index = self.index
        mapping = np.fromiter(
            (index.setdefault(value, len(index)) for value in column.values[seen]),
            dtype=np.int64,
            count=len(seen),
        )
        if len(index) > np.iinfo(np.int32).max:
            raise DataError("the log has more than 2^31 distinct values in one column")
        return mapping.astype(np.int32)[local]

    def values(self) -> np.ndarray:
        out = np.empty(len(self.index), dtype=object)
        for value, code in self.index.items():
            out[code] = value
        return out


def _join(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """Concatenate chunks, freeing each as it is copied (peak: one array and one chunk)."""
    out: np.ndarray = np.empty(sum(len(p) for p in parts), dtype=dtype)
    at = 0
    parts.reverse()
    while parts:
        part = parts.pop()
        out[at : at + len(part)] = part
        at += len(part)
    return out


def _separator(header_line: str) -> str:
    return "\t" if "\t" in header_line else ","


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
    time_column: str | None = None,
    click_column: str | None = None,
    chunk_size: int = 200_000,
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
    time_column, click_column : str, optional
        Names of the time and clicked-address columns (AOL: ``QueryTime``,
        ``ClickURL``), read only when given (the default protection releases
        query strings only). Times are dates with an optional time of day
        (``2006-03-01 07:17:12``); an empty time is a line without one, any
        other text that is not a date makes the line bad.
    chunk_size : int
        Lines parsed per chunk.
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
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ParameterError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    columns = _Columns(user_column, query_column, time_column, click_column)
    if isinstance(data, pd.DataFrame):
        return _read_frame(data, columns)
    path = Path(data)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise DataError(f"cannot read the log {str(path)!r}: {exc.strerror or exc}") from exc
    with handle:
        return _read_file(handle, path, columns, chunk_size, progress)


class _Columns(NamedTuple):
    user: str
    query: str
    time: str | None
    click: str | None

    def positions(self, header: list[str]) -> dict[str, int]:
        found = {
            "user": _column_position(header, self.user, "--user-column"),
            "query": _column_position(header, self.query, "--query-column"),
        }
        if self.time is not None:
            found["time"] = _column_position(header, self.time, "--time-column")
        if self.click is not None:
            found["click"] = _column_position(header, self.click, "--click-column")
        return found


class _Accumulator:
    """The coded columns of the lines kept so far, chunk by chunk."""

    def __init__(self, columns: _Columns) -> None:
        self.columns = columns
        self.users, self.queries, self.clicks = _Coder(), _Coder(), _Coder()
        self.parts: dict[str, list[np.ndarray]] = {"user": [], "query": [], "time": [], "click": []}
        self.bad: list[np.ndarray] = []
        self.empty = 0

    def add(self, chunk: dict[str, _Coded], line_numbers: np.ndarray) -> None:
        """Code one chunk; ``line_numbers`` are the chunk's 1-based file lines."""
        user = chunk["user"]
        query = chunk["query"]
        no_user = user.equals("")
        blank = no_user & query.equals("")
        if "time" in chunk:
            blank &= chunk["time"].equals("")
        no_user &= ~blank
        bad = no_user
        minutes = None
        if "time" in chunk:
            time = chunk["time"]
            # Each distinct time text is parsed once.
            stamp = pd.to_datetime(pd.Series(time.values), format="ISO8601", errors="coerce")
            missing = stamp.isna().to_numpy()
            bad = bad | time.per_line(missing & (time.values != ""))
            distinct = stamp.to_numpy().astype("datetime64[m]").astype(np.int64)
            distinct[missing] = MISSING_TIME
            minutes = time.per_line(
                np.clip(distinct, MISSING_TIME, np.iinfo(np.int32).max).astype(np.int32)
            )
        empty = ~bad & ~blank & query.per_line(np.isin(query.values, list(_EMPTY_QUERIES)))
        self.empty += int(empty.sum())
        self.bad.append(line_numbers[bad])
        keep = ~(bad | blank | empty)
        self.parts["user"].append(self.users.codes(user, keep))
        self.parts["query"].append(self.queries.codes(query, keep))
        if minutes is not None:
            self.parts["time"].append(minutes[keep])
        if "click" in chunk:
            click = chunk["click"]
            given = ~click.equals("")
            codes = np.full(int(keep.sum()), -1, dtype=np.int32)
            codes[given[keep]] = self.clicks.codes(click, keep & given)
            self.parts["click"].append(codes)

    def finish(self, source: str, extra_bad: list[int]) -> QueryLog:
        line_users = _join(self.parts["user"], np.int32)
        line_queries = _join(self.parts["query"], np.int32)
        bad = sorted(set(np.concatenate([*self.bad, np.asarray(extra_bad, dtype=np.int64)])))
        if len(line_users) == 0:
            detail = (
                f" ({len(bad)} bad lines, {self.empty} empty queries)" if bad or self.empty else ""
            )
            raise DataError(f"the log {source} holds no query{detail}")
        has_time = self.columns.time is not None
        has_click = self.columns.click is not None
        return QueryLog(
            user_ids=self.users.values(),
            queries=self.queries.values(),
            line_users=line_users,
            line_queries=line_queries,
            user_column=self.columns.user,
            query_column=self.columns.query,
            bad_lines=tuple(int(n) for n in bad),
            empty_queries=self.empty,
            source=source,
            time_column=self.columns.time,
            click_column=self.columns.click,
            line_times=_join(self.parts["time"], np.int32) if has_time else None,
            clicks=self.clicks.values() if has_click else None,
            line_clicks=_join(self.parts["click"], np.int32) if has_click else None,
        )


def _physical_lines(rows: np.ndarray, skipped: np.ndarray) -> np.ndarray:
    """1-based file lines of parsed data rows, given the data lines the parser skipped.

    ``rows`` are 0-based row numbers among the rows the parser kept;
    ``skipped`` the sorted 1-based file lines it skipped (the header is
    line 1). The i-th kept row is the i-th line of the file after the header
    that is not skipped.
    """
    below = np.searchsorted(skipped - np.arange(len(skipped)) - 2, rows, side="right")
    return rows + 2 + below


def _read_file(
    handle: Any,
    path: Path,
    columns: _Columns,
    chunk_size: int,
    progress: Callable[[int, int], None] | None,
) -> QueryLog:
    try:
        header_line = handle.readline().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"the log {str(path)!r} is not UTF-8 text") from exc
    if not header_line.strip():
        raise DataError(f"the log {str(path)!r} is empty")
    sep = _separator(header_line)
    quoting: Literal[0, 3] = csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL
    header = [
        name.strip() for name in next(csv.reader([header_line], delimiter=sep, quoting=quoting))
    ]
    positions = columns.positions(header)
    total = max(path.stat().st_size, 1)
    acc = _Accumulator(columns)
    skipped: list[int] = []
    rows_seen = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            reader = pd.read_csv(
                handle,
                sep=sep,
                header=None,
                names=list(range(len(header))),
                dtype=object,  # plain Python strings: no Arrow conversion per chunk
                na_filter=False,
                quoting=quoting,
                skip_blank_lines=False,
                on_bad_lines="warn",
                chunksize=chunk_size,
                encoding="utf-8",
                engine="c",
            )
            for frame in reader:
                # Lines with too many fields: the parser skips them with a warning.
                for warning in caught:
                    skipped.extend(_skipped_line(str(warning.message)))
                caught.clear()
                rows = np.arange(rows_seen, rows_seen + len(frame))
                rows_seen += len(frame)
                chunk = {
                    name: _Coded.of(frame[at].to_numpy(dtype=object))
                    for name, at in positions.items()
                }
                acc.add(chunk, _physical_lines(rows, np.array(sorted(skipped), dtype=np.int64)))
                if progress is not None:
                    progress(min(handle.tell(), total), total)
        except UnicodeDecodeError as exc:
            raise DataError(f"the log {str(path)!r} is not UTF-8 text") from exc
        except (pd.errors.ParserError, csv.Error, ValueError) as exc:
            raise DataError(f"the log {str(path)!r} cannot be parsed: {exc}") from exc
        for warning in caught:
            skipped.extend(_skipped_line(str(warning.message)))
    return acc.finish(str(path), skipped)


def _skipped_line(message: str) -> list[int]:
    """File line numbers (1-based, header = line 1) of a parser's "Skipping line N" warnings."""
    found = []
    for text in message.splitlines():
        words = text.split()
        if len(words) > 2 and words[0] == "Skipping" and words[1] == "line":
            found.append(int(words[2].rstrip(":")) + 1)
    return found


def _read_frame(frame: pd.DataFrame, columns: _Columns) -> QueryLog:
    header = [str(c) for c in frame.columns]
    positions = columns.positions(header)
    chunk = {}
    for name in positions:
        column = frame[getattr(columns, name)]
        chunk[name] = _Coded.of(column.astype(str).where(column.notna(), "").to_numpy(dtype=object))
    acc = _Accumulator(columns)
    acc.add(chunk, np.arange(2, len(frame) + 2))
    return acc.finish("DataFrame", [])
