"""Global recoding: intervals, groupings, generalisation hierarchies, top and bottom coding.

Global recoding replaces every value of a key variable by a coarser one, the
same replacement in every record (Hundepool et al. 2012, §3.4.2; sdcMicro's
``globalRecode``, ``groupAndRename`` and ``topBotCoding``):

* ``intervals``: numbers cut at given breaks into labelled intervals
  ``[a, b)``;
* ``groupings``: categories merged into groups (values not named stay);
* ``hierarchies``: a generalisation hierarchy per key (:class:`Hierarchy`:
  from a CSV of levels, or from interval widths) and the level to recode to;
* ``top`` / ``bottom``: values above (below) a threshold replaced by the
  threshold; the column stays numeric.

A recoded column becomes categorical (its values are labels now); top and
bottom coding keep the dtype.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    describe_row,
    plain_value,
)
from sdckit.errors import DataError, ParameterError
from sdckit.microdata.base import MaskResult, column_changes, register_masker
from sdckit.schema import Schema

__all__ = ["Hierarchy", "RecodeResult", "recode"]

#: The label of the top of every hierarchy: the value fully generalised.
TOP = "*"


def value_text(value: object) -> str:
    """A value as its hierarchy's CSV writes it: 3 for 3.0, otherwise str()."""
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _interval_label(low: float, high: float) -> str:
    return f"[{value_text(low)}, {value_text(high)})"


@dataclass(frozen=True)
class Hierarchy:
    """A generalisation hierarchy of one key variable: level 0 the values, the top ``*``.

    Build one with :meth:`from_csv` (the format of ARX: one row per value,
    the value first, then its generalisation at each level) or
    :meth:`from_intervals` (numbers grouped in intervals of growing width).

    Attributes
    ----------
    table : DataFrame or None
        Rows per value: column 0 the value as text, then one column per level.
    widths : tuple of float or None
        Interval widths of levels 1, 2, ... (numbers); the level above them is ``*``.
    origin : float
        Where the intervals start.
    """

    table: pd.DataFrame | None = None
    widths: tuple[float, ...] | None = None
    origin: float = 0.0

    @classmethod
    def from_csv(cls, path: str | Path) -> Hierarchy:
        """A hierarchy from a CSV file without header: value, level 1, level 2, ...

        Parameters
        ----------
        path : str or Path
            The file; fields separated by commas or semicolons.

        Returns
        -------
        Hierarchy
        """
        table = pd.read_csv(path, header=None, dtype=str, sep=None, engine="python")
        if table.shape[1] < 2:
            raise DataError(f"hierarchy {str(path)!r} needs a value and at least one level a row")
        if table.iloc[:, 0].duplicated().any():
            first = table.iloc[:, 0][table.iloc[:, 0].duplicated()].iloc[0]
            raise DataError(f"hierarchy {str(path)!r} lists the value {first!r} twice")
        return cls(table=table.fillna(TOP))

    @classmethod
    def from_intervals(cls, widths: Sequence[float], *, origin: float = 0.0) -> Hierarchy:
        """A hierarchy of intervals of the given widths (each a multiple of the one before).

        Parameters
        ----------
        widths : sequence of float
            Widths of levels 1, 2, ...; e.g. ``[5, 10, 20]`` for ages.
        origin : float, default 0
            The intervals are ``[origin + i w, origin + (i + 1) w)``.

        Returns
        -------
        Hierarchy
        """
        ws = tuple(float(w) for w in widths)
        if not ws or any(not np.isfinite(w) or w <= 0 for w in ws):
            raise ParameterError(f"widths must be positive numbers, got {list(widths)}")
        return cls(widths=ws, origin=float(origin))

    @property
    def height(self) -> int:
        """The number of levels above the values (the top ``*`` included)."""
        if self.widths is not None:
            return len(self.widths) + 1
        assert self.table is not None
        return self.table.shape[1] - 1 + int(not (self.table.iloc[:, -1] == TOP).all())

    def generalise(self, column: pd.Series, level: int, *, name: str = "column") -> pd.Series:
        """The column recoded to ``level`` (0: unchanged); missing values stay missing.

        Parameters
        ----------
        column : Series
            The key variable.
        level : int
            0 to :attr:`height`.
        name : str
            The column's name, for messages.

        Returns
        -------
        Series
            Categorical labels (level >= 1), indexed like ``column``.
        """
        if not 0 <= level <= self.height:
            raise ParameterError(
                f"level of {name!r} must be between 0 and {self.height}, got {level}"
            )
        if level == 0:
            return column.copy()
        # Each distinct value is generalised once, then spread to its records.
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        distinct = pd.Series(np.asarray(uniques, dtype=object))
        if level == self.height:
            generalised = np.full(len(distinct), TOP, dtype=object)
        elif self.widths is not None:
            values = pd.to_numeric(distinct, errors="coerce").to_numpy(dtype=float)
            bad = np.flatnonzero(~np.isfinite(values))
            if len(bad):
                position = int(np.flatnonzero(codes == bad[0])[0])
                raise DataError(
                    f"hierarchy of {name!r}: {describe_row(column.index, position)} holds "
                    f"{plain_value(column.iloc[position])!r}, not a number"
                )
            width = self.widths[level - 1]
            low = self.origin + np.floor((values - self.origin) / width) * width
            generalised = np.array([_interval_label(a, a + width) for a in low], dtype=object)
        else:
            assert self.table is not None
            lookup = dict(zip(self.table.iloc[:, 0], self.table.iloc[:, level], strict=True))
            texts = [value_text(v) for v in distinct]
            unknown = [i for i, t in enumerate(texts) if t not in lookup]
            if unknown:
                position = int(np.flatnonzero(codes == unknown[0])[0])
                records = int(np.isin(codes, unknown).sum())
                raise DataError(
                    f"the hierarchy of {name!r} does not cover the value "
                    f"{plain_value(column.iloc[position])!r} ({describe_row(column.index, position)}"
                    f"; {records} record(s) in all)"
                )
            generalised = np.array([lookup[t] for t in texts], dtype=object)
        labels = np.full(len(column), None, dtype=object)
        present = codes >= 0
        labels[present] = generalised[codes[present]]
        return pd.Series(pd.Categorical(labels), index=column.index, name=column.name)


