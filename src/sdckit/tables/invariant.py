"""Invariant transition matrices (Shlomo & Young 2008) and the no-small-cells variant.

Giessing & Höhne (2011), Section 3.2. Given an initial transition
matrix ``P`` and the relative frequencies ``v`` of the counts, ``Q`` is ``P``
transposed with column ``j`` multiplied by ``v_j`` and rows normalised; then
``R = P Q`` satisfies ``v R = v`` (the expected frequency of every count is
preserved) and ``R* = alpha R + (1 - alpha) I`` keeps that property while
raising the probability of no change.

With the no-small-cells requirement the counts 1, 2, 3 are pooled into one
state whose frequency is ``v_1 + v_2 + v_3``; ``R*`` is built on the pooled
states and then its pooled row is replaced by separate rows for the counts
1, 2, 3 (matrix ``R**``): counts 1 and 2 go only to 0 or 3, count 3 also
carries the pooled row's transitions to counts of 4 and more, and the split
between 0 and 3 preserves the expected total of the small counts
(``3 * E[#cells at 3] = v_1 + 2 v_2 + 3 v_3``), which reproduces Table 3 of the
paper (Example 1). Counts 4 and more keep their expected frequencies exactly;
counts under four keep their total frequency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._validation import check_fraction
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.ptable import PTable

__all__ = [
    "InvariantMatrix",
    "banded_transition",
    "invariant_matrix",
    "invariant_transform",
    "split_small_counts",
]


@dataclass(frozen=True)
class InvariantMatrix:
    """Result of :func:`invariant_matrix`.

    Attributes
    ----------
    matrix : ndarray, shape (K + 1, K + 1)
        Transition matrix over counts ``0..K``: ``R*`` (plain) or ``R**``
        (no small cells).
    frequencies : ndarray, shape (K + 1,)
        The count frequencies it was built for (index = count).
    pooled : ndarray or None
        ``R*`` on the pooled states ``[1-3, 4, ..., K]`` (no small cells only).
    alpha : float
    no_small_cells : bool
    delta : float or None
        Common expected bias of the small counts 1 and 2 (no small cells only).
    """

    matrix: np.ndarray
    frequencies: np.ndarray
    pooled: np.ndarray | None
    alpha: float
    no_small_cells: bool
    delta: float | None = None

    def expected_frequencies(self) -> np.ndarray:
        """``v R``: expected number of cells at each perturbed count."""
        return self.frequencies @ self.matrix

    def expected_transitions(self) -> pd.DataFrame:
        """Expected numbers ``n_ij`` of cells of count ``i`` perturbed into ``j`` (Tables 2-3)."""
        counts = np.arange(len(self.frequencies))
        return pd.DataFrame(
            self.frequencies[:, None] * self.matrix,
            index=pd.Index(counts, name="i"),
            columns=pd.Index(counts, name="j"),
        )

    def summary(self) -> str:
        """Which frequencies are preserved, and how closely."""
        v, e = self.frequencies, self.expected_frequencies()
        if self.no_small_cells:
            small, small_after = v[1:4].sum(), e[0] + e[3] - v[0]
            return (
                f"no-small-cells invariant matrix (alpha={self.alpha:g}): counts under four "
                f"{small:g} -> {small_after:.6g} (as 0 or 3), counts >= 4 preserved up to "
                f"{np.abs(e[4:] - v[4:]).max(initial=0.0):.2e}; bias of counts 1-2: {self.delta:.4f}"
            )
        return f"invariant matrix (alpha={self.alpha:g}): max |vR - v| = {np.abs(e - v).max():.2e}"


def banded_transition(n_states: int, *, D: int = 2, stay: float = 0.8) -> np.ndarray:
    """A simple initial transition matrix: ``stay`` on the diagonal, the rest spread nearby.

    The rest of each row is spread evenly over the states within distance
    ``D`` (fewer at the borders).

    Parameters
    ----------
    n_states : int
        Number of states (>= 1).
    D : int, default 2
        Largest distance of a transition.
    stay : float, default 0.8
        Probability of staying, in [0, 1].

    Returns
    -------
    ndarray, shape (n_states, n_states)
        A row-stochastic matrix.
    """
    if n_states < 1:
        raise ParameterError(f"n_states must be >= 1, got {n_states}")
    stay = check_fraction(stay, "stay")
    idx = np.arange(n_states)
    dist = np.abs(idx[:, None] - idx[None, :])
    near = (dist >= 1) & (dist <= D)
    out = np.where(near, 1.0, 0.0)
    n_near = near.sum(axis=1, keepdims=True)
    out = np.divide(out * (1 - stay), n_near, out=np.zeros_like(out), where=n_near > 0)
    out[idx, idx] = np.where(n_near[:, 0] > 0, stay, 1.0)
    return out


def invariant_transform(P: np.ndarray, frequencies: np.ndarray, alpha: float) -> np.ndarray:
    """Shlomo & Young's ``R* = alpha P Q + (1 - alpha) I`` with ``v R* = v``.

    Parameters
    ----------
    P : ndarray, shape (K, K)
        The initial transition matrix.
    frequencies : ndarray, shape (K,)
        The frequencies v of the states, kept by ``R*``.
    alpha : float
        The weight of ``P Q``, in [0, 1].

    Returns
    -------
    ndarray, shape (K, K)
        The invariant matrix ``R*``.
    """
    P = np.asarray(P, dtype=float)
    v = np.asarray(frequencies, dtype=float)
    w = v @ P  # w_k = sum_i v_i p_ik
    Q = P.T * v[None, :]
    Q = np.divide(Q, w[:, None], out=np.zeros_like(Q), where=w[:, None] > 0)
    # a state nobody reaches: its Q row is never used under v; keep it stochastic
    unreachable = w <= 0
    Q[unreachable, :] = 0.0
    Q[unreachable, np.flatnonzero(unreachable)] = 1.0
    R = P @ Q
    return alpha * R + (1 - alpha) * np.eye(len(v))


def _as_square(P: np.ndarray | PTable, K: int) -> np.ndarray:
    if isinstance(P, PTable):
        square = np.zeros((K + 1, K + 1))
        dev = P.deviation_probabilities()
        for i in range(K + 1):
            row = dev[min(i, P.n_rows - 1)]
            for d in range(-P.D, P.D + 1):
                j = min(max(i + d, 0), K)
                square[i, j] += row[d + P.D]
        return square
    P = np.asarray(P, dtype=float)
    if P.shape != (K + 1, K + 1):
        raise ParameterError(
            f"P must be square over counts 0..{K} (shape {(K + 1, K + 1)}), got {P.shape}"
        )
    if (P < 0).any() or not np.allclose(P.sum(axis=1), 1.0, atol=1e-9):
        raise ParameterError("P must have non-negative rows summing to 1")
    return P


def split_small_counts(
    small_frequencies: np.ndarray,
    outflow: np.ndarray,
    incoming: float,
    *,
    stay3: float | None = None,
) -> tuple[np.ndarray, float]:
    """Separate transition rows for counts 1, 2, 3 out of the pooled row of ``R*``.

    Parameters
    ----------
    small_frequencies : (v_1, v_2, v_3)
    outflow : array
        Expected numbers of pooled cells moving to counts 4, 5, ... (the pooled
        row of the expected-frequency matrix, Table 2's first row).
    incoming : float
        Expected number of cells of counts >= 4 moving into the pool (they
        become 3).
    stay3 : float, optional
        Fixed probability that a 3 stays 3. Default: count 3 shares the
        common bias of counts 1 and 2.

    Returns
    -------
    rows : ndarray, shape (3, 4 + len(outflow))
        Rows for counts 1, 2, 3 over perturbed counts 0..3+len(outflow).
    delta : float
        Common bias: count ``i`` (1 or 2) becomes 3 with probability ``(i + delta) / 3``.
    """
    v = np.asarray(small_frequencies, dtype=float)
    outflow = np.asarray(outflow, dtype=float)
    if v.shape != (3,) or (v < 0).any() or v.sum() <= 0:
        raise DataError(
            f"small-count frequencies must be three non-negative numbers, not all 0, got {v}"
        )
    n_big = len(outflow)
    targets = 4 + np.arange(n_big)
    carried = np.zeros((3, n_big))
    remaining = outflow.copy()
    for i in (2, 1, 0):  # count 3 first: it is nearest to 4, 5, ...
        room = v[i]
        take = min(room, remaining.sum())
        if take > 0:
            share = remaining * (take / remaining.sum())
            carried[i] = share
            remaining -= share
    if remaining.sum() > 1e-9:
        raise InfeasibleError(
            f"the pooled row sends {outflow.sum():.4g} cells to counts >= 4, more than the "
            f"{v.sum():.4g} small cells"
        )
    probs_out = np.divide(carried, v[:, None], out=np.zeros_like(carried), where=v[:, None] > 0)
    mean_out = probs_out @ targets
    total = float(v @ np.array([1.0, 2.0, 3.0]))
    free = np.array([True, True, stay3 is None])
    fixed_at_3 = 0.0 if stay3 is None else v[2] * check_fraction(stay3, "stay3")
    counts = np.array([1.0, 2.0, 3.0])
    weight = v[free].sum() / 3
    if weight <= 0:
        raise InfeasibleError("counts 1 and 2 have no cells to carry the bias")
    delta = (
        total / 3 - incoming - fixed_at_3 - float(v[free] @ (counts[free] - mean_out[free])) / 3
    ) / weight
    rows = np.zeros((3, 4 + n_big))
    rows[:, 4:] = probs_out
    for i in range(3):
        to3 = (counts[i] + delta - mean_out[i]) / 3 if free[i] else stay3
        rows[i, 3] = to3
        rows[i, 0] = 1 - rows[i, 3] - probs_out[i].sum()
    if (rows < -1e-12).any() or (rows > 1 + 1e-12).any():
        raise InfeasibleError(
            f"no valid split of the small counts: bias {delta:.4f} gives probabilities outside "
            f"[0, 1] ({np.round(rows[:, [0, 3]], 4).tolist()}); use a larger alpha or another P"
        )
    return np.clip(rows, 0.0, 1.0), float(delta)


def invariant_matrix(
    P: np.ndarray | PTable,
    count_distribution: np.ndarray | pd.Series,
    alpha: float,
    *,
    no_small_cells: bool = True,
    stay3: float | None = None,
) -> InvariantMatrix:
    """Invariant transition matrix for cell counts.

    Giessing & Höhne (2011), Section 3.2, after Shlomo & Young (2008).

    Parameters
    ----------
    P : ndarray (K+1, K+1) or PTable
        Initial transition matrix over counts ``0..K`` (a PTable is folded so
        that moves beyond ``K`` land on ``K``).
    count_distribution : array or Series
        Number (or share) of cells with count ``0..K`` (index = count).
        Zero cells are never perturbed; their entry is kept as it is.
    alpha : float in [0, 1]
        ``R* = alpha R + (1 - alpha) I``.
    no_small_cells : bool, default True
        Pool counts 1-3 and return ``R**`` (no perturbed 1 or 2; counts under
        four keep their total frequency).
    stay3 : float, optional
        Probability that a 3 stays 3 in ``R**`` (default: derived, see
        :func:`split_small_counts`).

    Returns
    -------
    InvariantMatrix
        The matrix and the figures of its construction.
    """
    alpha = check_fraction(alpha, "alpha")
    if isinstance(count_distribution, pd.Series):
        index = count_distribution.index.to_numpy()
        K = int(index.max())
        v = np.zeros(K + 1)
        v[index.astype(int)] = count_distribution.to_numpy(float)
    else:
        v = np.asarray(count_distribution, dtype=float)
    if v.ndim != 1 or len(v) < 2 or (v < 0).any() or not np.isfinite(v).all():
        raise ParameterError("count_distribution must be non-negative frequencies for counts 0..K")
    K = len(v) - 1
    square = _as_square(P, K)
    if not no_small_cells:
        v_moving = v.copy()
        v_moving[0] = 0.0
        R = invariant_transform(square, v_moving, alpha)
        R[0] = 0.0
        R[0, 0] = 1.0
        return InvariantMatrix(R, v, None, alpha, False)
    if K < 4:
        raise ParameterError("no_small_cells needs counts up to at least 4")
    # pooled states: [1-3, 4, ..., K]
    weights = v[1:4] if v[1:4].sum() > 0 else np.ones(3)
    pooled_row_full = weights @ square[1:4] / weights.sum()
    Pp = np.zeros((K - 2, K - 2))
    Pp[0, 0] = pooled_row_full[:4].sum()
    Pp[0, 1:] = pooled_row_full[4:]
    Pp[1:, 0] = square[4:, :4].sum(axis=1)
    Pp[1:, 1:] = square[4:, 4:]
    vp = np.concatenate([[v[1:4].sum()], v[4:]])
    Rp = invariant_transform(Pp, vp, alpha)
    expected = vp[:, None] * Rp
    rows_small, delta = split_small_counts(
        v[1:4], expected[0, 1:], float(expected[1:, 0].sum()), stay3=stay3
    )
    R2 = np.zeros((K + 1, K + 1))
    R2[0, 0] = 1.0
    R2[1:4, :] = rows_small
    R2[4:, 3] = Rp[1:, 0]
    R2[4:, 4:] = Rp[1:, 1:]
    return InvariantMatrix(R2, v, Rp, alpha, True, delta)
