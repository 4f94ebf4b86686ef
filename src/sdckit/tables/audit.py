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
intervals with the required protection. For large tables
(``intervals="settle"``, what :func:`sdckit.tables.suppress` runs) most
cells need no LP of their own: a few LPs over sums of cells find feasible
tables that already reach each cell's protection on both sides (the
filtering of Gleixner, Berthold, Müller & Weltge (2017), §3), and only the
cells none reaches get a feasibility LP per side, and the exact interval if
a side cannot be reached.
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
from sdckit._validation import check_dataframe, check_positive, number_text, plain_value
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.tabulate import Hierarchy, TableStructure

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
        required protection, or exact), ``interval`` (``"exact"``, or with
        ``intervals="settle"`` ``"inner bound"``: ends attained by feasible
        tables, the exact interval contains it; ``"outer bound"``: the
        interval of a relaxation, which contains the exact one and already
        falls short of the protection; ``"not settled"``: the audit's
        ``time_limit`` ran out first, the range of the tables found so far,
        reported exposed; ``"not computed"`` for a
        cell nothing was asked of). Internal: it holds true values.
    params : mapping
    stats : mapping
        ``cells``, ``suppressed``, ``published_primary``, ``exposed``,
        ``exact``, ``unsettled`` (cells ``time_limit`` left unsettled, counted
        in ``exposed``), ``lp_solves``, ``intervals``, ``levels_given`` (False:
        only exact disclosure checked), ``seconds``.
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
        if s.get("unsettled"):
            head += (
                f"; {s['unsettled']} of them NOT settled within the audit's time limit "
                "(protection not proven)"
            )
        text = f"{head}; {s['cells']} cells, {s['lp_solves']} LP solves in {s['seconds']:.2f} s"
        if s.get("intervals") == "settle":
            text += " (intervals settled by feasible tables where possible, not all exact)"
        if s["exposed"]:
            dims = self.params["dims"]
            shown = []
            for _, row in self.exposed.head(5).iterrows():
                where = ", ".join(f"{d}={row[d]}" for d in dims)
                shown.append(f"{where}: [{number_text(row['lower'])}, {number_text(row['upper'])}]")
            text += "; e.g. " + "; ".join(shown)
        return text