@dataclass(frozen=True)
class RecodeResult(MaskResult):
    """Result of :func:`recode`; ``stats`` holds ``categories_before`` and ``categories_after``."""

    def expected_selection_share(self) -> float | None:
        """None: recoding changes the values it is told to, not a random share."""
        return None


def _mapping(value: Mapping | None, name: str, data: pd.DataFrame) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParameterError(f"{name} must map column names to settings, got {value!r}")
    check_columns(data, list(value), name)
    return dict(value)


def _cut(column: pd.Series, breaks: Sequence[float], name: str) -> pd.Series:
    edges = np.asarray(sorted(float(b) for b in breaks))
    if len(edges) < 2 or len(np.unique(edges)) != len(edges):
        raise ParameterError(f"intervals of {name!r}: give at least two distinct breaks")
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    present = column.notna().to_numpy()
    outside = np.flatnonzero(present & ~((values >= edges[0]) & (values <= edges[-1])))
    if len(outside):
        raise DataError(
            f"intervals of {name!r} cover [{value_text(edges[0])}, {value_text(edges[-1])}]; "
            f"{describe_row(column.index, int(outside[0]))} holds "
            f"{plain_value(column.iloc[outside[0]])!r}"
        )
    labels = [_interval_label(a, b) for a, b in itertools.pairwise(edges)]
    position = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(labels) - 1)
    codes = np.where(present, position, -1)
    return pd.Series(
        pd.Categorical.from_codes(codes, labels, ordered=True), index=column.index, name=name
    )


def _cap(column: pd.Series, threshold: float, name: str, *, top: bool) -> pd.Series:
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        raise ParameterError(f"{'top' if top else 'bottom'} coding needs numbers; {name!r} is not")
    if pd.api.types.is_integer_dtype(column) and not float(threshold).is_integer():
        raise ParameterError(
            f"{'top' if top else 'bottom'} of {name!r} must be a whole number for a column of "
            f"whole numbers, got {threshold!r}"
        )
    over = column > threshold if top else column < threshold
    out = column.copy()
    out[over.fillna(False).to_numpy(dtype=bool)] = threshold
    return out.astype(column.dtype)


