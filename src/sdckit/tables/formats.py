"""Formats table producers exchange: hierarchies from code lists and tau-ARGUS files, SDMX-CSV.

* **Code-list hierarchies**: a CSV with one row per parent-child link
  (columns ``parent`` and ``child``; an optional ``dimension`` column lets
  one file hold several dimensions). Parents that are children of no other
  code add directly into the total.
* **tau-ARGUS ``.hrc`` files** (Hundepool et al., tau-ARGUS manual, §
  "hierarchical codelists"): one code per line, its depth given by the
  number of leading ``@`` characters; a code is the parent of the deeper
  codes that follow it. The top level adds into the total.
* **SDMX-CSV** (SDMX 2.1 technical notes, CSV format, version 1): a
  ``DATAFLOW`` column, one column per dimension, ``OBS_VALUE`` and an
  ``OBS_STATUS`` attribute; totals are coded ``_T`` as in SDMX code lists.

Hierarchies come back as ``{parent: [children, ...]}``, the form
:func:`sdckit.tables.tabulate` takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError
from sdckit.tables.release import check_release

__all__ = ["read_codelist_hierarchy", "read_hrc", "to_sdmx_csv"]


def read_hrc(path: str | Path, *, marker: str = "@") -> dict[str, list[str]]:
    """Read a tau-ARGUS ``.hrc`` hierarchy into ``{parent: [children]}``.

    Parameters
    ----------
    path : str or Path
        The ``.hrc`` file: one code per line, its depth given by leading
        markers.
    marker : str, default "@"
        The depth marker.

    Returns
    -------
    dict
        ``{parent: [children]}`` in file order.

    Raises
    ------
    DataError
        A line jumps more than one level deeper than the line before it, or a
        code appears twice (the line is named, counting from 1).
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"hierarchy file {str(p)!r} does not exist")
    spec: dict[str, list[str]] = {}
    stack: list[str] = []
    seen: set[str] = set()
    for number, raw in enumerate(p.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        depth = len(line) - len(line.lstrip(marker))
        code = line[depth:].strip()
        if not code:
            raise DataError(f"{p.name}, line {number}: no code after {marker!r}")
        if depth > len(stack):
            raise DataError(
                f"{p.name}, line {number}: {code!r} is {depth} levels deep but the line before "
                f"is {len(stack) - 1}; a level may grow by one at a time"
            )
        if code in seen:
            raise DataError(f"{p.name}, line {number}: code {code!r} appears twice")
        seen.add(code)
        del stack[depth:]
        if stack:
            spec.setdefault(stack[-1], []).append(code)
        stack.append(code)
    if not seen:
        raise DataError(f"hierarchy file {str(p)!r} holds no codes")
    return spec


def read_codelist_hierarchy(
    path: str | Path, *, dimension: str | None = None
) -> dict[str, list[str]]:
    """Read a parent-child code list (CSV columns ``parent``, ``child`` [, ``dimension``]).

    Parameters
    ----------
    path : str or Path
    dimension : str, optional
        Keep the rows of this dimension (required when the file has a
        ``dimension`` column holding several).

    Returns
    -------
    dict
        ``{parent: [children]}`` in file order.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"hierarchy file {str(p)!r} does not exist")
    frame = pd.read_csv(p, dtype=str, keep_default_na=False)
    missing = [c for c in ("parent", "child") if c not in frame.columns]
    if missing:
        raise DataError(f"code list {p.name!r} lacks column(s) {missing} (needs parent, child)")
    if "dimension" in frame.columns:
        dims = sorted(set(frame["dimension"]))
        if dimension is None and len(dims) > 1:
            raise ParameterError(
                f"code list {p.name!r} holds dimensions {dims}: name the one to read"
            )
        if dimension is not None:
            frame = frame[frame["dimension"] == dimension]
            if frame.empty:
                raise DataError(f"code list {p.name!r} has no rows for dimension {dimension!r}")
    empty = (frame["parent"].str.strip() == "") | (frame["child"].str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0]) + 1
        raise DataError(f"code list {p.name!r}: row {row} has an empty parent or child")
    spec: dict[str, list[str]] = {}
    for parent, child in zip(frame["parent"].str.strip(), frame["child"].str.strip(), strict=True):
        spec.setdefault(parent, []).append(child)
    return spec


def to_sdmx_csv(
    table: pd.DataFrame,
    dims: Sequence[str],
    *,
    dataflow: str,
    value: str = "perturbed",
    total_label: str = "Total",
    total_code: str = "_T",
) -> pd.DataFrame:
    """A published table as SDMX-CSV: DATAFLOW, the dimensions, OBS_VALUE, OBS_STATUS.

    ``OBS_STATUS`` is ``"C"`` (confidential) for a suppressed cell and ``"A"``
    (normal) otherwise. The input must be a release (no confidential column,
    :func:`sdckit.tables.check_release`).

    Parameters
    ----------
    table : DataFrame
        ``CellKeyResult.table`` or ``AdditivityResult.table``.
    dims : list of str
    dataflow : str
        ``AGENCY:ID(VERSION)``, e.g. ``"ESTAT:CENSUS_HC(1.0)"``.
    value : str, default "perturbed"
        The column published as ``OBS_VALUE`` (e.g. ``"restored"``).
    total_label : str, default "Total"
        The label of a margin in ``table``.
    total_code : str, default "_T"
        The SDMX code a margin is published under.

    Returns
    -------
    DataFrame
        One row per cell: ``DATAFLOW``, the dimensions, ``OBS_VALUE``,
        ``OBS_STATUS``.
    """
    check_release(table, what="SDMX-CSV table")
    missing = [c for c in [*dims, value] if c not in table.columns]
    if missing:
        raise DataError(f"table lacks column(s) {missing}")
    if not dataflow or "," in dataflow:
        raise ParameterError(
            f"dataflow must be AGENCY:ID(VERSION) without commas, got {dataflow!r}"
        )
    out = pd.DataFrame({"DATAFLOW": dataflow}, index=table.index)
    for dim in dims:
        labels = table[dim].astype(object).map(str)
        out[dim.upper()] = labels.where(labels != total_label, total_code)
    out["OBS_VALUE"] = table[value]
    suppressed = (
        table["suppressed"].fillna(False).astype(bool)
        if "suppressed" in table.columns
        else pd.Series(False, index=table.index)
    )
    out["OBS_STATUS"] = np.where(suppressed, "C", "A")
    return out.reset_index(drop=True)
