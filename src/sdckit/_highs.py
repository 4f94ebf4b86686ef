"""One linear or mixed integer programme solved by HiGHS (Huangfu & Hall 2018) through ``highspy``.

Shared by the table methods that solve a programme: controlled tabular
adjustment (:mod:`sdckit.tables.additivity`), secondary cell suppression
(:mod:`sdckit.tables.suppression`), the audit of a suppressed table
(:mod:`sdckit.tables.audit`) and the interval attack on a published table
(:mod:`sdckit.attacks.tables`).
"""

from __future__ import annotations

import os
import sys

import highspy
import numpy as np
from scipy import sparse

from sdckit.errors import InfeasibleError

__all__ = ["NoTableInTime", "Programme", "load_highs", "new_highs", "solve_highs"]

_BANNER_SHOWN = False


class NoTableInTime(InfeasibleError):
    """HiGHS reached its time limit before any integer table."""


def new_highs() -> highspy.Highs:
    """A Highs instance, its banner kept off the command line's output.

    The first instance's copyright banner is printed by the C++ library on
    standard output, before any option can be set; it is sent to the null device.

    Returns
    -------
    highspy.Highs
        A new solver.
    """
    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        return highspy.Highs()
    _BANNER_SHOWN = True
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


#: ``cost, matrix, row_lo, row_hi, var_lo, var_hi, integer``: one programme, as
#: :func:`solve_highs` takes it (``integer`` None for a linear programme).
Programme = tuple[
    np.ndarray, sparse.csc_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None
]


def load_highs(
    programme: Programme,
    time_limit: float | None,
    lp_solver: str = "choose",
    options: dict[str, float] | None = None,
) -> highspy.Highs:
    """A silent Highs instance holding the programme of :func:`solve_highs`, not yet run.

    For a caller that solves a sequence of related linear programmes (bounds
    changed between runs, each run hot-started from the last basis).

    Parameters
    ----------
    programme : tuple
        ``cost, matrix, row_lo, row_hi, var_lo, var_hi, integer``, as
        :func:`solve_highs` takes them.
    time_limit : float or None
        Seconds HiGHS may take in each run (wall clock).
    lp_solver : {"choose", "simplex", "ipm"}, default "choose"
        As in :func:`solve_highs`.
    options : dict, optional
        Further HiGHS options by name, as in :func:`solve_highs`.

    Returns
    -------
    highspy.Highs
        The solver with the model passed and its options set.
    """
    cost, matrix, row_lo, row_hi, var_lo, var_hi, integer = programme
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = len(cost)
    lp.num_row_ = matrix.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = var_lo
    lp.col_upper_ = np.where(np.isinf(var_hi), inf, var_hi)
    lp.row_lower_ = np.where(np.isinf(row_lo), -inf, row_lo)
    lp.row_upper_ = np.where(np.isinf(row_hi), inf, row_hi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr
    lp.a_matrix_.index_ = matrix.indices
    lp.a_matrix_.value_ = matrix.data
    if integer is not None:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous
            for flag in integer
        ]
    h = new_highs()
    h.setOptionValue("output_flag", False)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if integer is None:
        h.setOptionValue("solver", lp_solver)
    for name, setting in (options or {}).items():
        h.setOptionValue(name, setting)
    h.passModel(lp)
    return h


def solve_highs(
    cost: np.ndarray,
    matrix: sparse.csc_matrix,
    row_lo: np.ndarray,
    row_hi: np.ndarray,
    var_lo: np.ndarray,
    var_hi: np.ndarray,
    integer: np.ndarray | None,
    time_limit: float | None,
    info: dict | None,
    start: np.ndarray | None = None,
    lp_solver: str = "choose",
    options: dict[str, float] | None = None,
) -> tuple[np.ndarray | None, str]:
    """Solve one (mixed integer) linear programme with highspy; the best table within the limit.

    Minimise ``cost @ x`` subject to ``row_lo <= matrix @ x <= row_hi`` and
    ``var_lo <= x <= var_hi``.

    Parameters
    ----------
    cost : ndarray
        One cost per variable.
    matrix : scipy.sparse.csc_matrix
        The constraint matrix, rows x variables.
    row_lo, row_hi : ndarray
        Bounds of each row (infinite where there is none).
    var_lo, var_hi : ndarray
        Bounds of each variable (infinite where there is none).
    integer : ndarray of bool or None
        Which variables are integer; None for a linear programme.
    time_limit : float or None
        Seconds HiGHS may take.
    info : dict or None
        Filled with ``status``, ``objective`` and, for an integer programme,
        ``mip_gap`` and ``dual_bound``.
    start : ndarray, optional
        A feasible point, handed to HiGHS as its first incumbent (a warm
        start, which scipy's interface does not accept).
    lp_solver : {"choose", "simplex", "ipm"}, default "choose"
        HiGHS's ``solver`` option for a linear programme (``"ipm"``: the
        interior point method with crossover, far faster than the simplex on
        the large, degenerate relaxations of controlled tabular adjustment).
    options : dict, optional
        Further HiGHS options by name (e.g. ``{"mip_heuristic_effort": 0.3}``).

    Returns
    -------
    tuple
        ``(x, status)``: the solution (None when there is none) and HiGHS's
        model status as text. Raises :class:`NoTableInTime` when the limit
        is reached before any feasible point.
    """
    h = load_highs(
        (cost, matrix, row_lo, row_hi, var_lo, var_hi, integer), time_limit, lp_solver, options
    )
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = list(start)
        solution.value_valid = True
        h.setSolution(solution)
    h.run()
    status = h.getModelStatus()
    text = h.modelStatusToString(status)
    solved = h.getInfo()
    feasible = solved.primal_solution_status == 2  # kSolutionStatusFeasible
    if info is not None:
        info["status"] = text
        info["objective"] = float(solved.objective_function_value) if feasible else None
        if integer is not None:
            info["mip_gap"] = float(solved.mip_gap) if feasible else None
            info["dual_bound"] = float(solved.mip_dual_bound)
    if status == highspy.HighsModelStatus.kOptimal or (
        feasible
        and status
        in (
            highspy.HighsModelStatus.kTimeLimit,
            highspy.HighsModelStatus.kInterrupt,
            highspy.HighsModelStatus.kSolutionLimit,
            highspy.HighsModelStatus.kIterationLimit,
        )
    ):
        return np.asarray(h.getSolution().col_value), text
    if status in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kIterationLimit):
        raise NoTableInTime(
            f"restore_additivity: HiGHS stopped ({text}) before finding any table; raise time_limit"
        )
    return None, text
