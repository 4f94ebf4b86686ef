"""Shared parameter checks and the random-state convention (scikit-learn style)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError, SchemaError

RandomState = None | int | np.random.Generator

__all__ = [
    "RandomState",
    "check_columns",
    "check_dataframe",
    "check_fraction",
    "check_int",
    "check_positive",
    "check_random_state",
    "check_required_columns",
    "describe_row",
    "number_text",
    "plain_value",
    "row_number",
    "value_at",
]


def check_random_state(random_state: RandomState) -> np.random.Generator:
    """Turn ``None``, an int seed or a Generator into a :class:`numpy.random.Generator`.

    The same int seed always gives the same stream, so the same seed gives the same output.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        None for fresh entropy, a non-negative int seed, or a Generator
        (returned as it is, so that a caller's stream continues).

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise ParameterError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise ParameterError(
        "random_state must be None, a non-negative int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def check_dataframe(
    data: object, name: str = "data", *, min_rows: int = 1, unique_index: bool = False
) -> pd.DataFrame:
    """Check that ``data`` is a DataFrame with at least ``min_rows`` rows and unique column names.

    With ``unique_index``, a row index holding a label twice is refused too:
    a masking method's per-record diagnostics and messages name records by
    their index label.

    Parameters
    ----------
    data : object
        What the caller passed as the data.
    name : str, default "data"
        The parameter's name, for messages.
    min_rows : int, default 1
        Fewest rows accepted.
    unique_index : bool, default False
        Also refuse a row index that repeats a label.

    Returns
    -------
    DataFrame
        ``data`` itself (not a copy).
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"{name} must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) < min_rows:
        raise DataError(f"{name} has {len(data)} rows; at least {min_rows} are needed")
    if not data.columns.is_unique:
        dup = data.columns[data.columns.duplicated()].tolist()
        raise SchemaError(f"{name} has duplicated column names: {dup}")
    if unique_index and not data.index.is_unique:
        duplicated = data.index.duplicated()
        pos = int(np.flatnonzero(duplicated)[0])
        raise DataError(
            f"{name}'s row index is not unique: label {plain_value(data.index[pos])!r} appears "
            f"again at row {pos + 1}; records must be told apart (reset_index(drop=True) numbers "
            "them 0, 1, ...)"
        )
    return data


def check_columns(
    data: pd.DataFrame, columns: Iterable[str] | str | None, name: str = "columns"
) -> list[str]:
    """Return ``columns`` as a list, checking every one exists in ``data``.

    Parameters
    ----------
    data : DataFrame
        The data the columns must belong to.
    columns : str, iterable of str or None
        One column name, several, or None for every column.
    name : str, default "columns"
        The parameter's name, for messages.

    Returns
    -------
    list of str
        The columns in the order given, each once.
    """
    if columns is None:
        return list(data.columns)
    if isinstance(columns, str):
        columns = [columns]
    cols = list(columns)
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise SchemaError(
            f"{name}: unknown column(s) {missing}; the data have columns {list(data.columns)}"
        )
    if len(set(cols)) != len(cols):
        raise ParameterError(f"{name} lists a column more than once: {cols}")
    return cols


def check_required_columns(
    data: pd.DataFrame, columns: Iterable[str] | str | None, what: str, one: str
) -> list[str]:
    """:func:`check_columns` for a ``columns`` parameter that must name at least one column.

    Parameters
    ----------
    data, columns
        As for :func:`check_columns`, except that ``columns=None`` is refused.
    what : str
        What to name, for the message when ``columns`` is None
        ("columns: name the key variables to make k-anonymous").
    one : str
        One such column, for the message when ``columns`` is empty
        ("columns: name at least one key variable").

    Returns
    -------
    list of str
        The columns in the order given, each once.
    """
    if columns is None:
        raise ParameterError(f"columns: name {what}")
    cols = check_columns(data, columns, "columns")
    if not cols:
        raise ParameterError(f"columns: name at least one {one}")
    return cols


def check_fraction(
    value: float, name: str, *, low: float = 0.0, high: float = 1.0, open_low: bool = False
) -> float:
    """Check ``low <= value <= high`` (``low < value`` when ``open_low``).

    Parameters
    ----------
    value : float
        The number that must lie between the bounds (NaN is refused).
    name : str
        The parameter's name, as the message names it.
    low, high : float, default 0 and 1
        The bounds.
    open_low : bool, default False
        Exclude ``low`` itself.

    Returns
    -------
    float
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or np.isnan(value):
        raise ParameterError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    v = float(value)
    if v > high or v < low or (open_low and v == low):
        bracket = "(" if open_low else "["
        raise ParameterError(f"{name} must be in {bracket}{low}, {high}], got {value!r}")
    return v


def check_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """Check that ``value`` is a finite number > 0 (>= 0 with ``allow_zero``).

    Parameters
    ----------
    value : float
        The number that must be positive and finite.
    name : str
        The parameter's name, as the message names it.
    allow_zero : bool, default False
        Accept 0.

    Returns
    -------
    float
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ParameterError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return float(value)


def check_int(value: int, name: str, *, minimum: int | None = None) -> int:
    """Check that ``value`` is an integer, optionally at least ``minimum``.

    Parameters
    ----------
    value : int
        The number to check (a bool is refused).
    name : str
        The parameter's name, for messages.
    minimum : int, optional
        Smallest value accepted.

    Returns
    -------
    int
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def plain_value(value: object) -> object:
    """A value as a person writes it: numpy scalars become Python ones (3.0, not np.float64(3.0)).

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    object
        The Python scalar of a numpy scalar; anything else unchanged.
    """
    return value.item() if isinstance(value, np.generic) else value


def number_text(value: float) -> str:
    """A number as a person writes it: -3, 0.25, 1e+300 (never np.float64(-3.0)).

    Parameters
    ----------
    value : float
        Any real number (a numpy scalar included).

    Returns
    -------
    str
        Whole numbers below 10^15 without a decimal point, others in ``%g`` form.
    """
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"


def row_number(position: int) -> int:
    """A 0-based row position as a spreadsheet shows it (the first data row is 1).

    Parameters
    ----------
    position : int
        0-based position.

    Returns
    -------
    int
        ``position + 1``.
    """
    return int(position) + 1


def describe_row(index: pd.Index, position: int) -> str:
    """``"row 5"`` for the fifth row (1-based, as a spreadsheet shows it), with its index label.

    The label is shown when the index is not the default 0, 1, 2, ...
    (``"row 5 (index 'p17')"``).

    Parameters
    ----------
    index : Index
        The data's row index.
    position : int
        0-based position of the row.

    Returns
    -------
    str
    """
    text = f"row {row_number(position)}"
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        text += f" (index {plain_value(index[position])!r})"
    return text


def value_at(series: pd.Series, position: int) -> str:
    """``"'abc' at row 5"``: a column's value as a person writes it, and the row it stands in.

    Parameters
    ----------
    series : Series
        The column.
    position : int
        0-based position of the value.

    Returns
    -------
    str
        The value's repr (numpy scalars as Python ones) and :func:`describe_row`.
    """
    return f"{plain_value(series.iloc[position])!r} at {describe_row(series.index, position)}"


def row_label(label: object) -> object:
    """An index label as a plain Python value, for error messages (19, not np.int64(19))."""
    return label.item() if isinstance(label, np.generic) else label


def as_sequence(values: Iterable[Any] | str | None) -> list[Any]:
    """``None`` -> [], a string -> [string], anything iterable -> list."""
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    return list(values)
