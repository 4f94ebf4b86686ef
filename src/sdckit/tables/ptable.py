"""Design of zero-mean, fixed-variance perturbation tables without small cells.

Giessing & Höhne (2011), seed 004, Section 3.1, after Fraser & Wooton (2006).
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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linprog, minimize

from sdckit._validation import check_fraction, check_int, check_positive
from sdckit.errors import DataError, InfeasibleError, ParameterError

__all__ = ["PTable", "design_ptable"]

_TOL = 1e-9


@dataclass(frozen=True)
class PTable:
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
    """

    matrix: np.ndarray
    D: int
    V: float
    js: int
    variances: np.ndarray
    adjusted_rows: Mapping[int, tuple[float, float]] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "adjusted_rows", MappingProxyType(dict(self.adjusted_rows)))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

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
        row = min(count, self.n_rows - 1)
        dev = self.deviation_probabilities()[row]
        values = count + np.arange(-self.D, self.D + 1)
        keep = (values >= 0) & (dev > 0)
        return pd.Series(dev[keep], index=pd.Index(values[keep], name="j"), name=f"p({count}->j)")

    def to_frame(self) -> pd.DataFrame:
        """Tidy export: one row per non-zero transition.

        Columns ``i``, ``j``, ``p``, ``v = j - i``, and the interval
        ``[p_int_lb, p_int_ub)`` of the row's cumulative probabilities that
        maps a uniform cell key to this transition; ``i`` of the last row
        stands for every larger count (as in tau-ARGUS and R's ptable files).
        """
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
            f"(row {self.n_rows - 1} serves all larger counts)",
            "  achieved variance per row: "
            + ", ".join(f"{i}:{v:.4g}" for i, v in enumerate(self.variances)),
        ]
        for row, (low, high) in self.adjusted_rows.items():
            lines.append(
                f"  row {row}: V={self.V:g} not attainable (range [{low:.4g}, {high:.4g}]); "
                f"used {self.variances[row]:.4g}"
            )
        return "\n".join(lines)


def _row_support(i: int, D: int, js: int) -> np.ndarray:
    if i == 0:
        return np.array([0])
    j = np.arange(max(0, i - D), i + D + 1)
    return j[(j == 0) | (j > js)]


def _row_constraints(
    i: int, support: np.ndarray, symmetric: bool, pstay: float | None, monotone: bool
) -> tuple[list[np.ndarray], list[float], list[np.ndarray]]:
    """Equalities (besides the variance) and monotonicity inequalities (a.x <= 0)."""
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
    if monotone:
        # probabilities do not grow moving away from i, on each side
        for side in (v > 0, v < 0):
            idx = np.flatnonzero(side)
            idx = idx[np.argsort(np.abs(v[idx]))]
            for near, far in itertools.pairwise(idx):
                e = np.zeros(n)
                e[far], e[near] = 1.0, -1.0
                ineq.append(e)
        centre = np.flatnonzero(v == 0)
        if len(centre):
            # the nearest allowed deviation on each side (a jump over the forbidden
            # counts 1..js, e.g. 2 -> 0, is the nearest one below) stays below p_ii
            for side in (v > 0, v < 0):
                idx = np.flatnonzero(side)
                if len(idx):
                    e = np.zeros(n)
                    e[idx[np.argmin(np.abs(v[idx]))]], e[centre[0]] = 1.0, -1.0
                    ineq.append(e)
    return eq_rows, eq_rhs, ineq


def _lp(c, a_eq, b_eq, a_ub, n):
    res = linprog(
        c,
        A_ub=np.array(a_ub) if a_ub else None,
        b_ub=np.zeros(len(a_ub)) if a_ub else None,
        A_eq=np.array(a_eq),
        b_eq=np.array(b_eq),
        bounds=[(0, 1)] * n,
        method="highs",
    )
    return res


