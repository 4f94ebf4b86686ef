"""Identifiability of the swap count: attributes that carry no information about the swap attribute."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _swapdata import (
    OneAttributeMultinomial,
    gaussian_data,
    naive_bayes_data,
    symmetric_halves_data,
)
from scipy import stats

from sdckit import ParameterError
from sdckit.cli.main import main
from sdckit.microdata import swap
from sdckit.swaprate import (
    Gaussian,
    NaiveBayes,
    consensus_swap_count,
    estimate_swap_count,
    identifiability_check,
    imbalance_check,
    swap_group_count,
)
from shared_data import shared_csv


def clustered_data(n: int, seed: int, signal: float = 0.0) -> pd.DataFrame:
    """Four attributes sharing a latent cluster; s independent of them (and of a weak w if signal).

    Naive Bayes misses the attributes' correlation, so a latent-class fit pays:
    the situation of the issue (sex against age, region, education).
    """
    rng = np.random.default_rng(seed)
    cluster = rng.random(n) < 0.5
    s = (rng.random(n) < 0.4).astype(int)
    columns = {
        f"x{j}": np.where(rng.random(n) < np.where(cluster, 0.75, 0.25), "a", "b") for j in range(4)
    }
    if signal:
        columns["w"] = np.where(rng.random(n) < 0.5 + signal * (2 * s - 1), "u", "v")
    columns["s"] = s
    return pd.DataFrame(columns)


def test_no_information_is_flagged_not_identified():
    data = clustered_data(1000, seed=0)
    before = data.copy(deep=True)
    est = estimate_swap_count(data, "s", calibrate=False)
    pd.testing.assert_frame_equal(data, before)
    check = est.identifiability
    # The bug: a confident alpha near alpha* = n0 n1 / N, a small SE, a small imbalance ...
    assert est.alpha / est.n > 0.2
    assert est.alpha > 10 * est.standard_error
    assert not imbalance_check(est).large
    # ... which the identifiability check refuses, without changing the number.
    assert not est.identified and not check.identified
    assert not check.associated
    assert check.permutation_p_value > 0.05 and check.association_p_value > 0.05
    assert check.independence_count == pytest.approx(est.n0 * est.n1 / est.n)
    assert check.latent_class_p_value > 0.05
    assert "no detectable information" in check.reason
    assert "NOT IDENTIFIED" in est.summary() and "cannot be estimated" in est.summary()
    assert "meaningless" in imbalance_check(est).guidance
    unchecked = estimate_swap_count(data, "s", permutations=0, calibrate=False)
    assert unchecked.alpha == est.alpha and unchecked.standard_error == est.standard_error


def test_independent_attributes_without_clusters_are_flagged():
    rng = np.random.default_rng(5)
    n = 800
    data = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "region": rng.choice(["n", "s", "e", "w"], n),
            "sex": rng.choice(["f", "m"], n, p=[0.55, 0.45]),
        }
    )
    est = estimate_swap_count(data, "sex", calibrate=False)
    assert not est.identified
    assert est.verdict.code == "not_identified"
    # age (whole years) is modelled by its level frequencies: K - 1 parameters, region 3.
    assert est.identifiability.degrees_of_freedom == data["age"].nunique() - 1 + 3


def test_weak_association_explained_by_latent_classes_is_flagged():
    # w is weakly associated with s (the association test finds it), but the fit owes its
    # likelihood to the clusters: no better than the latent-class model at alpha*.
    est = estimate_swap_count(clustered_data(1000, seed=2, signal=0.05), "s", calibrate=False)
    check = est.identifiability
    assert check.associated and check.association_p_value < 0.05
    assert not check.beats_latent_class and check.latent_class_p_value > 0.05
    assert not est.identified
    assert "latent-class" in check.reason
    assert est.alpha / est.n > 0.2  # the bogus estimate the check refuses


@pytest.mark.parametrize("rate", [0.0, 0.1])
def test_informative_attributes_are_identified(rate):
    data = naive_bayes_data(4000, seed=11)
    if rate:
        data = swap(data, columns="income", rate=rate, random_state=3).data
    check = estimate_swap_count(data, "income", profile_se=False, calibrate=False).identifiability
    assert check.identified and check.associated and check.beats_latent_class
    assert check.permutation_p_value == pytest.approx(1 / 200)
    assert check.asymptotic_p_value < 1e-6 and check.latent_class_p_value < 1e-6
    assert check.degrees_of_freedom == sum(3 + j % 3 - 1 for j in range(6))


def test_gaussian_data_are_identified_swapped_or_not():
    data = gaussian_data(3000, seed=4)
    for released in (data, swap_group_count(data, "s", 300, random_state=6).data):
        est = estimate_swap_count(
            released, "s", ["r"], model="gaussian", profile_se=False, calibrate=False
        )
        assert est.identified
        assert est.identifiability.degrees_of_freedom == 2
        assert "NOT IDENTIFIED" not in est.summary()


def test_association_statistic_is_the_g_test_of_independence():
    rng = np.random.default_rng(7)
    n = 600
    s = (rng.random(n) < 0.4).astype(int)
    x = np.where(rng.random(n) < 0.3 + 0.2 * s, "a", np.where(rng.random(n) < 0.5, "b", "c"))
    data = pd.DataFrame({"x": x, "s": s})
    model = NaiveBayes(smoothing=1e-12)
    check = estimate_swap_count(
        data, "s", model=model, profile_se=False, calibrate=False
    ).identifiability
    table = pd.crosstab(data["x"], data["s"]).to_numpy()
    g, p, dof, _ = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    assert check.association_statistic == pytest.approx(g, rel=1e-6)
    assert check.degrees_of_freedom == dof == 2
    assert check.asymptotic_p_value == pytest.approx(p, rel=1e-6)


def test_parameter_counts_of_the_built_in_models():
    data = pd.DataFrame(
        {
            "c": pd.Categorical(["a", "b", "a", "b"], categories=["a", "b", "z"]),
            "x": [1.0, 2.0, 3.0, 5.0],
            "y": [0.5, 0.1, 0.2, 0.9],
        }
    )
    nb = NaiveBayes()
    # The unobserved level z adds no estimable parameter.
    assert nb.class_parameter_count(nb.encode(data)) == 2 * 2 + 1
    gauss = Gaussian()
    assert gauss.class_parameter_count(gauss.encode(data[["x", "y"]])) == 2 + 3


def test_permutation_p_value_is_seeded_and_levels_rejudge():
    data = clustered_data(600, seed=1)
    a = estimate_swap_count(
        data, "s", profile_se=False, random_state=4, calibrate=False
    ).identifiability
    b = estimate_swap_count(
        data, "s", profile_se=False, random_state=4, calibrate=False
    ).identifiability
    assert a == b
    assert 1 / 200 <= a.permutation_p_value <= 1
    assert a.permutation_p_value * 200 == pytest.approx(round(a.permutation_p_value * 200))
    chi = estimate_swap_count(
        data, "s", profile_se=False, permutations=0, calibrate=False
    ).identifiability
    assert np.isnan(chi.permutation_p_value)
    assert chi.association_p_value == chi.asymptotic_p_value
    assert chi.association_statistic == pytest.approx(a.association_statistic)
    # Judged again at a level above its p-values, the same statistics pass.
    lenient = a.at_level(0.99)
    assert lenient.identified and lenient.level == 0.99
    assert lenient.association_statistic == a.association_statistic
    est = estimate_swap_count(data, "s", profile_se=False, calibrate=False)
    assert identifiability_check(est) == est.identifiability
    assert identifiability_check(est, level=0.99).identified


def test_plug_in_model_without_a_parameter_count():
    data = naive_bayes_data(2000, seed=1)
    est = estimate_swap_count(
        data, "income", ["x0"], model=OneAttributeMultinomial(), profile_se=False, calibrate=False
    )
    check = est.identifiability
    assert check.degrees_of_freedom is None and np.isnan(check.asymptotic_p_value)
    assert check.identified and check.association_p_value == check.permutation_p_value
    with pytest.raises(ParameterError, match="permutations > 0"):
        estimate_swap_count(
            data, "income", ["x0"], model=OneAttributeMultinomial(), permutations=0, calibrate=False
        )


def test_bad_identification_parameters_are_refused():
    data = naive_bayes_data(300, seed=2)
    with pytest.raises(ParameterError, match="permutations"):
        estimate_swap_count(data, "income", permutations=-1, calibrate=False)
    with pytest.raises(ParameterError, match="at least 20 permutations"):
        estimate_swap_count(data, "income", permutations=10, calibrate=False)
    for level in (0, 1, 1.5):
        with pytest.raises(ParameterError, match="identification_level"):
            estimate_swap_count(data, "income", identification_level=level, calibrate=False)
    with pytest.raises(ParameterError, match="SwapCountEstimate"):
        identifiability_check("not an estimate")


def test_consensus_with_an_uninformative_half_is_not_identified():
    data = symmetric_halves_data(3000, seed=1)
    released = swap_group_count(data, "s", 150, random_state=2).data
    good = consensus_swap_count(released, "s", ["x0", "x1"], ["x2", "x3"], calibrate=False)
    assert good.identified and "NOT IDENTIFIED" not in good.summary()
    rng = np.random.default_rng(3)
    noise = released.assign(z0=rng.choice(["a", "b"], len(released)))
    bad = consensus_swap_count(noise, "s", ["x0", "x1"], ["z0"], calibrate=False)
    assert not bad.identified and bad.left.identified and not bad.right.identified
    assert "right half ['z0']" in bad.identification_reason
    assert "NOT IDENTIFIED" in bad.summary()


def test_cli_verdict_says_the_count_cannot_be_estimated(tmp_path, capsys):
    path = tmp_path / "survey.csv"
    clustered_data(1000, seed=0).to_csv(path, index=False)
    code = main(["swaprate", "estimate", str(path), "-s", "s", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    verdict = out[out.index("verdict:") :]
    assert "cannot be estimated from these attributes" in " ".join(verdict.split())
    assert "appear to have" not in verdict
    good = tmp_path / "good.csv"
    naive_bayes_data(2000, seed=4).to_csv(good, index=False)
    assert main(["swaprate", "estimate", str(good), "-s", "income", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "cannot be estimated" not in " ".join(out[out.index("verdict:") :].split())


def test_fitted_log_likelihood_from_sufficient_statistics():
    rng = np.random.default_rng(0)
    n = 400
    data = pd.DataFrame(
        {
            "c": rng.choice(["a", "b", "c"], n),
            "x": rng.lognormal(size=n),
            "k": pd.Categorical(rng.choice(["u", "v"], n), categories=["u", "v", "z"]),
        }
    )
    share = rng.random((n, 1))
    weights = np.hstack([share, 1 - share]) * rng.integers(1, 3, (n, 1))
    for model in (NaiveBayes(), NaiveBayes(min_variance=5.0, smoothing=0.5)):
        records = model.encode(data)
        direct = (weights * model.log_likelihood(model.fit(records, weights), records)).sum()
        assert model.fitted_log_likelihood(records, weights) == pytest.approx(direct, rel=1e-12)
    data["y"] = data["x"] + rng.normal(size=n)
    for model in (Gaussian(), Gaussian(ridge=0.5)):
        records = model.encode(data[["x", "y"]])
        direct = (weights * model.log_likelihood(model.fit(records, weights), records)).sum()
        assert model.fitted_log_likelihood(records, weights) == pytest.approx(direct, rel=1e-10)


def test_latent_class_maximum_is_searched_from_every_run():
    # A placebo swap attribute beside seven Adult attributes: the run of Algorithm 1 that
    # ended nearest alpha* sits in a poorer local maximum (about 100 log-likelihood units
    # below the best run). EM at alpha* from it alone gave a latent-class statistic of 199
    # and, with a chance association (p = 0.01), called the estimate identified.
    columns = ["workclass", "relationship", "sex", "education", "marital_status"]
    columns += ["occupation", "race"]
    adult = shared_csv("adult.csv").iloc[:32561].dropna()[columns].reset_index(drop=True)
    rng = np.random.default_rng(20260)
    for _ in range(49):
        rng.random(len(adult))
    placebo = adult.assign(placebo=(rng.random(len(adult)) < 0.4).astype(int))
    est = estimate_swap_count(placebo, "placebo", columns, profile_se=False, calibrate=False)
    ends = sorted(log_lik for _, _, log_lik in est.starts)
    assert ends[-1] - ends[0] > 50  # the starts ended in different local maxima
    check = est.identifiability
    assert check.latent_class_statistic < 3.84
    assert not est.identified
