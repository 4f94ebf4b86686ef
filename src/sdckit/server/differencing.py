"""Differencing risk under the Drop q rule: equation (5), the bounds (6), and a simulator.

Lucero et al. (2011), Section 4. Two universes U(n) and U(n-1)
differ by one target unit; an intruder tabulates both and subtracts. With
Drop q, q1 units are dropped from U(n) and q2 from U(n-1) (each q uniform on
{2..k}); X and Y count the dropped units per cell. The difference table is
``e_target + Y - X``: a *correct* disclosure when X = Y (which needs
q1 = q2); an *apparent but wrong* one when it is a single 1 in another cell.

For large n, X and Y are about multinomial(q, Pi), and

    xi_{J,k}(Pi) = sum_{q=2}^k (1/(k-1))^2 sum_{|x|=q} (q!/(x_1!...x_J!))^2 prod Pi_j^{2 x_j}   (5)

with the bounds (Schur-convexity in Pi)

    xi_{J,k}(1/J, ..., 1/J) <= xi_{J,k}(Pi) <= 1/(k-1).                                      (6)

Equation (5) has C(J+k, J) - (J+1) summands. We compute it exactly by a
generating function instead: the inner sum for a given q is ``(q!)^2``
times the coefficient of ``s^q`` in ``prod_j sum_x (Pi_j^2 s)^x / (x!)^2``,
a product of J polynomials of degree k (J k^2 operations).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit._validation import RandomState, check_random_state
from sdckit.errors import ParameterError

__all__ = [
    "DifferencingSimulation",
    "simulate_differencing",
    "xi",
    "xi_bounds",
]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise ParameterError(f"k must be an integer >= 2, got {k!r}")
    return int(k)


def _check_pi(pi: Sequence[float]) -> np.ndarray:
    arr = np.asarray(pi, dtype=np.float64).ravel()
    if arr.size < 1 or np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ParameterError("Pi must be a non-empty vector of non-negative proportions")
    total = arr.sum()
    if not np.isclose(total, 1.0, atol=1e-9):
        raise ParameterError(f"Pi must sum to 1, sums to {total:.6g}")
    return arr / total


def _same_draw_probabilities(pi: np.ndarray, k: int) -> np.ndarray:
    """P(X = Y | q1 = q2 = q) for q = 0..k, by the generating function of the module docstring."""
    x = np.arange(k + 1)
    log_fact = np.array([math.lgamma(v + 1) for v in x])
    poly = np.zeros(k + 1)
    poly[0] = 1.0
    for p in pi:
        if p == 0:
            continue  # an empty cell contributes only x_j = 0
        with np.errstate(divide="ignore"):
            factor = np.exp(2 * x * np.log(p) - 2 * log_fact)
        poly = np.convolve(poly, factor)[: k + 1]
    return poly * np.exp(2 * log_fact)


def xi(pi: Sequence[float], k: int) -> float:
    """Approximate probability of a correct differencing disclosure, equation (5) of Lucero et al. (2011).

    Parameters
    ----------
    pi : sequence of float
        Cell proportions Pi_1..Pi_J of the table (summing to 1).
    k : int
        Drop q parameter: q uniform on {2, ..., k}.

    Returns
    -------
    float
        xi_{J,k}(Pi).
    """
    k = _check_k(k)
    arr = _check_pi(pi)
    same = _same_draw_probabilities(arr, k)
    return float(same[2:].sum() / (k - 1) ** 2)


def xi_bounds(n_cells: int, k: int) -> tuple[float, float]:
    """The bounds (6) of Lucero et al. (2011), §4: xi at equal proportions (lower) and 1/(k-1) (upper).

    Parameters
    ----------
    n_cells : int
        J, the number of cells.
    k : int
        The Drop q parameter.

    Returns
    -------
    tuple of float
        (lower, upper).
    """
    if isinstance(n_cells, bool) or not isinstance(n_cells, numbers.Integral) or n_cells < 1:
        raise ParameterError(f"n_cells must be an integer >= 1, got {n_cells!r}")
    k = _check_k(k)
    return xi(np.full(n_cells, 1.0 / n_cells), k), 1.0 / (k - 1)


@dataclass(frozen=True)
class DifferencingSimulation:
    """Outcome of simulated differencing attacks against Drop q.

    Attributes
    ----------
    trials : int
    correct_rate : float
        Share of attacks whose difference table is exactly the target's cell.
    apparent_wrong_rate : float
        Share whose difference is a single 1 in another cell.
    correct_se, apparent_wrong_se : float
        Binomial standard errors of the two rates.
    k : int
    counts : tuple of int
        Cell counts of U(n) (the target's cell included).
    target : int
        Index of the target's cell.
    """

    trials: int
    correct_rate: float
    apparent_wrong_rate: float
    correct_se: float
    apparent_wrong_se: float
    k: int
    counts: tuple[int, ...]
    target: int

    @property
    def precision(self) -> float:
        """P(correct | apparent disclosure): how far an intruder can trust a clean difference."""
        total = self.correct_rate + self.apparent_wrong_rate
        return self.correct_rate / total if total > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "correct_rate": self.correct_rate,
            "apparent_wrong_rate": self.apparent_wrong_rate,
            "correct_se": self.correct_se,
            "apparent_wrong_se": self.apparent_wrong_se,
            "k": self.k,
            "counts": list(self.counts),
            "target": self.target,
        }

    def summary(self) -> str:
        return (
            f"{self.trials} differencing attacks, k={self.k}: correct {self.correct_rate:.4f} "
            f"(se {self.correct_se:.4f}), apparent but wrong {self.apparent_wrong_rate:.4f} "
            f"(se {self.apparent_wrong_se:.4f})"
        )


def simulate_differencing(
    counts: Sequence[int] | np.ndarray,
    target: int,
    k: int,
    *,
    trials: int = 100_000,
    random_state: RandomState = None,
) -> DifferencingSimulation:
    """Simulate the differencing attack T_{n-q1} - T_{n-1-q2} of Lucero et al. (2011), Section 4.

    Each trial draws q1, q2 uniform on {2..k} and removes q1 units from U(n)
    and q2 from U(n-1) = U(n) minus one unit of the target cell, both
    *without* replacement (multivariate hypergeometric), independently - as
    Drop q does for two different universes.

    Parameters
    ----------
    counts : array of int
        Cell counts of the table over U(n) (any shape; flattened).
    target : int
        Flat index of the target unit's cell (must hold at least one unit).
    k : int
        Drop q parameter.
    trials : int, default 100000
    random_state : None, int or Generator

    Returns
    -------
    DifferencingSimulation
    """
    k = _check_k(k)
    cells = np.asarray(counts).ravel()
    if cells.size < 1 or np.any(cells < 0) or not np.all(np.equal(np.mod(cells, 1), 0)):
        raise ParameterError("counts must be non-negative integers")
    cells = cells.astype(np.int64)
    if isinstance(target, bool) or not isinstance(target, numbers.Integral):
        raise ParameterError(f"target must be a cell index, got {target!r}")
    if not 0 <= target < cells.size or cells[target] < 1:
        raise ParameterError(f"target cell {target} must exist and hold at least one unit")
    if cells.sum() - 1 < k:
        raise ParameterError(f"the universe must hold more than k+1={k + 1} units")
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
        raise ParameterError(f"trials must be a positive integer, got {trials!r}")
    rng = check_random_state(random_state)
    smaller = cells.copy()
    smaller[target] -= 1
    q1 = rng.integers(2, k + 1, size=trials)
    q2 = rng.integers(2, k + 1, size=trials)
    x = np.zeros((trials, cells.size), dtype=np.int64)
    y = np.zeros((trials, cells.size), dtype=np.int64)
    for q in range(2, k + 1):
        sel1 = q1 == q
        if sel1.any():
            x[sel1] = rng.multivariate_hypergeometric(cells, q, size=int(sel1.sum()))
        sel2 = q2 == q
        if sel2.any():
            y[sel2] = rng.multivariate_hypergeometric(smaller, q, size=int(sel2.sum()))
    diff = y - x
    diff[:, target] += 1
    correct = np.all(y == x, axis=1)
    single_one = (np.abs(diff).sum(axis=1) == 1) & (diff.max(axis=1) == 1)
    wrong = single_one & ~correct
    pc, pw = float(correct.mean()), float(wrong.mean())
    return DifferencingSimulation(
        trials=int(trials),
        correct_rate=pc,
        apparent_wrong_rate=pw,
        correct_se=math.sqrt(pc * (1 - pc) / trials),
        apparent_wrong_se=math.sqrt(pw * (1 - pw) / trials),
        k=k,
        counts=tuple(int(c) for c in cells),
        target=int(target),
    )
