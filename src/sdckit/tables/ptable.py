"""Design of zero-mean, fixed-variance perturbation tables without small cells.

Giessing & Höhne (2011), Section 3.1, after Fraser & Wooton (2006).
The transition matrix ``P`` holds ``p_ij = P(perturbed count j | original i)``
with

1. ``p_i . v_i = 0`` (zero mean noise, ``v_i`` the deviations ``j - i``),
2. ``p_i . v_i^2 = V`` (fixed variance),
3. ``p_ij = 0`` for ``j`` in ``1..js`` (no small perturbed counts),
4. rows sum to one, 5. ``|j - i| <= D``, 6. ``p_00 = 1``, 7. ``0 <= p_ij``,
8. the last row ``i = D + js + 1`` is symmetric and serves every larger count.

For each row these are a few linear equations in the row's free entries
(system (9) of the paper); most rows are underdetermined, so an objective
picks one solution: maximum entropy (the spread-out, "smooth" choice the
paper reaches by fitting normal tails) or a linear programme minimising the
expected absolute deviation. Optional constraints are those the paper
suggests: a fixed probability ``pstay`` of no change and monotone tails.

A row where ``V`` cannot be reached (count 1 with ``js = 2`` needs
``V >= 2``; a fixed ``pstay`` caps the variance) gets the closest attainable
variance, and the row is listed in :attr:`PTable.adjusted_rows`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linprog, minimize
from scipy.stats import norm

from sdckit._results import FrozenResult
from sdckit._validation import check_fraction, check_int, check_positive
from sdckit.errors import DataError, InfeasibleError, ParameterError

__all__ = ["PTable", "design_ptable"]

_TOL = 1e-9


@dataclass(frozen=True)
class PTable(FrozenResult):
    """A perturbation (transition) table for counts.

    Attributes
    ----------
    matrix : ndarray, shape (L, L + D)
        ``matrix[i, j]`` = probability that count ``i`` becomes ``j``; row
        ``L - 1 = D + js + 1`` applies, shifted, to every count ``>= L - 1``.
    D : int
        Maximum absolute deviation.
    V : float
        Target variance.
    js : int
        Perturbed counts ``1..js`` never occur.
    variances : ndarray, shape (L,)
        Variance achieved in each row (row 0: 0).
    adjusted_rows : mapping
        ``{row: (attainable low, attainable high)}`` for rows whose variance
        differs from ``V`` because ``V`` lies outside the attainable range.
    params : mapping
        The design parameters.
    large_counts : {"last_row", "cycle"}, default "last_row"
        Which row serves a count beyond the last row ``L - 1``. ``"last_row"``:
        the last row, shifted (tau-ARGUS, R ptable, Giessing & Höhne 2011,
        condition 8). ``"cycle"``: rows ``cycle_start..L-1`` are reused in
        turn — the convention of the ONS ``cell-key-perturbation`` p-tables
        (750 rows, rows 501-750 reused for 751-1000, 1001-1250, ...), needed
        where the rows differ, as in a rounding table.
    cycle_start : int, optional
        First reused row with ``large_counts="cycle"``.
    key_grid : ndarray of int, shape (L, K), optional
        The deviation for each integer cell key ``0..K-1`` of each row, for a
        table given key by key (the ONS layout: ``pcv, ckey, pvalue``). With
        it, a cell key ``c`` selects ``key_grid[row, c]`` exactly, whatever
        the order of the keys; without it, the row's cumulative
        probabilities do (Giessing & Höhne 2011, §4).
    """

    matrix: np.ndarray
    D: int
    V: float
    js: int
    variances: np.ndarray
    adjusted_rows: Mapping[int, tuple[float, float]] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    large_counts: str = "last_row"
    cycle_start: int | None = None
    key_grid: np.ndarray | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.large_counts not in ("last_row", "cycle"):
            raise ParameterError(
                f"large_counts must be 'last_row' or 'cycle', got {self.large_counts!r}"
            )
        if self.large_counts == "cycle" and not (
            self.cycle_start is not None and 1 <= self.cycle_start < self.matrix.shape[0]
        ):
            raise ParameterError(
                f"large_counts='cycle' needs cycle_start in 1..{self.matrix.shape[0] - 1}, "
                f"got {self.cycle_start!r}"
            )
        if self.key_grid is not None and (
            self.key_grid.ndim != 2 or self.key_grid.shape[0] != self.matrix.shape[0]
        ):
            raise ParameterError(
                f"key_grid must have one row per table row ({self.matrix.shape[0]}), "
                f"got shape {self.key_grid.shape}"
            )

    @property
    def key_range(self) -> int | None:
        """Number of integer cell keys ``K`` of a key-by-key table (None otherwise)."""
        return None if self.key_grid is None else int(self.key_grid.shape[1])

    def rows_for(self, counts: np.ndarray) -> np.ndarray:
        """The table row that serves each count (see ``large_counts``).

        Parameters
        ----------
        counts : array of int
            Non-negative counts.

        Returns
        -------
        ndarray of int64
            Row indices in ``0..L-1``.
        """
        counts = np.asarray(counts, dtype=np.int64)
        last = self.n_rows - 1
        if self.large_counts == "last_row" or self.cycle_start is None:
            return np.minimum(counts, last)
        start = self.cycle_start
        period = self.n_rows - start
        return np.where(counts <= last, counts, (counts - start) % period + start)

    @property
    def n_rows(self) -> int:
        """Number of distinct rows ``L`` (counts 0..L-1; larger counts reuse the last)."""
        return self.matrix.shape[0]

    def deviation_probabilities(self) -> np.ndarray:
        """Array (L, 2D + 1): probability of deviation ``d = -D..D`` for each row."""
        L, D = self.n_rows, self.D
        out = np.zeros((L, 2 * D + 1))
        for i in range(L):
            for d in range(-D, D + 1):
                j = i + d
                if 0 <= j < self.matrix.shape[1]:
                    out[i, d + D] = self.matrix[i, j]
        return out

    def transition(self, count: int) -> pd.Series:
        """Distribution of the perturbed value of ``count`` (index: perturbed counts)."""
        count = check_int(count, "count", minimum=0)
        row = int(self.rows_for(np.array([count]))[0])
        dev = self.deviation_probabilities()[row]
        values = count + np.arange(-self.D, self.D + 1)
        keep = (values >= 0) & (dev > 0)
        return pd.Series(dev[keep], index=pd.Index(values[keep], name="j"), name=f"p({count}->j)")

    def lost_in_tidy_layout(self) -> list[str]:
        """What the tidy (R ptable, tau-ARGUS) layout cannot hold of this table.

        That layout has one row per transition, its last row serving every
        larger count, and a cell key selects by the row's cumulative
        probabilities. A table read from an ONS file can differ on both
        counts: rows reused in turn for large counts, and a noise given for
        each integer cell key in an order the cumulative probabilities do
        not reproduce.

        Returns
        -------
        list of str
            One phrase per feature that writing in the tidy layout would
            drop; empty when the tidy layout holds the table exactly.
        """
        lost = []
        if self.large_counts == "cycle" and self._cycle_rows_differ():
            lost.append(
                f"rows {self.cycle_start}..{self.n_rows - 1} reused in turn for counts "
                f"above {self.n_rows - 1} (the tidy layout would serve them all by row "
                f"{self.n_rows - 1})"
            )
        if self.key_grid is not None and not _grid_is_cumulative(self):
            lost.append(
                f"the noise given key by key for {self.key_range} cell keys (the tidy "
                "layout selects by cumulative probability, which gives other cells "
                "other noise)"
            )
        return lost

    def _cycle_rows_differ(self) -> bool:
        """Whether a reused row differs from the last (then the cycle matters)."""
        start = self.cycle_start if self.cycle_start is not None else self.n_rows - 1
        rows = (
            self.key_grid[start:]
            if self.key_grid is not None
            else self.deviation_probabilities()[start:]
        )
        return bool((rows != rows[-1]).any())

    def to_frame(self, *, probabilities_only: bool = False) -> pd.DataFrame:
        """Tidy export: one row per non-zero transition.

        Columns ``i``, ``j``, ``p``, ``v = j - i``, and the interval
        ``[p_int_lb, p_int_ub)`` of the row's cumulative probabilities that
        maps a uniform cell key to this transition; ``i`` of the last row
        stands for every larger count (as in tau-ARGUS and R's ptable files).

        Parameters
        ----------
        probabilities_only : bool, default False
            A table the tidy layout cannot hold exactly (see
            :meth:`lost_in_tidy_layout`: rows reused in turn, noise given key
            by key) is refused unless this is True; then only its transition
            probabilities are exported.

        Returns
        -------
        DataFrame
            One row per non-zero transition.

        Raises
        ------
        ParameterError
            If the layout would drop part of the table and
            ``probabilities_only`` is False.
        """
        lost = self.lost_in_tidy_layout()
        if lost and not probabilities_only:
            raise ParameterError(
                "the tidy p-table layout (i, j, p) would lose "
                + " and ".join(lost)
                + "; write it with format='ons', or pass probabilities_only=True "
                "to export the transition probabilities alone"
            )
        rows = []
        for i in range(self.n_rows):
            cumulative = 0.0
            for j in np.flatnonzero(self.matrix[i] > 0):
                p = float(self.matrix[i, j])
                rows.append((i, int(j), p, int(j) - i, cumulative, cumulative + p))
                cumulative += p
        frame = pd.DataFrame(rows, columns=["i", "j", "p", "v", "p_int_lb", "p_int_ub"])
        frame["p_int_ub"] = frame.groupby("i")["p_int_ub"].transform(
            lambda s: s.where(s.index != s.index[-1], 1.0)
        )
        return frame

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, js: int | None = None) -> PTable:
        """Read a tidy table (columns ``i``, ``j``, ``p``) written by :meth:`to_frame`.

        ``D`` is the largest ``|j - i|``; ``js`` (if not given) the largest
        run ``1..js`` of counts that never occur as ``j``; ``V`` the variance
        of the last row.
        """
        if not isinstance(frame, pd.DataFrame):
            raise ParameterError(f"frame must be a DataFrame, got {type(frame).__name__}")
        missing = [c for c in ("i", "j", "p") if c not in frame.columns]
        if missing:
            raise DataError(f"perturbation table lacks column(s) {missing}")
        if len(frame) == 0:
            raise DataError("perturbation table has no rows")
        numeric = {c: pd.to_numeric(frame[c], errors="coerce").to_numpy(np.float64) for c in "ijp"}
        for c in ("i", "j"):
            bad = ~np.isfinite(numeric[c]) | (numeric[c] != np.round(numeric[c]))
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"perturbation table column {c!r} must hold whole numbers; "
                    f"row {frame.index[k]!r} has {frame[c].iloc[k]!r}"
                )
        i = numeric["i"].astype(np.int64)
        j = numeric["j"].astype(np.int64)
        p = numeric["p"]
        if (i < 0).any() or (j < 0).any() or (p < 0).any() or not np.isfinite(p).all():
            raise DataError("perturbation table has negative indices or invalid probabilities")
        L = int(i.max()) + 1
        if set(np.unique(i)) != set(range(L)):
            raise DataError(f"perturbation table must have rows i = 0..{L - 1}")
        D = int(np.abs(j - i).max())
        matrix = np.zeros((L, L + D))
        np.add.at(matrix, (i, j), p)
        sums = matrix.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1) > 1e-6)
        if len(bad):
            raise DataError(
                f"row i={int(bad[0])} of the perturbation table sums to {sums[bad[0]]:.6g}, not 1"
            )
        matrix /= sums[:, None]
        if matrix[0, 0] < 1 - 1e-9:
            raise DataError(
                "row i=0 of the perturbation table must keep 0 at 0 (p_00 = 1, condition 6)"
            )
        if js is None:
            js = 0
            while js + 1 < matrix.shape[1] and not matrix[:, js + 1].any():
                js += 1
        else:
            js = check_int(js, "js", minimum=0)
            small = np.flatnonzero(matrix[:, 1 : js + 1].sum(axis=1) > 0)
            if len(small):
                raise DataError(
                    f"row i={int(small[0])} of the perturbation table moves counts to 1..{js}, "
                    f"which js={js} forbids"
                )
        dev = np.arange(matrix.shape[1])[None, :] - np.arange(L)[:, None]
        variances = (matrix * dev**2).sum(axis=1)
        return cls(matrix, D, float(variances[-1]), int(js), variances, {}, {"source": "frame"})

    def summary(self) -> str:
        """Parameters, achieved variances and the rows where V was not attainable."""
        lines = [
            f"perturbation table: D={self.D}, V={self.V:g}, js={self.js}, rows 0..{self.n_rows - 1} "
            + (
                f"(rows {self.cycle_start}..{self.n_rows - 1} reused in turn for larger counts)"
                if self.large_counts == "cycle"
                else f"(row {self.n_rows - 1} serves all larger counts)"
            )
            + (
                f"; given key by key for {self.key_range} cell keys"
                if self.key_grid is not None
                else ""
            ),
            "  achieved variance per row: "
            + ", ".join(f"{i}:{v:.4g}" for i, v in enumerate(self.variances[:12]))
            + (f", ... ({self.n_rows} rows)" if self.n_rows > 12 else ""),
        ]
        for row, (low, high) in self.adjusted_rows.items():
            lines.append(
                f"  row {row}: V={self.V:g} not attainable (range [{low:.4g}, {high:.4g}]); "
                f"used {self.variances[row]:.4g}"
            )
        return "\n".join(lines)


def _grid_is_cumulative(table: PTable) -> bool:
    """Whether the cumulative probabilities select every key's stored noise.

    Cell key ``c`` of a key-by-key table gets ``key_grid[row, c]``; the tidy
    layout gives it the deviation whose cumulative probability in the row
    first exceeds ``c / K``. When the two agree for every row and key the
    tidy layout loses nothing of the grid.
    """
    from sdckit.tables.cellkey import lookup_noise  # cellkey imports this module

    grid = table.key_grid
    if grid is None:
        return True
    L, K = grid.shape
    plain = replace(table, key_grid=None, large_counts="last_row", cycle_start=None)
    counts = np.repeat(np.arange(L, dtype=np.int64), K)
    keys = np.tile(np.arange(K, dtype=np.float64) / K, L)
    return bool((lookup_noise(counts, keys, plain) == grid.ravel()).all())


def _row_support(i: int, D: int, js: int) -> np.ndarray:
    if i == 0:
        return np.array([0])
    j = np.arange(max(0, i - D), i + D + 1)
    return j[(j == 0) | (j > js)]


def _row_constraints(
    i: int,
    support: np.ndarray,
    symmetric: bool,
    pstay: float | None,
    monotone: bool | str,
    symmetry_bound: float | None = None,
) -> tuple[list[np.ndarray], list[float], list[np.ndarray], list[float]]:
    """Equalities (besides the variance) and inequalities ``a.x <= h``.

    ``monotone``: True (both tails non-increasing away from ``i`` and below
    ``p_ii``), ``"tails"`` (both tails non-increasing, the centre free) or
    ``"right"`` (``p_ij >= p_i,j+1`` for ``j > i`` only, the example
    Giessing & Höhne (2011), §3.1, give). ``symmetry_bound`` bounds
    ``|p_i,i-1 - p_i,i+1|``.
    """
    v = (support - i).astype(float)
    n = len(support)
    eq_rows: list[np.ndarray] = [np.ones(n), v]
    eq_rhs = [1.0, 0.0]
    if pstay is not None and i in support:
        e = np.zeros(n)
        e[np.flatnonzero(support == i)[0]] = 1.0
        eq_rows.append(e)
        eq_rhs.append(pstay)
    if symmetric:
        for k in range(1, int(v.max()) + 1):
            left, right = np.flatnonzero(v == -k), np.flatnonzero(v == k)
            if len(left) and len(right):
                e = np.zeros(n)
                e[left[0]], e[right[0]] = 1.0, -1.0
                eq_rows.append(e)
                eq_rhs.append(0.0)
    ineq: list[np.ndarray] = []
    if monotone == "right":
        idx = np.flatnonzero(v > 0)
        idx = idx[np.argsort(v[idx])]
        for near, far in itertools.pairwise(idx):
            e = np.zeros(n)
            e[far], e[near] = 1.0, -1.0
            ineq.append(e)
    elif monotone in (True, "tails"):
        # probabilities do not grow moving away from i, on each side
        for side in (v > 0, v < 0):
            idx = np.flatnonzero(side)
            idx = idx[np.argsort(np.abs(v[idx]))]
            for near, far in itertools.pairwise(idx):
                e = np.zeros(n)
                e[far], e[near] = 1.0, -1.0
                ineq.append(e)
        centre = np.flatnonzero(v == 0)
        if len(centre) and monotone is True:
            # the nearest allowed deviation on each side (a jump over the forbidden
            # counts 1..js, e.g. 2 -> 0, is the nearest one below) stays below p_ii
            for side in (v > 0, v < 0):
                idx = np.flatnonzero(side)
                if len(idx):
                    e = np.zeros(n)
                    e[idx[np.argmin(np.abs(v[idx]))]], e[centre[0]] = 1.0, -1.0
                    ineq.append(e)
    ineq_rhs = [0.0] * len(ineq)
    if symmetry_bound is not None:
        left, right = np.flatnonzero(v == -1), np.flatnonzero(v == 1)
        if len(left) and len(right):
            e = np.zeros(n)
            e[left[0]], e[right[0]] = 1.0, -1.0
            ineq += [e, -e]
            ineq_rhs += [symmetry_bound, symmetry_bound]
    return eq_rows, eq_rhs, ineq, ineq_rhs


def _lp(c, a_eq, b_eq, a_ub, n, b_ub=None):
    res = linprog(
        c,
        A_ub=np.array(a_ub) if a_ub else None,
        b_ub=(np.zeros(len(a_ub)) if b_ub is None else np.asarray(b_ub)) if a_ub else None,
        A_eq=np.array(a_eq),
        b_eq=np.array(b_eq),
        bounds=[(0, 1)] * n,
        method="highs",
    )
    return res


def _polish(x: np.ndarray, a_eq: np.ndarray, b_eq: np.ndarray) -> np.ndarray:
    """Least-norm correction onto the equalities, moving only the positive entries."""
    x = np.where(x < 1e-13, 0.0, x)
    # correct through the clearly positive entries, so a step cannot push one below 0
    free = x > 1e-6 * x.max()
    if np.linalg.matrix_rank(a_eq[:, free]) < np.linalg.matrix_rank(a_eq[:, x > 0]):
        free = x > 0
    for _ in range(5):
        residual = b_eq - a_eq @ x
        if np.abs(residual).max() < 1e-14:
            break
        sub = a_eq[:, free]
        step, *_ = np.linalg.lstsq(sub, residual, rcond=None)
        x[free] += step
        x = np.maximum(x, 0.0)
    return x


def _design_row(
    i: int,
    D: int,
    js: int,
    V: float,
    *,
    symmetric: bool,
    pstay: float | None,
    monotone: bool | str,
    objective: str,
    symmetry_bound: float | None = None,
) -> tuple[np.ndarray, np.ndarray, float, tuple[float, float] | None]:
    support = _row_support(i, D, js)
    if i == 0:
        return support, np.array([1.0]), 0.0, None
    v = (support - i).astype(float)
    n = len(support)
    # the paper's method treats pstay as a target for the centre, not a constraint
    fixed_stay = None if objective == "paper" else pstay
    eq_rows, eq_rhs, ineq, ineq_rhs = _row_constraints(
        i, support, symmetric, fixed_stay, monotone, symmetry_bound
    )
    low = _lp(v**2, eq_rows, eq_rhs, ineq, n, ineq_rhs)
    high = _lp(-(v**2), eq_rows, eq_rhs, ineq, n, ineq_rhs)
    if low.status != 0 or high.status != 0:
        raise InfeasibleError(
            f"row {i} of the perturbation table has no distribution with zero mean, deviations "
            f"within D={D}, no transitions to 1..{js}"
            + (f" and p_stay={fixed_stay}" if fixed_stay is not None and i > js else "")
            + (" and monotone tails" if monotone else "")
        )
    # 0.0 + ...: HiGHS may return -0.0, which would print as "-0"
    v_low, v_high = 0.0 + float(low.fun), 0.0 + float(-high.fun)
    target = min(max(V, v_low), v_high)
    adjusted = None if abs(target - V) <= 1e-9 * max(1.0, V) else (v_low, v_high)
    a_eq = np.array([*eq_rows, v**2])
    b_eq = np.array([*eq_rhs, target])
    g = (np.array(ineq), np.array(ineq_rhs)) if ineq else (np.zeros((0, n)), np.zeros(0))
    if objective == "lp":
        res = _lp(np.abs(v), list(a_eq), list(b_eq), ineq, n, ineq_rhs)
        if res.status != 0:
            raise InfeasibleError(f"row {i}: linear programme failed: {res.message}")
        x = _polish(res.x.copy(), a_eq, b_eq)
        _check_row(i, x, a_eq, b_eq, g, "linear programme")
        return support, x, target, adjusted
    if objective == "paper":
        x = _paper_row(i, v, a_eq, b_eq, g, pstay)
        return support, x, target, adjusted
    x = _maxent_row(i, a_eq, b_eq, g, n)
    return support, x, target, adjusted


def _check_row(
    i: int,
    x: np.ndarray,
    a_eq: np.ndarray,
    b_eq: np.ndarray,
    g: tuple[np.ndarray, np.ndarray],
    what: str,
) -> None:
    """A designed row must meet its constraints; anything else is an error, never a fallback."""
    residual = float(np.abs(a_eq @ x - b_eq).max())
    violation = float((g[0] @ x - g[1]).max()) if len(g[1]) else 0.0
    if residual > 1e-7 or violation > 1e-7 or (x < -1e-12).any():
        raise InfeasibleError(
            f"row {i} of the perturbation table: the {what} did not converge "
            f"(constraint residual {residual:.1e}, monotony violation {max(violation, 0):.1e})"
        )


def _free_entries(
    a_eq: np.ndarray, b_eq: np.ndarray, g: tuple[np.ndarray, np.ndarray], n: int, i: int
) -> np.ndarray:
    """Entries that are positive somewhere on the feasible set.

    Each LP maximises ``sum_j y_j`` with ``0 <= y_j <= x_j`` and ``y_j <= 1``
    over the entries not yet known to be free, with ``y_j`` capped at a
    small level so that one LP reaches every entry that can be positive
    (the feasible set is convex); every entry positive in its
    solution is free. When the LP's optimum is 0 the remaining entries are
    zero on the whole feasible set. A handful of LPs per row.
    """
    free = np.zeros(n, dtype=bool)
    eye = np.eye(n)
    while not free.all():
        unknown = np.flatnonzero(~free)
        m = len(unknown)
        # variables: x (n), y (m)
        # the cap keeps the LP from a sparse vertex: every entry that can reach it does
        cap = 1e-4 / n
        cost = np.concatenate([np.zeros(n), -np.ones(m)])
        a_ub = [np.concatenate([-eye[k], np.eye(m)[r]]) for r, k in enumerate(unknown)]
        a_ub += [np.concatenate([row, np.zeros(m)]) for row in g[0]]
        b_ub = np.concatenate([np.zeros(m), g[1]])
        res = linprog(
            cost,
            A_ub=np.array(a_ub),
            b_ub=b_ub,
            A_eq=np.hstack([a_eq, np.zeros((a_eq.shape[0], m))]),
            b_eq=b_eq,
            bounds=[(0, 1)] * n + [(0, cap)] * m,
            method="highs",
        )
        if res.status != 0:
            raise InfeasibleError(f"row {i}: linear programme failed: {res.message}")
        found = res.x[:n] > 1e-10
        if not (found & ~free).any():
            break
        free |= found
    return free


def _maxent_row(
    i: int, a_eq: np.ndarray, b_eq: np.ndarray, g_all: tuple[np.ndarray, np.ndarray], n: int
) -> np.ndarray:
    """Maximum-entropy row, solved through its convex dual.

    The entries that can be positive are found first (the maximum lies in the
    relative interior of that face); there the solution has the exponential
    form ``p_j ~ exp(sum_k theta_k a_kj - sum_m mu_m g_mj)`` with ``mu >= 0``
    for the monotony inequalities ``g x <= 0``, and ``(theta, mu)`` minimise
    the convex, smooth ``log sum_j exp(...) - theta . b`` (Cover & Thomas
    (2006), §12.1; the dual needs no independent constraints, so the
    symmetry equalities that the zero-mean row already implies cost nothing).
    """
    free = _free_entries(a_eq, b_eq, g_all, n, i)
    idx = np.flatnonzero(free)
    x = np.zeros(n)
    if len(idx) == 1:
        x[idx] = 1.0
        _check_row(i, x, a_eq, b_eq, g_all, "maximum-entropy programme")
        return x
    # the row-sum equality is the first one: it becomes the normaliser
    features = a_eq[1:, idx]
    targets = b_eq[1:]
    scale = np.maximum(np.abs(features).max(axis=1), 1.0)
    features = features / scale[:, None]
    targets = targets / scale
    g, h = g_all[0][:, idx], g_all[1]
    n_theta, n_mu = features.shape[0], g.shape[0]

    def dual(z: np.ndarray) -> tuple[float, np.ndarray]:
        theta, mu = z[:n_theta], z[n_theta:]
        logits = theta @ features - mu @ g
        top = logits.max()
        weights = np.exp(logits - top)
        total = weights.sum()
        p = weights / total
        value = top + np.log(total) - theta @ targets + mu @ h
        grad = np.concatenate([features @ p - targets, h - g @ p])
        return float(value), grad

    if n_mu == 0:
        z = _newton_dual(dual, features)
    else:
        z = _lbfgs_dual(dual, n_theta, n_mu)
    theta, mu = z[:n_theta], z[n_theta:]
    logits = theta @ features - mu @ g
    weights = np.exp(logits - logits.max())
    x[idx] = weights / weights.sum()
    x = _polish(x, a_eq, b_eq)
    _check_row(i, x, a_eq, b_eq, g_all, "maximum-entropy programme")
    return x


def _newton_dual(dual, features: np.ndarray) -> np.ndarray:
    """Damped Newton on the dual without inequalities (Hessian: the features' covariance)."""
    theta = np.zeros(features.shape[0])
    value, grad = dual(theta)
    for _ in range(200):
        if np.abs(grad).max() < 1e-13:
            break
        logits = theta @ features
        p = np.exp(logits - logits.max())
        p /= p.sum()
        mean = features @ p
        hessian = (features * p) @ features.T - np.outer(mean, mean)
        step = -np.linalg.lstsq(hessian, grad, rcond=1e-12)[0]
        t = 1.0
        while t > 1e-12:
            new_value, new_grad = dual(theta + t * step)
            if new_value <= value + 1e-4 * t * (grad @ step):
                break
            t /= 2
        if t <= 1e-12:
            break
        theta, value, grad = theta + t * step, new_value, new_grad
    return theta


def _lbfgs_dual(dual, n_theta: int, n_mu: int) -> np.ndarray:
    """L-BFGS-B on the dual with the monotony multipliers bounded below by 0."""
    res = minimize(
        dual,
        np.zeros(n_theta + n_mu),
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] * n_theta + [(0.0, None)] * n_mu,
        options={"maxiter": 20_000, "gtol": 1e-13, "ftol": 1e-16, "maxcor": 10},
    )
    return res.x


def _discretised_normal_tails(v: np.ndarray, centre_mass: float, V: float) -> np.ndarray:
    """Row shaped like a discretised normal: ``centre_mass`` at 0, tails ``F(k+.5) - F(k-.5)``.

    The normal's standard deviation is chosen so that the tails carry the
    variance ``V`` (Giessing & Höhne (2011), §3.1, the tail fit).
    """
    off = v != 0
    tail_var = V / max(1.0 - centre_mass, 1e-12) if off.any() else 0.0

    def shape(sigma: float) -> np.ndarray:
        w = norm.cdf((np.abs(v) + 0.5) / sigma) - norm.cdf((np.abs(v) - 0.5) / sigma)
        w = np.where(off, w, 0.0)
        return w / w.sum() if w.sum() > 0 else np.where(off, 1.0 / max(off.sum(), 1), 0.0)

    low, high = 1e-3, 1e3
    for _ in range(200):
        mid = np.sqrt(low * high)
        if shape(mid) @ v**2 < tail_var:
            low = mid
        else:
            high = mid
    out = (1.0 - centre_mass) * shape(np.sqrt(low * high))
    out[~off] = centre_mass if (~off).any() else 0.0
    return out


def _paper_row(
    i: int,
    v: np.ndarray,
    a_eq: np.ndarray,
    b_eq: np.ndarray,
    g: tuple[np.ndarray, np.ndarray],
    pstay: float | None,
) -> np.ndarray:
    """Giessing & Höhne (2011), §3.1: fix the centre, fit normal tails, solve system (9) by LP.

    The centre ``p_ii`` is set to ``pstay`` (the paper: about 70%) or, where
    system (9) with the monotony constraints does not allow that much, to the
    largest feasible value. The tails are fitted to a discretised normal
    distribution, and the LP returns the row satisfying (9), monotony and
    symmetry that is closest to the fit in absolute difference.
    """
    n = len(v)
    eq_rows, eq_rhs = list(a_eq), list(b_eq)
    centre = np.flatnonzero(v == 0)
    centre_mass = 0.0
    if len(centre):
        c = np.zeros(n)
        c[centre[0]] = 1.0
        top = _lp(-c, eq_rows, eq_rhs, list(g[0]), n, g[1])
        bottom = _lp(c, eq_rows, eq_rhs, list(g[0]), n, g[1])
        if top.status != 0 or bottom.status != 0:
            raise InfeasibleError(f"row {i}: linear programme failed: {top.message}")
        wanted = 0.7 if pstay is None else pstay
        centre_mass = float(min(max(wanted, bottom.fun), -top.fun))
        eq_rows.append(c)
        eq_rhs.append(centre_mass)
    fitted = _discretised_normal_tails(v, centre_mass, float(b_eq[-1]))
    # min sum |x - fitted|: variables x (n) and t (n) with t >= +-(x - fitted)
    eye = np.eye(n)
    a_ub = [np.concatenate([row, np.zeros(n)]) for row in g[0]]
    b_ub = list(g[1])
    for k in range(n):
        a_ub.append(np.concatenate([eye[k], -eye[k]]))
        b_ub.append(fitted[k])
        a_ub.append(np.concatenate([-eye[k], -eye[k]]))
        b_ub.append(-fitted[k])
    res = linprog(
        np.concatenate([np.zeros(n), np.ones(n)]),
        A_ub=np.array(a_ub),
        b_ub=np.array(b_ub),
        A_eq=np.array([np.concatenate([r, np.zeros(n)]) for r in eq_rows]),
        b_eq=np.array(eq_rhs),
        bounds=[(0, 1)] * n + [(0, None)] * n,
        method="highs",
    )
    if res.status != 0:
        raise InfeasibleError(f"row {i}: linear programme failed: {res.message}")
    x = _polish(res.x[:n].copy(), np.array(eq_rows), np.array(eq_rhs))
    _check_row(i, x, np.array(eq_rows), np.array(eq_rhs), g, "paper's linear programme")
    return x


#: Largest maximum deviation designed: rows and row supports both grow with D.
MAX_D = 100
#: Largest transition matrix (bytes) designed.
MAX_MATRIX_BYTES = 256 * 2**20


def _bytes_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def design_ptable(
    D: int,
    V: float,
    *,
    js: int = 2,
    pstay: float | None = None,
    monotone: bool | str | None = None,
    objective: str = "maxent",
    symmetry_bound: float | None = None,
) -> PTable:
    """Design a zero-mean, variance-``V`` transition matrix with maximum deviation ``D``.

    Giessing & Höhne (2011), §3.1, conditions (1)-(8) and system (9). Two
    named designs, neither falling back to the other:

    * ``objective="maxent"`` (default): each row is the maximum-entropy
      distribution under the constraints, the design of the R package ptable
      (Enderle, Giessing & Tent 2018) and of the offices that use it; solved
      exactly through its convex dual (see :func:`_maxent_row`).
    * ``objective="paper"``: the paper's own procedure: fix the centre
      ``p_ii`` at ``pstay`` (default 0.7) or the largest value system (9)
      with monotony allows, fit the tails to a discretised normal
      distribution, and solve (9) by LP for the row closest to the fit, with
      monotony ``p_ij >= p_i,j+1`` for ``j > i`` and, optionally, a bound on
      ``|p_i,i-1 - p_i,i+1|``. It reproduces the rows of the paper's
      appendix Table 1 for ``D = 3``.
    * ``objective="lp"``: minimise the expected absolute deviation.

    Parameters
    ----------
    D : int
        Maximum absolute deviation (1..100).
    V : float
        Variance of the noise (> 0). The paper uses ``2 + epsilon``: with
        ``js = 2`` the counts 1 and 2 cannot reach a variance below 2.
    js : int, default 2
        Perturbed counts ``1..js`` are forbidden (``js = 0``: plain noise).
    pstay : float in [0, 1), optional
        ``maxent``/``lp``: fix the probability of no change ``p_ii`` for
        counts ``i > js``. ``paper``: the target for the centre (default 0.7).
        1 is refused: no count above ``js`` would ever change.
    monotone : bool, "tails" or "right", optional
        True: probabilities do not increase moving away from ``i`` on either
        side and stay below ``p_ii``. ``"tails"``: both tails non-increasing
        away from ``i``, the centre free (with it, ``paper`` reproduces the
        appendix Table 1 for ``D = 3``). ``"right"``: only
        ``p_ij >= p_i,j+1`` for ``j > i`` (the paper's example). Default:
        False, and ``"tails"`` for ``paper``.
    objective : {"maxent", "paper", "lp"}
    symmetry_bound : float, optional
        Bound on ``|p_i,i-1 - p_i,i+1|`` (the paper's symmetry constraint).

    Returns
    -------
    PTable
        Rows ``0..D + js + 1``; a row whose variance ``V`` is not attainable
        gets the closest attainable one and is listed in ``adjusted_rows``.

    Raises
    ------
    ParameterError
        A parameter out of range, or a size that cannot be designed (the
        message gives the memory the matrix would take).
    InfeasibleError
        A row has no distribution at all under the constraints, or its
        optimiser did not converge (never replaced silently by another row).
    """
    D = check_int(D, "D", minimum=1)
    V = check_positive(V, "V")
    js = check_int(js, "js", minimum=0)
    L = D + js + 2
    matrix_bytes = 8.0 * L * (L + D)
    if D > MAX_D or matrix_bytes > MAX_MATRIX_BYTES:
        raise ParameterError(
            f"D={D}, js={js} asks for a {L} x {L + D} transition matrix "
            f"({_bytes_text(matrix_bytes)}) and {L} row programmes of up to {2 * D + 1} "
            f"probabilities; at most D={MAX_D} and {_bytes_text(MAX_MATRIX_BYTES)} are designed "
            "(published p-tables use D of 2 to 20)"
        )
    if pstay is not None:
        pstay = check_fraction(pstay, "pstay")
        if pstay >= 1.0:
            raise ParameterError(
                f"pstay must be below 1, got {pstay:g}: with p_ii = 1 no count above js={js} "
                "would ever change, so the table would not be protected"
            )
    if objective not in ("maxent", "paper", "lp"):
        raise ParameterError(f"objective must be 'maxent', 'paper' or 'lp', got {objective!r}")
    if monotone is None:
        monotone = "tails" if objective == "paper" else False
    if monotone not in (True, False, "tails", "right"):
        raise ParameterError(f"monotone must be True, False, 'tails' or 'right', got {monotone!r}")
    if symmetry_bound is not None:
        symmetry_bound = check_positive(symmetry_bound, "symmetry_bound", allow_zero=True)
    if D <= js:
        raise ParameterError(f"D={D} must exceed js={js}: count 1 needs to reach {js + 1} (or 0)")
    matrix = np.zeros((L, L + D))
    variances = np.zeros(L)
    adjusted: dict[int, tuple[float, float]] = {}
    for i in range(L):
        support, x, _achieved, adj = _design_row(
            i,
            D,
            js,
            V,
            symmetric=i == L - 1,
            pstay=pstay if i > js else None,
            monotone=monotone,
            objective=objective,
            symmetry_bound=symmetry_bound,
        )
        matrix[i, support] = x
        variances[i] = float(x @ (support - i) ** 2)
        if adj is not None:
            adjusted[i] = adj
    params = {
        "D": D,
        "V": V,
        "js": js,
        "pstay": pstay,
        "monotone": monotone,
        "objective": objective,
        "symmetry_bound": symmetry_bound,
    }
    return PTable(matrix, D, V, js, variances, adjusted, params)
