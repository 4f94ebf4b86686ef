"""Algorithm 1 (Kifer 2015, Section 4.1): the relaxed likelihood, the estimator and its properties."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError

import numpy as np
import pandas as pd
import pytest
from _swapdata import OneAttributeMultinomial, gaussian_data, naive_bayes_data

from sdckit import DataError, ParameterError, SchemaError
from sdckit.microdata import swap
from sdckit.swaprate import (
    NaiveBayes,
    estimate_swap_count,
    swap_group_count,
    swap_rate_from_count,
)
from sdckit.swaprate.gsc import SwapModelFit, fit_swap_model, relaxed_log_likelihood


def test_relaxed_likelihood_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    n = 300
    s = (rng.random(n) < 0.35).astype(np.int8)
    log_lik = rng.normal(-3, 2, size=(n, 2))
    counts = rng.integers(1, 4, size=n).astype(float)
    for w in (None, counts):
        weights = np.ones(n) if w is None else w
        upper = min(weights[s == 0].sum(), weights[s == 1].sum())
        for alpha in [0.5, 10.0, 40.0, 0.9 * upper]:
            _, first, second = relaxed_log_likelihood(alpha, log_lik, s, w)
            h = 1e-4 * max(alpha, 1.0)
            up = relaxed_log_likelihood(alpha + h, log_lik, s, w)
            down = relaxed_log_likelihood(alpha - h, log_lik, s, w)
            assert first == pytest.approx((up[0] - down[0]) / (2 * h), rel=1e-5, abs=1e-7)
            assert second == pytest.approx((up[1] - down[1]) / (2 * h), rel=1e-5, abs=1e-7)
            assert second < 0  # Lemma 4.1: concave in alpha


def test_relaxed_likelihood_value_by_hand():
    # Two records: s~ = 0 with (P0, P1) = (0.2, 0.6), s~ = 1 with (0.5, 0.1); n0 = n1 = 1.
    log_lik = np.log([[0.2, 0.6], [0.5, 0.1]])
    s = np.array([0, 1])
    alpha = 0.3
    expected = np.log((1 - alpha) * 0.2 + alpha * 0.6) + np.log(alpha * 0.5 + (1 - alpha) * 0.1)
    value, _, _ = relaxed_log_likelihood(alpha, log_lik, s)
    assert value == pytest.approx(expected - 2 * np.log(2))


def test_no_swap_estimate_is_near_zero():
    data = naive_bayes_data(20000, seed=3)
    est = estimate_swap_count(data, "income", calibrate=False)
    assert est.converged
    assert est.alpha / est.n < 0.01
    assert est.alpha <= 3 * est.standard_error
    gauss = estimate_swap_count(
        gaussian_data(10000, seed=4), "s", ["r"], model="gaussian", calibrate=False
    )
    assert gauss.alpha / gauss.n < 0.03
    assert gauss.alpha <= 3 * gauss.standard_error


@pytest.mark.parametrize("seed", [11, 12])
def test_well_specified_naive_bayes_within_a_few_standard_errors(seed):
    data = naive_bayes_data(20000, seed=seed)
    released = swap(data, columns="income", rate=0.1, random_state=seed + 100)
    est = estimate_swap_count(released.data, "income", calibrate=False)
    assert est.converged
    assert abs(est.alpha - released.alpha) <= 4 * est.standard_error
    assert est.imbalance < 0.005  # the model fits: Section 4.1.4
    assert est.rho == pytest.approx(swap_rate_from_count(est.alpha, est.n0, est.n1))


def test_well_specified_gaussian_and_means_beat_naive_means():
    data = gaussian_data(10000, seed=5)
    released = swap_group_count(data, "s", 1000, random_state=6)
    est = estimate_swap_count(released.data, "s", ["r"], model="gaussian", calibrate=False)
    assert abs(est.alpha - 1000) <= 4 * est.standard_error
    means = est.parameters.means[:, 0]
    naive = released.data.groupby("s")["r"].mean().to_numpy()
    assert np.abs(means - [0, 1]).sum() < 0.5 * np.abs(naive - [0, 1]).sum()


def test_result_structure_and_input_unchanged():
    data = naive_bayes_data(3000, seed=8).set_axis(pd.RangeIndex(50, 3050))
    released = swap(data, columns="income", rate=0.1, random_state=1).data
    before = released.copy(deep=True)
    est = estimate_swap_count(released, "income", ["x0", "x1", "x2"], calibrate=False)
    pd.testing.assert_frame_equal(released, before)
    t = est.change_probabilities
    assert t.index.equals(released.index)
    assert ((t >= 0) & (t <= 1)).all()
    assert est.a0 + est.a1 == pytest.approx(t.sum())
    assert est.imbalance == pytest.approx(abs(est.a0 - est.a1) / est.n)
    assert est.groups == (("high",), ("low",))
    probs = est.class_probabilities()
    assert np.allclose(probs.sum(axis=1), 1)
    assert "alpha = " in est.summary() and est.summary().startswith("verdict: ")


def test_merging_identical_records_changes_nothing():
    data = naive_bayes_data(4000, seed=9)
    released = swap(data, columns="income", rate=0.15, random_state=2).data
    merged = estimate_swap_count(released, "income", profile_se=False, calibrate=False)
    model = NaiveBayes()
    s = (released["income"] == "low").to_numpy().astype(np.int8)
    plain = fit_swap_model(
        model.encode(released.drop(columns="income")), s, model, profile_se=False
    )
    assert merged.alpha == pytest.approx(plain.alpha, rel=1e-4, abs=1e-3)


def test_literal_nesting_reaches_the_same_estimate():
    released = swap(
        naive_bayes_data(4000, seed=10), columns="income", rate=0.1, random_state=3
    ).data
    fast = estimate_swap_count(released, "income", profile_se=False, calibrate=False)
    literal = estimate_swap_count(
        released, "income", profile_se=False, max_em_iter=100, accelerate=False, tol=1e-7
    )
    assert fast.alpha == pytest.approx(literal.alpha, rel=2e-3, abs=0.5)


def test_plugged_in_model():
    data = naive_bayes_data(3000, seed=1)
    released = swap(data, columns="income", rate=0.1, random_state=4).data
    model = OneAttributeMultinomial()
    ours = estimate_swap_count(
        released, "income", ["x0"], model=model, profile_se=False, calibrate=False
    )
    builtin = estimate_swap_count(released, "income", ["x0"], profile_se=False, calibrate=False)
    assert ours.alpha == pytest.approx(builtin.alpha, rel=1e-3, abs=0.5)


def test_multi_valued_swap_attribute_needs_a_split():
    data = naive_bayes_data(500, seed=2)
    data["region"] = np.array(["n", "s", "e"])[np.arange(500) % 3]
    with pytest.raises(ParameterError, match="positive"):
        estimate_swap_count(data, "region", ["x0"], calibrate=False)
    est = estimate_swap_count(
        data, "region", ["x0"], positive=["n"], profile_se=False, calibrate=False
    )
    assert est.groups == (("e", "s"), ("n",))


def test_bad_input_is_refused():
    data = naive_bayes_data(200, seed=0)
    with pytest.raises(SchemaError, match="nope"):
        estimate_swap_count(data, "nope", calibrate=False)
    with pytest.raises(ParameterError, match="swap attribute"):
        estimate_swap_count(data, "income", ["income", "x0"], calibrate=False)
    with pytest.raises(ParameterError, match="model"):
        estimate_swap_count(data, "income", model="forest", calibrate=False)
    with pytest.raises(ParameterError, match="starts"):
        estimate_swap_count(data, "income", starts=(0.0,), calibrate=False)
    one_class = data.assign(income="low")
    with pytest.raises(DataError, match="one value only"):
        estimate_swap_count(one_class, "income", calibrate=False)
    with pytest.raises(ParameterError, match="every value"):
        estimate_swap_count(data, "income", positive=["low", "high"], calibrate=False)
    holes = data.copy()
    holes.loc[3, "x1"] = None
    with pytest.raises(DataError, match="x1"):
        estimate_swap_count(holes, "income", calibrate=False)
    with pytest.raises(SchemaError, match="x0"):
        estimate_swap_count(data, "income", ["x0"], model="gaussian", calibrate=False)


def test_fit_swap_model_returns_a_frozen_result_still_indexable_for_one_release():
    released = swap(naive_bayes_data(1500, seed=9), columns="income", rate=0.1, random_state=2).data
    model = NaiveBayes()
    s = (released["income"] == "low").to_numpy().astype(np.int8)
    fit = fit_swap_model(
        model.encode(released.drop(columns="income")), s, model, profile_se=False, permutations=0
    )
    assert isinstance(fit, SwapModelFit)
    assert fit.n0 + fit.n1 == len(released) and fit.change_probabilities.shape == (len(s),)
    assert (
        fit.summary().startswith("Algorithm 1 on encoded records") and "alpha = " in fit.summary()
    )
    with pytest.raises(FrozenInstanceError):
        fit.alpha = 0.0  # type: ignore[misc]
    # The dict keys of the old return value still work, with a DeprecationWarning.
    with pytest.warns(DeprecationWarning, match=r"\.change_probabilities"):
        assert fit["t"] is fit.change_probabilities
    with pytest.warns(DeprecationWarning, match=r"\.alpha"):
        assert fit["alpha"] == fit.alpha
    with pytest.raises(KeyError):
        fit["no such key"]
    again = pickle.loads(pickle.dumps(fit))
    assert again.alpha == fit.alpha and again.summary() == fit.summary()
