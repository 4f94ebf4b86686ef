"""Integer-coded attributes modelled as continuous: class variances stay bounded (no degenerate spike)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError
from sdckit.swaprate import Gaussian, NaiveBayes, estimate_swap_count
from sdckit.swaprate.models import EncodedRecords


def _coded(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    s = rng.integers(0, 2, n)
    employed = rng.random(n) < np.where(s == 1, 0.8, 0.4)
    # A status code: exactly 1 for every employed person, 2..7 otherwise.
    status = np.where(employed, 1, rng.integers(2, 8, n))
    return pd.DataFrame({"s": s, "status": status, "age": rng.normal(40, 10, n)})


def test_resolution_variance_is_delta_squared_over_twelve():
    data = _coded()
    records = NaiveBayes(continuous=["status"]).encode(data[["status", "age"]])
    assert records.resolution_variance[0] == pytest.approx(1 / 12)
    assert records.resolution_variance[1] < 1e-3


@pytest.mark.parametrize("model", ["naive-bayes", "gaussian"])
def test_a_class_on_one_code_keeps_a_bounded_density(model):
    # Declared continuous: an integer code is otherwise modelled by its level frequencies.
    chosen = NaiveBayes(continuous=["status"]) if model == "naive-bayes" else model
    est = estimate_swap_count(_coded(), "s", ["status", "age"], model=chosen, calibrate=False)
    params = est.parameters
    sd = (
        np.sqrt(params.variances[:, 0])
        if model == "naive-bayes"
        else np.sqrt(params.covariances[:, 0, 0])
    )
    # Before: a class concentrated on code 1 had sd ~ 1e-4 and a likelihood without bound.
    assert sd.min() >= np.sqrt(1 / 12) - 1e-9
    assert np.isfinite(est.log_likelihood)


def test_plug_in_records_without_resolution_still_work():
    x = np.asfortranarray(np.random.default_rng(0).normal(size=(50, 1)))
    records = EncodedRecords(
        continuous=x,
        categorical=np.empty((50, 0), dtype=np.intp),
        continuous_names=("x",),
        categorical_names=(),
        levels=(),
    )
    weights = np.full((50, 2), 0.5)
    assert np.isfinite(Gaussian().fitted_log_likelihood(records, weights))
    assert np.isfinite(NaiveBayes().fitted_log_likelihood(records, weights))


def test_groups_and_messages_show_plain_values():
    data = _coded()
    est = estimate_swap_count(data, "s", ["age"])
    assert "groups: 0 = [0], 1 = [1]" in est.summary()
    with pytest.raises(ParameterError, match=r"\(\[1, 2, 3, 4, 5, 6, 7\]\).*--positive"):
        estimate_swap_count(data, "status", ["age"])
