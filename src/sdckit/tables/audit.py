"""Audit of a table with suppressed cells: the attacker's interval of every hidden cell.

An intruder who knows the published cells of a table and its additive
relations (every margin and hierarchy level is the sum of its children) and
that no cell is negative can compute, for every suppressed cell, the smallest
and largest value it can take over all tables consistent with what was
published: two linear programmes per cell (Fischetti & Salazar-González
(2001), §2, the "attacker subproblem"; Hundepool et al. (2012), §4.3.1). A
suppressed cell is protected when its interval ``[lo, hi]`` reaches at least
``value - lower_protection`` below and ``value + upper_protection`` above;
an interval of width zero is an exact disclosure.

:func:`attacker_intervals` builds one HiGHS model (through ``highspy``) whose
unknowns are the suppressed cells and whose rows are the relations that
involve them, then only changes the objective from cell to cell, so every
solve after the first starts from the previous optimal basis.
:func:`audit_suppression` applies it to a tidy table and compares the
intervals with the required protection.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from sdckit._highs import new_highs
from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, plain_value
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.tabulate import Hierarchy, TableStructure, _number_text

__all__ = ["AuditResult", "attacker_intervals", "audit_suppression"]

#: Tolerance under which an interval counts as a single value (an exact disclosure).
EXACT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class AuditResult(FrozenResult):
    """Result of :func:`audit_suppression`.

    Attributes
    ----------
    cells : DataFrame
        One row per suppressed cell, then one per cell that needs protection
        (a ``primary`` cell, or one with a protection level) but was
        published: the dimensions, ``value`` (the true value),
        ``suppressed``, ``lower`` and ``upper`` (the attacker's interval),
        ``lower_protection`` and ``upper_protection`` (required), ``exact``
        (interval of width zero) and ``exposed`` (interval too narrow for the
        required protection, or exact). Internal: it holds true values.
    params : mapping
    stats : mapping
        ``cells``, ``suppressed``, ``published_primary``, ``exposed``,
        ``exact``, ``lp_solves``, ``levels_given`` (False: only exact disclosure checked),
        ``seconds``.
    """

    cells: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def exposed(self) -> pd.DataFrame:
        """The suppressed cells whose interval is too narrow (internal: holds true values)."""
        return self.cells[self.cells["exposed"]]

    def summary(self) -> str:
        """Whether every suppressed cell is protected, and the cells that are not."""
        s = self.stats
        if s["exposed"] == 0 and not s["levels_given"]:
            head = (
                f"none of the {s['suppressed']} suppressed cells can be recomputed exactly "
                "(no protection levels given: only exact disclosure was checked)"
            )
        elif s["exposed"] == 0:
            head = (
                f"all {s['suppressed']} suppressed cells are protected: each attacker interval "
                "reaches the required protection"
            )
        else:
            head = (
                f"{s['exposed']} of the {s['suppressed']} suppressed cells are NOT protected "
                f"({s['exact']} recomputable exactly)"
            )
            if s["published_primary"]:
                head = (
                    f"{s['published_primary']} cells that need protection are published, and "
                    + head
                )
        text = f"{head}; {s['cells']} cells, {s['lp_solves']} LP solves in {s['seconds']:.2f} s"
        if s["exposed"]:
            dims = self.params["dims"]
            shown = []
            for _, row in self.exposed.head(5).iterrows():
                where = ", ".join(f"{d}={row[d]}" for d in dims)
                shown.append(
                    f"{where}: [{_number_text(row['lower'])}, {_number_text(row['upper'])}]"
                )
            text += "; e.g. " + "; ".join(shown)
        return text


def attacker_intervals(
    relations: sparse.spmatrix,
    values: np.ndarray,
    hidden: np.ndarray,
    *,
    upper_bounds: np.ndarray | None = None,
    cells: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Smallest and largest value of each hidden cell over the tables an attacker cannot exclude.

    Fischetti & Salazar-González (2001), §2: with the published cells ``p``
    fixed, the hidden cells ``h`` satisfy ``R_H h = -R_P p``, ``0 <= h <=
    upper``; the interval of cell ``j`` is ``[min h_j, max h_j]``. One HiGHS
    model is built; each solve changes only the objective.

    Parameters
    ----------
    relations : sparse matrix
        The additive relations ``R x = 0`` of the table (one column per cell),
        as :meth:`TableStructure.relations` returns them.
    values : array of float
        Every cell's value (only the published ones are read).
    hidden : array of bool
        True for a suppressed cell.
    upper_bounds : array of float, optional
        A priori upper bound of every cell known to the attacker (default: none).
    cells : array of int, optional
        Positions of the hidden cells whose interval is wanted (default: all).

    Returns
    -------
    lower, upper : arrays of float
        One entry per position of ``cells`` (``upper`` is ``inf`` when
        nothing bounds the cell from above).
    solves : int
        Number of linear programmes solved.
    """
    hidden = np.asarray(hidden, dtype=bool)
    values = np.asarray(values, dtype=np.float64)
    columns = np.flatnonzero(hidden)
    wanted = columns if cells is None else np.asarray(cells, dtype=np.int64)
    if len(wanted) == 0:
        return np.zeros(0), np.zeros(0), 0
    if not hidden[wanted].all():
        raise ParameterError("cells must all be hidden cells")
    matrix = sparse.csr_matrix(relations)
    sub = matrix[:, columns].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[rows]
    published = np.where(hidden, 0.0, values)
    rhs = -(matrix[rows] @ published)
    ub = np.full(len(columns), np.inf)
    if upper_bounds is not None:
        ub = np.asarray(upper_bounds, dtype=np.float64)[columns]
    # hidden cells linked by no chain of relations are independent LPs: one model each
    linked = (abs(sub).T @ abs(sub)).astype(bool)
    _, component = connected_components(linked, directed=False)
    column_of = {int(c): k for k, c in enumerate(columns)}
    local = np.array([column_of[int(c)] for c in wanted], dtype=np.int64)
    lower = np.zeros(len(wanted))
    upper = ub[local].copy()
    solves = 0
    row_component = component[sub.indices[sub.indptr[:-1]]]  # a row's first hidden cell
    for label in np.unique(component[local]):
        members = np.flatnonzero(component == label)
        own_rows = np.flatnonzero(row_component == label)
        if len(own_rows) == 0:
            continue  # in no relation: anything from 0 to its bound
        targets = np.flatnonzero(component[local] == label)
        position = np.searchsorted(members, local[targets])
        lo, hi = _component_intervals(
            sub[own_rows][:, members], rhs[own_rows], ub[members], position
        )
        lower[targets], upper[targets] = lo, hi
        solves += 2 * len(targets)
    return lower, upper, solves


def protection_met(
    relations: sparse.spmatrix,
    values: np.ndarray,
    hidden: np.ndarray,
    primary: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
) -> bool:
    """Whether every primary cell is hidden and its interval reaches its protection levels."""
    cells = np.flatnonzero(primary)
    if not hidden[cells].all():
        return False
    lo, hi, _ = attacker_intervals(relations, values, hidden, cells=cells)
    return bool(
        np.all(lo <= values[cells] - lower[cells] + EXACT_TOLERANCE)
        and np.all(hi >= values[cells] + upper[cells] - EXACT_TOLERANCE)
    )


def _component_intervals(
    sub: sparse.csr_matrix, rhs: np.ndarray, ub: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of each target column subject to ``sub h = rhs``, ``0 <= h <= ub``.

    One HiGHS model; each solve changes only the objective (and its sense),
    so it starts from the previous optimal basis.
    """
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = sub.shape[1]
    lp.num_row_ = sub.shape[0]
    lp.col_cost_ = np.zeros(sub.shape[1])
    lp.col_lower_ = np.zeros(sub.shape[1])
    lp.col_upper_ = np.where(np.isinf(ub), inf, ub)
    lp.row_lower_ = rhs
    lp.row_upper_ = rhs
    csc = sub.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr
    lp.a_matrix_.index_ = csc.indices
    lp.a_matrix_.value_ = csc.data.astype(np.float64)
    h = new_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")  # each solve starts from the last basis
    h.passModel(lp)
    lower = np.empty(len(targets))
    upper = np.empty(len(targets))
    previous: int | None = None
    for out, k in enumerate(targets):
        if previous is not None:
            h.changeColCost(previous, 0.0)
        h.changeColCost(int(k), 1.0)
        previous = int(k)
        for sense, target in (
            (highspy.ObjSense.kMinimize, lower),
            (highspy.ObjSense.kMaximize, upper),
        ):
            h.changeObjectiveSense(sense)
            h.run()
            status = h.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                target[out] = h.getInfo().objective_function_value
            elif status == highspy.HighsModelStatus.kUnbounded:
                target[out] = np.inf
            elif status == highspy.HighsModelStatus.kInfeasible:
                raise InfeasibleError(
                    "the published cells contradict the table's relations (no non-negative "
                    "table fits them): the audit needs the published values of this table"
                )
            else:
                raise InfeasibleError(
                    f"the attacker's linear programme ended with status "
                    f"{h.modelStatusToString(status)!r}"
                )
    return lower, upper


def resolve_structure(
    frame: pd.DataFrame,
    structure: TableStructure | None,
    dims: Sequence[str] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    total_label: str,
) -> TableStructure:
    """The table's structure: given, carried in ``attrs``, or inferred from ``dims``."""
    found = structure or frame.attrs.get("structure")
    if found is None:
        if dims is None:
            raise ParameterError("give structure or dims (the classifying columns)")
        return TableStructure.from_table(
            frame, dims, hierarchies=hierarchies, total_label=total_label
        )
    if not isinstance(found, TableStructure):
        raise ParameterError(f"structure must be a TableStructure, got {type(found).__name__}")
    return found


def non_negative(column: pd.Series, label: str) -> np.ndarray:
    """A column as float64 (NaN where missing), refusing a negative or non-numeric value by row."""
    raw = pd.to_numeric(column, errors="coerce").to_numpy(np.float64)
    wrong = column.notna().to_numpy() & ~(np.isfinite(raw) & (raw >= 0))
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        shown = plain_value(column.iloc[row])
        raise DataError(f"{label} must hold non-negative numbers; row {row + 1} has {shown!r}")
    return raw


def cell_values(
    frame: pd.DataFrame, structure: TableStructure, column: str, *, name: str = "table"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of the rows, the column's values per cell (NaN where missing) and the missing mask."""
    if column not in frame.columns:
        raise DataError(f"{name} has no column {column!r}")
    positions = structure.cell_positions(frame)
    absent = structure.n_cells - len(positions)
    if absent:
        raise DataError(
            f"{name} lacks {absent} of the structure's {structure.n_cells} cells; "
            "every cell (margins included) is needed"
        )
    raw = non_negative(frame[column], f"{name} column {column!r}")
    values = np.full(structure.n_cells, np.nan)
    values[positions] = raw
    return positions, values, np.isnan(values)


def protection_arrays(
    frame: pd.DataFrame,
    positions: np.ndarray,
    n_cells: int,
    values: np.ndarray,
    protection: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Required upper and lower protection per cell: columns of the table, or a share of the value."""
    upl = np.zeros(n_cells)
    lpl = np.zeros(n_cells)
    if protection is not None:
        if not np.isfinite(protection) or protection < 0:
            raise ParameterError(
                f"protection must be a non-negative share of the cell value, got {protection!r}"
            )
        upl[:] = protection * values
        lpl[:] = protection * values
    else:
        for column, target in (("upper_protection", upl), ("lower_protection", lpl)):
            if column in frame.columns:
                given = pd.to_numeric(frame[column], errors="coerce").fillna(0.0).to_numpy()
                target[positions] = given
    # nobody can be protected below zero: a lower protection larger than the value is capped
    return upl, np.minimum(lpl, np.nan_to_num(values))


def audit_suppression(
    table: pd.DataFrame,
    published: pd.DataFrame | None = None,
    *,
    dims: Sequence[str] | None = None,
    value: str = "count",
    published_value: str = "published",
    structure: TableStructure | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
    protection: float | None = None,
    upper_bounds: str | None = None,
) -> AuditResult:
    """The attacker's interval of every suppressed cell, compared with the required protection.

    Fischetti & Salazar-González (2001), §2; Hundepool et al. (2012),
    §4.3.1. For every suppressed cell, the minimum and maximum of the cell
    over all non-negative tables that satisfy the table's additive relations
    and agree with every published cell (see :func:`attacker_intervals`).

    Parameters
    ----------
    table : DataFrame
        The true table, one row per cell (margins included), with the
        dimension columns and ``value``; without ``published`` it also has a
        boolean ``suppressed`` column. Never modified.
    published : DataFrame, optional
        The release to audit (from sdckit or another tool): the dimension
        columns and ``published_value``, missing where a cell is suppressed
        (or a ``suppressed`` column). Its published values are what the
        attacker sees.
    dims : list of str, optional
        The classifying columns, when ``table`` carries no structure.
    value : str, default "count"
        Column of true values in ``table``.
    published_value : str, default "published"
        Column of published values in ``published``.
    structure : TableStructure, optional
        Default: ``table.attrs["structure"]`` or inferred from ``dims``.
    hierarchies : mapping, optional
        ``{dimension: {parent: [children]}}`` when the structure is inferred.
    total_label : str, default "Total"
        Label of a margin when the structure is inferred.
    protection : float, optional
        Required protection as a share of the cell value on both sides (0.1:
        the interval must reach 10% of the value below and above it). Default:
        the ``upper_protection`` / ``lower_protection`` columns of ``table``
        (as :func:`sdckit.tables.primary_suppression` writes them); without
        them, only exact disclosure is checked.
    upper_bounds : str, optional
        Column of ``table`` with an upper bound of every cell the attacker
        knows a priori (default: none, cells are only known to be >= 0).

    Returns
    -------
    AuditResult
        One row per suppressed cell with its interval, and the exposed cells.
    """
    frame = check_dataframe(table, "table")
    structure = resolve_structure(frame, structure, dims, hierarchies, total_label)
    positions, truth, missing_truth = cell_values(frame, structure, value)
    if missing_truth.any():
        k = int(np.flatnonzero(missing_truth[positions])[0])
        raise DataError(f"table column {value!r} is missing in row {k + 1}: it holds true values")
    if published is None:
        if "suppressed" not in frame.columns:
            raise DataError("table has no 'suppressed' column: give the published table as well")
        hidden = np.zeros(structure.n_cells, dtype=bool)
        hidden[positions] = frame["suppressed"].fillna(False).astype(bool).to_numpy()
        seen = np.where(hidden, np.nan, truth)
    else:
        release = check_dataframe(published, "published")
        _, seen, hidden = cell_values(release, structure, published_value, name="published")
        if "suppressed" in release.columns:
            flagged = np.zeros(structure.n_cells, dtype=bool)
            flagged[structure.cell_positions(release)] = (
                release["suppressed"].fillna(False).astype(bool).to_numpy()
            )
            hidden |= flagged
    bounds = None
    if upper_bounds is not None:
        _, bounds, _ = cell_values(frame, structure, upper_bounds)
    upl, lpl = protection_arrays(frame, positions, structure.n_cells, truth, protection)
    relations, _ = structure.relations()
    start = time.perf_counter()
    lower, upper, solves = attacker_intervals(
        relations, np.nan_to_num(seen), hidden, upper_bounds=bounds
    )
    seconds = time.perf_counter() - start
    # a cell that needs protection but was published is the plainest exposure of all
    needs = (upl > 0) | (lpl > 0)
    if "primary" in frame.columns:
        needs[positions] |= frame["primary"].fillna(False).astype(bool).to_numpy()
    shown = np.flatnonzero(needs & ~hidden)
    cells = np.concatenate([np.flatnonzero(hidden), shown])
    lower = np.concatenate([lower, truth[shown]])
    upper = np.concatenate([upper, truth[shown]])
    required = needs[cells]
    exact = upper - lower < EXACT_TOLERANCE
    narrow = (lower > truth[cells] - lpl[cells] + EXACT_TOLERANCE) | (
        upper < truth[cells] + upl[cells] - EXACT_TOLERANCE
    )
    check_all = not required.any()
    exposed = (narrow & required) | (exact & (required | check_all))
    report = structure.labels().iloc[cells].reset_index(drop=True)
    report["value"] = truth[cells]
    report["suppressed"] = hidden[cells]
    report["lower"] = lower
    report["upper"] = upper
    report["lower_protection"] = lpl[cells]
    report["upper_protection"] = upl[cells]
    report["exact"] = exact
    report["exposed"] = exposed
    stats = {
        "cells": structure.n_cells,
        "suppressed": int(hidden.sum()),
        "published_primary": len(shown),
        "exposed": int(exposed.sum()),
        "exact": int(exact.sum()),
        "lp_solves": solves,
        "seconds": seconds,
        "levels_given": not check_all,
    }
    params = {"dims": list(structure.dims), "value": value, "protection": protection}
    return AuditResult(report, params, stats)
