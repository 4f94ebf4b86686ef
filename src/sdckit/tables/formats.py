"""Formats table producers exchange: hierarchies from code lists and tau-ARGUS files, SDMX-CSV.

* **Code-list hierarchies**: a CSV with one row per parent-child link
  (columns ``parent`` and ``child``; an optional ``dimension`` column lets
  one file hold several dimensions). Parents that are children of no other
  code add directly into the total.
* **tau-ARGUS ``.hrc`` files** (Hundepool et al., tau-ARGUS manual, §
  "hierarchical codelists"): one code per line, its depth given by the
  number of leading ``@`` characters; a code is the parent of the deeper
  codes that follow it. The top level adds into the total.
* **Perturbation tables** in three layouts: sdckit's tidy one, which is the
  columns of R ptable's ``pTable`` (``i, j, p, v, p_int_lb, p_int_ub`` and
  R's optional ``type``; Enderle, Giessing & Tent 2018), one row per
  transition, the last row serving every larger count; the ONS
  ``cell-key-perturbation`` layout (``pcv, ckey, pvalue``), one row per
  count and integer cell key, rows 501-750 reused in turn for larger counts;
  and tau-ARGUS's text layout for count tables (``i;j;p;v;p_ij_ub``, see
  :func:`read_ptable`).
* **SDMX-CSV** (SDMX 2.1 technical notes, CSV format, version 1): a
  ``DATAFLOW`` column, one column per dimension, ``OBS_VALUE`` and an
  ``OBS_STATUS`` attribute; totals are coded ``_T`` as in SDMX code lists.

Hierarchies come back as ``{parent: [children, ...]}``, the form
:func:`sdckit.tables.tabulate` takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError
from sdckit.tables.ptable import PTable
from sdckit.tables.release import check_release

__all__ = ["read_codelist_hierarchy", "read_hrc", "read_ptable", "to_sdmx_csv", "write_ptable"]

#: The ONS p-tables hold counts 1..750 and reuse rows 501..750 for larger counts.
ONS_ROWS = 750
ONS_CYCLE_START = 501
_PTABLE_FORMATS = ("auto", "tidy", "ons", "tauargus")
#: The header of a tau-ARGUS p-table for counts, field by field.
TAUARGUS_FIELDS = ("i", "j", "p", "v", "p_ij_ub")
#: Tolerance on ``p_ij_ub`` against the cumulative ``p`` (tau-ARGUS files round it to 10 decimals).
_TAUARGUS_TOL = 1e-6


def _ptable_frame(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    p = Path(source)
    if not p.exists():
        raise DataError(f"perturbation table file {str(p)!r} does not exist")
    try:
        return pd.read_csv(p, sep=None, engine="python")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"cannot read perturbation table {str(p)!r}: {exc}") from exc


def _ons_ptable(frame: pd.DataFrame, cycle_start: int) -> PTable:
    cols = {c: pd.to_numeric(frame[c], errors="coerce") for c in ("pcv", "ckey", "pvalue")}
    for name, col in cols.items():
        bad = col.isna() | (col != col.round())
        if bad.any():
            k = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"ONS perturbation table column {name!r} must hold whole numbers; "
                f"row {k + 2} (as a spreadsheet counts, header on row 1) has {frame[name].iloc[k]!r}"
            )
    pcv = cols["pcv"].to_numpy(np.int64)
    ckey = cols["ckey"].to_numpy(np.int64)
    pvalue = cols["pvalue"].to_numpy(np.int64)
    if (pcv < 0).any() or (ckey < 0).any():
        raise DataError("ONS perturbation table has negative pcv or ckey values")
    if ((pcv + pvalue) < 0).any():
        k = int(np.flatnonzero((pcv + pvalue) < 0)[0])
        raise DataError(
            f"ONS perturbation table row {k + 2}: pvalue {pvalue[k]} takes count {pcv[k]} below 0"
        )
    L = int(pcv.max()) + 1
    K = int(ckey.max()) + 1
    grid = np.full((L, K), np.iinfo(np.int64).min, dtype=np.int64)
    grid[pcv, ckey] = pvalue
    grid[0][grid[0] == np.iinfo(np.int64).min] = 0  # an empty cell stays empty (p_00 = 1)
    missing = np.argwhere(grid == np.iinfo(np.int64).min)
    if len(missing):
        i, c = (int(v) for v in missing[0])
        raise DataError(
            f"ONS perturbation table has no row for pcv={i}, ckey={c} ({len(missing)} of "
            f"{(L - 1) * K} pcv/ckey pairs missing); every count 1..{L - 1} needs all {K} keys"
        )
    if grid[0].any():
        raise DataError("ONS perturbation table moves an empty cell (pcv 0) away from 0")
    D = int(np.abs(grid).max())
    matrix = np.zeros((L, L + D))
    for d in np.unique(grid):
        rows, hits = np.unique(np.nonzero(grid == d)[0], return_counts=True)
        matrix[rows, rows + d] += hits / K
    js = 0
    while js + 1 < matrix.shape[1] and not matrix[:, js + 1].any():
        js += 1
    dev = np.arange(matrix.shape[1])[None, :] - np.arange(L)[:, None]
    variances = (matrix * dev**2).sum(axis=1) - (matrix * dev).sum(axis=1) ** 2
    cycle = cycle_start if L - 1 > cycle_start else None
    return PTable(
        matrix,
        D,
        float(variances[-1]),
        int(js),
        variances,
        {},
        {"source": "ONS (pcv, ckey, pvalue)", "key_range": K},
        large_counts="cycle" if cycle else "last_row",
        cycle_start=cycle,
        key_grid=grid,
    )


def _tauargus_number(text: str, field: str, where: str, *, whole: bool) -> float:
    try:
        value = float(text.strip().strip('"'))
    except ValueError:
        value = float("nan")
    if not np.isfinite(value):
        raise DataError(f"{where}, field {field!r}: {text.strip()!r} is not a number")
    if whole and value != round(value):
        raise DataError(f"{where}, field {field!r}: {text.strip()} is not a whole number")
    return value


def _tauargus_ptable(path: Path) -> PTable:
    """Read a tau-ARGUS p-table for counts, checking it line by line (lines 1-based)."""
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"cannot read perturbation table {str(path)!r}: {exc}") from exc
    header = [f.strip().strip('"').lower() for f in lines[0].split(";")] if lines else []
    if tuple(header) != TAUARGUS_FIELDS:
        raise DataError(
            f"{path.name}, line 1: a tau-ARGUS p-table starts with the header "
            f"{';'.join(TAUARGUS_FIELDS)}, got {lines[0] if lines else ''!r}"
        )
    rows: list[tuple[int, int, float]] = []
    done: set[int] = set()
    cumulative = 0.0
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        where = f"{path.name}, line {number}"
        fields = raw.split(";")
        if len(fields) != len(TAUARGUS_FIELDS):
            raise DataError(
                f"{where}: {len(fields)} fields, expected {len(TAUARGUS_FIELDS)} "
                f"({';'.join(TAUARGUS_FIELDS)}) separated by ';'"
            )
        i, j, p, v, ub = (
            _tauargus_number(text, name, where, whole=name in ("i", "j", "v"))
            for text, name in zip(fields, TAUARGUS_FIELDS, strict=True)
        )
        for name, value in (("i", i), ("j", j)):
            if value < 0:
                raise DataError(f"{where}, field {name!r}: {value:g} is negative")
        if not 0 <= p <= 1:
            raise DataError(f"{where}, field 'p': {p:g} is not a probability")
        if v != j - i:
            raise DataError(f"{where}, field 'v': {v:g} is not j - i = {j - i:g}")
        previous = rows[-1] if rows else None
        if previous is None or previous[0] != i:
            if previous is not None and abs(cumulative - 1) > _TAUARGUS_TOL:
                raise DataError(
                    f"{where}: row i={previous[0]} ends with cumulative probability "
                    f"{cumulative:.10g}, not 1"
                )
            if i in done:
                raise DataError(
                    f"{where}, field 'i': row i={i:g} resumes after another row; the lines of "
                    "one row must follow each other"
                )
            done.add(int(i))
            cumulative = 0.0
        elif j <= previous[1]:
            raise DataError(
                f"{where}, field 'j': {j:g} does not follow j={previous[1]} of the line "
                "before; j must increase within a row (the cumulative bounds follow j)"
            )
        cumulative += p
        if abs(cumulative - ub) > _TAUARGUS_TOL:
            raise DataError(
                f"{where}, field 'p_ij_ub': {ub:.10g} is not the cumulative probability "
                f"{cumulative:.10g} of row i={i:g} up to j={j:g}"
            )
        rows.append((int(i), int(j), p))
    if not rows:
        raise DataError(f"{path.name}: the perturbation table has no rows after the header")
    if abs(cumulative - 1) > _TAUARGUS_TOL:
        raise DataError(
            f"{path.name}, line {len(lines)}: row i={rows[-1][0]} ends with cumulative "
            f"probability {cumulative:.10g}, not 1"
        )
    table = PTable.from_frame(pd.DataFrame(rows, columns=["i", "j", "p"]))
    return replace(table, params={"source": "tau-ARGUS (i;j;p;v;p_ij_ub)"})


def _tauargus_text(ptable: PTable) -> str:
    lost = ptable.lost_in_tidy_layout()
    if lost:
        raise ParameterError(
            "a tau-ARGUS p-table (its last row serves every larger count, cell keys select "
            "by cumulative probability) cannot hold " + " and ".join(lost) + "; write it with "
            "format='ons'"
        )
    frame = ptable.to_frame()
    lines = [";".join(f'"{name}"' for name in TAUARGUS_FIELDS)]
    for i, j, p, v, ub in frame[["i", "j", "p", "v", "p_int_ub"]].itertuples(index=False):
        bound = f"{round(float(ub), 10):.10f}".rstrip("0").rstrip(".")
        probability = np.format_float_positional(float(p), trim="-")  # shortest exact, no exponent
        lines.append(f"{int(i)};{int(j)};{probability};{int(v)};{bound}")
    return "\n".join(lines) + "\n"


def _is_tauargus_file(source: str | Path | pd.DataFrame) -> bool:
    if isinstance(source, pd.DataFrame) or not Path(source).is_file():
        return False
    with open(source, encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    return "p_ij_ub" in first.lower() and ";" in first


def read_ptable(
    source: str | Path | pd.DataFrame,
    *,
    format: str = "auto",
    cycle_start: int = ONS_CYCLE_START,
) -> PTable:
    """Read a perturbation table: sdckit's (R ptable's) tidy layout, ONS's or tau-ARGUS's.

    Parameters
    ----------
    source : path or DataFrame
        A CSV file (separator detected) or a frame already read.
    format : {"auto", "tidy", "ons", "tauargus"}, default "auto"
        ``"tidy"``: columns ``i, j, p`` (``v``, ``p_int_lb``, ``p_int_ub``,
        ``type`` may be present and are ignored: they follow from ``p``), as
        :meth:`PTable.to_frame` and R ptable write them; the last row serves
        every larger count. ``"ons"``: columns ``pcv, ckey, pvalue`` as the
        ONS ``cell-key-perturbation`` package reads them: the noise of every
        count ``1..L-1`` for every integer cell key ``0..K-1``; the table is
        kept key by key, so a cell key selects exactly the ``pvalue`` the ONS
        package would, and rows ``cycle_start..L-1`` are reused in turn for
        larger counts (the ONS convention). ``"tauargus"``: tau-ARGUS's text
        file for the cell key method on count tables, as in the example
        p-table shipped with tau-ARGUS (``data/cellkey/Frequency`` of its
        repository): a header line ``"i";"j";"p";"v";"p_ij_ub"``, then one
        line per transition ``i;j;p;v;p_ij_ub``, separated by ``;``, with
        ``v = j - i`` and ``p_ij_ub`` the cumulative probability of the row
        up to ``j`` (the upper bound of the cell-key interval that selects
        ``j``), the lines of a row consecutive with ``j`` increasing, and the
        last row serving every larger count. Each line is checked; an error
        names the line (counting from 1, the header being line 1) and the
        field. Not confirmed from a written specification: tau-ARGUS's
        manual text on this file and the exact columns R ptable's
        ``pt_export(..., SDCtool = "TauArgus")`` writes (its help page does
        not describe them) were not available; the layout follows
        tau-ARGUS's own example file. ``"auto"`` recognises a tau-ARGUS file
        by ``p_ij_ub`` in a ``;``-separated first line, the others by their
        columns.
    cycle_start : int, default 501
        First reused row of an ONS table (the ONS package reuses rows
        501-750); tables with fewer rows than that use their last row.

    Returns
    -------
    PTable
        ``ptable.key_range`` is the number of cell keys of an ONS table (use
        record keys in that range: ``add_record_keys(..., key_range=K)``).
    """
    if format not in _PTABLE_FORMATS:
        raise ParameterError(f"format must be one of {list(_PTABLE_FORMATS)}, got {format!r}")
    if format == "tauargus" or (format == "auto" and _is_tauargus_file(source)):
        if isinstance(source, pd.DataFrame):
            raise ParameterError("format='tauargus' reads a file; pass its path, not a frame")
        if not Path(source).exists():
            raise DataError(f"perturbation table file {str(source)!r} does not exist")
        return _tauargus_ptable(Path(source))
    frame = _ptable_frame(source)
    if len(frame) == 0:
        raise DataError("the perturbation table has no rows")
    columns = {str(c).strip().lower(): c for c in frame.columns}
    ons_columns = {"pcv", "ckey", "pvalue"} <= set(columns)
    tidy_columns = {"i", "j", "p"} <= set(columns)
    if format == "auto":
        if not (ons_columns or tidy_columns):
            raise DataError(
                "the perturbation table has neither the columns i, j, p (sdckit, R ptable) nor "
                f"pcv, ckey, pvalue (ONS); it has {list(frame.columns)}"
            )
        format = "ons" if ons_columns else "tidy"
    frame = frame.rename(columns={v: k for k, v in columns.items()})
    if format == "ons":
        if not ons_columns:
            raise DataError(
                f"an ONS perturbation table needs columns pcv, ckey, pvalue; it has {list(frame)}"
            )
        return _ons_ptable(frame, int(cycle_start))
    return PTable.from_frame(frame)


def write_ptable(
    ptable: PTable, path: str | Path, *, format: str = "tidy", key_range: int | None = None
) -> None:
    """Write a perturbation table in sdckit's tidy layout, ONS's or tau-ARGUS's (atomically).

    Parameters
    ----------
    ptable : PTable
        The table.
    path : str or Path
        The CSV file to write.
    format : {"tidy", "ons", "tauargus"}, default "tidy"
        See :func:`read_ptable`. ``"ons"`` writes counts 1..750 and every
        cell key ``0..K-1``: the noise sdckit itself gives a cell of that
        count and key (for a designed table, the row's cumulative
        probabilities cut at ``c / K``, so each transition's probability is
        rounded to a multiple of ``1/K``); rows beyond the table's own follow
        its ``large_counts`` convention, so the ONS package perturbs as
        sdckit does. ``"tauargus"`` writes the ``i;j;p;v;p_ij_ub`` text
        layout (``p`` in full precision, ``p_ij_ub`` rounded to 10 decimals,
        each row's last bound exactly 1). ``"tidy"`` and ``"tauargus"``
        hold one row per count, the last serving every larger count, and
        select by cumulative probability: a table read from an ONS file
        whose rows are reused in turn, or whose key-by-key noise the
        cumulative probabilities do not reproduce, cannot be written so and
        is refused, the error naming what would be lost
        (:meth:`PTable.lost_in_tidy_layout`).
    key_range : int, optional
        ``K`` for ``"ons"``: the table's own for a table read key by key,
        else 256.
    """
    from sdckit.io import atomic_write, write_table

    if not isinstance(ptable, PTable):
        raise ParameterError(f"ptable must be a PTable, got {type(ptable).__name__}")
    if format not in _PTABLE_FORMATS[1:]:
        raise ParameterError(f"format must be one of {list(_PTABLE_FORMATS[1:])}, got {format!r}")
    if format == "tidy":
        write_table(ptable.to_frame(), path)
        return
    if format == "tauargus":
        text = _tauargus_text(ptable)

        def write_text(tmp: Path) -> None:
            tmp.write_text(text)

        atomic_write(path, write_text)
        return
    K = key_range or ptable.key_range or 256
    if ptable.key_range is not None and K != ptable.key_range:
        raise ParameterError(
            f"key_range={K} differs from the table's own {ptable.key_range} cell keys"
        )
    from sdckit.tables.cellkey import lookup_noise

    counts = np.repeat(np.arange(1, ONS_ROWS + 1, dtype=np.int64), K)
    keys = np.tile(np.arange(K, dtype=np.int64), ONS_ROWS)
    pvalue = lookup_noise(counts, keys / K, ptable)
    write_table(pd.DataFrame({"pcv": counts, "ckey": keys, "pvalue": pvalue}), path)


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
