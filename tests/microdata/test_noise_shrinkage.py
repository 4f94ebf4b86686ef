"""Shrinkage estimate of Sigma_o for the noise maskers (Oganian 2011, §1; Ledoit-Wolf 2004)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError
from sdckit.microdata import additive_noise, multiplicative_noise


@pytest.fixture
def collinear() -> pd.DataFrame:
    """b = 2 a exactly: the sample covariance of (a, b, c) is singular."""
    rng = np.random.default_rng(11)
    a = rng.gamma(3.0, 2.0, 60)
    return pd.DataFrame({"a": a, "b": 2.0 * a, "c": rng.gamma(2.0, 3.0, 60) + 0.3 * a})


def test_singular_sample_covariance_is_reported_and_its_relation_kept(collinear):
    result = additive_noise(collinear, variance_factor=0.3, random_state=1)
    assert result.stats["covariance_estimator"] == "sample"
    assert result.stats["cells_with_singular_sample_covariance"] == 1
    assert any("singular in 1 masking cell" in line for line in result.warnings)
    # The noise lies in the span of the sample covariance: b = 2 a still holds.
    np.testing.assert_allclose(result.data["b"], 2.0 * result.data["a"], rtol=1e-9)


@pytest.mark.parametrize("masker", [additive_noise, multiplicative_noise])
def test_shrinkage_is_positive_definite_keeps_variances_and_reports(collinear, masker):
    result = masker(collinear, variance_factor=0.3, covariance="shrinkage", random_state=1)
    stats = result.stats
    assert stats["cells_with_singular_sample_covariance"] == 1
    low, high = stats["shrinkage_intensity"]
    assert 0 < low <= high < 1  # Ledoit-Wolf shrinks, so the estimate is positive definite
    assert 0 < stats["shrinkage_largest_correlation_change"] < 0.3
    assert any("Ledoit-Wolf shrinkage" in line for line in result.warnings)
    assert result.params["covariance"] == "shrinkage"
    # The exact relation is no longer carried by the noise.
    assert np.abs(result.data["b"] - 2.0 * result.data["a"]).max() > 1e-3
    assert (result.data >= 0).all().all() or masker is additive_noise


def test_shrinkage_target_keeps_variances_and_moves_correlations_toward_zero():
    from sdckit.microdata.noise import _shrunk_covariance

    rng = np.random.default_rng(2)
    y = rng.multivariate_normal([0, 0, 0], [[4, 1.8, 0], [1.8, 1, 0.3], [0, 0.3, 9]], 8)
    shrunk, delta = _shrunk_covariance(y)
    sample = np.cov(y, rowvar=False, ddof=0)
    np.testing.assert_allclose(np.diag(shrunk), np.diag(sample), rtol=1e-12)
    off = ~np.eye(3, dtype=bool)
    sd = np.sqrt(np.diag(sample))
    np.testing.assert_allclose(
        (shrunk / np.outer(sd, sd))[off], (1 - delta) * (sample / np.outer(sd, sd))[off]
    )
    assert np.linalg.eigvalsh(shrunk).min() > 0


def test_shrinkage_expected_covariance_by_simulation(collinear):
    # E[released covariance] = (S + k Sigma_shrunk) / (1 + k) for the additive scheme.
    from sdckit.microdata.noise import _shrunk_covariance

    k = 0.3
    x = collinear.to_numpy()
    sample = np.cov(x, rowvar=False, ddof=0)
    shrunk, _ = _shrunk_covariance(x)
    draws = [
        np.cov(
            additive_noise(
                collinear, variance_factor=k, covariance="shrinkage", random_state=s
            ).data.to_numpy(),
            rowvar=False,
            ddof=0,
        )
        for s in range(200)
    ]
    mean = np.mean(draws, axis=0)
    se = np.std(draws, axis=0, ddof=1) / np.sqrt(len(draws))
    expected = (sample + k * shrunk) / (1 + k)
    assert np.abs((mean - expected) / se).max() < 4.5
    # and not the sample covariance: the a-b covariance shrinks (seeds fixed: z = 4.3)
    assert (sample[0, 1] - mean[0, 1]) / se[0, 1] > 3


def test_bad_covariance_option_is_named(collinear):
    with pytest.raises(ParameterError, match="covariance must be 'sample' or 'shrinkage'"):
        additive_noise(collinear, covariance="ledoit")
    weighted = collinear.assign(w=1.0)
    with pytest.raises(ParameterError, match="no weighted form"):
        multiplicative_noise(
            weighted, columns=["a", "c"], covariance="shrinkage", sample_weights="w"
        )