def _polish(x: np.ndarray, a_eq: np.ndarray, b_eq: np.ndarray) -> np.ndarray:
    """Least-norm correction onto the equalities, moving only the positive entries."""
    x = np.where(x < 1e-13, 0.0, x)
    free = x > 0
    for _ in range(3):
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
    monotone: bool,
    objective: str,
) -> tuple[np.ndarray, np.ndarray, float, tuple[float, float] | None]:
    support = _row_support(i, D, js)
    if i == 0:
        return support, np.array([1.0]), 0.0, None
    v = (support - i).astype(float)
    n = len(support)
    eq_rows, eq_rhs, ineq = _row_constraints(i, support, symmetric, pstay, monotone)
    low = _lp(v**2, eq_rows, eq_rhs, ineq, n)
    high = _lp(-(v**2), eq_rows, eq_rhs, ineq, n)
    if low.status != 0 or high.status != 0:
        raise InfeasibleError(
            f"row {i} of the perturbation table has no distribution with zero mean, deviations "
            f"within D={D}, no transitions to 1..{js}"
            + (f" and p_stay={pstay}" if pstay is not None and i > js else "")
            + (" and monotone tails" if monotone else "")
        )
    v_low, v_high = float(low.fun), float(-high.fun)
    target = min(max(V, v_low), v_high)
    adjusted = None if abs(target - V) <= 1e-9 * max(1.0, V) else (v_low, v_high)
    a_eq = np.array([*eq_rows, v**2])
    b_eq = np.array([*eq_rhs, target])
    if objective == "lp":
        res = _lp(np.abs(v), list(a_eq), list(b_eq), ineq, n)
        if res.status != 0:
            raise InfeasibleError(f"row {i}: linear programme failed: {res.message}")
        x = _polish(res.x.copy(), a_eq, b_eq)
        return support, x, target, adjusted
    # maximum entropy over the face of the feasible set: entries that can be positive
    maximisers = []
    for k in range(n):
        c = np.zeros(n)
        c[k] = -1.0
        res = _lp(c, list(a_eq), list(b_eq), ineq, n)
        if res.status != 0:
            raise InfeasibleError(f"row {i}: linear programme failed: {res.message}")
        maximisers.append(res.x)
    maximisers = np.array(maximisers)
    can_be_positive = maximisers.max(axis=0) > 1e-10
    start = maximisers.mean(axis=0)
    idx = np.flatnonzero(can_be_positive)
    a_sub = a_eq[:, idx]
    ineq_sub = np.array(ineq)[:, idx] if ineq else None

    def negentropy(y):
        y = np.maximum(y, 1e-300)
        return float(np.sum(y * np.log(y)))

    def gradient(y):
        return np.log(np.maximum(y, 1e-300)) + 1.0

    constraints = [
        {"type": "eq", "fun": lambda y: a_sub @ y - b_eq, "jac": lambda y: a_sub},
    ]
    if ineq_sub is not None:
        constraints.append(
            {"type": "ineq", "fun": lambda y: -(ineq_sub @ y), "jac": lambda y: -ineq_sub}
        )
    res = minimize(
        negentropy,
        start[idx],
        jac=gradient,
        bounds=[(0.0, 1.0)] * len(idx),
        constraints=constraints,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    x = np.zeros(n)
    x[idx] = res.x if res.success else start[idx]
    x = _polish(x, a_eq, b_eq)
    if ineq and (np.array(ineq) @ x > 1e-9).any():
        x = _polish(start.copy(), a_eq, b_eq)
    return support, x, target, adjusted


def design_ptable(
    D: int,
    V: float,
    *,
    js: int = 2,
    pstay: float | None = None,
    monotone: bool = False,
    objective: str = "maxent",
) -> PTable:
    """Design a zero-mean, variance-``V`` transition matrix with maximum deviation ``D``.

    Seed 004 (Giessing & Höhne 2011), Section 3.1, conditions (1)-(8) and
    system (9); each row is solved with scipy (HiGHS for the linear
    programmes; SLSQP for maximum entropy on the face of the feasible set).

    Parameters
    ----------
    D : int
        Maximum absolute deviation (>= 1).
    V : float
        Variance of the noise (> 0). The paper uses ``2 + epsilon``: with
        ``js = 2`` the counts 1 and 2 cannot reach a variance below 2.
    js : int, default 2
        Perturbed counts ``1..js`` are forbidden (``js = 0``: plain noise).
    pstay : float, optional
        Fix the probability of no change ``p_ii`` for counts ``i > js``
        (the paper fixes 0.7 for larger ``D``).
    monotone : bool, default False
        Require probabilities that do not increase moving away from ``i``.
    objective : {"maxent", "lp"}
        ``"maxent"``: maximum entropy among the feasible rows;
        ``"lp"``: minimise the expected absolute deviation ``sum_j p_ij |j - i|``.

    Returns
    -------
    PTable
        Rows ``0..D + js + 1``; a row whose variance ``V`` is not attainable
        gets the closest attainable one and is listed in ``adjusted_rows``.

    Raises
    ------
    InfeasibleError
        A row has no distribution at all under the constraints.
    """
    D = check_int(D, "D", minimum=1)
    V = check_positive(V, "V")
    js = check_int(js, "js", minimum=0)
    if pstay is not None:
        pstay = check_fraction(pstay, "pstay")
    if objective not in ("maxent", "lp"):
        raise ParameterError(f"objective must be 'maxent' or 'lp', got {objective!r}")
    if D <= js:
        raise ParameterError(f"D={D} must exceed js={js}: count 1 needs to reach {js + 1} (or 0)")
    L = D + js + 2
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
    }
    return PTable(matrix, D, V, js, variances, adjusted, params)
