"""Regression attacks on constructed data where the answer is known exactly (Bleninger et al. 2011, Appendix A)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.attacks import (
    ArtificialOutlier,
    NaiveServer,
    RegressionQuery,
    StrategicDummy,
    Variable,
    artificial_outlier,
    attack,
    dummy_mean_isolates,
    dummy_variance_isolates,
    isolated_dummy_variance,
    outlier_distance,
    recover_value,
    regression_attack,
    strategic_dummy,
    unique_maximum,
)
from sdckit.errors import ParameterError, SchemaError


@pytest.fixture
def firms() -> pd.DataFrame:
    """60 firms: distinct sizes except rows 10 and 11, which share size 500; state; turnover."""
    rng = np.random.default_rng(7)
    n = 60
    size = rng.choice(np.arange(20, 2000), size=n, replace=False).astype(float)
    size[11] = size[10] = 500.0
    return pd.DataFrame(
        {
            "size": size,
            "state": rng.choice(["A", "B", "C"], size=n),
            "employees": rng.integers(1, 50, size=n).astype(float),
            "turnover": 1000 + 30 * size + rng.normal(0, 5000, size=n) ** 2 / 1000,
        }
    )


def test_strategic_dummy_recovers_isolated_record_to_machine_precision(firms):
    m = 3
    server = NaiveServer(firms)
    query = RegressionQuery("turnover", (StrategicDummy({"size": firms["size"][m]}),))
    answer = server.fit(query)
    y_hat = recover_value(answer.coefficients, [1.0, 1.0])
    assert y_hat == pytest.approx(firms["turnover"][m], rel=1e-12)
    # The isolation checks the intruder can run on released summaries pass.
    assert dummy_mean_isolates(answer.means["s0"], answer.n_obs)


def test_dummy_with_extra_regressors_still_recovers(firms):
    m = 5
    known = firms.iloc[m]
    query = RegressionQuery(
        "turnover",
        (StrategicDummy({"size": known["size"]}), Variable("employees")),
    )
    answer = NaiveServer(firms).fit(query)
    y_hat = recover_value(answer.coefficients, [1.0, 1.0, known["employees"]])
    assert y_hat == pytest.approx(known["turnover"], rel=1e-10)


def test_two_records_sharing_x_are_not_recovered(firms):
    # Appendix A.1/A.2: with q = 2 records sharing x, ŷ is their mean, not either value.
    query = RegressionQuery("turnover", (StrategicDummy({"size": 500.0}),))
    answer = NaiveServer(firms).fit(query)
    y_hat = recover_value(answer.coefficients, [1.0, 1.0])
    pair = firms["turnover"][[10, 11]].to_numpy()
    assert y_hat == pytest.approx(pair.mean(), rel=1e-12)
    assert abs(y_hat - pair[0]) > 1e-3 * abs(pair[0])
    assert not dummy_mean_isolates(answer.means["s0"], answer.n_obs)


def test_artificial_outlier_converges_to_target_value(firms):
    m = 8
    distance = outlier_distance(firms, known={"size": firms["size"][m]})
    errors = []
    for eps in (1e-2, 1e-4, 1e-6):
        z = artificial_outlier(distance, epsilon=eps)
        assert unique_maximum(z)
        answer = NaiveServer(firms).fit(
            RegressionQuery("turnover", (ArtificialOutlier({"size": firms["size"][m]}, eps),))
        )
        y_hat = recover_value(answer.coefficients, [1.0, 1.0 / eps])
        errors.append(abs(y_hat - firms["turnover"][m]) / firms["turnover"][m])
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6


def test_artificial_outlier_tie_has_no_unique_maximum(firms):
    z = artificial_outlier(outlier_distance(firms, known={"size": 500.0}))
    assert not unique_maximum(z)


def test_isolated_variance_is_not_the_papers_misprint():
    n = 40
    one_hot = np.zeros(n)
    one_hot[7] = 1.0
    assert isolated_dummy_variance(n) == pytest.approx(np.var(one_hot), rel=1e-14)
    assert isolated_dummy_variance(n, ddof=1) == pytest.approx(np.var(one_hot, ddof=1), rel=1e-14)
    assert dummy_variance_isolates(np.var(one_hot), n)
    assert not dummy_variance_isolates(1 / n + 1 / n**2, n)  # the printed formula
    two_hot = one_hot.copy()
    two_hot[8] = 1.0
    assert not dummy_variance_isolates(np.var(two_hot), n)


def test_strategic_dummy_approximate_and_conjunction(firms):
    m = 20
    x = firms["size"][m]
    dummy = strategic_dummy(firms, known={"size": x}, delta={"size": 0.025})
    values = firms["size"].to_numpy()
    expected = ((1 - 0.025) * values < x) & (x < (1 + 0.025) * values)
    np.testing.assert_array_equal(dummy, expected)
    conj = strategic_dummy(
        firms, known={"size": x, "state": firms["state"][m]}, delta={"size": 0.025}
    )
    np.testing.assert_array_equal(conj, expected & (firms["state"] == firms["state"][m]).to_numpy())
    additive = strategic_dummy(firms, known={"size": x}, gamma={"size": 0.5})
    assert additive.sum() == 1 and additive[m]


def test_table_exact_answers(firms):
    result = regression_attack(
        firms, sensitive="turnover", background=["size", "state"], quantiles=[0.0]
    )
    table = result.table.set_index(["attack", "indicators"])
    dummy = table.loc[("strategic dummy", "exact size")]
    # 58 of 60 sizes are unique; rows 10 and 11 share one.
    assert dummy["identified"] == pytest.approx(58 / 60)
    assert dummy["delta_identified"] < 1e-10
    outlier = table.loc[("artificial outlier", "size")]
    assert outlier["identified"] == pytest.approx(58 / 60)
    assert outlier["delta_identified"] < 1e-3
    assert dummy["N"] == 60
    assert "isolates targets and recovers" in result.summary().splitlines()[0]
    assert dummy["identified_recovered"] == pytest.approx(58 / 60)


def test_fast_fits_equal_one_query_per_target(firms):
    """The rank-one (FWL) fits give what numpy's least squares gives target by target."""
    kwargs = dict(
        sensitive="turnover",
        background=["size", "state", "employees"],
        approx=0.05,
        quantiles=[0.0, 0.5],
        extra=["employees"],
    )
    fast = regression_attack(firms, **kwargs).table
    slow = attack(
        firms, target=NaiveServer(firms), max_targets=None, through_queries=True, **kwargs
    ).table
    pd.testing.assert_frame_equal(
        fast.drop(columns=["delta_all", "delta_identified", "min_units"]),
        slow.drop(columns=["delta_all", "delta_identified", "min_units"]),
    )
    np.testing.assert_allclose(fast["delta_all"], slow["delta_all"], rtol=1e-6, atol=1e-12)


