"""Record models of Kifer (2015, Example 4.2) and the swaprate command line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _swapdata import symmetric_halves_data

from sdckit import ParameterError
from sdckit.cli.main import main
from sdckit.swaprate import Gaussian, NaiveBayes, make_model


def test_naive_bayes_m_step_is_example_4_2():
    data = pd.DataFrame({"c": ["a", "b", "a", "c"], "x": [1.0, 2.0, 3.0, 5.0]})
    model = NaiveBayes()
    records = model.encode(data)
    assert records.categorical_names == ("c",) and records.continuous_names == ("x",)
    weights = np.array([[0.9, 0.1], [0.2, 0.8], [1.0, 0.0], [0.5, 0.5]])
    theta = model.fit(records, weights)
    w0 = weights[:, 0]
    # Laplace: (1 + sum_i w0_i 1{c_i = g}) / (sum_i w0_i + |domain|), domain {a, b, c}.
    expected_a = (1 + 0.9 + 1.0) / (w0.sum() + 3)
    assert np.exp(theta.log_probabilities[0][0, 0]) == pytest.approx(expected_a)
    assert np.exp(theta.log_probabilities[0]).sum(axis=1) == pytest.approx([1, 1])
    mean0 = (w0 * data["x"]).sum() / w0.sum()
    assert theta.means[0, 0] == pytest.approx(mean0)
    assert theta.variances[0, 0] == pytest.approx((w0 * (data["x"] - mean0) ** 2).sum() / w0.sum())
    log_lik = model.log_likelihood(theta, records)
    by_hand = (
        theta.log_probabilities[0][1, 1]
        - 0.5 * np.log(2 * np.pi * theta.variances[1, 0])
        - (2.0 - theta.means[1, 0]) ** 2 / (2 * theta.variances[1, 0])
    )
    assert log_lik[1, 1] == pytest.approx(by_hand)
    assert "Naive Bayes" in theta.summary()


def test_gaussian_model_matches_scipy_density():
    from scipy.stats import multivariate_normal

    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.normal(size=(50, 2)), columns=["u", "v"])
    model = Gaussian()
    records = model.encode(data)
    weights = np.column_stack([rng.random(50), np.ones(50)])
    theta = model.fit(records, weights)
    dens = multivariate_normal(theta.means[0], theta.covariances[0]).logpdf(data.to_numpy())
    assert np.allclose(model.log_likelihood(theta, records)[:, 0], dens)


def test_make_model():
    assert isinstance(make_model("gaussian"), Gaussian)
    custom = NaiveBayes(smoothing=0.5)
    assert make_model(custom) is custom
    with pytest.raises(ParameterError, match="smoothing"):
        NaiveBayes(smoothing=0)


def test_cli_estimate(tmp_path, capsys):
    path = tmp_path / "released.csv"
    symmetric_halves_data(3000, seed=1).to_csv(path, index=False)
    code = main(
        [
            "swaprate",
            "estimate",
            str(path),
            "-s",
            "s",
            "--left",
            "x0,x1",
            "--right",
            "x2,x3",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Consensus" in out and "verdict:" in out and "imbalance" in out
    code = main(["swaprate", "estimate", str(path), "-s", "s", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "rho" in out and "verdict:" in out
    assert main(["swaprate", "estimate", str(path), "-s", "s", "--left", "x0"]) == 2
    assert main(["swaprate", "estimate", str(path), "-s", "s", "--model", "tree"]) == 2
