"""Restoring additivity by controlled tabular adjustment (CTA) without small cells.

Giessing & Höhne (2011), Section 5, after Dandekar & Cox (2002) and
Castro (2006): find an integer table ``y`` that satisfies every additive
relation of the table exactly and minimises the weighted absolute deviation
``sum_c w_c |y_c - p_c|`` from the perturbed table ``p``, subject to per-cell
bounds ``|y_c - p_c| <= max_deviation``, zeros staying zero and no cell
landing on 1 or 2 (a cell is 0 or at least 3: one binary per cell whose
bounds reach 1 or 2). The problem is a mixed integer programme solved by
HiGHS through ``highspy``; with a time limit the best table found is
returned with its proven gap.

The paper's two-stage variant first restores additivity only (cells at 3
weighted up so they tend to stay), then runs a refinement in which the cells
that became 1 or 2 are "sensitive" with protection interval (0; 3), cells at 3
or more get the lower bound 3 and zero cells the upper bound 0: binaries are
needed only for the sensitive cells.

When no solution exists, an elastic version (each relation may be violated at
a high price) names the relations that cannot hold together with the bounds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import highspy
import numpy as np
import pandas as pd
from scipy import sparse

from sdckit._highs import NoTableInTime, Programme, load_highs, solve_highs
from sdckit._validation import check_dataframe, check_int, check_positive
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.release import CONFIDENTIAL_COLUMNS, TableRelease, release_frame
from sdckit.tables.tabulate import Hierarchy, TableStructure

__all__ = ["AdditivityResult", "restore_additivity"]

METHODS = ("two-stage", "joint", "elementary")
#: The finest aggregates (at most this many elementary cells) define the rings by
#: which the repair of a rounded LP table grows its neighbourhood.
REPAIR_RING_CELLS = 64
#: Most LPs of the dive; the cells still bad after them are rounded at once.
DIVE_LPS = 40
#: Cells freed by the first local repair run of an aggregate beyond its bounds ...
REPAIR_CELLS = 64
#: ... doubled at each later run for it, up to this many.
REPAIR_MAX_CELLS = 4096
#: Most local repair runs.
REPAIR_RUNS = 400
#: seconds of one repair run on ``REPAIR_CELLS`` cells, in proportion for larger areas: a
#: run is warm-started from the current table, so one stopped early still gives the best
#: table it found; uncapped, a run on the 27,378-cell benchmark table started from a
#: one-LP dive took about 4 s proving its optimum (session 12: in 20 s the repair brought
#: 614 aggregates beyond their bounds down to 416 uncapped, to 199 at 1 s per run). At
#: 1 s whatever the area, one aggregate of the adult table that needs 512 cells was
#: given up: the time grows with the area
REPAIR_SECONDS = 1.0
#: share of the time limit after which the dive fixes no more cells (its last LP rounded),
#: so that the repair has time on large tables, whose LPs take seconds each (session 12:
#: on the 27,378-cell benchmark table within 60 s the dive took 8-9 LPs either way, so
#: the gain there is small; the repair's cap, ``REPAIR_SECONDS``, is what counted)
DIVE_SHARE = 0.5
#: local search (:func:`_improve`): movable elementary cells per sub-cube, seconds per run,
#: share of the time left it may take before the whole model runs, runs without a gain
#: after which it stops when there is no time limit
LOCAL_CELLS = 600
LOCAL_SECONDS = 5.0
LOCAL_SHARE = 0.6
LOCAL_STALE = 25
#: HiGHS's ``mip_heuristic_effort`` in the whole model's run (its default is 0.05): the
#: share of its work on primal heuristics, which find the cheaper tables within a time
#: limit (session 12, adult 4-way table at 60 s, three perturbations: 1.040-1.047 times
#: the proven bound, against 1.039-1.061 at the default)
WHOLE_EFFORT = 0.3


@dataclass(frozen=True)
class AdditivityResult(TableRelease):
    """Result of :func:`restore_additivity`.

    Attributes
    ----------
    table : DataFrame
        What may be published: the input table without its confidential
        columns (true ``count``, ``cell_key``, ``noise``; see
        :mod:`sdckit.tables.release`) plus a ``restored`` column (int64).
    internal : DataFrame
        The input table with the ``restored`` column, confidential columns
        included. Never release it.
    params : mapping
    stats : mapping
        ``cells``, ``relations``, ``cells_changed``, ``max_abs_change``,
        ``mean_abs_change``, ``binaries`` (per stage), ``seconds`` (per
        stage), ``objective``, ``joint_fallback`` (True when the two-stage
        refinement was infeasible and the joint model was solved instead).
    """

    def summary(self) -> str:
        """Size of the problem and of the adjustment."""
        s = self.stats
        text = (
            f"additivity restored ({self.params['method']}): {s['cells']} cells, "
            f"{s['relations']} relations; {s['cells_changed']} cells adjusted, "
            f"max |change| {s['max_abs_change']}, mean |change| {s['mean_abs_change']:.3f}; "
            f"binaries {s['binaries']}, seconds {[round(t, 2) for t in s['seconds']]}"
        )
        if s.get("joint_fallback"):
            text += (
                "; the paper's second stage was infeasible (its bounds keep stage-1 zeros at 0 "
                "and cells of 3+ at 3+), so the joint model was solved"
            )
        if s.get("soft_bounds") and self.params["method"] == "elementary":
            text += (
                f"; {s['cells_beyond_max_deviation']} cells deviate by more than "
                f"max_deviation={self.params['max_deviation']}: no table within every bound was "
                "found in the time given (the best table found is returned; raise time_limit)"
            )
        elif s.get("soft_bounds"):
            text += (
                "; no table within the time limit under the hard bounds, so the bounds were made "
                f"soft (warm start: the rounded LP with re-aggregated margins): {s['cells_beyond_max_deviation']} "
                f"cells deviate by more than max_deviation={self.params['max_deviation']}"
            )
        if s.get("hidden_cells"):
            text += (
                f"; {s['hidden_cells']} suppressed cells stay hidden (unknowns between 0 and "
                f"{self.params['threshold'] - 1}, not published)"
            )
        parts = s.get("decomposition") or {}
        if "dive_lps" in parts:
            text += (
                f"; started from the LP relaxation (bound {parts['lp_bound']:.1f}) dived to a "
                f"whole table in {parts['dive_lps']} LPs, {parts['beyond_bounds_before_repair']} "
                "aggregates beyond their bounds then repaired locally"
            )
        if parts.get("subproblems"):
            text += (
                f"; decomposed: {parts['subproblems']} sub-tables in {parts['sweeps']} sweeps "
                f"({parts['beyond_bounds_after_sweeps']} cells beyond the bounds after them)"
            )
        if "local_runs" in parts:
            text += (
                f"; local search on sub-tables: {parts['local_gains']} of {parts['local_runs']} "
                f"runs found a cheaper table (cost {parts['cost_before_local_search']:.0f} -> "
                f"{parts['cost_after_local_search']:.0f})"
            )
        bound = parts.get("lower_bound")
        if bound:
            text += (
                f"; total deviation {s['objective']:.0f}, no table can have less than "
                f"{bound:.1f} ({s['objective'] / bound:.3f} times that lower bound)"
            )
        gap = (s.get("mip_gap") or [None])[-1]
        if gap is not None and gap > 1e-6:
            text += (
                f"; stopped at the time limit ({s['status'][-1]}): best table found, with a "
                f"relative gap of {gap:.1%} to the lower bound HiGHS proved"
            )
        return text


def solve_cta(
    p: np.ndarray,
    relations: sparse.csr_matrix,
    lower: np.ndarray,
    upper: np.ndarray,
    weights: np.ndarray,
    binary_cells: np.ndarray,
    time_limit: float | None,
    elastic: bool = False,
    relax: bool = False,
    info: dict | None = None,
) -> tuple[np.ndarray | None, str]:
    """min sum w |y - p|  s.t.  relations y = 0, lower <= y <= upper, y in {0} u [3, inf) on binary_cells.

    Solved by HiGHS through ``highspy`` (Huangfu & Hall 2018). With a time
    limit the best integer table found is returned, and ``info`` receives
    ``mip_gap`` (relative gap proven between it and the dual bound),
    ``dual_bound`` and ``objective``; ``relax=True`` solves the LP relaxation
    (the bound a benchmark compares with).
    """
    n = len(p)
    n_bin = len(binary_cells)
    n_rel = relations.shape[0]
    # variables: y (n, integer), t (n, >= |y - p|), z (n_bin, binary), [s+, s- per relation]
    n_slack = 2 * n_rel if elastic else 0
    eye = sparse.identity(n, format="csr")
    blocks = []
    lo, hi = [], []
    # t - y >= -p ; t + y >= p
    blocks.append(sparse.hstack([-eye, eye, sparse.csr_matrix((n, n_bin + n_slack))], format="csr"))
    lo.append(-p)
    hi.append(np.full(n, np.inf))
    blocks.append(sparse.hstack([eye, eye, sparse.csr_matrix((n, n_bin + n_slack))], format="csr"))
    lo.append(p)
    hi.append(np.full(n, np.inf))
    if n_rel:
        parts = [relations, sparse.csr_matrix((n_rel, n + n_bin))]
        if elastic:
            parts += [sparse.identity(n_rel), -sparse.identity(n_rel)]
        blocks.append(sparse.hstack(parts, format="csr"))
        lo.append(np.zeros(n_rel))
        hi.append(np.zeros(n_rel))
    if n_bin:
        sel = sparse.csr_matrix(
            (np.ones(n_bin), (np.arange(n_bin), binary_cells)), shape=(n_bin, n)
        )
        zero_t = sparse.csr_matrix((n_bin, n))
        ident = sparse.identity(n_bin, format="csr")
        pad = sparse.csr_matrix((n_bin, n_slack))
        # y - 3 z >= 0 ; y - upper z <= 0
        blocks.append(sparse.hstack([sel, zero_t, -3 * ident, pad], format="csr"))
        lo.append(np.zeros(n_bin))
        hi.append(np.full(n_bin, np.inf))
        blocks.append(
            sparse.hstack(
                [sel, zero_t, -sparse.diags(upper[binary_cells].astype(float)), pad], format="csr"
            )
        )
        lo.append(np.full(n_bin, -np.inf))
        hi.append(np.zeros(n_bin))
    matrix = sparse.vstack(blocks, format="csc")
    cost = np.concatenate(
        [np.zeros(n), weights, np.zeros(n_bin), np.full(n_slack, 1000.0 * (weights.sum() + 1))]
    )
    var_lo = np.concatenate([lower, np.zeros(n), np.zeros(n_bin), np.zeros(n_slack)])
    var_hi = np.concatenate([upper, np.full(n, np.inf), np.ones(n_bin), np.full(n_slack, np.inf)])
    integer = np.concatenate([np.ones(n), np.zeros(n), np.ones(n_bin), np.zeros(n_slack)]) > 0
    x, status = solve_highs(
        cost,
        matrix,
        np.concatenate(lo),
        np.concatenate(hi),
        var_lo,
        var_hi,
        None if relax else integer,
        time_limit,
        info,
        lp_solver="ipm" if relax else "choose",
    )
    if x is None:
        return None, status
    if elastic:
        slack = x[2 * n + n_bin :]
        return np.round(slack[:n_rel] + slack[n_rel:], 6), status
    if relax:
        return x[:n], status
    return np.round(x[:n]).astype(np.int64), status


def _solve_soft(
    p: np.ndarray,
    relations: sparse.csr_matrix,
    lower: np.ndarray,
    upper: np.ndarray,
    weights: np.ndarray,
    start: np.ndarray,
    max_deviation: int,
    time_limit: float | None,
    info: dict,
) -> np.ndarray:
    """CTA with the per-cell bounds made soft, warm-started from an additive table.

    ``start`` is additive and free of 1s and 2s (the rounded LP relaxation's
    inner cells with every margin re-aggregated), so HiGHS holds a table from the first
    second; the model then trades deviations ``w |y - p|`` against bound
    violations ``e`` (cost 100 times the largest weight per unit beyond
    ``max_deviation``), and the best table within the limit comes back.
    """
    n = len(p)
    fixed_zero = upper == 0
    binary = np.flatnonzero(~fixed_zero & ((lower <= 2) | (start < 3)))
    n_bin = len(binary)
    cap = np.maximum(upper, start) + 10.0 * max(max_deviation, 1)
    eye = sparse.identity(n, format="csr")
    zero = sparse.csr_matrix((n, n))
    nb0 = sparse.csr_matrix((n, n_bin))
    sel = sparse.csr_matrix((np.ones(n_bin), (np.arange(n_bin), binary)), shape=(n_bin, n))
    zb = sparse.csr_matrix((n_bin, n))
    ident = sparse.identity(n_bin, format="csr")
    # variables: y (n), t (n), e (n), z (n_bin)
    blocks = [
        sparse.hstack([-eye, eye, zero, nb0]),  # t - y >= -p
        sparse.hstack([eye, eye, zero, nb0]),  # t + y >= p
        sparse.hstack([eye, zero, -eye, nb0]),  # y - e <= upper
        sparse.hstack([eye, zero, eye, nb0]),  # y + e >= lower
        sparse.hstack([sel, zb, zb, -3 * ident]),  # y - 3 z >= 0
        sparse.hstack([sel, zb, zb, -sparse.diags(cap[binary])]),  # y - cap z <= 0
    ]
    lo = [-p, p, np.full(n, -np.inf), lower, np.zeros(n_bin), np.full(n_bin, -np.inf)]
    hi = [np.full(n, np.inf), np.full(n, np.inf), upper, np.full(n, np.inf)]
    hi += [np.full(n_bin, np.inf), np.zeros(n_bin)]
    if relations.shape[0]:
        n_rel = relations.shape[0]
        blocks.append(sparse.hstack([relations, sparse.csr_matrix((n_rel, 2 * n + n_bin))]))
        lo.append(np.zeros(n_rel))
        hi.append(np.zeros(n_rel))
    matrix = sparse.vstack(blocks, format="csc")
    penalty = 100.0 * float(weights.max())
    cost = np.concatenate([np.zeros(n), weights, np.full(n, penalty), np.zeros(n_bin)])
    y_lo = np.where(fixed_zero, 0.0, 3.0)
    y_lo[binary] = 0.0
    y_hi = np.where(fixed_zero, 0.0, cap)
    var_lo = np.concatenate([y_lo, np.zeros(2 * n), np.zeros(n_bin)])
    var_hi = np.concatenate([y_hi, np.full(2 * n, np.inf), np.ones(n_bin)])
    integer = np.concatenate([np.ones(n), np.zeros(2 * n), np.ones(n_bin)]) > 0
    warm = np.concatenate(
        [
            start,
            np.abs(start - p),
            np.maximum(start - upper, 0) + np.maximum(lower - start, 0),
            (start[binary] >= 3).astype(float),
        ]
    )
    x, _ = solve_highs(
        cost,
        matrix,
        np.concatenate(lo),
        np.concatenate(hi),
        var_lo,
        var_hi,
        integer,
        time_limit,
        info,
        start=warm,
    )
    if x is None:
        raise InfeasibleError("restore_additivity: the soft-bound model found no table")
    return np.round(x[:n]).astype(np.int64)


def _aggregation(structure: TableStructure) -> sparse.csr_matrix:
    """Every cell (C order) as a sum of elementary cells: the Kronecker product of the
    dimensions' aggregation matrices (cells x elementary cells, 0/1)."""
    matrix = sparse.csr_matrix(np.ones((1, 1)))
    for axis in range(len(structure.dims)):
        part = sparse.csr_matrix(structure.aggregation_matrix(axis).astype(np.float64))
        matrix = sparse.kron(matrix, part, format="csr")
    return matrix