def test_masked_release_is_attacked_on_released_values(firms):
    masked = firms.copy()
    masked["turnover"] = firms["turnover"] * 1.5
    result = regression_attack(
        firms,
        sensitive="turnover",
        background=["size"],
        quantiles=[0.0],
        attacks="dummy",
        released=masked,
    )
    row = result.table.iloc[0]
    assert row["delta_identified"] == pytest.approx(0.5, rel=1e-9)
    assert row["recovered"] == 0


def test_bad_inputs_name_the_column(firms):
    with pytest.raises(SchemaError, match="'region'"):
        regression_attack(firms, sensitive="turnover", background=["size", "region"])
    with pytest.raises(SchemaError, match="'state' is not numeric"):
        regression_attack(firms, sensitive="state", background=["size"])
    with pytest.raises(ParameterError, match="approx"):
        regression_attack(firms, sensitive="turnover", background=["size"], approx=1.5)
    before = firms.copy()
    regression_attack(firms, sensitive="turnover", background=["size"], quantiles=[0.0])
    pd.testing.assert_frame_equal(firms, before)


def test_universe_levels_are_quoted_keywords_included():
    from sdckit.attacks import PublicMetadata, universe_text
    from sdckit.server import AnalysisServer, Metadata

    data = pd.DataFrame(
        {
            "state": ["OR", "IN", "CA", "NY"] * 30,
            "sales": np.arange(120.0),
            "revenue": np.arange(120.0) * 2 + 1,
        }
    )
    server = AnalysisServer(data, Metadata.infer(data, beta=10, categorical=["state"]))
    public = PublicMetadata(server.public_metadata())
    text = universe_text(public, {"state": ("OR", "IN"), "sales": (15.0, 35.0)})
    assert text.startswith('state in {"OR", "IN"} AND sales in bins ')
    answer = server.universe_check(text)
    # Parsed (a refusal, if any, comes from the size rules, never the universe's syntax).
    assert "universe_definition" not in getattr(answer, "rules", ())


def test_subset_too_small_for_a_regression_stays_in_the_table(firms):
    result = regression_attack(
        firms, sensitive="turnover", background=["size"], quantiles=[0.0, 0.999]
    )
    top = result.table[result.table["quantile"] == 0.999]
    assert len(top) == 2 and (top["N"] == 1).all() and (top["targets"] == 0).all()
    assert top["identified"].isna().all()
    assert "isolates targets" in result.summary().splitlines()[0]
