"""Columns that look like identifiers or codes: a CSV file carries no roles, so guess and ask.

A masking method told nothing about a file's columns would mask all of them:
a household number becomes the mean of its group (household 1 becomes 11), a
constant survey weight is averaged, the codes 1/2 of sex become 1.5. The
command line therefore refuses to mask, without being told, a column that
:func:`suspect_columns` flags, and asks the user to say what it is (pass it
through as an id or weight, declare it categorical, or name the columns to
mask). The rules are deliberately simple, so a person can predict them:

* **identifier**: whole numbers, every value distinct, dense (the values
  span at most twice as many integers as there are records: 1..n, 1001..1200);
  or whole numbers sorted in the file order, dense, with more distinct
  values than a code has (household or cluster numbers repeated for their
  members); or text with every value distinct; or a name such as ``id``,
  ``person_id``, ``ori_hid``;
* **code**: a numeric column with at most ``max_levels`` distinct values
  (1/2 for sex, 1..9 for a relationship code, a constant weight of 100),
  when the data hold at least twice as many records as values.

Whole-number measurements (incomes in whole currency units) are not dense
and are not flagged; counts with few values (children 0..3) are, since no
rule tells them from codes: naming them with ``--columns`` says they are
numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["SuspectColumn", "TextInNumbers", "suspect_columns", "text_in_numbers"]

#: A name that says "identifier": id, ID, person_id, id_person, hhid, ori_hid, record.id.
_ID_NAME = re.compile(
    r"(^|[^a-z0-9])(id|hid|hhid|pid|uid|rid)([^a-z0-9]|$)|^(id|hh?id)[0-9]*$", re.I
)


@dataclass(frozen=True)
class SuspectColumn:
    """A column that looks like an identifier or a code.

    Attributes
    ----------
    name : str
        The column.
    kind : {"identifier", "code"}
        What it looks like.
    reason : str
        Why, for a person ("1000 distinct whole numbers in file order").
    """

    name: str
    kind: str
    reason: str


def _whole_numbers(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def _looks_like(series: pd.Series, max_levels: int) -> tuple[str, str] | None:
    name = str(series.name)
    present = series.dropna()
    n = len(present)
    if n == 0:
        return None
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return None
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return None
    if not pd.api.types.is_numeric_dtype(dtype):
        if _ID_NAME.search(name):
            return "identifier", "named like an identifier"
        if n > max_levels and int(present.nunique()) == n:
            return "identifier", f"text with every one of its {n} values distinct"
        return None
    values = present.to_numpy(dtype=np.float64)
    whole = _whole_numbers(values)
    if not whole and len(np.unique(values[: 4 * max_levels])) > max_levels:
        # Fractions are no identifier, and more than max_levels values are no code: no need
        # to count the distinct values of a million measurements.
        return None
    distinct = int(present.nunique())
    if whole and _ID_NAME.search(name):
        return "identifier", "whole numbers named like an identifier"
    if whole and distinct > max_levels:
        span = float(values.max() - values.min()) + 1.0
        dense = distinct >= 0.5 * span
        if distinct == n and span <= 2 * n:
            return "identifier", f"{n} distinct consecutive whole numbers, one per record"
        if dense and bool(np.all(np.diff(values) >= 0)):
            return "identifier", f"{distinct} distinct whole numbers in file order"
    if distinct <= max_levels and n >= 2 * distinct:
        shown = sorted(present.unique().tolist())[:4]
        listed = ", ".join(_plain(v) for v in shown) + (", ..." if distinct > 4 else "")
        if distinct == 1:
            return "code", f"a single value ({listed})"
        return "code", f"only {distinct} distinct values ({listed})"
    return None


def _plain(value: object) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def suspect_columns(
    data: pd.DataFrame, columns: Iterable[str] | None = None, *, max_levels: int = 12
) -> list[SuspectColumn]:
    """The columns among ``columns`` that look like identifiers or codes (see the module).

    Parameters
    ----------
    data : DataFrame
    columns : iterable of str, optional
        Columns to judge; default all.
    max_levels : int, default 12
        A numeric column with at most this many distinct values looks like a code.

    Returns
    -------
    list of SuspectColumn
        In column order; empty when nothing looks suspicious.
    """
    names = list(data.columns) if columns is None else list(columns)
    out = []
    for name in names:
        found = _looks_like(data[name], max_levels)
        if found is not None:
            out.append(SuspectColumn(str(name), *found))
    return out


@dataclass(frozen=True)
class TextInNumbers:
    """A text column whose values are mostly numbers, with some that are not.

    Attributes
    ----------
    name : str
        The column.
    position : int
        0-based position of the first value that is not a number.
    value : str
        That value, as written.
    count : int
        How many values are not numbers.
    """

    name: str
    position: int
    value: str
    count: int


def text_in_numbers(
    data: pd.DataFrame, columns: Iterable[str] | None = None
) -> list[TextInNumbers]:
    """Text columns that hold numbers with a few words among them (``"12.5"``, ``"n/k"``, ``"8"``).

    Read from a CSV file, such a column is text; masked as it is, its numbers
    would be treated as categories (or the words as missing values), never
    said. A column counts when at least half of its non-missing values are
    numbers and at least one is not; a column of codes with letters is
    declared categorical to be used as it is.

    Parameters
    ----------
    data : DataFrame
        The data as read.
    columns : iterable of str, optional
        The columns to look at; default every column.

    Returns
    -------
    list of TextInNumbers
        One entry per such column, in the order looked at.
    """
    names = list(data.columns) if columns is None else list(columns)
    out = []
    for name in names:
        series = data[name]
        dtype = series.dtype
        if not (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)):
            continue
        present = series.notna().to_numpy()
        if not present.any():
            continue
        text = series.astype(str).str.strip()
        numbers = pd.to_numeric(text.where(present), errors="coerce").notna().to_numpy()
        words = present & ~numbers
        if words.any() and numbers.sum() >= 0.5 * present.sum():
            pos = int(np.flatnonzero(words)[0])
            out.append(TextInNumbers(str(name), pos, str(series.iloc[pos]), int(words.sum())))
    return out