@dataclass
class _Elementary:
    """The CTA problem on the elementary cells (see :func:`_solve_elementary`)."""

    structure: TableStructure
    p: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    weights: np.ndarray
    binary: np.ndarray  # bool per cell: 0 or at least 3

    @classmethod
    def of_perturbed(cls, table: pd.DataFrame, max_deviation: int = 3) -> _Elementary:
        """The problem of a producer's perturbed table (``cell_key_perturb(...).internal``).

        Unit weights, every cell within ``max_deviation`` of ``perturbed``, the
        true zeros (``count``) fixed, elementary cells 0 or at least 3: what
        :func:`restore_additivity` solves by default (used by the benchmark
        and the tests).
        """
        structure = table.attrs["structure"]
        positions = structure.cell_positions(table)
        p = np.zeros(structure.n_cells)
        p[positions] = table["perturbed"].to_numpy()
        truth = np.zeros(structure.n_cells)
        truth[positions] = table["count"].to_numpy()
        lower, upper = np.maximum(p - max_deviation, 0.0), p + max_deviation
        upper[truth == 0] = 0.0
        binary = structure.inner_mask() & (lower <= 2)
        return cls(structure, p, lower, upper, np.ones(len(p)), binary)

    def movable(self) -> np.ndarray:
        """The elementary cells whose bounds leave them a choice."""
        return self.inner[self.upper[self.inner] > self.lower[self.inner]]

    def __post_init__(self) -> None:
        self.inner = np.flatnonzero(self.structure.inner_mask())
        self.margins = np.flatnonzero(~self.structure.inner_mask())
        self.to_margins = _aggregation(self.structure)[self.margins].tocsc()
        self.centre = np.clip(self.p, self.lower, self.upper)
        self._definitions: sparse.csr_matrix | None = None

    @property
    def definitions(self) -> sparse.csr_matrix:
        """:func:`_definitions` of this problem, built once."""
        if self._definitions is None:
            self._definitions = _definitions(self)
        return self._definitions

    def table(self, elementary: np.ndarray) -> np.ndarray:
        """Every cell from the elementary cells' values (in inner order)."""
        leaf = np.round(elementary).reshape(self.structure.leaf_shape)
        return self.structure.aggregate(leaf).ravel()

    def cost(self, table: np.ndarray, penalty: float = 0.0) -> float:
        """Weighted deviation, plus ``penalty`` per unit beyond the bounds."""
        beyond = np.maximum(table - self.upper, 0) + np.maximum(self.lower - table, 0)
        return float(self.weights @ np.abs(table - self.p) + penalty * beyond.sum())


