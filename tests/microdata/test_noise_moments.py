"""Oganian (2011) §3: masked moments in closed form (eq. 25) and their recovery (eq. 26)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError
from sdckit.microdata import (
    MixedMoments,
    expected_masked_moments,
    mixed_moments,
    multiplicative_noise,
    recover_moments,
)

K = 0.15


def _lognormal_moments(mu: float, s2: float, order: int) -> MixedMoments:
    """Exact moments of one lognormal variable: E[X^p] = exp(p mu + p^2 s2 / 2)."""
    moments = {(p,): math.exp(p * mu + p * p * s2 / 2) for p in range(1, order + 1)}
    return MixedMoments(columns=("x",), moments=moments, max_order=order)


def test_closed_form_matches_integration_over_a_known_distribution() -> None:
    # X lognormal(0, 0.5), masked: X_m = (X + (r-1) E X) exp(E) / r with
    # E ~ N(-s/2, s), s = log((1+k) E[X^2] / (E[X^2] + k E[X]^2)) (eq. 23).
    mu, s2 = 0.0, 0.5
    original = _lognormal_moments(mu, s2, 4)
    masked = expected_masked_moments(original, variance_factor=K)
    r = math.sqrt(1 + K)
    m1, m2 = original.moments[(1,)], original.moments[(2,)]
    s = math.log((1 + K) * m2 / (m2 + K * m1**2))
    # Gauss-Hermite quadrature over log X and over E, independently of the module.
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    x = np.exp(mu + math.sqrt(s2) * nodes)
    factor = np.exp(-s / 2 + math.sqrt(s) * nodes)
    released = np.outer(x + (r - 1) * m1, factor) / r
    joint = np.outer(weights, weights)
    for p in range(1, 5):
        assert masked.moments[(p,)] == pytest.approx(float((joint * released**p).sum()), rel=1e-9)
    # Means and second moments are kept; the third and fourth are inflated.
    assert masked.moments[(1,)] == pytest.approx(m1, rel=1e-12)
    assert masked.moments[(2,)] == pytest.approx(m2, rel=1e-12)
    assert masked.moments[(3,)] > original.moments[(3,)] * 1.001
    assert (
        masked.moments[(4,)] / original.moments[(4,)]
        > masked.moments[(3,)] / original.moments[(3,)]
    )


def test_recovery_inverts_the_closed_form() -> None:
    rng = np.random.default_rng(3)
    z = rng.multivariate_normal([0, 0, 0], [[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1]], 500)
    data = pd.DataFrame(np.exp(z * [0.8, 0.5, 1.0]), columns=["a", "b", "c"])
    original = mixed_moments(data, max_order=5)
    masked = expected_masked_moments(original, variance_factor=0.3)
    back = recover_moments(masked, variance_factor=0.3)
    assert back.source == "recovered original"
    for key, value in original.moments.items():
        assert back.moments[key] == pytest.approx(value, rel=1e-9), key
    # The masked moments are not the original ones, so the inversion does something.
    assert masked.moment({"a": 2, "c": 2}) > 1.01 * original.moment({"a": 2, "c": 2})


def test_shift_for_a_column_of_both_signs_inverts_too() -> None:
    rng = np.random.default_rng(4)
    data = pd.DataFrame({"x": rng.normal(1, 2, 300), "y": rng.gamma(2, 1, 300)})
    shift = {"x": float(-data["x"].min())}
    masked = expected_masked_moments(data, variance_factor=K, shift=shift, max_order=3)
    back = recover_moments(masked, variance_factor=K, shift=shift)
    original = mixed_moments(data, max_order=3)
    for key, value in original.moments.items():
        assert back.moments[key] == pytest.approx(value, rel=1e-8, abs=1e-9), key
    with pytest.raises(ParameterError, match="shift=\\{column: \\|min\\|\\}"):
        expected_masked_moments(
            pd.DataFrame({"x": [-3.0, 1.0, 2.0], "y": [3.0, -1.0, -2.0]}), variance_factor=K
        )


def _monte_carlo(data: pd.DataFrame, k: float, replicates: int) -> tuple[pd.Series, pd.Series]:
    """Mean and standard error over replicates of sdckit's masked sample moments."""
    keys = list(mixed_moments(data, max_order=4).moments)
    draws = []
    for seed in range(replicates):
        released = multiplicative_noise(
            data, variance_factor=k, noise_covariance="exact", totals=None, random_state=seed
        ).data
        draws.append([mixed_moments(released, max_order=4).moments[key] for key in keys])
    table = pd.DataFrame(draws, columns=pd.Index(keys, tupleize_cols=False))
    return table.mean(), table.std(ddof=1) / math.sqrt(replicates)


def _printed_form(original: MixedMoments, k: float, p: tuple[int, ...]) -> float:
    """Eq. 25 as printed: cross factor (1+k) E[X_j X_l] / (E[X_j X_l] + k E[X_j X_l]) = 1."""
    corrected = expected_masked_moments(original, variance_factor=k).moments[p]
    unit = np.eye(len(p), dtype=int)
    factor = 1.0
    for j in range(len(p)):
        for m in range(j + 1, len(p)):
            second = original.moments[tuple(unit[j] + unit[m])]
            mean_j, mean_m = original.moments[tuple(unit[j])], original.moments[tuple(unit[m])]
            factor *= ((1 + k) * second / (second + k * mean_j * mean_m)) ** (p[j] * p[m])
    return corrected / factor


def test_sdckit_masker_agrees_with_the_corrected_closed_form_not_the_printed_one() -> None:
    k = 0.5
    rng = np.random.default_rng(7)
    z = rng.multivariate_normal([0, 0], [[0.5, 0.4], [0.4, 0.5]], 400)
    data = pd.DataFrame(np.exp(z) * [2.0, 5.0], columns=["u", "v"])
    original = mixed_moments(data, max_order=4)
    expected = expected_masked_moments(original, variance_factor=k)
    mean, se = _monte_carlo(data, k, 50)
    # Every moment of orders 1-4 within sampling error of eq. 25 (corrected)...
    worst = max(abs(mean[key] - value) / se[key] for key, value in expected.moments.items())
    assert worst < 4.5
    # ...and the printed cross factor of eqs. 24-26 is rejected.
    printed = max(abs(mean[key] - _printed_form(original, k, key)) / se[key] for key in mean.index)
    assert printed > 6


def test_bad_input_is_named() -> None:
    data = pd.DataFrame({"a": [1.0, 2.0, None]})
    with pytest.raises(Exception, match="column 'a' has a missing value in row 3"):
        mixed_moments(data)
    good = pd.DataFrame({"a": [1.0, 2.0, 4.0]})
    with pytest.raises(ParameterError, match="variance_factor"):
        expected_masked_moments(good, variance_factor=0)
    with pytest.raises(ParameterError, match="max_order"):
        mixed_moments(good, max_order=1)
    with pytest.raises(ParameterError, match="not among the columns"):
        mixed_moments(good).moment({"b": 1})
    assert "E[X^3]" in mixed_moments(good).summary()
    assert list(mixed_moments(good, max_order=2).to_frame()["order"]) == [1, 2]
