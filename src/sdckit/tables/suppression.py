"""Secondary cell suppression: hide enough other cells that no primary cell can be recomputed.

A primary cell (see :func:`sdckit.tables.primary_suppression`) is protected
when the interval an attacker can compute for it from the published cells
and the table's additive relations reaches ``value - lower_protection``
below and ``value + upper_protection`` above (Fischetti & Salazar-González
(2001), §2; Hundepool et al. (2012), §4.3). Three methods choose the
secondary cells, and every result is audited by the attacker's LP
(:func:`sdckit.tables.audit_suppression`) unless asked otherwise:

* ``"optimal"``: the mixed integer programme of Fischetti & Salazar-González
  (2001), §3, in its compact form: one binary per cell, and for every primary
  cell and direction a deviation vector ``y`` of the whole table that
  satisfies every relation, moves the primary cell by its protection level,
  and is zero on published cells and at least ``-value`` on suppressed ones.
  Such a ``y`` is a table the attacker cannot exclude, so the pattern found
  is protected, and it is the cheapest such pattern (suppressed value, or
  number of cells) up to the gap HiGHS proves. Upward moves of a cell are
  bounded by the largest cell plus the largest protection level (a bound that
  can only make the pattern more expensive, never less safe). Its size grows
  with cells x primary cells: for small and medium tables.
* ``"hypercube"``: the GHMITER heuristic of Repsilber (1994), as described by
  Giessing & Repsilber (2002): for each primary cell the cheapest
  "hypercube" of cells whose alternating changes keep every relation, and
  whose corners can move far enough. Here a hypercube is the product over
  dimensions of a one-dimensional move (the cell, a sibling with the opposite
  sign, or its chain of ancestors with the same sign, each completed down to a
  leaf), so every relation of the hierarchical table holds along it and the
  protection of each primary cell is guaranteed by its own hypercube. Not
  optimal; a cell for which no hypercube among the candidates is large
  enough is often protected by the others' hypercubes; the audit judges it,
  and if it is exposed it gets a deviation LP (:func:`deviation_pattern`),
  whose protection is proved by construction (without the audit, every such
  cell gets one).
* ``"modular"``: the HiTaS approach of de Wolf (2002): the hierarchical table
  is cut into its non-hierarchical sub-tables (a parent and its children in
  every dimension), solved top-down by the optimal model; cells decided in a
  sub-table keep their status in the next ones, and a suppressed margin is
  protected again in the sub-table below it. A sub-table whose optimal model
  would exceed ``MODULAR_OPTIMAL_SIZE`` (cells x protection directions), or
  finds no pattern within ``time_limit``, is protected by the hypercube
  heuristic within the sub-table instead (``stats["hypercube_subtables"]``):
  on a sparse table of 10^5 cells the sub-tables hold hundreds of primary
  cells each, beyond what the compact model solves in seconds. The whole
  table is not guaranteed (an attacker combining sub-tables can do better),
  which is why the audit runs on the whole table, and each primary cell it
  finds exposed gets a hypercube of the whole table, or, where no candidate
  hypercube protects it, a deviation LP (:func:`deviation_pattern`); the
  table is then audited again. Before session 11 a cell no hypercube
  protected stayed exposed (1 of 2,074 primary cells on the 11,200-cell
  table of ``benchmarks/suppression.py``).

The same repair follows the audit of every method: whatever the method, a
primary cell the audit finds exposed is completed by a hypercube (modular)
or a deviation LP and the table audited again, so a result reports an
exposed cell only when an LP could not finish within its time limit.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import pandas as pd
from scipy import sparse

from sdckit._highs import NoTableInTime, load_highs, solve_highs
from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, check_positive
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.audit import (
    AuditResult,
    audit_suppression,
    protection_met,
    relation_neighbourhood,
    resolve_structure,
)
from sdckit.tables.release import release_frame
from sdckit.tables.rules_primary import PrimaryRule, primary_suppression
from sdckit.tables.tabulate import Hierarchy, TableStructure

__all__ = ["SuppressionResult", "suppress"]

METHODS = ("hypercube", "optimal", "modular")
#: Largest (cells x protection directions) the optimal model is built for.
MAX_OPTIMAL_SIZE = 2_000_000
#: Largest (cells x protection directions) of a sub-table's optimal model in the modular
#: method; larger sub-tables are protected by hypercubes within the sub-table.
MODULAR_OPTIMAL_SIZE = 100_000
#: Largest number of corner evaluations per primary cell in the hypercube search.
HYPERCUBE_BUDGET = 200_000
#: Seconds (wall clock) per HiGHS run of the optimal and modular methods unless told.
DEFAULT_TIME_LIMIT = 60.0


@dataclass(frozen=True)
class SuppressionResult(FrozenResult):
    """Result of :func:`suppress`.

    Attributes
    ----------
    table : DataFrame
        The release: the dimensions, ``published`` (missing where suppressed)
        and ``suppressed`` (bool). It does not say which suppressed cells are
        primary: that would tell an attacker which cells failed a rule.
    internal : DataFrame
        The input table with ``status`` (``"primary"``, ``"secondary"``,
        ``"published"``), ``published`` and ``suppressed``. Never release it.
    audit : AuditResult or None
        The attacker's interval of every suppressed cell.
    params : mapping
    stats : mapping
        ``cells``, ``primary``, ``secondary``, ``suppressed_value`` (sum of
        the suppressed cells' values), ``seconds``, ``exposed`` (cells the
        audit found too narrow, or could not settle within ``audit_time_limit``:
        ``unsettled``), ``unprotected`` (primary cells the method
        itself could not protect), ``no_hypercube`` (primary cells no
        candidate hypercube protected), ``repaired`` (primary cells the
        first audit found exposed, then completed), ``lp_repaired`` (primary
        cells protected by a deviation LP, :func:`deviation_pattern`), and
        per method: ``mip_gap``, ``objective`` and ``dual_bound`` (optimal:
        HiGHS's proven gap, the pattern's cost and the lower bound on any
        pattern's), ``subtables``, ``relaxed_subtables``,
        ``hypercube_subtables`` (modular).
    """

    table: pd.DataFrame
    internal: pd.DataFrame
    audit: AuditResult | None
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The pattern's size and whether the audit found every primary cell protected."""
        s = self.stats
        if self.audit is None:
            head = "not audited"
        elif s["exposed"] == 0:
            head = "every suppressed cell passed the audit"
        else:
            head = f"{s['exposed']} suppressed cells are NOT protected (see .audit)"
        gap = s.get("mip_gap")
        stopped = (
            f"; time_limit reached before the optimum was proven: cost {s['objective']:g} "
            f"against HiGHS's lower bound {s['dual_bound']:g} (gap {gap:.1%})"
            if gap is not None and gap > 1e-6 and "objective" in s and "dual_bound" in s
            else ""
        )
        return (
            f"{head}: {s['primary']} primary and {s['secondary']} secondary cells suppressed "
            f"({self.params['method']}) of {s['cells']}, suppressed value "
            f"{s['suppressed_value']:g}, {s['seconds']:.2f} s{stopped}"
        )


# --- the optimal model -------------------------------------------------------------


def optimal_pattern(
    relations: sparse.spmatrix,
    values: np.ndarray,
    primary: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    weights: np.ndarray,
    *,
    published: np.ndarray | None = None,
    time_limit: float | None = None,
    info: dict | None = None,
    cubes: Mapping[Any, tuple[np.ndarray, np.ndarray]] | None = None,
) -> np.ndarray | None:
    """The cheapest suppression pattern protecting every primary cell (compact MILP).

    Fischetti & Salazar-González (2001), §3: binaries ``z``; for every
    primary cell ``i`` and direction, a deviation ``y`` with ``R y = 0``,
    ``y_i = +upper_i`` (or ``-lower_i``), ``-a_j z_j <= y_j <= M z_j``.
    Returns the boolean pattern, or None when no pattern exists (cells forced
    ``published`` block every deviation).

    ``cubes``: for primary cells (positions), a hypercube protecting each, as
    (corner positions, signs) with the cell's own sign +1
    (:func:`hypercube_pattern`, ``chosen``), keyed by the cell; or, keyed by
    ``(cell, +1)`` / ``(cell, -1)``, the change protecting one direction, as
    (positions, steps) with the cell's own step +1 (:func:`deviation_pattern`,
    ``certificates``). When every direction has one and the pattern they
    span fits the model (bounds, ``published``), that pattern and its
    deviations are HiGHS's first incumbent: the result is then never dearer
    than it, even when ``time_limit`` stops the search (on the 11,200-cell
    table of ``benchmarks/suppression.py`` the modular method's sub-tables
    otherwise returned patterns at gaps up to 96%; on education x race x sex
    of Adult, 306 cells, a 10 s search with no start returned a pattern of
    180 times the hypercubes' value).
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    matrix = sparse.csr_matrix(relations)
    m = matrix.shape[0]
    directions = []
    for i in np.flatnonzero(primary):
        up, down = float(upper[i]), float(min(lower[i], values[i]))
        if up <= 0 and down <= 0:
            up = 1.0  # no level asked: at least one unit of doubt
        if up > 0:
            directions.append((int(i), up))
        if down > 0:
            directions.append((int(i), -down))
    n_dir = len(directions)
    if n_dir * n > MAX_OPTIMAL_SIZE:
        raise ParameterError(
            f"the optimal model would have {n_dir} x {n} deviation variables (more than "
            f"{MAX_OPTIMAL_SIZE}); use method='modular' or 'hypercube'"
        )
    if n_dir == 0:
        return np.zeros(n, dtype=bool)
    big_m = float(values.max() + max(abs(level) for _, level in directions))
    eye = sparse.identity(n, format="csr")
    blocks = []
    row_lo, row_hi = [], []
    for t in range(n_dir):
        left = sparse.csr_matrix((n, n * t))
        right = sparse.csr_matrix((n, n * (n_dir - t - 1)))
        # y - M z <= 0 ; y + a z >= 0
        blocks.append(sparse.hstack([-big_m * eye, left, eye, right]))
        row_lo.append(np.full(n, -np.inf))
        row_hi.append(np.zeros(n))
        blocks.append(sparse.hstack([sparse.diags(values), left, eye, right]))
        row_lo.append(np.zeros(n))
        row_hi.append(np.full(n, np.inf))
        if m:
            blocks.append(
                sparse.hstack(
                    [
                        sparse.csr_matrix((m, n)),
                        sparse.csr_matrix((m, n * t)),
                        matrix,
                        sparse.csr_matrix((m, n * (n_dir - t - 1))),
                    ]
                )
            )
            row_lo.append(np.zeros(m))
            row_hi.append(np.zeros(m))
    full = sparse.vstack(blocks, format="csc")
    z_lo = np.where(primary, 1.0, 0.0)
    z_hi = np.ones(n) if published is None else np.where(published & ~primary, 0.0, 1.0)
    y_lo = np.tile(-values, n_dir)
    y_hi = np.full(n * n_dir, big_m)
    for t, (cell, level) in enumerate(directions):
        y_lo[t * n + cell] = level
        y_hi[t * n + cell] = level
    cost = np.concatenate([weights, np.zeros(n * n_dir)])
    integer = np.concatenate([np.ones(n), np.zeros(n * n_dir)]) > 0
    var_lo, var_hi = np.concatenate([z_lo, y_lo]), np.concatenate([z_hi, y_hi])
    start = None if cubes is None else _cube_start(cubes, directions, n, var_lo, var_hi)
    x, _status = solve_highs(
        cost,
        full,
        np.concatenate(row_lo),
        np.concatenate(row_hi),
        var_lo,
        var_hi,
        integer,
        time_limit,
        info,
        start=start,
    )
    if x is None:
        return None
    return np.round(x[:n]) > 0.5


def _cube_start(
    cubes: Mapping[Any, tuple[np.ndarray, np.ndarray]],
    directions: list[tuple[int, float]],
    n: int,
    var_lo: np.ndarray,
    var_hi: np.ndarray,
) -> np.ndarray | None:
    """The optimal model's variables ``(z, y)`` for the pattern the hypercubes span, or None.

    Direction ``(i, level)``'s deviation is ``level`` times the signs of
    ``i``'s hypercube (``+level`` on ``i``): it keeps every relation. None
    when a primary cell has no hypercube or the point leaves a bound (a
    hypercube through a cell the model keeps published, or a level its
    corners cannot carry); the big-M rows then hold, since ``|y_j| <=
    level`` and ``M`` exceeds every level.
    """
    x = np.zeros(n * (len(directions) + 1))
    for t, (cell, level) in enumerate(directions):
        key = (cell, 1 if level > 0 else -1)
        if key in cubes:
            positions, signs = cubes[key]
        elif cell in cubes:
            positions, signs = cubes[cell]
        else:
            return None
        x[positions] = 1.0
        np.add.at(x, n * (t + 1) + positions, level * np.asarray(signs, dtype=np.float64))
    x[:n] = np.maximum(x[:n], var_lo[:n])
    if (x < var_lo - 1e-9).any() or (x > var_hi + 1e-9).any():
        return None
    return x


# --- the hypercube heuristic -------------------------------------------------------


def _parents(structure: TableStructure, axis: int) -> np.ndarray:
    parent = np.full(len(structure.categories[axis]), -1, dtype=np.int64)
    for p, kids in enumerate(structure.children[axis]):
        parent[list(kids)] = p
    return parent


def _down_chains(children: tuple, node: int, limit: int) -> list[list[int]]:
    """Paths from ``node`` (excluded) down to a leaf, at most ``limit``."""
    if not children[node]:
        return [[]]
    chains: list[list[int]] = []
    for child in children[node]:
        for rest in _down_chains(children, child, limit):
            chains.append([child, *rest])
            if len(chains) >= limit:
                return chains
    return chains


def _moves(structure: TableStructure, axis: int, cat: int, limit: int) -> list[list[tuple]]:
    """One-dimensional moves through ``cat``: (category, sign) lists keeping every relation of ``axis``.

    ``cat`` and a chain to a leaf below it move by +1; then either a sibling
    of ``cat`` or of one of its ancestors moves by -1 (with a chain below it,
    and the ancestors in between by +1), or every ancestor moves by +1.
    """
    children = structure.children[axis]
    parent = _parents(structure, axis)
    ancestors = [cat]
    while parent[ancestors[-1]] >= 0:
        ancestors.append(int(parent[ancestors[-1]]))
    ups: list[list[tuple]] = []
    for level, node in enumerate(ancestors[:-1]):
        above = [(a, 1) for a in ancestors[1 : level + 1]]
        for sibling in children[parent[node]]:
            if sibling == node:
                continue
            for chain in _down_chains(children, sibling, 2):
                ups.append(above + [(sibling, -1)] + [(c, -1) for c in chain])
        if level == 0:
            ups.append([(a, 1) for a in ancestors[1:]])
    if len(ancestors) == 1:
        ups.append([])
    moves = []
    for down in _down_chains(children, cat, 3):
        for up in ups:
            moves.append([(cat, 1)] + [(c, 1) for c in down] + up)
            if len(moves) >= limit:
                return moves
    return moves


def _padded(moves: list[list[tuple]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(mv) for mv in moves)
    idx = np.zeros((len(moves), width), dtype=np.int64)
    sign = np.zeros((len(moves), width), dtype=np.int64)
    for k, mv in enumerate(moves):
        idx[k, : len(mv)] = [c for c, _ in mv]
        sign[k, : len(mv)] = [s for _, s in mv]
    return idx, sign


@dataclass(frozen=True)
class Protection:
    """What a pattern must achieve, per cell: value, primary flag, protection levels, cost."""

    values: np.ndarray
    primary: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    weights: np.ndarray


def hypercube_pattern(
    structure: TableStructure,
    problem: Protection,
    *,
    start: np.ndarray | None = None,
    chosen: list[tuple[np.ndarray, np.ndarray]] | None = None,
    owners: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Suppressed cells chosen hypercube by hypercube, and the primary cells no candidate protects.

    ``start``: cells already suppressed (a pattern to complete). ``chosen``:
    a list to which each hypercube taken is appended as (corner positions,
    signs): a direction that keeps every relation, which the audit verifies
    and uses as feasible tables (:func:`sdckit.tables.audit_suppression`,
    ``deviations``). ``owners``: a list to which the primary cell of each
    hypercube is appended, in the same order (its sign in the hypercube is +1).
    """
    values, primary, upper = problem.values, problem.primary, problem.upper
    lower, weights = problem.lower, problem.weights
    hidden = np.asarray(primary, dtype=bool) | (False if start is None else start)
    shape = structure.shape
    d = len(shape)
    strides = np.array([int(np.prod(shape[a + 1 :], dtype=np.int64)) for a in range(d)])
    coords = np.unravel_index(np.arange(structure.n_cells), shape)
    unprotected = []
    order = np.flatnonzero(primary)
    order = order[np.argsort(-(upper[order] + lower[order]), kind="stable")]
    cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for cell in order:
        up, down = float(upper[cell]), float(min(lower[cell], values[cell]))
        # every move starts with the cell itself (+1), so the hypercube holds each move's
        # corners on the cell's own line: a move whose line corners cannot move far enough
        # cannot be part of a protecting hypercube; the others are tried cheapest first
        ranked = []
        for axis in range(d):
            key = (axis, int(coords[axis][cell]))
            if key not in cache:
                cache[key] = _padded(_moves(structure, axis, key[1], 64))
            idx, sign = cache[key]
            line = cell + strides[axis] * (idx - key[1])
            a = values[line]
            fits = (np.where(sign < 0, a, np.inf).min(axis=1) >= up - 1e-9) & (
                np.where(sign > 0, a, np.inf).min(axis=1) >= down - 1e-9
            )
            price = np.where((sign != 0) & ~hidden[line], weights[line], 0.0).sum(axis=1)
            keep = np.flatnonzero(fits)
            keep = keep[np.argsort(price[keep], kind="stable")]
            ranked.append((idx[keep], sign[keep]))
        if any(len(i) == 0 for i, _ in ranked):
            unprotected.append(int(cell))
            continue
        limit = 64
        while True:
            per_axis = max(2, int(limit))
            options = [(i[:per_axis], s[:per_axis]) for i, s in ranked]
            size = np.prod([i.shape[0] * i.shape[1] for i, _ in options])
            if size <= HYPERCUBE_BUDGET or per_axis == 2:
                break
            limit = max(2, limit // 2)
        # corners of every combination: positions and signs, (combinations, corners)
        pos = np.zeros((1, 1), dtype=np.int64)
        sgn = np.ones((1, 1), dtype=np.int64)
        for axis, (idx, sign) in enumerate(options):
            k, width = idx.shape
            pos = (pos[:, None, :, None] + strides[axis] * idx[None, :, None, :]).reshape(
                pos.shape[0] * k, pos.shape[1] * width
            )
            sgn = (sgn[:, None, :, None] * sign[None, :, None, :]).reshape(pos.shape)
        a = values[pos]
        d_up = np.where(sgn < 0, a, np.inf).min(axis=1)
        d_down = np.where(sgn > 0, a, np.inf).min(axis=1)
        ok = (d_up >= up - 1e-9) & (d_down >= down - 1e-9) & (d_up + d_down > 0)
        if not ok.any():
            unprotected.append(int(cell))
            continue
        active = sgn != 0
        cost = np.where(active & ~hidden[pos], weights[pos], 0.0).sum(axis=1)
        cost = cost + 1e-9 * active.sum(axis=1)
        best = int(np.flatnonzero(ok)[np.argmin(cost[ok])])
        hidden[pos[best][active[best]]] = True
        if chosen is not None:
            chosen.append((pos[best][active[best]], sgn[best][active[best]]))
        if owners is not None:
            owners.append(int(cell))
    return hidden, np.array(unprotected, dtype=np.int64)


# --- the deviation repair -----------------------------------------------------------

#: Entries of a repair's deviation smaller than this are taken as zero.
DEVIATION_TOLERANCE = 1e-7
#: Cells of the first neighbourhood a deviation LP is tried on (then 8 times more, up to
#: the whole table).
DEVIATION_NEIGHBOURHOOD = 2_000


def deviation_pattern(
    relations: sparse.spmatrix,
    problem: Protection,
    hidden: np.ndarray,
    cells: np.ndarray,
    *,
    time_limit: float | None = None,
    owners: list[tuple[int, int]] | None = None,
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Complete ``hidden`` so that each of ``cells`` is protected, by one LP per direction.

    The attacker's model turned around: for a primary cell ``i`` and each
    direction asked, a deviation ``y`` of the whole table with ``R y = 0``,
    ``y_i = +upper_i`` (or ``-lower_i``) and ``y_j >= -a_j`` (no cell below
    zero), of least cost ``sum_j c_j |y_j|``, where ``c_j`` is 0 on a cell
    already suppressed and ``weight_j / level`` on a published one. Every
    cell ``y`` moves is then suppressed, so ``a + y`` is a table the attacker
    cannot exclude, and ``i``'s interval reaches ``a_i + upper_i`` (or
    ``a_i - lower_i``): the protection is proved by construction, with no
    hypercube needed (the weighted L1 objective is the LP relaxation of the
    per-cell problem of Fischetti & Salazar-González (2001), §3, with the
    other primary cells' constraints dropped). Such a ``y`` always exists:
    the cell and every aggregate above it move together. Cells are repaired
    one after the other, each using what the ones before suppressed. The LP
    is first built on the ``DEVIATION_NEIGHBOURHOOD`` cells nearest the cell
    (breadth first along the relations), ``y`` zero elsewhere, which still
    keeps every relation of the whole table; when no such ``y`` exists there,
    on 8 times more cells, up to the whole table (on the sparse 123,200-cell
    table of ``benchmarks/suppression.py`` one LP on the whole table did not
    finish within 20 s).

    Parameters
    ----------
    relations : sparse matrix
        The table's additive relations (``TableStructure.relations``).
    problem : Protection
        Values, protection levels and costs of every cell.
    hidden : ndarray of bool
        The pattern to complete (not modified).
    cells : ndarray of int
        Positions of the primary cells to protect.
    time_limit : float, optional
        Seconds (wall clock) per LP.
    owners : list, optional
        A list to which ``(cell, +1)`` or ``(cell, -1)`` is appended for each
        certificate, in the same order.

    Returns
    -------
    hidden : ndarray of bool
        The completed pattern.
    certificates : list of (positions, steps)
        Each deviation found, scaled to a unit step of its cell, for the
        audit (``deviations`` of :func:`sdckit.tables.audit_suppression`).
    failed : ndarray of int
        Cells an LP could not settle within ``time_limit`` (left to the audit).
    """
    values = np.asarray(problem.values, dtype=np.float64)
    n = len(values)
    hidden = np.asarray(hidden, dtype=bool).copy()
    certificates: list[tuple[np.ndarray, np.ndarray]] = []
    failed: list[int] = []
    if len(cells) == 0:
        return hidden, certificates, np.array([], dtype=np.int64)
    matrix = sparse.csr_matrix(relations)
    by_cell = matrix.tocsc()
    # the optimal model's bound on upward moves (a certificate then fits its start)
    big_m = float(values.max(initial=0.0) + max(problem.upper.max(initial=0.0), 1.0))
    for cell in np.asarray(cells, dtype=np.int64):
        up = float(problem.upper[cell])
        down = float(min(problem.lower[cell], values[cell]))
        if up <= 0 and down <= 0:
            up = 1.0  # no level asked: at least one unit of doubt
        for level, sign in ((up, 1), (down, -1)):
            if level <= 0:
                continue
            unit = np.where(hidden, 0.0, problem.weights / level)
            size = DEVIATION_NEIGHBOURHOOD
            while True:
                # a change on the cells near the cell only (zero elsewhere) that keeps every
                # relation is a change of the whole table: try small neighbourhoods first
                near = (
                    relation_neighbourhood(matrix, by_cell, int(cell), n, size)
                    if size < n
                    else np.arange(n)
                )
                y, status = _deviation(
                    by_cell[:, near], near, int(cell), sign * level, unit, values, big_m, time_limit
                )
                if status != "infeasible" or size >= n:
                    break
                size *= 8
            if y is None:
                failed.append(int(cell))
                continue
            y[np.abs(y) < DEVIATION_TOLERANCE] = 0.0
            keep = np.flatnonzero(y)
            moved = near[keep]
            hidden[moved] = True
            certificates.append((moved, y[keep] / (sign * level)))
            if owners is not None:
                owners.append((int(cell), sign))
    return hidden, certificates, np.unique(np.array(failed, dtype=np.int64))


def _deviation(
    columns: sparse.csc_matrix,
    near: np.ndarray,
    cell: int,
    step: float,
    unit: np.ndarray,
    values: np.ndarray,
    big_m: float,
    time_limit: float | None,
) -> tuple[np.ndarray | None, str]:
    """The cheapest change of the cells ``near`` moving ``cell`` by ``step`` (see :func:`deviation_pattern`).

    ``columns``: the relations' columns of ``near``; rows that touch none of
    them are dropped. Returns the change on ``near`` (None when there is
    none) and ``"optimal"``, ``"infeasible"`` or HiGHS's status otherwise.
    """
    rows = np.unique(columns.indices)
    sub = sparse.csr_matrix(columns)[rows]
    k = len(near)
    # variables: y+ (k), y- (k); sub (y+ - y-) = 0
    full = sparse.hstack([sub, -sub], format="csc")
    var_lo = np.zeros(2 * k)
    var_hi = np.concatenate([np.full(k, big_m), values[near]])
    at = int(np.searchsorted(near, cell))
    if step > 0:
        var_lo[at] = var_hi[at] = step
        var_hi[k + at] = 0.0
    else:
        var_lo[k + at] = var_hi[k + at] = -step
        var_hi[at] = 0.0
    cost = np.concatenate([unit[near], unit[near]])
    zeros = np.zeros(len(rows))
    h = load_highs((cost, full, zeros, zeros, var_lo, var_hi, None), time_limit)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None, "infeasible"
    if status != highspy.HighsModelStatus.kOptimal:
        return None, h.modelStatusToString(status)
    x = np.asarray(h.getSolution().col_value)
    return x[:k] - x[k:], "optimal"


def start_moves(
    structure: TableStructure,
    problem: Protection,
    *,
    time_limit: float | None = None,
) -> tuple[np.ndarray, dict[Any, tuple[np.ndarray, np.ndarray]]]:
    """A protected pattern and a protecting change per primary cell: the optimal model's start.

    The hypercubes (:func:`hypercube_pattern`) first, then a deviation LP
    (:func:`deviation_pattern`) for each primary cell no hypercube protects.
    Returns the pattern and the changes, keyed as ``cubes`` of
    :func:`optimal_pattern` takes them (complete only when no LP stopped at
    ``time_limit``).
    """
    chosen: list[tuple[np.ndarray, np.ndarray]] = []
    owners: list[int] = []
    hidden, missed = hypercube_pattern(structure, problem, chosen=chosen, owners=owners)
    moves: dict[Any, tuple[np.ndarray, np.ndarray]] = dict(zip(owners, chosen, strict=True))
    if len(missed):
        relations, _ = structure.relations()
        which: list[tuple[int, int]] = []
        hidden, certificates, _ = deviation_pattern(
            relations, problem, hidden, missed, time_limit=time_limit, owners=which
        )
        moves.update(zip(which, certificates, strict=True))
    return hidden, moves


# --- the modular approach ----------------------------------------------------------


def _subtables(structure: TableStructure) -> list[tuple[int, ...]]:
    """Parent categories (one per dimension) of every sub-table, top-down."""
    depth = []
    parents_per_axis = []
    for axis in range(len(structure.dims)):
        parent = _parents(structure, axis)
        levels = np.zeros(len(parent), dtype=np.int64)
        for c in range(len(parent)):
            p = parent[c]
            while p >= 0:
                levels[c] += 1
                p = parent[p]
        depth.append(levels)
        parents_per_axis.append([c for c, kids in enumerate(structure.children[axis]) if kids])
    nodes = list(itertools.product(*parents_per_axis))
    nodes.sort(key=lambda g: sum(int(depth[a][c]) for a, c in enumerate(g)))
    return nodes


def _subtable(
    structure: TableStructure, node: tuple[int, ...]
) -> tuple[TableStructure, np.ndarray]:
    """The non-hierarchical sub-table under ``node`` and its cells' global positions."""
    categories, kids, members = [], [], []
    for axis, g in enumerate(node):
        children = list(structure.children[axis][g])
        members.append([*children, g])
        categories.append(tuple(structure.categories[axis][c] for c in members[-1]))
        kids.append(tuple([()] * len(children) + [tuple(range(len(children)))]))
    local = TableStructure(
        structure.dims,
        tuple(categories),
        tuple(len(m) - 1 for m in members),
        tuple(kids),
        structure.total_label,
    )
    grid = np.ix_(*[np.asarray(m) for m in members])
    positions = np.ravel_multi_index(tuple(np.broadcast_arrays(*grid)), structure.shape).ravel()
    return local, positions


def _directions(upper: np.ndarray, lower: np.ndarray, values: np.ndarray) -> int:
    """Number of protection directions of the optimal model (one per side asked, at least one)."""
    return int(np.maximum((upper > 0) + (np.minimum(lower, values) > 0), 1).sum())


def _subtable_pattern(
    local: TableStructure,
    cells: np.ndarray,
    problem: Protection,
    must: np.ndarray,
    kept: np.ndarray,
    time_limit: float | None,
    counts: dict[str, int],
) -> np.ndarray:
    """One sub-table's pattern: the optimal model when small enough, else hypercubes.

    The optimal model (:func:`optimal_pattern`) is built when its directions x
    cells stay within ``MODULAR_OPTIMAL_SIZE`` and kept only when it finds a
    pattern within ``time_limit``; otherwise the hypercube heuristic
    (:func:`hypercube_pattern`) runs on the sub-table, with the cells already
    published (``kept``) priced so high that it uses them only when nothing else
    protects a cell. ``counts`` tallies ``optimal``, ``hypercube`` and
    ``relaxed`` (sub-tables where published cells had to be suppressed).
    """
    values, weights = problem.values[cells], problem.weights[cells]
    up, low = problem.upper[cells], problem.lower[cells]
    penalty = float(weights.sum()) + 1.0
    priced = Protection(values, must, up, low, np.where(kept, weights + penalty, weights))
    if _directions(up[must], low[must], values[must]) * len(cells) > MODULAR_OPTIMAL_SIZE:
        # too large for the optimal model: the hypercubes alone (a cell none protects is left
        # to the audit of the whole table and its repair)
        counts["hypercube"] += 1
        fallback, _ = hypercube_pattern(local, priced)
        counts["relaxed"] += int((fallback & kept).any())
        return fallback
    # the hypercubes first (milliseconds), completed by deviation LPs: the optimal model
    # starts from their pattern, so a search the time limit stops returns nothing dearer
    fallback, cubes = start_moves(local, priced, time_limit=time_limit)
    relations, _ = local.relations()
    # when the cells published by the sub-tables above leave no protection here, they
    # are released in this sub-table (the audit of the whole table judges the result)
    for fixed in (kept, None):
        try:
            pattern = optimal_pattern(
                relations,
                values,
                must,
                up,
                low,
                weights,
                published=fixed,
                time_limit=time_limit,
                cubes=cubes,
            )
        except NoTableInTime:
            break
        if pattern is not None:
            counts["optimal"] += 1
            return pattern
        counts["relaxed"] += 1
    counts["hypercube"] += 1
    counts["relaxed"] += int((fallback & kept).any())
    return fallback


def modular_pattern(
    structure: TableStructure, problem: Protection, *, time_limit: float | None = None
) -> tuple[np.ndarray, dict]:
    """HiTaS: sub-tables top-down (:func:`_subtable_pattern`), decided cells kept."""
    values, primary = problem.values, problem.primary
    upper, lower = problem.upper, problem.lower
    n = structure.n_cells
    hidden = np.asarray(primary, dtype=bool).copy()
    decided = np.zeros(n, dtype=bool)
    up = np.asarray(upper, dtype=np.float64).copy()
    low = np.asarray(lower, dtype=np.float64).copy()
    levels = Protection(values, primary, up, low, problem.weights)
    nodes = _subtables(structure)
    counts = {"optimal": 0, "hypercube": 0, "relaxed": 0}
    for node in nodes:
        local, cells = _subtable(structure, node)
        must = hidden[cells]
        if not must.any():
            decided[cells] = True
            continue
        kept = decided[cells] & ~must
        pattern = _subtable_pattern(local, cells, levels, must, kept, time_limit, counts)
        new = cells[pattern & ~must]
        if len(new):
            # a margin suppressed here is protected again in the sub-table below it
            level = float(np.max(np.maximum(up[cells][must], low[cells][must])))
            up[new] = np.maximum(up[new], level)
            low[new] = np.maximum(low[new], np.minimum(level, values[new]))
        hidden[cells[pattern]] = True
        decided[cells] = True
    return hidden, {
        "subtables": len(nodes),
        "relaxed_subtables": counts["relaxed"],
        "hypercube_subtables": counts["hypercube"],
    }


def exhaustive_cost(structure: TableStructure, problem: Protection) -> float:
    """The optimum by enumeration: every set of non-primary cells, cheapest first by size.

    Each candidate is checked by the attacker's LP (:func:`protection_met`); for tables of
    a dozen cells, to validate the other methods against a known optimum.
    """
    relations, _ = structure.relations()
    others = np.flatnonzero(~problem.primary)
    if len(others) > 16:
        raise ParameterError(
            f"exhaustive search over {len(others)} cells is too large (16 at most)"
        )
    best = np.inf
    for size in range(len(others) + 1):
        for chosen in itertools.combinations(others, size):
            cost = float(problem.weights[list(chosen)].sum())
            if cost >= best:
                continue
            hidden = problem.primary.copy()
            hidden[list(chosen)] = True
            if protection_met(
                relations, problem.values, hidden, problem.primary, problem.upper, problem.lower
            ):
                best = cost
    return best


# --- the entry point ---------------------------------------------------------------


def check_options(
    method: str, methods: Sequence[str], cost: str, time_limit: float | None
) -> float | None:
    """Refuse an unknown ``method`` or ``cost``; return ``time_limit`` checked."""
    if method not in methods:
        raise ParameterError(f"method must be one of {list(methods)}, got {method!r}")
    if cost not in ("value", "count"):
        raise ParameterError(f"cost must be 'value' or 'count', got {cost!r}")
    return None if time_limit is None else check_positive(time_limit, "time_limit")


def flag_primary(
    frame: pd.DataFrame, structure: TableStructure, rules: Sequence[str | PrimaryRule] | None
) -> pd.DataFrame:
    """The table with its primary cells: ``rules`` applied, or its own ``primary`` column."""
    if rules:
        frame = frame.copy()
        frame.attrs["structure"] = structure
        return primary_suppression(frame, rules=rules)
    if "primary" not in frame.columns:
        raise DataError(
            "table has no 'primary' column: give rules (e.g. ['freq>=3']) or the output of "
            "primary_suppression"
        )
    return frame


def primary_levels(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: primary (bool), upper and lower protection (0 where not given)."""
    levels = [
        pd.to_numeric(frame[c], errors="coerce").fillna(0.0).to_numpy(np.float64)
        if c in frame.columns
        else np.zeros(len(frame))
        for c in ("upper_protection", "lower_protection")
    ]
    return frame["primary"].fillna(False).astype(bool).to_numpy(), levels[0], levels[1]


def pattern_frames(
    frame: pd.DataFrame,
    structure: TableStructure,
    value: str,
    primary: np.ndarray,
    hidden: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The internal table (``status``, ``suppressed``, ``published``) and the release.

    ``primary`` and ``hidden`` are per cell of ``structure``; the release holds
    the dimensions, ``published`` (missing where suppressed) and
    ``suppressed``, and never says which suppressed cells are primary.
    """
    positions = structure.cell_positions(frame)
    status = np.where(primary, "primary", np.where(hidden, "secondary", "published"))
    internal = frame.copy()
    internal["status"] = status[positions]
    internal["suppressed"] = hidden[positions]
    shown = frame[value]
    if pd.api.types.is_integer_dtype(shown):
        published = pd.array(shown.to_numpy(), dtype="Int64")
    else:
        published = pd.array(shown.to_numpy(np.float64), dtype="Float64")
    published[hidden[positions]] = pd.NA
    internal["published"] = published
    internal.attrs["structure"] = structure
    release = release_frame(internal)[[*structure.dims, "published", "suppressed"]]
    release.attrs["structure"] = structure
    return internal, release


def suppress(
    table: pd.DataFrame,
    *,
    method: str = "hypercube",
    rules: Sequence[str | PrimaryRule] | None = None,
    value: str | None = None,
    dims: Sequence[str] | None = None,
    structure: TableStructure | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
    cost: str = "value",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    audit: bool = True,
    audit_time_limit: float | None = None,
) -> SuppressionResult:
    """Primary and secondary cell suppression of a table, audited by the attacker's LP.

    Hundepool et al. (2012), §4.3; the methods are described in the module
    docstring (:mod:`sdckit.tables.suppression`).

    Parameters
    ----------
    table : DataFrame
        A table with its primary cells: the output of
        :func:`sdckit.tables.primary_suppression` (``primary``,
        ``upper_protection``, ``lower_protection``), or a count table
        (``tabulate``'s output) together with ``rules``. Never modified.
    method : {"hypercube", "optimal", "modular"}
        See the module docstring for what each guarantees.
    rules : list of str, optional
        Frequency rules to apply first to a count table (``["freq>=3"]``).
    value : str, optional
        The column of cell values: default ``true_sum`` when present, else
        ``count``.
    dims, structure, hierarchies, total_label
        How the table's structure is found when it carries none, as in
        :func:`sdckit.tables.audit_suppression`.
    cost : {"value", "count"}
        What the secondary cells cost: ``"value"`` their value plus one (so
        that empty cells are not free), ``"count"`` one per cell.
    time_limit : float or None, default 60
        Seconds (wall clock) per HiGHS run (the optimal model, each sub-table
        of the modular method, each deviation LP); the best pattern found is
        kept with its gap (``stats["mip_gap"]``, in the summary). The optimal
        model starts from a protected pattern (:func:`start_moves`: the
        hypercubes, completed by deviation LPs), so a stopped search returns
        nothing dearer than it. None: no limit (a table of a few hundred cells
        can then take minutes).
    audit : bool, default True
        Run :func:`sdckit.tables.audit_suppression` on the result.
    audit_time_limit : float, optional
        Seconds (wall clock) for each audit's LPs (``time_limit`` of
        :func:`sdckit.tables.audit_suppression`): a cell the audit cannot
        settle in time counts as exposed (``"not settled"``), never as
        protected. Default: no limit.

    Returns
    -------
    SuppressionResult
        The release, the internal table with each cell's status, the audit.
    """
    frame = check_dataframe(table, "table")
    time_limit = check_options(method, METHODS, cost, time_limit)
    if audit_time_limit is not None:
        audit_time_limit = check_positive(audit_time_limit, "audit_time_limit")
    structure = resolve_structure(frame, structure, dims, hierarchies, total_label)
    frame = flag_primary(frame, structure, rules)
    if value is None:
        value = "true_sum" if "true_sum" in frame.columns else "count"
    if value not in frame.columns:
        raise DataError(f"table has no column {value!r}")
    positions = structure.cell_positions(frame)
    if len(positions) != structure.n_cells:
        raise DataError(
            f"table lacks {structure.n_cells - len(positions)} of its structure's cells; every "
            "cell (margins included) is needed"
        )
    n = structure.n_cells
    values = np.zeros(n)
    values[positions] = pd.to_numeric(frame[value], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(values).all() or (values < 0).any():
        raise DataError(f"table column {value!r} must hold non-negative numbers in every cell")
    primary = np.zeros(n, dtype=bool)
    upper = np.zeros(n)
    lower = np.zeros(n)
    primary[positions], upper[positions], lower[positions] = primary_levels(frame)
    lower = np.minimum(lower, values)
    weights = values + 1.0 if cost == "value" else np.ones(n)
    problem = Protection(values, primary, upper, lower, weights)
    start = time.perf_counter()
    extra: dict[str, Any] = {}
    unprotected = np.array([], dtype=np.int64)
    cubes: list[tuple[np.ndarray, np.ndarray]] = []
    by_lp: list[int] = []

    def lp_repair(hidden: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """``hidden`` completed by :func:`deviation_pattern` for ``cells``; certificates kept."""
        relations, _ = structure.relations()
        hidden, certificates, failed = deviation_pattern(
            relations, problem, hidden, cells, time_limit=time_limit
        )
        cubes.extend(certificates)
        by_lp.extend(int(c) for c in np.setdiff1d(cells, failed))
        return hidden

    if method == "hypercube":
        hidden, unprotected = hypercube_pattern(structure, problem, chosen=cubes)
        if not audit:
            # no audit to say which of them the other cells' hypercubes protect (most, as a
            # rule): each primary cell no candidate hypercube protects gets its deviation LP
            hidden = lp_repair(hidden, unprotected)
    elif method == "optimal":
        relations, _ = structure.relations()
        # the hypercubes and deviation LPs first: HiGHS starts from their pattern
        _, moves = start_moves(structure, problem, time_limit=time_limit)
        # each is a feasible direction for the audit too where the pattern holds it (the audit
        # checks every one and ignores the others)
        cubes.extend(moves.values())
        try:
            found = optimal_pattern(
                relations,
                values,
                primary,
                upper,
                lower,
                weights,
                time_limit=time_limit,
                info=extra,
                cubes=moves,
            )
        except NoTableInTime:
            raise InfeasibleError(
                "the optimal model found no pattern within time_limit; raise it or use "
                "method='modular' or 'hypercube'"
            ) from None
        if found is None:
            raise InfeasibleError("no suppression pattern protects every primary cell")
        hidden = found
    else:
        hidden, extra = modular_pattern(structure, problem, time_limit=time_limit)
    seconds = time.perf_counter() - start
    internal, release = pattern_frames(frame, structure, value, primary, hidden)
    report = None
    repaired = 0
    if audit:

        def audited(table: pd.DataFrame) -> AuditResult:
            return audit_suppression(
                table,
                structure=structure,
                value=value,
                intervals="settle",
                deviations=cubes,
                time_limit=audit_time_limit,
            )

        report = audited(internal)
        exposed = np.zeros(n, dtype=bool)
        exposed[structure.cell_positions(report.exposed)] = True
        exposed &= primary
        if exposed.any():
            # HiTaS protects each sub-table, not their combination; the hypercube method leaves
            # cells no candidate hypercube protects; a time limit can stop the optimal model:
            # each exposed cell gets a hypercube of the whole table (modular), and the cells
            # no hypercube protects their deviation LP, whose protection is proved by
            # construction
            missed = np.flatnonzero(exposed)
            if method == "modular":
                hidden, missed = hypercube_pattern(
                    structure,
                    Protection(values, exposed, upper, lower, weights),
                    start=hidden,
                    chosen=cubes,
                )
            hidden = lp_repair(hidden, missed)
            repaired = int(exposed.sum())
            internal, release = pattern_frames(frame, structure, value, primary, hidden)
            report = audited(internal)
    stats = {
        "cells": n,
        "primary": int(primary.sum()),
        "secondary": int((hidden & ~primary).sum()),
        "suppressed_value": float(values[hidden].sum()),
        "seconds": seconds,
        "exposed": None if report is None else report.stats["exposed"],
        "unsettled": None if report is None else report.stats["unsettled"],
        "no_hypercube": len(unprotected),
        "repaired": repaired,
        "lp_repaired": len(set(by_lp)),
        **{
            k: v
            for k, v in extra.items()
            if k
            in (
                "mip_gap",
                "objective",
                "dual_bound",
                "subtables",
                "relaxed_subtables",
                "hypercube_subtables",
            )
        },
    }
    params = {
        "method": method,
        "cost": cost,
        "value": value,
        "time_limit": time_limit,
        "audit_time_limit": audit_time_limit,
    }
    return SuppressionResult(release, internal, report, params, stats)