@dataclass
class _Model:
    """The programme of :func:`_solve_elementary`, as arrays for HiGHS.

    Variables: ``d+`` then ``d-`` of each free elementary cell and each touched
    aggregate (``n_dev`` each, the free cells first), the aggregates' soft
    parts when a penalty is given, then the binaries.
    """

    cost: np.ndarray
    matrix: sparse.csc_matrix
    row_lo: np.ndarray
    row_hi: np.ndarray
    var_lo: np.ndarray
    var_hi: np.ndarray
    integer: np.ndarray
    warm: np.ndarray | None
    free: np.ndarray
    free_cols: np.ndarray
    n_dev: int

    def arrays(self, relax: bool) -> Programme:
        """``cost, matrix, row_lo, row_hi, var_lo, var_hi, integer`` for :func:`solve_highs`
        (``integer`` None for the LP relaxation)."""
        integer = None if relax else self.integer
        return (self.cost, self.matrix, self.row_lo, self.row_hi, self.var_lo, self.var_hi, integer)

    def elementary(self, problem: _Elementary, current: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The elementary cells' values (inner order) of a solution ``x``; the others from ``current``."""
        n_free = len(self.free)
        elementary = current[problem.inner].astype(np.float64)
        c = problem.centre[self.free]
        elementary[self.free_cols] = c + x[:n_free] - x[self.n_dev : self.n_dev + n_free]
        return elementary


def _definitions(problem: _Elementary) -> sparse.csr_matrix:
    """One additive relation per aggregate, ``sum of its children - aggregate = 0``.

    Rows in the order of ``problem.margins``; the relation is the first the
    structure gives for the aggregate (its children along one dimension,
    elementary cells or finer aggregates). Together they determine every
    aggregate from the elementary cells, as the sums of :func:`_aggregation`
    do, with a few non-zeros per row instead of every elementary cell below.
    """
    relations, _ = problem.structure.relations()
    relations = relations.tocsr()
    parent = relations.indices[relations.data > 0]  # one +1 per relation, in row order
    first = np.unique(parent, return_index=True)[1]
    by_margin = np.searchsorted(parent[first], problem.margins)
    return -relations[first[by_margin]]


def _elementary_model(
    problem: _Elementary,
    current: np.ndarray,
    free: np.ndarray,
    penalty: float | None,
    relational: bool = False,
) -> _Model:
    """Build the programme :func:`_solve_elementary` solves.

    ``relational=True``: each aggregate's value is tied to its children by one
    relation (:func:`_definitions`) instead of to every elementary cell below
    it; the same programme, with a far sparser matrix (the interior point
    method's time on large tables is in its fill).
    """
    pr = problem
    free = free[pr.upper[free] > pr.lower[free]]
    in_free = np.zeros(pr.structure.n_cells, dtype=bool)
    in_free[free] = True
    free_cols = np.flatnonzero(in_free[pr.inner])
    a_free = pr.to_margins[:, free_cols].tocsr()
    touched = np.flatnonzero(np.diff(a_free.indptr) > 0)
    a_free = a_free[touched]
    margins = pr.margins[touched]
    fixed_sum = (pr.to_margins @ np.where(in_free[pr.inner], 0.0, current[pr.inner]))[touched]
    n_free, n_margin = len(free), len(margins)
    bin_cells = free[pr.binary[free] & (pr.upper[free] >= 3)]
    n_bin = len(bin_cells)
    slot = np.full(pr.structure.n_cells, -1)
    slot[free] = np.arange(n_free)
    cells = np.concatenate([free, margins])
    n_dev = len(cells)
    n_soft = n_margin if penalty is not None else 0
    pick = sparse.csr_matrix(
        (np.ones(n_bin), (np.arange(n_bin), slot[bin_cells])), shape=(n_bin, n_dev)
    )
    c = pr.centre
    if relational:
        # children minus aggregate = 0; a child outside the model holds its sum in current
        rows_of = pr.definitions[touched]
        value = pr.structure.aggregate(current[pr.inner].reshape(pr.structure.leaf_shape)).ravel()
        value[cells] = c[cells]
        rhs = -(rows_of @ value)
        by_var = rows_of[:, cells]
        margin_block = [by_var, -by_var]
        if n_soft:
            margin_block += [by_var[:, n_free:], -by_var[:, n_free:]]
    else:
        eye = sparse.identity(n_margin, format="csr")
        margin_block = [sparse.hstack([a_free, -eye]), sparse.hstack([-a_free, eye])]
        if n_soft:
            margin_block += [-eye, eye]
        rhs = c[margins] - a_free @ c[free] - fixed_sum
    margin_block.append(sparse.csr_matrix((n_margin, n_bin)))
    zeros_soft = sparse.csr_matrix((n_bin, 2 * n_soft))
    rows = [
        # sum of the elementary cells (free + fixed) minus the margin's value = 0
        sparse.hstack(margin_block),
        sparse.hstack([pick, -pick, zeros_soft, -3.0 * sparse.identity(n_bin)]),
        sparse.hstack([pick, -pick, zeros_soft, -sparse.diags(pr.upper[bin_cells])]),
    ]
    row_lo = np.concatenate([rhs, -c[bin_cells], np.full(n_bin, -np.inf)])
    row_hi = np.concatenate([rhs, np.full(n_bin, np.inf), -c[bin_cells]])
    w = pr.weights[cells]
    soft_cost = np.full(n_soft, (penalty or 0.0)) + pr.weights[margins][:n_soft]
    cost = np.concatenate([w, w, soft_cost, soft_cost, np.zeros(n_bin)])
    var_lo = np.zeros(len(cost))
    var_hi = np.concatenate(
        [
            pr.upper[cells] - c[cells],
            c[cells] - pr.lower[cells],
            np.full(n_soft, np.inf),
            pr.lower[margins][:n_soft],
            np.ones(n_bin),
        ]
    )
    integer = np.zeros(len(cost), dtype=bool)
    integer[:n_free] = True
    integer[n_dev : n_dev + n_free] = True
    integer[2 * n_dev + 2 * n_soft :] = True
    # warm start: the current table
    move = current[cells] - c[cells]
    inside = np.clip(move, -(c[cells] - pr.lower[cells]), pr.upper[cells] - c[cells])
    warm = [np.maximum(inside, 0.0), np.maximum(-inside, 0.0)]
    if n_soft:
        outside = (move - inside)[n_free:]
        warm += [np.maximum(outside, 0.0), np.maximum(-outside, 0.0)]
    warm.append((current[bin_cells] >= 3).astype(float))
    feasible_start = n_soft > 0 or np.array_equal(inside, move)
    return _Model(
        cost,
        sparse.vstack(rows, format="csc"),
        row_lo,
        row_hi,
        var_lo,
        var_hi,
        integer,
        np.concatenate(warm) if feasible_start else None,
        free,
        free_cols,
        n_dev,
    )


def _solve_elementary(
    problem: _Elementary,
    current: np.ndarray,
    free: np.ndarray,
    time_limit: float | None,
    info: dict,
    penalty: float | None = None,
    relax: bool = False,
    fractional: bool = False,
    options: dict[str, float] | None = None,
) -> np.ndarray | None:
    """CTA on the elementary cells: the margins are sums, not unknowns.

    The unknowns are the elementary cells ``free`` (positions among the
    table's cells); the others keep their value in ``current`` (a full
    table; ``relax=True``: the LP relaxation, whose optimum ``info["objective"]``
    bounds every table's cost from below). Every margin and hierarchy level is ``A x`` (``A`` the Kronecker
    product of the dimensions' aggregation matrices), so the additive
    relations hold by construction and an aggregate only has to stay within
    its bounds; with ``penalty`` it may leave them at that price per unit.
    Deviations are split, ``y = c + d+ - d-`` around ``c = clip(p, lower,
    upper)``: integer for the elementary cells, continuous (integral anyway)
    for the aggregates. With no equation between integer unknowns left,
    HiGHS's rounding heuristics find integer tables that the relational model
    (one equation per relation) leaves it without. An elementary cell marked
    ``binary`` is 0 or at least 3 (``y >= 3 z``, ``y <= upper z``); an
    aggregate of such cells is then 0 or at least 3 too and needs no binary.
    ``current`` restricted to ``free`` is the warm start. Returns the full
    table, or None when HiGHS proves the model infeasible; ``fractional=True``
    returns the elementary cells' values (inner order) unrounded instead, as
    the LP relaxation leaves them.
    """
    model = _elementary_model(problem, current, free, penalty)
    x, _ = solve_highs(
        *model.arrays(relax),
        time_limit,
        info,
        start=None if relax else model.warm,
        lp_solver="ipm" if relax else "choose",
        options=options,
    )
    if x is None:
        return None
    elementary = model.elementary(problem, current, x)
    return elementary if fractional else problem.table(elementary)


def _blocks(problem: _Elementary, free: np.ndarray, axes: tuple[int, ...]) -> list[np.ndarray]:
    """Sub-tables of the elementary table: its free cells that share their coordinates on
    every dimension but ``axes`` (a two-way sub-table of each combination of the others)."""
    coords = np.unravel_index(free, problem.structure.shape)
    others = [coords[a] for a in range(len(coords)) if a not in axes]
    if not others:
        return [free]
    key = np.ravel_multi_index(
        others, [problem.structure.n_leaves[a] for a in range(len(coords)) if a not in axes]
    )
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    return [free[part] for part in np.split(order, bounds)]


def _round_values(problem: _Elementary, cells: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whole values for elementary ``cells`` near ``values``, free of 1s and 2s where required.

    Each cell goes to its nearest whole value within its bounds; a cell that
    must be 0 or at least 3 and lands on 1 or 2 goes to 0 or 3, whichever is
    nearer to ``values`` and within its bounds (0 when neither is: such a
    cell has ``lower = 0``).
    """
    pr = problem
    lo, hi = pr.lower[cells], pr.upper[cells]
    x = np.clip(np.round(values), lo, hi)
    small = pr.binary[cells] & (x > 0) & (x < 3)
    up = small & (hi >= 3) & ((values >= 1.5) | (lo > 0))
    return np.where(small, np.where(up, 3.0, 0.0), x)


def _round_start(problem: _Elementary, elementary: np.ndarray) -> np.ndarray:
    """Elementary cells (inner order) rounded by :func:`_round_values`, every aggregate re-summed.

    The table is additive and free of 1s and 2s; only aggregates may leave
    their bounds (by the rounding errors of their cells).
    """
    return problem.table(_round_values(problem, problem.inner, elementary))


def _dive(
    problem: _Elementary,
    free: np.ndarray,
    deadline: float | None,
    runs: list[dict],
    report: dict,
    stop_fixing: float | None = None,
) -> np.ndarray | None:
    """The LP relaxation, then its fractional cells and cells on 1 or 2 fixed, until none is left.

    A diving heuristic on the model of :func:`_solve_elementary` (aggregates'
    bounds soft at a penalty, so every LP is feasible): solve the LP
    relaxation; fix each free elementary cell that is fractional or on 1 or 2
    (where it must be 0 or at least 3) at its value by :func:`_round_values`;
    solve again (afresh by the interior point method: presolve drops the
    fixed cells); stop when the LP's elementary cells are whole and free of 1s
    and 2s, or after ``DIVE_LPS`` LPs (the last one rounded). Each aggregate
    is tied to its children by one relation (``relational=True`` of
    :func:`_elementary_model`): on the 27,378-cell benchmark table the LP then
    takes about half the CPU time, to the same optimum. The table is then
    additive and free of 1s and 2s; an aggregate may be beyond its bounds only
    where the penalty was paid. The first LP's optimum (without the penalty
    parts, which it does not use when every aggregate can be met) is the bound
    ``report["lp_bound"]``. None when the first LP does not finish before
    ``deadline``; at the deadline later, or after ``stop_fixing`` (both
    ``time.perf_counter()`` instants), the last LP rounded.
    """
    pr = problem
    penalty = 100.0 * float(pr.weights.max())
    model = _elementary_model(pr, pr.centre, free, penalty, relational=True)
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        return None
    h = load_highs(model.arrays(relax=True), left, "ipm")
    info = run_record(runs)
    info["stage"] = "LP relaxation, then dive"
    elementary: np.ndarray | None = None
    report["dive_lps"] = 0
    report["dive_fixed"] = 0
    c = pr.centre[model.free]
    while True:
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            if elementary is None:
                info["status"] = h.modelStatusToString(status)
                return None
            break
        report["dive_lps"] += 1
        x = np.asarray(h.getSolution().col_value)
        if elementary is None:
            info["status"] = h.modelStatusToString(status)
            info["objective"] = float(h.getInfo().objective_function_value)
            report["lp_bound"] = info["objective"]
        elementary = model.elementary(pr, pr.centre, x)
        values = elementary[model.free_cols]
        whole = _round_values(pr, model.free, values)
        distance = np.abs(values - whole)
        bad = np.flatnonzero(distance > 1e-6)
        if len(bad) == 0 or report["dive_lps"] >= DIVE_LPS:
            break
        if stop_fixing is not None and time.perf_counter() >= stop_fixing:
            break  # the repair and the search after it need the time left
        fix = bad
        report["dive_fixed"] += len(fix)
        up = np.maximum(whole[fix] - c[fix], 0.0)
        down = np.maximum(c[fix] - whole[fix], 0.0)
        h.changeColsBounds(len(fix), fix.astype(np.int32), up, up)
        h.changeColsBounds(len(fix), (fix + model.n_dev).astype(np.int32), down, down)
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None:
            if left <= 0:
                break
            h.setOptionValue("time_limit", float(left))
    return _round_start(pr, elementary)


def _beyond(problem: _Elementary, table: np.ndarray) -> np.ndarray:
    """Positions of the cells of ``table`` outside their bounds."""
    return np.flatnonzero((table > problem.upper) | (table < problem.lower))


def _repair_area(
    problem: _Elementary,
    current: np.ndarray,
    aggregate: int,
    size: int,
    members: sparse.csr_matrix,
    rings: tuple[np.ndarray, sparse.csr_matrix],
) -> np.ndarray:
    """Elementary cells (table positions) freed to bring ``aggregate`` back within its bounds.

    The core: the elementary cells under the aggregate with the most room to
    move it the way it must go (down when it is above its upper bound), at
    most ``size // REPAIR_RING_CELLS + 1`` of them; then their neighbours, the
    cells sharing a finest-level aggregate (one of at most
    ``REPAIR_RING_CELLS`` cells) with a core cell, which can absorb the
    core's changes in the other aggregates, then their neighbours in turn,
    ring after ring, up to ``size`` cells in all.
    """
    pr = problem
    row = int(np.searchsorted(pr.margins, aggregate))
    under = members[row].indices  # inner order
    values = current[pr.inner[under]]
    if current[aggregate] > pr.upper[aggregate]:
        room = values - pr.lower[pr.inner[under]]
    else:
        room = pr.upper[pr.inner[under]] - values
    area = under[np.argsort(-room, kind="stable")[: size // REPAIR_RING_CELLS + 1]]
    frontier = area
    small_rows, by_cell = rings
    while len(area) < size and len(frontier):
        ring = np.unique(members[small_rows[np.unique(by_cell[frontier].indices)]].indices)
        frontier = ring[~np.isin(ring, area)][: size - len(area)]
        area = np.concatenate([area, frontier])
    return pr.inner[np.sort(area)]


def _repair(
    problem: _Elementary, current: np.ndarray, deadline: float | None, report: dict
) -> np.ndarray:
    """Bring the aggregates of an additive table back within their bounds, one small area at a time.

    The aggregate furthest beyond its bounds among those on their smallest
    area so far is repaired first, in a small mixed integer programme: the
    cells of :func:`_repair_area` free, every other cell fixed, every
    aggregate they touch within its bounds or beyond at a penalty (so the
    current table is a solution, passed as the warm start, and a solution is
    accepted only when it costs less), for at most ``REPAIR_SECONDS`` per
    ``REPAIR_CELLS`` cells. An aggregate still beyond its bounds after its
    run gets an area twice as large (and twice the time), up to
    ``REPAIR_MAX_CELLS`` cells; one that cannot be repaired within that is
    left for the whole model, and counted in ``report["repair_given_up"]``.
    At most ``REPAIR_RUNS`` runs. On the 27,378-cell benchmark table the
    former repair freed every cell under all the aggregates beyond their
    bounds at once (thousands of cells), whose one run used the time left.
    """
    pr = problem
    penalty = 100.0 * float(pr.weights.max())
    members = pr.to_margins.tocsr()
    small_rows = np.flatnonzero(np.diff(members.indptr) <= REPAIR_RING_CELLS)
    rings = (small_rows, members[small_rows].T.tocsr())  # elementary cell -> small aggregates
    size: dict[int, int] = {}
    given_up: set[int] = set()
    report["repair_rounds"] = 0
    report["repair_cells"] = 0
    report["beyond_bounds_before_repair"] = len(_beyond(pr, current))
    while report["repair_rounds"] < REPAIR_RUNS:
        bad = np.array([k for k in _beyond(pr, current) if int(k) not in given_up], dtype=np.int64)
        left = None if deadline is None else deadline - time.perf_counter()
        if len(bad) == 0 or (left is not None and left <= 0):
            break
        excess = np.maximum(current[bad] - pr.upper[bad], pr.lower[bad] - current[bad])
        # the aggregates on their smallest area first (the furthest beyond first among them):
        # the easy ones are repaired in a second or less before a hard one's larger runs
        tried = np.array([size.get(int(k), REPAIR_CELLS) for k in bad])
        aggregate = int(bad[np.lexsort((-excess, tried))[0]])
        cells = size.get(aggregate, REPAIR_CELLS)
        free = _repair_area(pr, current, aggregate, cells, members, rings)
        # the time grows with the area: a hard aggregate gets both more cells and more time
        seconds = REPAIR_SECONDS * cells / REPAIR_CELLS
        limit = seconds if left is None else min(seconds, left)
        try:
            found = _solve_elementary(pr, current, free, limit, {}, penalty)
        except NoTableInTime:  # the warm start not taken and no table in the time left
            found = None
        report["repair_rounds"] += 1
        report["repair_cells"] += len(free)
        if found is not None and pr.cost(found, penalty) < pr.cost(current, penalty):
            current = found
        if pr.lower[aggregate] <= current[aggregate] <= pr.upper[aggregate]:
            continue
        if cells >= REPAIR_MAX_CELLS or len(free) < cells:
            given_up.add(aggregate)  # the largest area, or every cell it can reach, did not do
        size[aggregate] = 2 * cells
    report["repair_given_up"] = len(given_up)
    return current


def _sub_cube(
    problem: _Elementary, free: np.ndarray, coords: tuple[np.ndarray, ...], rng: np.random.Generator
) -> np.ndarray:
    """A random sub-cube of the movable elementary cells ``free``: about ``LOCAL_CELLS`` of them.

    Each dimension keeps a random subset of its leaves (the same share of
    them for every dimension, drawn between 0.6 and 1.6 times it, at least
    two leaves), so the sub-cube holds every change of the table that only
    moves cells among those leaves, such as the +1/-1 cycles that keep every
    margin. ``coords`` are the cells' coordinates (``np.unravel_index``).
    """
    share = min(1.0, LOCAL_CELLS / max(len(free), 1)) ** (1.0 / len(coords))
    keep = np.ones(len(free), dtype=bool)
    for axis, along in enumerate(coords):
        leaves = np.unique(along)  # the leaves of this dimension that hold a movable cell
        if len(leaves) <= 2:
            continue
        k = min(len(leaves), max(2, round(len(leaves) * share * rng.uniform(0.6, 1.6))))
        chosen = np.zeros(problem.structure.shape[axis], dtype=bool)
        chosen[rng.choice(leaves, k, replace=False)] = True
        keep &= chosen[along]
    return free[keep]


def _improve(
    problem: _Elementary,
    current: np.ndarray,
    free: np.ndarray,
    until: float | None,
    report: dict,
    seed: int = 0,
) -> np.ndarray:
    """Local search on sub-cubes: a whole table made cheaper, one random neighbourhood at a time.

    A large neighbourhood search (Shaw 1998; Danna, Rothberg & Le Pape 2005
    for its use beside a MIP solver): the cells of a random sub-cube
    (:func:`_sub_cube`) are freed, every other cell is fixed, and the model
    of :func:`_solve_elementary` on them runs for at most ``LOCAL_SECONDS``,
    warm-started from the current table (aggregates beyond their bounds, if
    any are left, at a penalty, so the current table is always a solution);
    a cheaper table found replaces the current one. The sub-problems are
    small enough for HiGHS to search them well, which the whole model on
    tens of thousands of cells is not: on the 27,378-cell benchmark table it
    took the dived and repaired start from 1.47 to 1.36 times the LP bound
    within a 300 s budget (``docs/benchmarks.md``), where the whole model
    proved nothing beyond the LP bound. Stops at ``until`` (a
    ``time.perf_counter()`` instant) or, without one, after ``LOCAL_STALE``
    runs in a row without a gain.
    """
    pr = problem
    penalty = 100.0 * float(pr.weights.max())
    rng = np.random.default_rng(seed)
    coords = np.unravel_index(free, pr.structure.shape)
    cost = pr.cost(current, penalty)
    report["local_runs"] = 0
    report["local_gains"] = 0
    report["cost_before_local_search"] = cost
    stale = 0
    while len(free) and (until is not None or stale < LOCAL_STALE):
        left = None if until is None else until - time.perf_counter()
        if left is not None and left <= 0.5:
            break
        cells = _sub_cube(pr, free, coords, rng)
        soft = penalty if len(_beyond(pr, current)) else None
        limit = LOCAL_SECONDS if left is None else min(LOCAL_SECONDS, left)
        try:
            found = _solve_elementary(pr, current, cells, limit, {}, soft)
        except NoTableInTime:
            found = None
        report["local_runs"] += 1
        new = np.inf if found is None else pr.cost(found, penalty)
        if found is not None and new < cost - 1e-9:
            current, cost = found, new
            report["local_gains"] += 1
            stale = 0
        else:
            stale += 1
    report["cost_after_local_search"] = cost
    return current


def _lp_start(
    problem: _Elementary,
    free: np.ndarray,
    deadline: float | None,
    runs: list[dict],
    report: dict,
    stop_fixing: float | None = None,
) -> np.ndarray | None:
    """The LP relaxation dived to a whole table (:func:`_dive`) and repaired (:func:`_repair`).

    None when the LP does not finish before ``deadline``; the dive fixes no
    more cells after ``stop_fixing``.
    """
    dived = _dive(problem, free, deadline, runs, report, stop_fixing)
    if dived is None:
        return None
    return _repair(problem, dived, deadline, report)


def _restore_elementary(
    problem: _Elementary,
    time_limit: float | None,
    block_cells: int,
    runs: list[dict],
    start: str = "lp",
) -> tuple[np.ndarray, dict]:
    """A start for a large table, then the whole table warm-started.

    ``start="lp"`` (default) solves the LP relaxation, dives to a whole table
    free of 1s and 2s (:func:`_dive`) and repairs the aggregates left beyond
    their bounds (:func:`_repair`). When the LP does not finish in the time
    limit, or with ``start="sweeps"``, the start of a table of more than
    ``block_cells`` movable elementary cells is the perturbed elementary cells (0 or at least 3 after the cell key
    method) with every aggregate re-summed, additive but with some aggregates
    beyond their bounds, improved by sweeps over sub-tables: the elementary cells of one
    two-way sub-table (two dimensions free, the others at one combination of
    leaves) are re-solved with all other cells fixed (the margins they share
    with other sub-tables hold the fixed cells' sums), aggregates beyond their
    bounds at a penalty, so every sub-problem is feasible and an accepted
    solution lowers the cost; each sweep frees another pair of dimensions.
    This follows the modular approach of tau-ARGUS (de Wolf 2002, HiTaS:
    sub-tables solved in turn, the margins they share fixed). Sweeps stop
    when every pair of dimensions has had a sweep without gain.
    A table of more than ``2 * LOCAL_CELLS`` movable elementary cells is
    then improved by local search on sub-cubes (:func:`_improve`) for
    ``LOCAL_SHARE`` of the time left (without a time limit, until it stalls;
    above ``block_cells`` movable cells with a time limit, for all of it:
    on the 27,378-cell benchmark table the whole model did not finish its
    root node in a trial, while the local search kept finding cheaper tables).
    Then the whole model runs in the time left, warm-started from that table
    (hard bounds when it meets them, else the aggregates' bounds soft at the
    same penalty), and returns it improved with the gap HiGHS proves.
    ``report["lower_bound"]`` is the larger of the LP relaxation's optimum and
    the dual bound HiGHS proved for the whole model: no table costs less.
    """
    pr = problem
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    free = pr.movable()
    first = pr.centre[pr.inner].copy()
    small = pr.binary[pr.inner] & (first > 0) & (first < 3)
    first[small] = np.where((first[small] >= 1.5) & (pr.upper[pr.inner][small] >= 3), 3.0, 0.0)
    current = pr.table(first)
    penalty = 100.0 * float(pr.weights.max())
    report: dict = {"sweeps": 0, "subproblems": 0}
    whole_fits = len(free) <= block_cells
    stop_fixing = None if time_limit is None else time.perf_counter() + DIVE_SHARE * time_limit
    rounded = _lp_start(pr, free, deadline, runs, report, stop_fixing) if start == "lp" else None
    if rounded is not None:
        report["start"] = "LP relaxation rounded and repaired"
        current = rounded
    else:
        report["start"] = "whole model" if whole_fits else "sweeps"
    if report["start"] == "sweeps":
        dims = [a for a in range(len(pr.structure.dims)) if pr.structure.n_leaves[a] > 1]
        pairs: list[tuple[int, ...]] = [(u, v) for i, u in enumerate(dims) for v in dims[i + 1 :]]
        pairs = pairs or [tuple(dims)]
        sweep, stale = 0, 0
        while deadline is None or time.perf_counter() < deadline:
            before = pr.cost(current, penalty)
            for block in _blocks(pr, free, pairs[sweep % len(pairs)]):
                left = None if deadline is None else deadline - time.perf_counter()
                if left is not None and left <= 0:
                    break
                info: dict = {}
                found = _solve_elementary(
                    pr, current, block, None if left is None else min(left, 10.0), info, penalty
                )
                report["subproblems"] += 1
                if found is not None and pr.cost(found, penalty) < pr.cost(current, penalty):
                    current = found
            sweep += 1
            report["sweeps"] = sweep
            # stop once every pair of dimensions has had a sweep without gain
            stale = stale + 1 if pr.cost(current, penalty) >= before else 0
            if stale >= len(pairs):
                break
    report["beyond_bounds_after_sweeps"] = len(_beyond(pr, current))
    left = None if deadline is None else deadline - time.perf_counter()
    # with a time limit, a table too large for the whole model gives all its time left
    # to the local search
    whole_model = whole_fits or deadline is None
    if len(free) > 2 * LOCAL_CELLS and (left is None or left > 0):
        share = LOCAL_SHARE if whole_model else 1.0
        until = None if left is None else time.perf_counter() + share * left
        current = _improve(pr, current, free, until, report)
        report["beyond_bounds_after_local_search"] = len(_beyond(pr, current))
    left = None if deadline is None else deadline - time.perf_counter()
    if whole_model and (left is None or left > 0):
        # the whole model, warm-started: with hard bounds when the table found so far
        # meets them, else with the aggregates' bounds soft (the table is then a start)
        soft = (
            None if report["start"] == "whole model" or len(_beyond(pr, current)) == 0 else penalty
        )
        info = run_record(runs)
        try:
            found = _solve_elementary(
                pr, current, free, left, info, soft, options={"mip_heuristic_effort": WHOLE_EFFORT}
            )
        except NoTableInTime:
            found = None
        info["stage"] = "whole model"
        if found is not None and pr.cost(found, penalty) <= pr.cost(current, penalty):
            current = found
        if info.get("dual_bound") is not None and np.isfinite(info["dual_bound"]):
            report["dual_bound"] = info["dual_bound"]
            # HiGHS's incumbent may leave an aggregate's deviation split in both directions
            # (d+ and d- at once, which its heuristics do not clean up): the table's own
            # cost is then below HiGHS's objective, and the gap is the table's
            cost = pr.cost(current)
            if cost > 0 and len(_beyond(pr, current)) == 0:
                info["objective"] = cost
                info["mip_gap"] = max(0.0, (cost - info["dual_bound"]) / cost)
    known = [report[k] for k in ("lp_bound", "dual_bound") if report.get(k) is not None]
    if known:
        # the LP relaxation and HiGHS's dual bound of the whole model (hard bounds, or soft:
        # a relaxation) both bound every table's cost from below
        report["lower_bound"] = max(known)
    return current, report


def run_record(runs: list[dict]) -> dict:
    """A fresh record for one HiGHS run, appended to ``runs``."""
    runs.append({})
    return runs[-1]


def _diagnose(
    structure: TableStructure,
    p: np.ndarray,
    relations: sparse.csr_matrix,
    described: list,
    lower: np.ndarray,
    upper: np.ndarray,
    weights: np.ndarray,
    binary_cells: np.ndarray,
    time_limit: float | None,
    stage: str,
) -> InfeasibleError:
    slack, _ = solve_cta(
        p, relations, lower, upper, weights, binary_cells, time_limit, elastic=True
    )
    if slack is None:
        return InfeasibleError(
            f"restore_additivity ({stage}): the per-cell bounds alone cannot be met "
            "(no cell value within max_deviation avoids 1 and 2); raise max_deviation"
        )
    violated = np.flatnonzero(slack > 1e-6)
    shown = [structure.describe_relation(described[k]) for k in violated[:5]]
    more = f" and {len(violated) - 5} more" if len(violated) > 5 else ""
    return InfeasibleError(
        f"restore_additivity ({stage}): no additive table within max_deviation avoids 1 and 2; "
        f"{len(violated)} relation(s) conflict with the bounds, e.g. "
        + "; ".join(shown)
        + more
        + ". Raise max_deviation or allow changes to zero cells."
    )


def _check_reachable(
    structure: TableStructure,
    p: np.ndarray,
    relations: sparse.csr_matrix,
    described: list,
    max_deviation: int,
    *,
    inferred: bool,
    free: np.ndarray | None = None,
) -> None:
    """Refuse up front a relation that no change within ``max_deviation`` can close.

    A relation ``x(g) - sum x(children) = 0`` with ``k`` terms can move by at
    most ``k * max_deviation``. A larger gap is not perturbation noise: most
    often the table has aggregate rows (hierarchy levels) that were not
    declared, so they were read as categories and counted twice.
    """
    if relations.shape[0] == 0:
        return
    gap = np.abs(relations @ p)
    capacity = max_deviation * np.diff(relations.indptr)
    if free is not None and free.any():
        # a relation through a suppressed cell can be closed by that cell
        capacity = np.where(abs(relations) @ free.astype(np.float64) > 0, np.inf, capacity)
    far = np.flatnonzero(gap > capacity)
    if len(far) == 0:
        return
    k = int(far[np.argmax(gap[far])])
    where = structure.describe_relation(described[k])
    if inferred:
        axis = described[k][0]
        labels = [c for c in structure.categories[axis] if c != structure.total_label]
        raise InfeasibleError(
            f"the table is not additive: {where}, but is off by {gap[k]:g} (no change of at "
            f"most {max_deviation} per cell can close that). If some of the labels of "
            f"{structure.dims[axis]!r} {labels[:8]!r} are sums of others (hierarchy levels), "
            "declare them with hierarchies (--hierarchies); they were read as categories"
        )
    raise InfeasibleError(
        f"the table is not additive under its structure: {where}, but is off by {gap[k]:g}, "
        f"more than max_deviation={max_deviation} per cell can close; check the hierarchies "
        "and that every cell holds the same kind of value"
    )


def _recoverable_hidden(relations: sparse.csr_matrix, hidden: np.ndarray) -> np.ndarray:
    """Positions of the hidden cells that the relations determine from the published cells.

    With the published cells known, the hidden values ``h`` satisfy
    ``R_H h = -R_P p``; coordinate ``j`` of ``h`` is determined exactly when
    every vector of the null space of ``R_H`` has a zero ``j``-th component
    (then ``e_j`` lies in the row space of ``R_H``). The bounds ``[0,
    threshold - 1]`` can narrow the others further; this finds the exact
    disclosures, the ones an intruder needs no optimisation for.
    """
    columns = np.flatnonzero(hidden)
    if len(columns) == 0 or relations.shape[0] == 0:
        return np.array([], dtype=np.int64)
    sub = relations[:, columns]
    rows = np.flatnonzero(np.diff(sub.tocsr().indptr) > 0)
    if len(rows) == 0:
        return np.array([], dtype=np.int64)
    dense = sub[rows].toarray()
    _, singular, vt = np.linalg.svd(dense, full_matrices=True)
    rank = int((singular > 1e-9 * max(1.0, float(singular.max(initial=0.0)))).sum())
    null = vt[rank:]
    if null.shape[0] == 0:
        return columns
    determined = np.all(np.abs(null) < 1e-9, axis=0)
    return columns[determined]


def restore_additivity(
    perturbed: pd.DataFrame,
    original_structure: TableStructure | None = None,
    *,
    max_deviation: int = 3,
    dims: Sequence[str] | None = None,
    value: str = "perturbed",
    weights: str | np.ndarray | None = None,
    method: str = "two-stage",
    fix_zeros: bool = True,
    original: str | None = "count",
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
    time_limit: float | None = None,
    on_timeout: str = "soft-bounds",
    threshold: int | None = None,
    allow_recoverable: bool = False,
    block_cells: int = 3000,
) -> AdditivityResult:
    """Make a perturbed table additive again by controlled tabular adjustment.

    Giessing & Höhne (2011), Section 5.

    Parameters
    ----------
    perturbed : DataFrame
        Tidy table, one row per cell (margins included), with the dimension
        columns and a ``value`` column of whole counts. Never modified.
    original_structure : TableStructure, optional
        The table's structure (``tabulate(...).attrs["structure"]``); default:
        ``perturbed.attrs["structure"]`` or inferred from ``dims``.
    max_deviation : int, default 3
        Largest allowed ``|restored - perturbed|`` per cell.
    value : str, default "perturbed"
    weights : str, array or None
        Cell weights of the absolute deviations: a column name, an array (one
        per row), ``"inverse"`` (``1 / max(value, 1)``) or None (all 1).
    method : {"two-stage", "joint", "elementary"}
        ``"joint"``: one MILP with a binary for every cell that could reach 1
        or 2; ``"two-stage"``: the paper's additivity run then refinement run
        (if the refinement is infeasible, the joint model is solved and
        ``stats["joint_fallback"]`` is True); ``"elementary"``: the model on
        the elementary cells, every margin and hierarchy level a sum of them
        within its bounds (relations hold by construction; binaries only on
        elementary cells), started from its LP relaxation dived to a whole
        table and repaired, improved by local search on sub-cubes of the
        table (tables of more than 1,200 movable elementary cells) and then
        by the whole model warm-started (tables of at most ``block_cells``
        movable elementary cells, or without a time limit): see
        ``stats["decomposition"]``, whose ``lower_bound`` no table can
        beat; ``time_limit`` is then the budget of the whole restoration.
    fix_zeros : bool, default True
        Zero cells stay 0: cells that are 0 in the ``original`` column when
        the table has it (the paper does not adjust original zeros), else
        cells that are 0 in ``value``.
    original : str or None, default "count"
        Column of original counts, used only to know the true zeros.
    time_limit : float, optional
        Seconds per HiGHS run. At the limit the best table found is returned
        with its proven gap (``stats["mip_gap"]``).
    on_timeout : {"soft-bounds", "error"}
        When a run ends at the time limit without any table:
        ``"soft-bounds"`` (default) solves again with the per-cell bounds
        made soft, warm-started from the rounded LP relaxation repaired to
        additivity (inner cells rounded, 1s and 2s moved to 0 or 3, margins
        re-aggregated: additive and free of 1s and 2s), and returns
        the best table; cells beyond ``max_deviation`` are counted in
        ``stats["cells_beyond_max_deviation"]`` and named in the summary.
        ``"error"``: raise :class:`~sdckit.errors.InfeasibleError`.
    dims : list of str, optional
        The classifying columns, when the table carries no structure
        (``perturbed.attrs["structure"]``) and none is given.
    hierarchies : mapping, optional
        ``{dimension: Hierarchy}`` of nested levels, as in
        :func:`sdckit.tables.tabulate`, when the structure is inferred.
    total_label : str, default "Total"
        The label of a margin, when the structure is inferred.
    threshold : int, optional
        The threshold of a table whose small perturbed counts were suppressed
        (``cell_key_perturb(..., threshold=...)``: ``value`` missing where
        ``suppressed`` is True). The suppressed cells become unknowns between
        0 and ``threshold - 1``, free of cost, so that the published cells are
        made additive with *some* values of the hidden ones; they stay
        suppressed in the release (``restored`` missing; ``internal`` keeps
        the values chosen). Required when ``value`` has missing cells.
        An additive table gives away a suppressed cell that its relations
        determine from the published cells (a margin minus its other
        children): such a restoration is refused unless
        ``allow_recoverable=True``.
    allow_recoverable : bool, default False
        Return the restoration even when suppressed cells can be recomputed
        exactly from the published ones (``stats["recoverable_cells"]``
        counts them). Only for a producer's internal use: publishing such a
        table undoes the suppression.
    block_cells : int, default 3000
        ``method="elementary"``: above this many movable elementary cells,
        with a time limit, the local search on sub-cubes takes the whole time
        left after the start (the whole model would not finish its first
        LP with cuts: measured on a 27,378-cell table), and a start that the
        LP relaxation cannot give in time comes from two-way sub-tables
        solved in turn.

    Returns
    -------
    AdditivityResult
        The publishable table with a ``restored`` column, the internal table
        and the figures of the adjustment.

    Raises
    ------
    InfeasibleError
        No table satisfies the relations, bounds and the no-small-cells
        requirement; the message names conflicting relations.
    """
    frame = check_dataframe(perturbed, "perturbed")
    max_deviation = check_int(max_deviation, "max_deviation", minimum=0)
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    block_cells = check_int(block_cells, "block_cells", minimum=1)
    if on_timeout not in ("soft-bounds", "error"):
        raise ParameterError(f"on_timeout must be 'soft-bounds' or 'error', got {on_timeout!r}")
    structure = original_structure or frame.attrs.get("structure")
    structure_inferred = structure is None and not hierarchies
    if structure is None:
        if dims is None:
            raise ParameterError("give original_structure or dims (the classifying columns)")
        structure = TableStructure.from_table(
            frame, dims, hierarchies=hierarchies, total_label=total_label
        )
    if not isinstance(structure, TableStructure):
        raise ParameterError(
            f"original_structure must be a TableStructure, got {type(structure).__name__}"
        )
    if value not in frame.columns:
        raise DataError(f"perturbed table has no column {value!r}")
    if value in CONFIDENTIAL_COLUMNS:
        raise ParameterError(
            f"value={value!r} holds the true counts: restoring them publishes the true table; "
            "restore the perturbed column"
        )
    positions = structure.cell_positions(frame)
    if len(positions) != structure.n_cells:
        raise DataError(
            f"perturbed table has {len(positions)} of the structure's {structure.n_cells} cells; "
            "every cell (margins included) is needed"
        )
    raw = pd.to_numeric(frame[value], errors="coerce").to_numpy(np.float64)
    missing = frame[value].isna().to_numpy()
    if missing.any():
        if threshold is None:
            raise DataError(
                f"column {value!r} has {int(missing.sum())} missing cells (the first in row "
                f"{int(np.flatnonzero(missing)[0]) + 1}): if they were suppressed below a "
                "threshold, give threshold so they are restored as hidden cells"
            )
        if "suppressed" in frame.columns:
            flagged = frame["suppressed"].fillna(False).astype(bool).to_numpy()
            if (missing & ~flagged).any():
                k = int(np.flatnonzero(missing & ~flagged)[0])
                raise DataError(
                    f"column {value!r} is missing in row {k + 1}, which is not marked suppressed"
                )
    if threshold is not None:
        threshold = check_int(threshold, "threshold", minimum=1)
    present = raw[~missing]
    if (
        not np.isfinite(present).all()
        or (present != np.round(present)).any()
        or (present < 0).any()
    ):
        raise DataError(f"column {value!r} must hold non-negative whole counts (no missing values)")
    p = np.zeros(structure.n_cells)
    p[positions] = np.where(missing, 0.0, raw)
    hidden = np.zeros(structure.n_cells, dtype=bool)
    hidden[positions[missing]] = True
    if weights is None:
        w = np.ones(structure.n_cells)
    else:
        if isinstance(weights, str) and weights == "inverse":
            given = 1.0 / np.maximum(raw, 1.0)
        elif isinstance(weights, str):
            if weights not in frame.columns:
                raise DataError(f"weights column {weights!r} not in the table")
            given = pd.to_numeric(frame[weights], errors="coerce").to_numpy(np.float64)
        else:
            given = np.asarray(weights, dtype=np.float64)
        if given.shape != (len(frame),) or not np.isfinite(given).all() or (given <= 0).any():
            raise ParameterError("weights must be positive and finite, one per table row")
        w = np.zeros(structure.n_cells)
        w[positions] = given
    relations, described = structure.relations()
    _check_reachable(
        structure, p, relations, described, max_deviation, inferred=structure_inferred, free=hidden
    )
    lower = np.maximum(p - max_deviation, 0.0)
    upper = p + max_deviation
    if fix_zeros:
        if original is not None and original in frame.columns:
            truth = np.zeros(structure.n_cells)
            truth[positions] = pd.to_numeric(frame[original], errors="coerce").to_numpy(np.float64)
            upper[(truth == 0) & ~hidden] = 0.0
        else:
            upper[(p == 0) & ~hidden] = 0.0
    if hidden.any():
        # suppressed cells: unknowns below the threshold, no cost, never published
        assert threshold is not None
        lower[hidden] = 0.0
        upper[hidden] = float(threshold - 1)
        w = np.where(hidden, 0.0, w)
    seconds, binaries = [], []
    runs: list[dict] = []
    fallback = False
    soft_bounds = False
    decomposition: dict = {}
    y: np.ndarray | None

    def solve(
        lo: np.ndarray, hi: np.ndarray, weights: np.ndarray, binary: np.ndarray
    ) -> np.ndarray | None:
        """One timed CTA run on the whole table; its seconds and binaries are recorded."""
        start = time.perf_counter()
        found, _status = solve_cta(
            p, relations, lo, hi, weights, binary, time_limit, info=run_record(runs)
        )
        seconds.append(time.perf_counter() - start)
        binaries.append(len(binary))
        return found

    def infeasible(binary: np.ndarray, stage: str) -> InfeasibleError:
        """The relations that cannot hold together with the bounds, named."""
        return _diagnose(
            structure, p, relations, described, lower, upper, w, binary, time_limit, stage
        )

    try:
        if method == "elementary":
            # margins are sums of the elementary cells, each of them 0 or at least 3: only
            # elementary cells need a binary (hidden ones excepted: they are never published)
            problem = _Elementary(
                structure, p, lower, upper, w, structure.inner_mask() & ~hidden & (lower <= 2)
            )
            start = time.perf_counter()
            y, decomposition = _restore_elementary(problem, time_limit, block_cells, runs)
            y = y.astype(np.int64)
            seconds.append(time.perf_counter() - start)
            binaries.append(int((problem.binary & (upper > lower)).sum()))
            soft_bounds = bool(((y > upper) | (y < lower)).any())
            if hidden.any() and bool(np.isin(y[~hidden], [1, 2]).any()):
                raise InfeasibleError(
                    "restore_additivity (elementary): a published aggregate of suppressed cells "
                    "is 1 or 2; use method='joint'"
                )
        elif method == "joint":
            risky = np.flatnonzero((lower <= 2) & (upper >= 1) & ~hidden)
            y = solve(lower, upper, w, risky)
            if y is None:
                raise infeasible(risky, "joint")
        else:
            # stage 1: additivity only; cells at 3 are weighted up so they tend to stay
            none = np.array([], dtype=np.int64)
            y1 = solve(lower, upper, np.where(p == 3, 10.0 * w, w), none)
            if y1 is None:
                raise infeasible(none, "stage 1, additivity")
            sensitive = np.flatnonzero(((y1 == 1) | (y1 == 2)) & ~hidden)
            if len(sensitive) == 0:
                y = y1
                seconds.append(0.0)
                binaries.append(0)
            else:
                lower2, upper2 = lower.copy(), upper.copy()
                lower2[(y1 >= 3) & ~hidden] = np.maximum(lower2[(y1 >= 3) & ~hidden], 3.0)
                upper2[(y1 == 0) & ~hidden] = 0.0
                y = solve(lower2, upper2, w, sensitive)
                if y is None:
                    # the refinement's bounds (3+ stays 3+, stage-1 zeros stay 0) were too
                    # narrow, the risk the paper names; fall back to the joint model
                    fallback = True
                    risky = np.flatnonzero((lower <= 2) & (upper >= 1) & ~hidden)
                    y = solve(lower, upper, w, risky)
                    if y is None:
                        raise infeasible(risky, "stage 2 and joint fallback")
    except NoTableInTime:
        if on_timeout != "soft-bounds":
            raise
        # no table within the limit. Warm start, the rounded LP repaired to feasibility:
        # the LP relaxation of the additivity-only model (fast) has its inner cells
        # rounded, those at 1 or 2 moved to 0 or 3, and every margin re-aggregated from
        # the inner cells, so it is additive and free of 1s and 2s (a margin is a sum of
        # cells that are 0 or at least 3); only some margins may leave their bounds.
        soft_bounds = True
        mask = structure.inner_mask()
        try:
            relaxed, _ = solve_cta(
                p,
                relations,
                lower,
                upper,
                w,
                np.array([], dtype=np.int64),
                time_limit,
                relax=True,
                info=run_record(runs),
            )
        except NoTableInTime:  # not even the LP within the limit: the perturbed cells
            relaxed = None
        base = np.round(relaxed) if relaxed is not None else p.copy()
        small = (base == 1) | (base == 2)
        to_three = small & (np.abs(3 - p) < np.abs(p)) & (upper >= 3)
        base = np.where(small, np.where(to_three, 3.0, 0.0), base)
        start_table = structure.aggregate(base[mask].reshape(structure.leaf_shape)).ravel()
        start = time.perf_counter()
        y = _solve_soft(
            p, relations, lower, upper, w, start_table, max_deviation, time_limit, run_record(runs)
        )
        seconds.append(time.perf_counter() - start)
        binaries.append(int(((upper > 0) & ((lower <= 2) | (start_table < 3))).sum()))
    assert y is not None  # every branch above raises or holds a table
    recoverable = _recoverable_hidden(relations, hidden)
    if len(recoverable) and not allow_recoverable:
        example = structure.labels().iloc[int(recoverable[0])]
        where = ", ".join(f"{d}={example[d]!r}" for d in structure.dims)
        raise InfeasibleError(
            f"{len(recoverable)} of the {int(hidden.sum())} suppressed cells (e.g. {where}) could "
            "be recomputed exactly from the published cells once the table is additive (a "
            "margin minus its other cells): restoring additivity would undo their suppression. "
            "Publish the perturbed table without restoring it, or suppress more cells in those "
            "relations first (the library's allow_recoverable=True gives the restoration for "
            "internal use)"
        )
    table = frame.copy()
    table["restored"] = y[positions]  # the producer's copy keeps the hidden cells' values
    change = np.where(hidden, 0, np.abs(y - p))
    stats = {
        "cells": structure.n_cells,
        "relations": relations.shape[0],
        "cells_changed": int((change > 0).sum()),
        "max_abs_change": int(change.max()) if len(change) else 0,
        "mean_abs_change": float(change.mean()) if len(change) else 0.0,
        "binaries": binaries,
        "seconds": seconds,
        "objective": float(w @ change),
        "status": [r.get("status") for r in runs],
        "mip_gap": [r.get("mip_gap") for r in runs],
        "dual_bound": [r.get("dual_bound") for r in runs],
        "joint_fallback": fallback,
        "soft_bounds": soft_bounds,
        "cells_beyond_max_deviation": int((change > max_deviation).sum()),
        "hidden_cells": int(hidden.sum()),
        "recoverable_cells": len(recoverable),
        "decomposition": decomposition,
    }
    params = {
        "max_deviation": max_deviation,
        "method": method,
        "fix_zeros": fix_zeros,
        "value": value,
        "weights": weights if isinstance(weights, str) or weights is None else "array",
        "threshold": threshold,
        "block_cells": block_cells,
    }
    table.attrs["structure"] = structure
    published = release_frame(table)
    if hidden.any():
        shown = pd.array(published["restored"].to_numpy(), dtype="Int64")
        shown[missing] = pd.NA
        published["restored"] = shown
    published.attrs["structure"] = structure
    return AdditivityResult(published, table, params, stats)