def _changed_cells(before: pd.DataFrame, after: pd.DataFrame) -> pd.Series:
    """Per record, how many of the columns changed value (missing on both sides: unchanged)."""
    old, new = before.astype(object), after.astype(object)
    changed = (old != new) & ~(old.isna() & new.isna())
    return changed.sum(axis=1).astype(np.int64)


@register_masker("recode", "global recoding: intervals, groupings, hierarchy levels, top/bottom")
def recode(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
    intervals: Mapping[str, Sequence[float]] | None = None,
    groupings: Mapping[str, Mapping[object, object]] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: Mapping[str, int] | None = None,
    top: Mapping[str, float] | None = None,
    bottom: Mapping[str, float] | None = None,
) -> RecodeResult:
    """Recode key variables globally: the same coarser value in every record.

    Hundepool et al. (2012), §3.4.2. Deterministic; ``random_state`` is
    accepted for the common interface and not used.

    Parameters
    ----------
    data : DataFrame
        The microdata; never modified.
    columns : iterable of str, optional
        The columns recoded; default every column some setting names.
    schema : Schema, optional
        Checked against ``data`` when given.
    random_state : None, int or Generator
        Not used.
    progress : callable, optional
        ``progress(done, total)`` per column.
    intervals : mapping of str to sequence of float, optional
        Breaks per numeric column; the values become labels ``[a, b)`` (the
        last interval closed). A value outside the breaks is an error.
    groupings : mapping of str to mapping, optional
        Per column, ``{value: group}``; values not named stay as they are.
    hierarchies : mapping of str to Hierarchy, optional
        Per column, its generalisation hierarchy, used with ``levels``.
    levels : mapping of str to int, optional
        Per hierarchy column, the level to recode to.
    top, bottom : mapping of str to float, optional
        Top and bottom coding thresholds per numeric column.

    Returns
    -------
    RecodeResult
    """
    check_dataframe(data)
    if schema is not None:
        schema.check_matches(data)
    specs = {
        "intervals": _mapping(intervals, "intervals", data),
        "groupings": _mapping(groupings, "groupings", data),
        "hierarchies": _mapping(hierarchies, "hierarchies", data),
        "levels": _mapping(levels, "levels", data),
        "top": _mapping(top, "top", data),
        "bottom": _mapping(bottom, "bottom", data),
    }
    missing_hierarchy = sorted(set(specs["levels"]) - set(specs["hierarchies"]))
    if missing_hierarchy:
        raise ParameterError(f"levels names column(s) without a hierarchy: {missing_hierarchy}")
    named = list(dict.fromkeys(c for spec in specs.values() for c in spec))
    cols = named if columns is None else check_columns(data, columns, "columns")
    if not cols:
        raise ParameterError("recode: give intervals, groupings, hierarchies, top or bottom")
    idle = [c for c in cols if c not in named]
    if idle:
        raise ParameterError(f"columns {idle} have no recoding setting")
    out = data.copy()
    for done, col in enumerate(cols, start=1):
        series = out[col]
        if col in specs["bottom"]:
            series = _cap(series, specs["bottom"][col], col, top=False)
        if col in specs["top"]:
            series = _cap(series, specs["top"][col], col, top=True)
        if col in specs["intervals"]:
            series = _cut(series, specs["intervals"][col], col)
        if col in specs["groupings"]:
            mapping = specs["groupings"][col]
            series = pd.Series(
                pd.Categorical([mapping.get(v, v) if pd.notna(v) else None for v in series]),
                index=series.index,
                name=col,
            )
        if col in specs["hierarchies"]:
            series = specs["hierarchies"][col].generalise(
                series, int(specs["levels"].get(col, 0)), name=col
            )
        out[col] = series
        if progress is not None:
            progress(done, len(cols))
    stats = {
        "categories_before": {c: int(data[c].nunique()) for c in cols},
        "categories_after": {c: int(out[c].nunique()) for c in cols},
    }
    params = {"columns": cols, **{k: (v or None) for k, v in specs.items()}}
    relabelled = [c for c in cols if out[c].dtype != data[c].dtype]
    return RecodeResult(
        # Columns recoded to labels are compared as categories (no mean or variance ratio).
        column_changes=column_changes(
            data, out, cols, selection_share=None, categorical=relabelled
        ),
        data=out,
        diagnostics=pd.DataFrame({"recoded": _changed_cells(data[cols], out[cols])}),
        params=params,
        method="recode",
        stats=stats,
    )
