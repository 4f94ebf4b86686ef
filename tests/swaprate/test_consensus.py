"""The Consensus algorithm (Kifer 2015, Section 4.2, Algorithm 2, Lemma 4.3)."""

from __future__ import annotations

import numpy as np
import pytest
from _swapdata import symmetric_halves_data
from scipy.optimize import fsolve

from sdckit import InfeasibleError, ParameterError
from sdckit.swaprate import consensus_swap_count, swap_group_count
from sdckit.swaprate.consensus import (
    agreement_sums,
    consensus_closed_form,
    correlation_sensitivity,
)


def _observed(p: float, lc: float, rc: float, n: float) -> np.ndarray:
    """Expected A, B, C, D from eqs. 18-21 (independence) then 13-16 (the swap)."""
    lw, rw = n - lc, n - rc
    ecc, ecw, ewc, eww = lc * rc / n, lc * rw / n, lw * rc / n, lw * rw / n
    return np.array(
        [
            (1 - p) * ecc + p * eww,
            (1 - p) * ecw + p * ewc,
            (1 - p) * ewc + p * ecw,
            (1 - p) * eww + p * ecc,
        ]
    )


@pytest.mark.parametrize(
    ("p", "acc_left", "acc_right"), [(0.0, 0.7, 0.8), (0.05, 0.62, 0.9), (0.3, 0.75, 0.66)]
)
def test_closed_form_solves_equations_13_to_21(p, acc_left, acc_right):
    n = 10000.0
    observed = _observed(p, acc_left * n, acc_right * n, n)
    closed = consensus_closed_form(*observed, int(n))

    # Solve eqs. 13-16 with 18-21 numerically for (alpha, E[L_c], E[R_c]) from A, B, C, D.
    def residual(x):
        alpha, lc, rc = x
        return (_observed(2 * alpha / n, lc, rc, n) - observed)[:3]

    start = [0.1 * n, 0.6 * n, 0.6 * n]
    alpha, lc, rc = fsolve(residual, start, xtol=1e-12)
    assert np.allclose(_observed(2 * alpha / n, lc, rc, n), observed, rtol=1e-8)
    assert 2 * alpha / n < 0.5  # the feasible root of Lemma 4.3
    assert closed == pytest.approx(alpha, rel=1e-6, abs=1e-6)
    assert closed == pytest.approx(p * n / 2, rel=1e-9, abs=1e-6)


def test_agreement_sums_by_hand():
    left = np.array([[0.8, 0.2], [0.3, 0.7]])
    right = np.array([[0.6, 0.4], [0.1, 0.9]])
    s = np.array([0, 0])
    a, b, c, d = agreement_sums(left, right, s)
    assert a == pytest.approx(0.8 * 0.6 + 0.3 * 0.1)
    assert b == pytest.approx(0.8 * 0.4 + 0.3 * 0.9)
    assert c == pytest.approx(0.2 * 0.6 + 0.7 * 0.1)
    assert d == pytest.approx(0.2 * 0.4 + 0.7 * 0.9)


def test_no_signal_and_negative_root_are_explained():
    with pytest.raises(InfeasibleError, match="no signal"):
        consensus_closed_form(2500, 2500, 2500, 2500, 10000)
    # A D - B C large against A + D - B - C: p (1 - p) would exceed 1/4.
    with pytest.raises(InfeasibleError, match="square root"):
        consensus_closed_form(5000, 0, 0, 5000, 10000 // 4)


@pytest.mark.parametrize("alpha", [0, 1500])
def test_consensus_recovers_alpha_when_eq_17_holds(alpha):
    data = symmetric_halves_data(20000, seed=1)
    released = swap_group_count(data, "s", alpha, random_state=7).data
    result = consensus_swap_count(released, "s", ["x0", "x1"], ["x2", "x3"], calibrate=False)
    assert abs(result.alpha - alpha) / len(data) < 0.01
    assert result.perturbed_fraction == pytest.approx(2 * result.alpha / len(data))
    assert "Consensus" in result.summary()


def test_bad_splits_are_refused():
    data = symmetric_halves_data(200, seed=2)
    with pytest.raises(ParameterError, match="disjoint"):
        consensus_swap_count(data, "s", ["x0", "x1"], ["x1", "x2"], calibrate=False)
    with pytest.raises(ParameterError, match="swap attribute"):
        consensus_swap_count(data, "s", ["x0", "s"], ["x2"], calibrate=False)


# --- Lemma 4.4: correlated halves -------------------------------------------------


def _correlated_halves(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Fixed class probabilities of two halves sharing a latent factor, and the truth."""
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    shared = rng.normal(size=n)

    def probabilities() -> np.ndarray:
        score = 3.0 * (s - 0.5) + 1.2 * shared + 0.7 * rng.normal(size=n)
        p1 = 1.0 / (1.0 + np.exp(-score))
        return np.column_stack([1.0 - p1, p1])

    left, right = probabilities(), probabilities()
    rows = np.arange(n)
    lr, rr = left[rows, s], right[rows, s]
    beta = float((lr * rr).mean() - lr.mean() * rr.mean())
    return s, left, right, beta


def test_lemma_4_4_recovers_the_swap_when_the_correlation_is_known() -> None:
    n, alpha = 400_000, 20_000
    s, left, right, beta = _correlated_halves(n, seed=0)
    rng = np.random.default_rng(1)
    released = s.copy()
    released[rng.choice(np.flatnonzero(s == 1), alpha, replace=False)] = 0
    released[rng.choice(np.flatnonzero(s == 0), alpha, replace=False)] = 1
    sums = agreement_sums(left, right, released)
    sensitivity = correlation_sensitivity(sums, n)
    assert beta > 0.02  # the halves are correlated
    # Consensus (beta = 0) is far off; the lemma at the true beta is right.
    assert consensus_closed_form(*sums, n) > 1.5 * alpha
    assert sensitivity.alpha_at(0.0) == pytest.approx(consensus_closed_form(*sums, n))
    assert sensitivity.alpha_at(beta) == pytest.approx(alpha, rel=0.02)
    assert sensitivity.beta_for(alpha) == pytest.approx(beta, abs=0.001)
    assert sensitivity.alpha_at(sensitivity.beta_no_swap) == pytest.approx(0.0, abs=1e-6)
    assert np.isnan(sensitivity.alpha_at(sensitivity.beta_no_swap + 0.01))


def test_lemma_4_4_without_correlation_is_lemma_4_3() -> None:
    sums = (620.0, 130.0, 150.0, 100.0)
    sensitivity = correlation_sensitivity(sums, 1000, half_estimates={"left": 40.0})
    assert sensitivity.alpha_at(0.0) == pytest.approx(consensus_closed_form(*sums, 1000))
    assert sensitivity.alpha_at(sensitivity.reconciling["left"]) == pytest.approx(40.0)
    assert "Lemma 4.4" in sensitivity.summary()
