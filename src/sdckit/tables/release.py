"""What a protected table may publish, and the one check every writer runs.

A protected table is released as its classifying variables and its protected
values (perturbed, restored, suppressed flags). The columns that disclose the
true table stay with the producer:

* ``count``: the true count of each cell (or true sum);
* ``cell_key``: with the perturbation table, it gives each cell's noise, hence
  the true count (Giessing & Höhne (2011), §4: the noise is a function of the
  count and the cell key only);
* ``noise``: ``perturbed - noise`` is the true count;
* ``record_key``: from the record keys anyone can recompute every cell key;
* ``weighted_count``, ``true_sum``, ``largest_contributions``: the true
  weighted total of a cell, the true sum of a magnitude cell, and its largest
  contributions.

Every such column a tables function knows is listed in :data:`CONFIDENTIAL_COLUMNS`;
a column whose name ends in :data:`CONFIDENTIAL_SUFFIX` is confidential by name.
:func:`check_release` refuses a frame holding any of them, and :func:`internal_frame`
renames them with the suffix for an internal file that cannot be mistaken for a
release.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sdckit._results import FrozenResult
from sdckit.errors import ParameterError

__all__ = [
    "CONFIDENTIAL_COLUMNS",
    "CONFIDENTIAL_SUFFIX",
    "ConfidentialColumnError",
    "TableRelease",
    "check_internal_path",
    "check_release",
    "confidential_columns",
    "from_internal_names",
    "internal_frame",
    "release_frame",
]


@dataclass(frozen=True)
class TableRelease(FrozenResult):
    """Base of a protected table's result: what may be published and the producer's copy.

    ``table`` is what may be published (no confidential column, see the
    module docstring); ``internal`` is the producer's copy, confidential
    columns included, never to be released; ``params`` and ``stats`` are the
    parameters used and whole-table figures.
    """

    table: pd.DataFrame
    internal: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)


#: Columns of tables outputs that disclose the true table (see the module docstring).
CONFIDENTIAL_COLUMNS: tuple[str, ...] = (
    "count",
    "cell_key",
    "noise",
    "record_key",
    "weighted_count",
    "true_sum",
    "largest_contributions",
    "sum_noise",
)
#: Suffix that marks a column as confidential in an internal file (``count_CONFIDENTIAL``).
CONFIDENTIAL_SUFFIX = "_CONFIDENTIAL"
_INTERNAL_NAME = re.compile(r"(internal|confidential)", re.IGNORECASE)


class ConfidentialColumnError(ParameterError):
    """A protected output would hold a column that discloses the true table."""


def confidential_columns(
    frame: pd.DataFrame, *, known: Iterable[str] = CONFIDENTIAL_COLUMNS
) -> list[str]:
    """Columns of ``frame`` known to be confidential, in frame order.

    A column is confidential when its name is in ``known``, ends in
    :data:`CONFIDENTIAL_SUFFIX`, or is listed in ``frame.attrs["confidential"]``.

    Parameters
    ----------
    frame : DataFrame
        A table (its ``attrs["confidential"]`` is read).
    known : iterable of str
        Names that are confidential wherever they appear (the true
        ``count``, ``cell_key``, ``noise`` and the like).

    Returns
    -------
    list of str
        The confidential columns.
    """
    names = set(known) | set(frame.attrs.get("confidential", ()))
    return [
        c
        for c in frame.columns
        if c in names or (isinstance(c, str) and c.endswith(CONFIDENTIAL_SUFFIX))
    ]


def check_release(
    frame: pd.DataFrame,
    *,
    allow_confidential: bool = False,
    what: str = "protected table",
    known: Iterable[str] = CONFIDENTIAL_COLUMNS,
) -> None:
    """Refuse a frame to be released when it holds a confidential column.

    Every writer of a protected output calls this before writing (the command
    line does for ``tables perturb``, ``restore``, ``safe``).

    Parameters
    ----------
    frame : DataFrame
        A table (its ``attrs["confidential"]`` is read).
    allow_confidential : bool, default False
        Let an internal file (true counts on purpose) through.
    what : str, default "protected table"
        What the frame is, for the message.
    known : iterable of str
        As in :func:`confidential_columns`.

    Raises
    ------
    ConfidentialColumnError
        Naming the columns, unless ``allow_confidential`` is True.
    """
    found = confidential_columns(frame, known=known)
    if found and not allow_confidential:
        raise ConfidentialColumnError(
            f"the {what} would hold confidential column(s) {found}, which disclose the true "
            "table; drop them, or write an internal file on purpose (--with-true-counts)"
        )


def release_frame(frame: pd.DataFrame, *, keep: Iterable[str] = ()) -> pd.DataFrame:
    """``frame`` without its confidential columns (``keep`` names ones to retain).

    Parameters
    ----------
    frame : DataFrame
        A table (its ``attrs["confidential"]`` is read).
    keep : iterable of str, optional
        Confidential columns to retain nonetheless.

    Returns
    -------
    DataFrame
        A new frame; ``attrs["confidential"]`` is dropped.
    """
    keep = set(keep)
    drop = [c for c in confidential_columns(frame) if c not in keep]
    out = frame.drop(columns=drop)
    out.attrs = {k: v for k, v in frame.attrs.items() if k != "confidential"}
    return out


def internal_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every confidential column renamed ``<name>_CONFIDENTIAL``.

    Parameters
    ----------
    frame : DataFrame
        A table (its ``attrs["confidential"]`` is read).

    Returns
    -------
    DataFrame
        A new frame with the renamed columns.
    """
    found = [c for c in confidential_columns(frame) if not str(c).endswith(CONFIDENTIAL_SUFFIX)]
    out = frame.rename(columns={c: f"{c}{CONFIDENTIAL_SUFFIX}" for c in found})
    out.attrs = dict(frame.attrs)
    return out


def from_internal_names(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`internal_frame`: ``count_CONFIDENTIAL`` becomes ``count`` again.

    A column is renamed only when the plain name is not taken. The returned
    frame lists the renamed columns in ``attrs["confidential"]``.

    Parameters
    ----------
    frame : DataFrame
        An internal table as written by :func:`internal_frame`.

    Returns
    -------
    DataFrame
        The frame with the plain names (``frame`` itself when nothing is renamed).
    """
    renames = {}
    for c in frame.columns:
        if isinstance(c, str) and c.endswith(CONFIDENTIAL_SUFFIX):
            base = c[: -len(CONFIDENTIAL_SUFFIX)]
            if base and base not in frame.columns:
                renames[c] = base
    out = frame.rename(columns=renames) if renames else frame
    if renames:
        out.attrs = {**frame.attrs, "confidential": list(renames.values())}
    return out


def check_internal_path(path: str | Path, option: str = "--output") -> None:
    """An internal file (true counts inside) must say so in its name.

    Parameters
    ----------
    path : str or Path
        The file about to be written.
    option : str, default "--output"
        The command-line option that named it, for the message.

    Raises
    ------
    ParameterError
        When the file name contains neither ``internal`` nor ``confidential``.
    """
    name = Path(path).name
    if not _INTERNAL_NAME.search(name):
        raise ParameterError(
            f"{option} {name!r} would hold the true counts: name it so it cannot be mistaken "
            "for a release (the name must contain 'internal' or 'confidential', "
            "e.g. table_internal.csv)"
        )
