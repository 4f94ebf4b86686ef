"""Utility measures: exact small cases and properties."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.assess import (
    ci_overlap,
    compare_correlations,
    compare_moments,
    compare_mutual_information,
    compare_pca,
    compare_regression,
    fit_regression,
    prediction_check,
    prediction_experiment,
)
from sdckit.errors import DataError, ParameterError, SchemaError


def test_correlations_identical_release_has_no_difference(numeric_pair):
    original, _ = numeric_pair
    result = compare_correlations(original, original.copy())
    assert result.mean_abs_difference == 0.0
    assert result.sign_flips == []
    assert list(result.original.columns) == ["a", "b", "c"]


def test_correlation_sign_flip_detected_exactly():
    original = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [1.0, 2, 3, 5], "z": [4.0, 1, 3, 2]})
    masked = original.assign(y=[5.0, 3, 2, 1])  # y reversed: corr(x, y) becomes negative
    result = compare_correlations(original, masked)
    assert ("x", "y") in result.sign_flips
    r0 = np.corrcoef(original["x"], original["y"])[0, 1]
    r1 = np.corrcoef(masked["x"], masked["y"])[0, 1]
    assert result.difference.loc["x", "y"] == pytest.approx(r1 - r0)
    assert result.largest_differences.iloc[0]["difference"] == pytest.approx(
        result.difference.where(np.triu(np.ones((3, 3), bool), 1)).abs().max().max()
        * np.sign(result.largest_differences.iloc[0]["difference"])
    )


def test_ci_overlap_hand_cases():
    # Identical intervals: 1. Touching: 0. Half-overlapping equal widths: 0.5. Apart: negative.
    got = ci_overlap(
        np.array([0.0, 0.0, 0.0, 0.0]),
        np.array([2.0, 2.0, 2.0, 2.0]),
        np.array([0.0, 2.0, 1.0, 4.0]),
        np.array([2.0, 4.0, 3.0, 6.0]),
    )
    np.testing.assert_allclose(got, [1.0, 0.0, 0.5, -1.0])
    # Unequal widths: original [0, 4], masked [1, 2]: overlap 1 -> 0.5 * (1/4 + 1/1).
    assert ci_overlap(np.array([0.0]), np.array([4.0]), np.array([1.0]), np.array([2.0]))[
        0
    ] == pytest.approx(0.625)


def test_regression_hand_computed_fit():
    # y = -0.8 + 1.2 x exactly by least squares on these four points (worked by hand).
    data = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [0.0, 0, 0, 4]})
    fit = fit_regression(data, "y", ["x"])
    assert fit.coefficients["const"] == pytest.approx(-0.8)
    assert fit.coefficients["x"] == pytest.approx(1.2)
    # SSE 4.8, residual df 2 -> s^2 = 2.4; SE(slope) = sqrt(s^2 / Sxx) = sqrt(2.4 / 5).
    assert fit.standard_errors["x"] == pytest.approx(math.sqrt(2.4 / 5))
    np.testing.assert_allclose(fit.cooks_distance, [28 / 27, 1 / 49, 16 / 49, 7 / 3])


def test_regression_comparison_identical_is_full_overlap(numeric_pair):
    original, masked = numeric_pair
    same = compare_regression(original, original.copy(), "a", ["b", "c", "group"])
    assert same.mean_ci_overlap == pytest.approx(1.0)
    assert not same.table["sign_changed"].any()
    # Categorical predictor enters as treatment dummies, first level the baseline.
    assert list(same.table.index) == ["const", "b", "c", "group[y]", "group[z]"]
    noisy = compare_regression(original, masked, "a", ["b", "c"])
    assert noisy.mean_ci_overlap < 1.0
    assert noisy.original.r_squared > noisy.masked.r_squared - 0.2


def test_regression_rejects_bad_columns(numeric_pair):
    original, masked = numeric_pair
    with pytest.raises(SchemaError, match="group"):
        compare_regression(original, masked, "group", ["a"])
    with pytest.raises(ParameterError, match="also listed"):
        compare_regression(original, masked, "a", ["a", "b"])
    with pytest.raises(SchemaError, match="nope"):
        compare_regression(original, masked, "a", ["nope"])


def test_pca_identical_and_scaled_copies(numeric_pair):
    original, _ = numeric_pair
    # PCA of scaled data ignores units: doubling a column changes nothing.
    rescaled = original.assign(b=original["b"] * 2 + 7)
    result = compare_pca(original, rescaled)
    np.testing.assert_allclose(result.variance_original, result.variance_masked, atol=1e-12)
    assert result.loading_difference.max() < 1e-9
    assert result.variance_original.sum() == pytest.approx(1.0)
    assert result.pc1_share_original > 1 / 3  # correlated data: PC1 above an even share


def test_pca_independent_columns_spread_variance():
    rng = np.random.default_rng(3)
    original = pd.DataFrame(rng.normal(size=(2000, 4)), columns=list("wxyz"))
    original["x"] = original["w"] + 0.1 * original["x"]
    shuffled = pd.DataFrame({c: rng.permutation(original[c].to_numpy()) for c in original.columns})
    result = compare_pca(original, shuffled)
    assert result.pc1_share_original > 0.45
    assert result.pc1_share_masked < 0.30


def test_moments_covariance_ratio_exact():
    original = pd.DataFrame({"x": [1.0, 2, 3, 4, 5], "y": [2.0, 1, 4, 3, 6]})
    masked = original.assign(y=original["y"] * 2)
    result = compare_moments(original, masked)
    # Var(2y) / Var(y) = 4, Cov(x, 2y) / Cov(x, y) = 2, Var(x) unchanged.
    np.testing.assert_allclose(result.covariance_ratio.to_numpy(), [[1, 2], [2, 4]])
    assert result.ratio_range == (1.0, 4.0)
    assert result.means.loc["y", "ratio"] == pytest.approx(2.0)


def test_mutual_information_exact_bits():
    # x and y identical fair coins: I = H = 1 bit; z independent of both by construction.
    original = pd.DataFrame(
        {
            "x": ["a", "a", "b", "b"],
            "y": ["p", "p", "q", "q"],
            "z": ["u", "v", "u", "v"],
        }
    )
    masked = original.assign(y=["p", "q", "p", "q"])  # now y is independent of x
    result = compare_mutual_information(original, masked)
    assert result.original.loc["x", "y"] == pytest.approx(1.0)
    assert result.original.loc["x", "z"] == pytest.approx(0.0)
    assert result.masked.loc["x", "y"] == pytest.approx(0.0)
    # Multi-information: H(x)+H(y)+H(z) - H(x,y,z) = 3 - 2 = 1 bit before, 3 - 2 = 1 after
    # (y now equals z).
    assert result.multi_information_original == pytest.approx(1.0)
    assert result.multi_information_masked == pytest.approx(1.0)


def test_mutual_information_needs_two_categoricals(numeric_pair):
    original, masked = numeric_pair
    with pytest.raises(SchemaError, match="at least 2 categorical"):
        compare_mutual_information(original, masked)


def test_prediction_check_identical_release_gives_identical_errors(numeric_pair):
    original, _ = numeric_pair
    result = prediction_check(
        original,
        original.copy(),
        "group",
        ["a", "b", "c"],
        n_replications=2,
        n_estimators=20,
        holdout=60,
        random_state=4,
        n_jobs=1,
    )
    assert result.task == "classification"
    errors = result.errors.pivot(index="replication", columns="training", values="error")
    np.testing.assert_array_equal(errors["original"], errors["masked"])
    assert 0.0 <= result.mean_errors["original"] <= 1.0
    assert result.holdout == 60


def test_prediction_check_regression_rmse(numeric_pair):
    original, masked = numeric_pair
    result = prediction_check(
        original,
        masked,
        "a",
        ["b", "c"],
        n_replications=1,
        n_estimators=20,
        random_state=1,
        n_jobs=1,
    )
    assert result.task == "regression"
    assert result.holdout == 30  # min(1000, 10% of 300)
    assert (result.errors["error"] > 0).all()


def test_prediction_experiment_runs_registered_masker(numeric_pair):
    original, _ = numeric_pair
    before = original.copy()

    def run():
        return prediction_experiment(
            original,
            "group",
            ["a", "b", "c"],
            method="rwn",
            settings={"k = 5": {"k": 5, "q": 0.5}},
            n_replications=2,
            n_estimators=10,
            random_state=0,
            n_jobs=1,
        )

    result = run()
    assert list(result.mean_errors.index) == ["original", "k = 5"]
    assert len(result.errors) == 4
    pd.testing.assert_frame_equal(original, before)
    pd.testing.assert_frame_equal(result.errors, run().errors)  # same seed, same errors


def test_prediction_check_reports_the_constant_prediction_it_must_beat():
    rng = np.random.default_rng(3)
    n = 600
    x = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    # A class carried by a: the forest learns it and beats the commonest class.
    learnable = x.assign(y=np.where(x["a"] > 0.5, "high", "low"))
    result = prediction_check(
        learnable,
        learnable,
        "y",
        ["a", "b"],
        holdout=200,
        n_replications=2,
        n_estimators=20,
        random_state=1,
    )
    share_high = float((learnable["y"] == "high").mean())
    assert result.baseline_error == pytest.approx(share_high, abs=0.06)
    assert result.learns and "commonest class" in result.note()
    # A class independent of every predictor (80/20): fully grown trees do
    # worse than always answering the commonest class, and the note says so.
    noise = x.assign(y=np.where(rng.random(n) < 0.2, "rare", "common"))
    result = prediction_check(
        noise,
        noise,
        "y",
        ["a", "b"],
        holdout=200,
        n_replications=3,
        n_estimators=20,
        random_state=1,
    )
    assert result.baseline_error == pytest.approx(0.2, abs=0.06)
    assert result.mean_errors["original"] > result.baseline_error
    assert not result.learns
    assert "says nothing about the masking" in result.note()
    assert "no evidence about masking" in result.summary()
    with pytest.raises(ParameterError, match="min_samples_leaf"):
        prediction_check(noise, noise, "y", ["a", "b"], min_samples_leaf=0)


def test_pair_checks(numeric_pair):
    original, masked = numeric_pair
    with pytest.raises(DataError, match="rows"):
        compare_correlations(original, masked.iloc[:-1])
    with pytest.raises(DataError, match="index"):
        compare_correlations(original, masked.reset_index(drop=True))
    with pytest.raises(SchemaError, match="lacks"):
        compare_correlations(original, masked.drop(columns="c"))


def test_regression_refuses_a_predictor_level_the_original_lacks():
    rng = np.random.default_rng(21)
    n = 60
    original = pd.DataFrame(
        {"y": rng.normal(size=n), "x": rng.normal(size=n), "g": rng.choice(["a", "b"], n)},
        index=pd.RangeIndex(10, 10 + n),
    )
    masked = original.assign(g=original["g"].where(original.index != 12, "new"))
    with pytest.raises(SchemaError, match=r"'g' has value 'new' at row 3 \(index 12\) \(1 record"):
        compare_regression(original, masked, "y", ["x", "g"])


def test_prediction_check_names_the_predictor_with_missing_values():
    rng = np.random.default_rng(22)
    n = 60
    data = pd.DataFrame(
        {"g": rng.choice(list("abcd"), n), "x": rng.normal(size=n), "y": rng.normal(size=n)}
    )
    data.loc[5, "x"] = np.nan
    with pytest.raises(DataError, match="in 'x'"):
        prediction_check(data, data, "y", ["g", "x"], n_replications=1, random_state=0)


def test_assess_with_a_categorical_response_runs_the_prediction_check_only():
    from sdckit.assess import assess

    rng = np.random.default_rng(23)
    n = 80
    x = rng.normal(size=(n, 2))
    original = pd.DataFrame(
        {"a": x[:, 0], "b": x[:, 1], "label": np.where(x[:, 0] > 0, "pos", "neg")}
    )
    masked = original.assign(a=original["a"] + rng.normal(scale=0.1, size=n))
    with pytest.raises(SchemaError, match="categorical.*prediction=True"):
        assess(original, masked, response="label")
    result = assess(
        original,
        masked,
        response="label",
        prediction=True,
        prediction_replications=1,
        holdout=20,
        random_state=1,
    )
    assert result.utility.regression is None and result.risk.cooks is None
    assert result.utility.prediction.task == "classification"


def test_moments_ratio_of_near_zero_covariances_is_undefined():
    rng = np.random.default_rng(5)
    original = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    original["b"] = original["a"] + 0.5 * original["b"]  # a, b correlated ~0.9
    masked = original + rng.normal(scale=0.2, size=original.shape)
    result = compare_moments(original, masked)
    ratio = result.covariance_ratio
    # c is nearly uncorrelated with a and b: no ratio, their correlation change instead.
    assert np.isnan(ratio.loc["a", "c"]) and np.isnan(ratio.loc["c", "b"])
    assert np.isfinite(ratio.loc["a", "b"]) and np.isfinite(ratio.loc["c", "c"])
    assert result.weak_pairs == 2
    assert 0 < result.weak_correlation_change < 0.1
    assert "2 pair(s) with an original correlation below 0.2" in result.note()
    assert "undefined for 2 pair(s)" in result.summary()
    assert 0.9 < result.ratio_range[0] <= result.ratio_range[1] < 1.2