def attacker_intervals(
    relations: sparse.spmatrix,
    values: np.ndarray,
    hidden: np.ndarray,
    *,
    upper_bounds: np.ndarray | None = None,
    cells: np.ndarray | None = None,
    need: tuple[np.ndarray, np.ndarray] | None = None,
    exact: np.ndarray | None = None,
    truth: np.ndarray | None = None,
    deviations: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    outer: np.ndarray | None = None,
    time_limit: float | None = None,
    unsettled: np.ndarray | None = None,
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
    need : pair of arrays of float, optional
        The value each cell's interval must reach below and above (over all
        cells; ``need[0] > need[1]`` asks nothing of a cell). Given, an
        interval is only computed as far as it settles whether it reaches
        them: ends attained by feasible tables (inner bounds of the exact
        interval) where such tables are found, exact otherwise
        (:func:`_witness_intervals`).
    exact : array of bool, optional
        Filled with whether each interval is the exact one (always, without
        ``need``).
    truth, deviations : optional
        With ``need``: the true value of every cell, and directions
        ``(cell positions, signs)`` along which it may move, such as the
        hypercubes of :func:`sdckit.tables.suppress`. Each direction is
        verified (it keeps every relation and moves hidden cells only, and
        the true table satisfies the relations); the two tables farthest
        along it within ``0 <= h <= upper`` are then feasible tables the
        attacker cannot exclude, and they settle cells before any LP
        (:func:`_witness_intervals`). Unverified directions are ignored.
        With ``truth``, a component of at least ``LOCAL_COMPONENT`` hidden
        cells first tries local LPs around each open cell
        (:func:`_local_intervals`): a restriction that proves protection or
        a relaxation that proves exposure; only the cells neither settles
        get LPs over the whole component.
    outer : array of bool, optional
        Filled with whether each interval is an outer bound of the exact one
        (a relaxation's, which proved the cell exposed).
    time_limit : float, optional
        With ``need``: seconds (wall clock) for every LP of the call together.
        When they run out, the cells not yet settled keep the range of the
        feasible tables found so far (an inner bound, short of what they
        need) and are flagged in ``unsettled``: their protection is not
        proven, and the caller must not report them protected.
    unsettled : array of bool, optional
        Filled with whether each cell was left unsettled by ``time_limit``.

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
    # (components of the bipartite graph of relations and cells: memory in its non-zeros)
    n_rows = sub.shape[0]
    graph = sparse.bmat([[None, sub], [sub.T, None]], format="csr")
    _, labels = connected_components(graph, directed=False)
    component = labels[n_rows:]
    seed = None
    if need is not None and truth is not None:
        full_ub = np.full(len(hidden), np.inf)
        if upper_bounds is not None:
            full_ub = np.asarray(upper_bounds, dtype=np.float64)
        low, high = _deviation_witnesses(matrix, hidden, values, truth, full_ub, deviations or [])
        seed = (low[columns], high[columns])
    local = np.searchsorted(columns, wanted)
    lower = np.zeros(len(wanted))
    upper = ub[local].copy()
    optimal = np.ones(len(wanted), dtype=bool)
    outer_bound = np.zeros(len(wanted), dtype=bool)
    open_at_limit = np.zeros(len(wanted), dtype=bool)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    solves = 0
    row_component = component[sub.indices[sub.indptr[:-1]]]  # a row's first hidden cell
    row_order = np.argsort(row_component, kind="stable")
    row_starts = np.searchsorted(row_component[row_order], np.arange(component.max() + 2))
    target_order = np.argsort(component[local], kind="stable")
    target_starts = np.searchsorted(component[local][target_order], np.arange(component.max() + 2))
    member_order = np.argsort(component, kind="stable")
    member_starts = np.searchsorted(component[member_order], np.arange(component.max() + 2))
    for label in np.unique(component[local]):
        members = np.sort(member_order[member_starts[label] : member_starts[label + 1]])
        own_rows = row_order[row_starts[label] : row_starts[label + 1]]
        if len(own_rows) == 0:
            continue  # in no relation: anything from 0 to its bound
        targets = target_order[target_starts[label] : target_starts[label + 1]]
        position = np.searchsorted(members, local[targets])
        if need is None:
            h = _component_model(sub[own_rows][:, members], rhs[own_rows], ub[members])
            lo, hi, k = _exact_intervals(h, position)
            ok = np.ones(len(targets), dtype=bool)
        else:
            cells_here = columns[members[position]]
            need_lo, need_hi = need[0][cells_here], need[1][cells_here]
            if not (need_lo <= need_hi).any():
                lower[targets] = upper[targets] = np.nan
                optimal[targets] = False
                continue
            known = None if seed is None else (seed[0][members], seed[1][members])
            if (
                known is not None
                and truth is not None
                and len(members) >= LOCAL_COMPONENT
                and np.isfinite(known[0]).all()  # the true table is one of the model's
            ):
                lo, hi, state, ok, k = _local_settle(
                    sub[own_rows][:, members].tocsr(),
                    rhs[own_rows],
                    ub[members],
                    np.asarray(truth, dtype=np.float64)[columns[members]],
                    position,
                    need_lo,
                    need_hi,
                    known,
                    deadline=deadline,
                )
                solves += k
                local_done = state > 0
                done = targets[local_done]
                lower[done], upper[done], optimal[done] = (
                    lo[local_done],
                    hi[local_done],
                    ok[local_done],
                )
                outer_bound[done] = (state[local_done] == 2) & ~ok[local_done]
                targets, position = targets[~local_done], position[~local_done]
                need_lo, need_hi = need_lo[~local_done], need_hi[~local_done]
                if len(targets) == 0:
                    continue
            if known is not None and _settled(known, position, need_lo, need_hi).all():
                # the verified deviations settle every cell here: no model at all
                lo, hi = known[0][position], known[1][position]
                lower[targets] = np.where(np.isfinite(lo), lo, np.nan)
                upper[targets] = np.where(np.isfinite(hi), hi, np.nan)
                optimal[targets] = False
                continue
            h = _component_model(sub[own_rows][:, members], rhs[own_rows], ub[members])
            scale = float(np.abs(rhs[own_rows]).max())
            lo, hi, ok, k, left = _witness_intervals(
                h, ub[members], scale, position, need_lo, need_hi, seed=known, deadline=deadline
            )
            open_at_limit[targets] = left
        lower[targets], upper[targets], optimal[targets] = lo, hi, ok
        solves += k
    if exact is not None:
        exact[:] = optimal
    if outer is not None:
        outer[:] = outer_bound
    if unsettled is not None:
        unsettled[:] = open_at_limit
    return lower, upper, solves


#: Components with at least this many hidden cells try local LPs around each open cell
#: (:func:`_local_intervals`) before any LP over the whole component.
LOCAL_COMPONENT = 5_000
#: Largest neighbourhood (hidden cells) of a local LP.
LOCAL_CELLS = 400
#: Relation hops (cell -> relation -> cell) of a neighbourhood.
LOCAL_HOPS = 4


def relation_neighbourhood(
    sub_csr: sparse.csr_matrix, sub_csc: sparse.csc_matrix, cell: int, hops: int, cap: int
) -> np.ndarray:
    """Cells within ``hops`` relations of ``cell`` (breadth first, at most ``cap``), ``cell`` included.

    The cells are the columns of the relations: the hidden cells of a
    component in the audit's local LPs, every cell of the table in the
    deviation LPs of :func:`sdckit.tables.suppression.deviation_pattern`.
    """
    seen = np.zeros(sub_csr.shape[1], dtype=bool)
    seen[cell] = True
    frontier = np.array([cell])
    found = [frontier]
    total = 1
    for _ in range(hops):
        rows = np.unique(sub_csc[:, frontier].indices)
        near = np.unique(sub_csr[rows].indices)
        near = near[~seen[near]]
        if len(near) == 0:
            break
        if total + len(near) > cap:
            near = near[: cap - total]
        seen[near] = True
        found.append(near)
        total += len(near)
        frontier = near
        if total >= cap:
            break
    return np.sort(np.concatenate(found))


def _local_intervals(
    sub: sparse.csr_matrix,
    rhs: np.ndarray,
    ub: np.ndarray,
    truth: np.ndarray,
    cell: int,
    near: np.ndarray,
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """The interval of ``cell`` in a restriction and in a relaxation of the attacker's LP.

    ``near`` (hidden cells, ``cell`` among them) is the neighbourhood; the
    component's model is ``sub h = rhs``, ``0 <= h <= ub``, and ``truth`` a
    table of it (the true hidden values).

    * *Restriction*: every hidden cell outside ``near`` is fixed at its true
      value (the attacker is told more). Each table of the restricted model,
      completed by the true values, is a table of the full model, so the
      restricted interval is contained in the exact one: if it reaches the
      required protection on both sides, so does the exact interval (a
      certificate of protection).
    * *Relaxation*: only the relations whose hidden cells all lie in
      ``near`` are kept (the others dropped). Every table of the full model,
      restricted to ``near``, satisfies them, so the exact interval is
      contained in the relaxed one: if the relaxed interval falls short of
      the required protection on a side, so does the exact one (a
      certificate of exposure).

    Returns the restricted and the relaxed intervals (``(lo, hi)`` each;
    ``hi`` is ``inf`` when unbounded) and the number of LPs solved.
    """
    inside = np.zeros(sub.shape[1], dtype=bool)
    inside[near] = True
    local = int(np.searchsorted(near, cell))
    per_row = np.diff(sub.indptr)
    in_near = sub[:, near]
    touching = np.flatnonzero(np.diff(in_near.indptr) > 0)
    outside = np.where(inside, 0.0, truth)
    restricted_rhs = rhs[touching] - sub[touching] @ outside
    h = _component_model(in_near[touching], restricted_rhs, ub[near])
    lo, hi, solves = _exact_intervals(h, np.array([local]))
    restricted = (float(lo[0]), float(hi[0]))
    closed = np.flatnonzero(np.diff(in_near.indptr) == per_row)
    closed = closed[per_row[closed] > 0]
    if len(closed) == 0 or in_near[closed][:, local].nnz == 0:
        return restricted, (0.0, float(ub[cell])), solves  # nothing binds the cell
    h = _component_model(in_near[closed], rhs[closed], ub[near])
    lo, hi, more = _exact_intervals(h, np.array([local]))
    return restricted, (float(lo[0]), float(hi[0])), solves + more


def _local_settle(
    sub: sparse.csr_matrix,
    rhs: np.ndarray,
    ub: np.ndarray,
    truth: np.ndarray,
    targets: np.ndarray,
    need_lo: np.ndarray,
    need_hi: np.ndarray,
    known: tuple[np.ndarray, np.ndarray],
    *,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Settle the open targets of a large component by local LPs (:func:`_local_intervals`).

    For each target the witnessed range ``known`` does not settle, the
    restriction and the relaxation around it. Returns ``(lower, upper,
    state, exact, solves)`` per target: ``state`` is 1 where the restriction
    proves protection (``lower, upper`` its interval, an inner bound of the
    exact one), 2 where the relaxation proves exposure (its interval, an
    outer bound; ``exact`` when that interval is a single value, which is
    then the exact interval since the true table is feasible), 0 where
    neither settles it or the witnesses already did. Past ``deadline``
    (:func:`time.perf_counter`) the targets not yet tried stay at 0.
    """
    lower = np.full(len(targets), np.nan)
    upper = np.full(len(targets), np.nan)
    state = np.zeros(len(targets), dtype=np.int8)
    exact = np.zeros(len(targets), dtype=bool)
    solves = 0
    settled = _settled(known, targets, need_lo, need_hi)
    sub_csc = sub.tocsc()
    for out in np.flatnonzero(~settled):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        cell = int(targets[out])
        near = relation_neighbourhood(sub, sub_csc, cell, LOCAL_HOPS, LOCAL_CELLS)
        (a, b), (c, d), k = _local_intervals(sub, rhs, ub, truth, cell, near)
        solves += k
        a, b = min(a, known[0][cell]), max(b, known[1][cell])
        if (
            b - a >= EXACT_TOLERANCE
            and a <= need_lo[out] + EXACT_TOLERANCE
            and b >= need_hi[out] - EXACT_TOLERANCE
        ):
            lower[out], upper[out], state[out] = a, b, 1
        elif (
            d - c < EXACT_TOLERANCE
            or c > need_lo[out] + EXACT_TOLERANCE
            or d < need_hi[out] - EXACT_TOLERANCE
        ):
            lower[out], upper[out], state[out] = c, d, 2
            exact[out] = d - c < EXACT_TOLERANCE
    return lower, upper, state, exact, solves


def _deviation_witnesses(
    matrix: sparse.csr_matrix,
    hidden: np.ndarray,
    published: np.ndarray,
    truth: np.ndarray,
    ub: np.ndarray,
    deviations: Sequence[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest value of every cell over the feasible tables along ``deviations``.

    A direction ``s`` (zero off its positions) with ``R s = 0`` that moves
    hidden cells only keeps every published cell and every relation, so
    ``truth + t s`` is a table the attacker cannot exclude for every ``t``
    that keeps each moved cell within ``[0, ub]`` (the true table being one:
    ``R truth = 0`` and equal to ``published`` off the hidden cells, else
    nothing is returned). Each direction is checked; one that fails is
    ignored. Cells no direction moves get their true value on both sides
    (until session 9 they got ``inf`` / ``-inf``, which kept every component
    holding such a cell off the local LPs); ``inf`` / ``-inf`` everywhere
    when the true table is not one the attacker sees as possible.
    """
    n = len(hidden)
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    truth = np.asarray(truth, dtype=np.float64)
    if (
        not np.isfinite(truth).all()
        or np.abs(matrix @ truth).max(initial=0.0) > EXACT_TOLERANCE
        or np.abs(truth - published)[~hidden].max(initial=0.0) > EXACT_TOLERANCE
    ):
        return low, high  # the true table is not one the attacker sees as possible
    if not deviations:  # the true table alone
        return truth.copy(), truth.copy()
    sizes = np.array([len(p) for p, _ in deviations], dtype=np.int64)
    cert = np.repeat(np.arange(len(deviations)), sizes)
    pos = np.concatenate([np.asarray(p, dtype=np.int64) for p, _ in deviations])
    sgn = np.concatenate([np.asarray(g, dtype=np.float64) for _, g in deviations])
    directions = sparse.csc_matrix((sgn, (pos, cert)), shape=(n, len(deviations)))
    residual = abs(matrix @ directions).max(axis=0).toarray().ravel()
    bad = (residual > EXACT_TOLERANCE) | (np.bincount(cert, ~hidden[pos], len(sizes)) > 0)
    x, room = truth[pos], ub[pos] - truth[pos]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(sgn < 0, x / -sgn, np.where(sgn > 0, room / sgn, np.inf))
        down = np.where(sgn > 0, x / sgn, np.where(sgn < 0, room / -sgn, np.inf))
    t_up, t_down = np.full(len(sizes), np.inf), np.full(len(sizes), np.inf)
    np.minimum.at(t_up, cert, up)
    np.minimum.at(t_down, cert, down)
    # an unbounded direction: any finite step is as good a witness
    cap = 2.0 * float(np.abs(truth).max(initial=0.0)) + 1.0
    t_up, t_down = np.minimum(t_up, cap), np.minimum(t_down, cap)
    keep = ~bad[cert]
    pos, sgn, cert, x = pos[keep], sgn[keep], cert[keep], x[keep]
    moved = (x + t_up[cert] * sgn, x - t_down[cert] * sgn)
    np.minimum.at(low, pos, np.minimum(*moved))
    np.maximum.at(high, pos, np.maximum(*moved))
    # the true table itself is feasible: every cell's range holds its true value, so a
    # cell no direction moves gets ``[truth, truth]`` (finite), never ``inf`` / ``-inf``
    np.minimum(low, truth, out=low)
    np.maximum(high, truth, out=high)
    return low, high


def _settled(
    known: tuple[np.ndarray, np.ndarray],
    targets: np.ndarray,
    need_lo: np.ndarray,
    need_hi: np.ndarray,
) -> np.ndarray:
    """Whether each target's witnessed range reaches what it needs on both sides."""
    low, high = known[0][targets], known[1][targets]
    asked = need_lo <= need_hi
    reached = (
        (high - low >= EXACT_TOLERANCE)
        & (low <= need_lo + EXACT_TOLERANCE)
        & (high >= need_hi - EXACT_TOLERANCE)
    )
    return ~asked | reached


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
    need = (values - lower, values + upper)
    lo, hi, _ = attacker_intervals(relations, values, hidden, cells=cells, need=need)
    return bool(
        np.all(lo <= values[cells] - lower[cells] + EXACT_TOLERANCE)
        and np.all(hi >= values[cells] + upper[cells] - EXACT_TOLERANCE)
    )


def _component_model(sub: sparse.csr_matrix, rhs: np.ndarray, ub: np.ndarray) -> highspy.Highs:
    """One HiGHS model of ``sub h = rhs``, ``0 <= h <= ub`` (zero objective, presolve off).

    Presolve is off so that every solve after the first starts from the previous optimal basis.
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
    h.setOptionValue("presolve", "off")
    h.passModel(lp)
    return h


class _OutOfTime(Exception):
    """The audit's ``time_limit`` ran out during an LP."""


def _within(h: highspy.Highs, deadline: float | None) -> None:
    """Give HiGHS the time left before ``deadline``; raise :class:`_OutOfTime` when none is."""
    if deadline is None:
        return
    left = deadline - time.perf_counter()
    if left <= 0:
        raise _OutOfTime
    h.setOptionValue("time_limit", left)


def _run(h: highspy.Highs) -> str:
    """Solve; ``"optimal"`` or ``"unbounded"``, an InfeasibleError otherwise.

    Raises :class:`_OutOfTime` when HiGHS's time limit (set by :func:`_within`) stopped it.
    """
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return "optimal"
    if status == highspy.HighsModelStatus.kUnbounded:
        return "unbounded"
    if status == highspy.HighsModelStatus.kTimeLimit:
        raise _OutOfTime
    if status == highspy.HighsModelStatus.kInfeasible:
        raise InfeasibleError(
            "the published cells contradict the table's relations (no non-negative "
            "table fits them): the audit needs the published values of this table"
        )
    raise InfeasibleError(
        f"the attacker's linear programme ended with status {h.modelStatusToString(status)!r}"
    )


def _exact_intervals(
    h: highspy.Highs, targets: np.ndarray, deadline: float | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Min and max of each target column of the model in ``h``, two LPs each.

    Each solve changes only the objective (and its sense), so it starts from
    the previous optimal basis. Raises :class:`_OutOfTime` past ``deadline``.
    """
    lower = np.empty(len(targets))
    upper = np.empty(len(targets))
    solves = 0
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
            _within(h, deadline)
            solves += 1
            if _run(h) == "unbounded":
                target[out] = np.inf
            else:
                target[out] = h.getInfo().objective_function_value
    if previous is not None:
        h.changeColCost(previous, 0.0)
    return lower, upper, solves


def _feasible_with(h: highspy.Highs, column: int, low: float, high: float, ub: float) -> bool:
    """Whether some table of the model has ``low <= h_column <= high`` (zero objective).

    The column's bounds are set, the model solved from the last basis (with a
    zero objective every basis is dual feasible, so the dual simplex only
    restores primal feasibility, a few pivots for one changed bound), and the
    bounds restored to ``[0, ub]``.
    """
    inf = highspy.kHighsInf
    h.changeColBounds(column, max(low, 0.0), inf if np.isinf(high) else high)
    h.run()
    status = h.getModelStatus()
    h.changeColBounds(column, 0.0, inf if np.isinf(ub) else ub)
    if status == highspy.HighsModelStatus.kOptimal:
        return True
    if status == highspy.HighsModelStatus.kInfeasible:
        return False
    if status == highspy.HighsModelStatus.kTimeLimit:
        raise _OutOfTime
    raise InfeasibleError(
        f"the attacker's linear programme ended with status {h.modelStatusToString(status)!r}"
    )


class _Witness:
    """Smallest and largest value of every column over the feasible tables found so far.

    A feasible table is a table the attacker cannot exclude: if one has
    ``h_j >= value_j + upper_protection_j`` and another ``h_j <= value_j -
    lower_protection_j`` (and they differ in ``h_j``), cell ``j`` is
    protected whatever its exact interval, which only contains theirs. This
    is the filtering of optimisation-based bound tightening (Gleixner,
    Berthold, Müller & Weltge (2017), §3): an LP is solved only for the cells
    no table found so far settles.
    """

    def __init__(self, n: int, targets: np.ndarray, need_lo: np.ndarray, need_hi: np.ndarray):
        self.low = np.full(n, np.inf)
        self.high = np.full(n, -np.inf)
        self.targets = targets
        self.need_lo = need_lo
        self.need_hi = need_hi
        self.solves = 0  # feasibility LPs of :func:`_settle_one`

    def add(self, x: np.ndarray) -> None:
        np.minimum(self.low, x, out=self.low)
        np.maximum(self.high, x, out=self.high)

    def open_sides(self) -> tuple[np.ndarray, np.ndarray]:
        """Targets (positions in ``targets``) not yet settled from below, and from above."""
        low, high = self.low[self.targets], self.high[self.targets]
        narrow = (high - low < EXACT_TOLERANCE) & (self.need_lo <= self.need_hi)
        return (
            narrow | (low > self.need_lo + EXACT_TOLERANCE),
            narrow | (high < self.need_hi - EXACT_TOLERANCE),
        )

    def done(self, out: int) -> bool:
        """Whether target ``out`` is settled on both sides."""
        j = self.targets[out]
        low, high = self.low[j], self.high[j]
        if self.need_lo[out] > self.need_hi[out]:
            return True  # nothing asked of this cell
        return bool(
            high - low >= EXACT_TOLERANCE
            and low <= self.need_lo[out] + EXACT_TOLERANCE
            and high >= self.need_hi[out] - EXACT_TOLERANCE
        )


#: Components with at least this many hidden cells solve each LP afresh (presolve and the
#: interior point method, with crossover to a vertex) rather than by the dual simplex from
#: the previous basis: on a component of 15,000 cells one LP took 1.7 s of CPU so, against
#: 3-11 s from the previous basis (docs/benchmarks.md, session 7).
LARGE_COMPONENT = 5_000


def _solve_afresh(h: highspy.Highs) -> None:
    """Solve every later LP of ``h`` with presolve and the interior point method.

    Crossover stays on, so an optimum is a vertex (a table that takes some cells to their
    extremes), as the dual simplex would give.
    """
    h.setOptionValue("presolve", "on")
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "on")


#: Most rounds of the witness search before the remaining cells get their own LPs.
WITNESS_ROUNDS = 40
#: A round settling fewer than this share of the open cells is the last one.
ROUND_GAIN = 0.05


def _witness_intervals(
    h: highspy.Highs,
    ub: np.ndarray,
    scale: float,
    targets: np.ndarray,
    need_lo: np.ndarray,
    need_hi: np.ndarray,
    *,
    seed: tuple[np.ndarray, np.ndarray] | None = None,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """Intervals that settle protection: witnessed by feasible tables, exact only where needed.

    Each round solves two LPs, one maximising the sum of the targets whose
    upper protection no table found so far reaches, one minimising the sum of
    those unsettled from below; every optimal table is a witness
    (:class:`_Witness`). The rounds stop when one settles less than
    ``ROUND_GAIN`` of the open targets; each target still open then gets one
    feasibility LP per open side (:func:`_feasible_with`, a table reaching
    the side's required value), and a target with a side no table reaches,
    or that cannot move at all, gets its two exact LPs
    (:func:`_exact_intervals`).
    During the rounds unbounded columns are capped (a capped table is still a
    table the attacker cannot exclude). A target with ``need_lo > need_hi``
    asks nothing: it gets the range of the witnesses found for the others
    (NaN when none was). ``scale``: the largest published sum in the
    relations, from which the cap starts. ``seed``: the lowest and highest
    value of each column over feasible tables already known. ``deadline``
    (:func:`time.perf_counter`): no LP runs past it; the targets not settled
    by then keep the witnessed range (NaN where none) and are flagged.

    Returns the lower and upper ends, whether each target's ends are the
    exact LP optimum (False: attained by a feasible table, the exact interval
    is at least as wide), the number of LPs solved, and whether each target
    was left unsettled by ``deadline`` (its protection not proven).
    """
    n = len(ub)
    witness = _Witness(n, targets, need_lo, need_hi)
    if seed is not None:  # feasible tables known before any LP (the true table, deviations)
        np.minimum(witness.low, seed[0], out=witness.low)
        np.maximum(witness.high, seed[1], out=witness.high)
    finite = np.concatenate(
        [
            need_hi[np.isfinite(need_hi)],
            ub[np.isfinite(ub)],
            witness.high[np.isfinite(witness.high)],
            [scale, 1.0],
        ]
    )
    cap = 2.0 * float(np.max(np.abs(finite))) + 1.0
    columns = np.flatnonzero(np.isinf(ub))
    solves = 0
    if n >= LARGE_COMPONENT:
        _solve_afresh(h)
    # a feasible table is known for every column (the true table): it fits under the cap,
    # so the capped model is feasible and needs no LP to show it
    known = bool(np.isfinite(witness.high).all())
    if known and len(columns):
        h.changeColsBounds(
            len(columns), columns, np.zeros(len(columns)), np.full(len(columns), cap)
        )
    out_of_time = False
    for _ in range(0 if known else 6):  # a cap too low for some table of the relations: raise it
        try:
            _within(h, deadline)
        except _OutOfTime:
            out_of_time = True
            break
        if len(columns):
            h.changeColsBounds(
                len(columns), columns, np.zeros(len(columns)), np.full(len(columns), cap)
            )
        h.changeObjectiveSense(highspy.ObjSense.kMinimize)
        solves += 1
        if h.run() == highspy.HighsStatus.kOk and (
            h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        ):
            witness.add(np.asarray(h.getSolution().col_value))
            break
        if h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
            out_of_time = True
            break
        cap *= 10.0
    else:
        if not known:
            _run(h)  # no cap fits: the published cells themselves contradict the relations
    cost = np.zeros(n)
    for _ in range(0 if out_of_time else WITNESS_ROUNDS):
        down, up = witness.open_sides()
        before = int((down | up).sum())
        for sense, side in ((highspy.ObjSense.kMaximize, 1), (highspy.ObjSense.kMinimize, 0)):
            down, up = witness.open_sides()
            chosen = targets[up if side else down]
            if len(chosen) == 0:
                continue
            cost[:] = 0.0
            cost[chosen] = 1.0
            h.changeColsCost(n, np.arange(n), cost)
            h.changeObjectiveSense(sense)
            try:
                _within(h, deadline)
                solves += 1
                _run(h)
            except _OutOfTime:
                out_of_time = True
                break
            witness.add(np.asarray(h.getSolution().col_value))
        if out_of_time:
            break
        down, up = witness.open_sides()
        still = int((down | up).sum())
        if still == 0 or before - still < ROUND_GAIN * before:
            break  # the cells left are cheaper one by one
    h.changeColsCost(n, np.arange(n), np.zeros(n))
    h.changeObjectiveSense(highspy.ObjSense.kMinimize)
    if len(columns):
        h.changeColsBounds(len(columns), columns, np.zeros(len(columns)), ub[columns])
    # each cell still open: one feasibility LP per open side; a side no table reaches
    # means the cell is exposed, and it gets its exact interval
    exact = np.zeros(len(targets), dtype=bool)
    left = np.zeros(len(targets), dtype=bool)
    step = 2 * EXACT_TOLERANCE
    for out, k in enumerate(targets):
        if witness.done(out):
            continue
        if out_of_time:
            left[out] = True
            continue
        try:
            if _settle_one(h, witness, out, int(k), float(ub[k]), step, deadline):
                exact[out] = True
        except _OutOfTime:
            out_of_time = left[out] = True
    seen = np.isfinite(witness.low[targets])
    lower = np.where(seen, witness.low[targets], np.nan)
    upper = np.where(seen, witness.high[targets], np.nan)
    if exact.any() and not out_of_time:
        try:
            lo, hi, exact_solves = _exact_intervals(h, targets[exact], deadline)
            lower[exact], upper[exact] = lo, hi
            solves += exact_solves
        except _OutOfTime:
            out_of_time = True
    if out_of_time:
        # a cell a side of which no table reaches is exposed, but its exact interval was not
        # computed: it keeps its witnessed range, flagged as unsettled (reported exposed)
        left |= exact
        exact[:] = False
    return lower, upper, exact, solves + witness.solves, left


def _settle_one(
    h: highspy.Highs,
    witness: _Witness,
    out: int,
    column: int,
    bound: float,
    step: float,
    deadline: float | None,
) -> bool:
    """Feasibility LPs for open target ``out`` (model column ``column``, upper bound ``bound``).

    One LP per open side (a table reaching the side's required value); when
    both are reached but the range is still a point, whether the cell can move
    at all. Each table found is a witness; the LPs are counted in
    ``witness.solves``. Returns True when a side cannot be reached or the cell
    cannot move (the cell is exposed and needs its exact interval).
    """
    lo_need, hi_need = float(witness.need_lo[out]), float(witness.need_hi[out])
    sides = []
    if witness.high[column] < hi_need - EXACT_TOLERANCE:
        sides.append((hi_need, np.inf))
    if witness.low[column] > lo_need + EXACT_TOLERANCE:
        sides.append((-np.inf, lo_need))
    for low, high in sides:
        _within(h, deadline)
        witness.solves += 1
        if not _feasible_with(h, column, low, high, bound):
            return True
        witness.add(np.asarray(h.getSolution().col_value))
    if witness.done(out):
        return False
    # both ends reached but the interval is still a point: can the cell move at all?
    moves = [(hi_need + step, np.inf)] + ([(-np.inf, lo_need - step)] if lo_need >= step else [])
    for low, high in moves:
        _within(h, deadline)
        witness.solves += 1
        if _feasible_with(h, column, low, high, bound):
            witness.add(np.asarray(h.getSolution().col_value))
            return False
    return True


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


def judge_intervals(
    relations: sparse.spmatrix,
    truth: np.ndarray,
    seen: np.ndarray,
    hidden: np.ndarray,
    needs: np.ndarray,
    levels: tuple[np.ndarray, np.ndarray],
    *,
    labels: pd.DataFrame,
    upper_bounds: np.ndarray | None = None,
    intervals: str = "exact",
    deviations: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    time_limit: float | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The attacker's interval of every hidden cell under ``relations`` and the verdict.

    The comparison :func:`audit_suppression` makes, on any set of relations
    (one table's, or the stacked relations of linked tables over their
    distinct cells). ``levels`` is ``(lower, upper)`` protection per cell;
    ``needs`` marks the cells that need protection (without any, every
    hidden cell is checked for exact disclosure); ``labels`` has one row per
    cell and starts the report; ``deviations`` as in
    :func:`attacker_intervals` (settled intervals only), and ``time_limit`` (settled
    intervals only: a cell left unsettled is reported exposed, ``"not settled"``).
    Returns the report (the rows of :attr:`AuditResult.cells`) and the statistics but
    ``cells``.
    """
    lpl, upl = levels
    check_all = not needs.any()
    asked = needs | check_all
    need = None
    if intervals == "settle":
        need = (np.where(asked, truth - lpl, np.inf), np.where(asked, truth + upl, -np.inf))
    start = time.perf_counter()
    optimal = np.zeros(int(hidden.sum()), dtype=bool)
    outer = np.zeros(int(hidden.sum()), dtype=bool)
    unsettled = np.zeros(int(hidden.sum()), dtype=bool)
    lower, upper, solves = attacker_intervals(
        relations,
        np.nan_to_num(seen),
        hidden,
        upper_bounds=upper_bounds,
        need=need,
        exact=optimal,
        truth=truth,
        deviations=deviations,
        outer=outer,
        time_limit=time_limit if intervals == "settle" else None,
        unsettled=unsettled,
    )
    seconds = time.perf_counter() - start
    # a cell that needs protection but was published is the plainest exposure of all
    shown = np.flatnonzero(needs & ~hidden)
    cells = np.concatenate([np.flatnonzero(hidden), shown])
    lower = np.concatenate([lower, truth[shown]])
    upper = np.concatenate([upper, truth[shown]])
    optimal = np.concatenate([optimal, np.ones(len(shown), dtype=bool)])
    outer = np.concatenate([outer, np.zeros(len(shown), dtype=bool)])
    unsettled = np.concatenate([unsettled, np.zeros(len(shown), dtype=bool)])
    required = needs[cells]
    # an inner bound of width zero proves nothing: exact disclosure needs the exact interval
    exact = (upper - lower < EXACT_TOLERANCE) & optimal
    narrow = (lower > truth[cells] - lpl[cells] + EXACT_TOLERANCE) | (
        upper < truth[cells] + upl[cells] - EXACT_TOLERANCE
    )
    # a cell the time limit left unsettled has no proof of protection: it counts as exposed
    exposed = ((narrow | unsettled) & required) | (exact & (required | check_all))
    exposed |= unsettled & check_all
    report = labels.iloc[cells].reset_index(drop=True)
    report["value"] = truth[cells]
    report["suppressed"] = hidden[cells]
    report["lower"] = lower
    report["upper"] = upper
    report["lower_protection"] = lpl[cells]
    report["upper_protection"] = upl[cells]
    report["exact"] = exact
    report["interval"] = np.where(
        optimal,
        "exact",
        np.where(
            outer,
            "outer bound",
            np.where(
                unsettled,
                "not settled",
                np.where(np.isnan(lower), "not computed", "inner bound"),
            ),
        ),
    )
    report["exposed"] = exposed
    stats = {
        "suppressed": int(hidden.sum()),
        "published_primary": len(shown),
        "exposed": int(exposed.sum()),
        "exact": int(exact.sum()),
        "unsettled": int(unsettled.sum()),
        "lp_solves": solves,
        "intervals": intervals,
        "seconds": seconds,
        "levels_given": not check_all,
    }
    return report, stats


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
    intervals: str = "exact",
    deviations: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    time_limit: float | None = None,
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
    intervals : {"exact", "settle"}, default "exact"
        ``"exact"``: two LPs per suppressed cell, every interval exact.
        ``"settle"``: only what the verdict needs, for large tables: a cell
        is settled by feasible tables found along the way (one reaching its
        upper protection, one its lower; Gleixner et al. (2017), §3), and
        gets its own two LPs only when none is found. The verdict (which
        cells are exposed) is the same; the ``interval`` column says which
        intervals are exact and which are inner bounds of the exact one.
    deviations : list of (positions, signs), optional
        With ``intervals="settle"``: directions in which the true table can
        move, each a pair of arrays (cell positions in the structure, signs),
        such as the hypercubes :func:`sdckit.tables.suppress` chose. Each is
        verified (it keeps every relation and moves suppressed cells only);
        the farthest non-negative tables along it are then tables the
        attacker cannot exclude, which settle cells with no LP of their own.
        The verdict does not depend on them, only the time.
    time_limit : float, optional
        With ``intervals="settle"``: seconds (wall clock) for all the audit's
        LPs. A cell still unsettled when they run out is reported exposed
        with ``interval`` ``"not settled"`` (its protection is not proven;
        it is not shown exposed either), counted in ``stats["unsettled"]``.
        Default: no limit, every cell settled.

    Returns
    -------
    AuditResult
        One row per suppressed cell with its interval, and the exposed cells.
    """
    frame = check_dataframe(table, "table")
    if intervals not in ("exact", "settle"):
        raise ParameterError(f"intervals must be 'exact' or 'settle', got {intervals!r}")
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
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
    needs = (upl > 0) | (lpl > 0)
    if "primary" in frame.columns:
        needs[positions] |= frame["primary"].fillna(False).astype(bool).to_numpy()
    report, stats = judge_intervals(
        relations,
        truth,
        seen,
        hidden,
        needs,
        (lpl, upl),
        labels=structure.labels(),
        upper_bounds=bounds,
        intervals=intervals,
        deviations=deviations,
        time_limit=time_limit,
    )
    stats = {"cells": structure.n_cells, **stats}
    params = {
        "dims": list(structure.dims),
        "value": value,
        "protection": protection,
        "intervals": intervals,
        "time_limit": time_limit,
    }
    return AuditResult(report, params, stats)
