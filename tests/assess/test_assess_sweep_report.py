"""assess(), sweep() and report(): end to end on small data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.assess import Assessment, SweepResult, assess, expand_grid, report, sweep
from sdckit.errors import ParameterError
from sdckit.microdata import MaskResult, rwn


@pytest.fixture
def survey() -> pd.DataFrame:
    """150 records: four correlated numerics, two categorical keys, a sensitive code; odd index."""
    rng = np.random.default_rng(21)
    n = 150
    x = rng.multivariate_normal(
        [170, 70, 40, 5], [[50, 30, 5, 2], [30, 60, 8, 3], [5, 8, 90, 1], [2, 3, 1, 4]], size=n
    )
    return pd.DataFrame(
        {
            "height": x[:, 0],
            "weight": x[:, 1],
            "age": x[:, 2],
            "score": x[:, 3],
            "sex": rng.choice(["f", "m"], size=n),
            "region": pd.Categorical(rng.choice(["n", "s", "e", "w"], size=n)),
            "diagnosis": rng.choice(["a", "b", "c"], size=n),
        },
        index=pd.Index(np.arange(n) * 2 + 5, name="person"),
    )


def test_assess_identical_release(survey):
    a = assess(
        survey,
        survey.copy(),
        response="weight",
        predictors=["height", "age"],
        keys=["sex", "region"],
        sensitive="diagnosis",
    )
    assert isinstance(a, Assessment)
    h = a.headline()
    assert h["linkage_rate"] == 1.0
    assert h["corr_mean_abs_diff"] == 0.0
    assert h["ci_overlap_mean"] == pytest.approx(1.0)
    assert h["mahalanobis_rank_of_top"] == 1.0
    assert h["interval_disclosure"] == 1.0
    assert h["sample_uniques_original"] == h["sample_uniques_masked"]
    assert "still stands out" in " ".join(a.notes())
    assert "UTILITY" in a.summary() and "RISK" in a.summary()


def test_assess_rwn_release_uses_mask_result(survey):
    before = survey.copy()
    result = rwn(survey, k=5, eps=0.3, random_state=2)
    masked_before = result.data.copy()
    a = assess(survey, result, response="weight", keys=["sex", "region"])
    pd.testing.assert_frame_equal(survey, before)
    pd.testing.assert_frame_equal(result.data, masked_before)
    assert a.method == "rwn" and a.params["k"] == 5
    assert a.diagnostics is not None and "neighborhood_size" in a.diagnostics
    assert 0.0 <= a.risk.linkage.rate < 1.0
    assert a.utility.regression is not None
    assert a.utility.regression.predictors == ["height", "age", "score", "diagnosis"]
    assert a.utility.mutual_information is not None  # sex, region, diagnosis
    assert list(a.risk.linkage.linked.index) == list(survey.index)


def test_assess_parameter_errors(survey):
    with pytest.raises(ParameterError, match="without a response"):
        assess(survey, survey, predictors=["age"])
    with pytest.raises(ParameterError, match="needs a response"):
        assess(survey, survey, prediction=True)
    with pytest.raises(ParameterError, match="sensitive"):
        assess(survey, survey, sensitive="diagnosis")


def test_expand_grid():
    assert expand_grid({"eps": [0.1, 0.2], "k": [5]}) == [
        {"eps": 0.1, "k": 5},
        {"eps": 0.2, "k": 5},
    ]
    assert expand_grid([{"k": 3}, {"k": 5, "q": 0.5}]) == [{"k": 3}, {"k": 5, "q": 0.5}]
    with pytest.raises(ParameterError, match="no values"):
        expand_grid({"eps": []})


def test_sweep_rwn_same_seed_same_sweep(survey):
    numeric = survey[["height", "weight", "age", "score"]]
    kwargs = dict(n_replications=2, fixed={"k": 5, "q": 1.0}, response="weight", random_state=9)
    s = sweep("rwn", {"eps": [0.0, 0.5]}, numeric, **kwargs)
    assert isinstance(s, SweepResult)
    assert len(s.table) == 4
    assert list(s.by_setting().index) == ["eps=0", "eps=0.5"]
    assert s.parameters == ["eps"]
    assert s.baseline["pc1_share_original"] == pytest.approx(
        s.assessments[0].utility.pca.pc1_share_original
    )
    again = sweep("rwn", {"eps": [0.0, 0.5]}, numeric, **kwargs)
    pd.testing.assert_frame_equal(s.table, again.table)
    # Larger neighbourhoods mix more: the linkage rate falls.
    rates = s.by_setting()["linkage_rate"]
    assert rates["eps=0.5"] < rates["eps=0"]
    assert "eps=0" in s.summary()


def test_sweep_any_masker_following_the_interface(survey):
    def round_to(data: pd.DataFrame, *, digits: int = 0, random_state=None) -> MaskResult:
        out = data.copy()
        out["height"] = out["height"].round(digits)
        return MaskResult(out, pd.DataFrame(index=data.index), {"digits": digits}, "round")

    s = sweep(round_to, {"digits": [3, -1]}, survey[["height", "weight", "age"]], random_state=1)
    by = s.by_setting()
    assert by.loc["digits=3", "linkage_rate"] == 1.0
    assert by.loc["digits=3", "corr_mean_abs_diff"] < by.loc["digits=-1", "corr_mean_abs_diff"]
    rec = s.recommend(max_correlation_difference=0.5)
    assert rec is not None and rec["setting"] == "digits=-1"
    assert s.recommend(max_correlation_difference=0.0) is None or rec["linkage_rate"] <= 1.0
    # No setting meets a bound below the smallest difference: None, and the
    # sentence names the bound asked for and the closest setting.
    smallest = by["corr_mean_abs_diff"].min()
    assert smallest > 0  # rounding to 3 digits moves the correlations a little
    bound = smallest / 2
    assert s.recommend(max_correlation_difference=bound) is None
    sentence = s.recommendation(max_correlation_difference=bound)
    assert f"within {bound:g}" in sentence
    assert f"the smallest is {smallest:.3g}, at digits=3" in sentence


def test_sweep_rejects_clashing_parameters(survey):
    with pytest.raises(ParameterError, match="both in the grid and fixed"):
        sweep("rwn", {"k": [3, 5]}, survey, fixed={"k": 5})
    with pytest.raises(ParameterError, match="random_state"):
        sweep("rwn", {"k": [3]}, survey, fixed={"random_state": 1})
    with pytest.raises(ParameterError, match="unknown masking method"):
        sweep("no_such_method", {"k": [3]}, survey)


def test_report_has_every_figure(survey, tmp_path, assessment_figures):
    result = rwn(survey, k=5, eps=0.3, random_state=2)
    a = assess(survey, result, response="weight", keys=["sex", "region"], sensitive="diagnosis")
    out = tmp_path / "report.html"
    page = report(a, path=out)
    assert page.path == out and out.read_text(encoding="utf-8") == page.html
    expected = assessment_figures
    assert set(page.figures) == expected
    for name in expected:
        assert f'data-figure="{name}"' in page.html
    assert page.html.count("data:image/png;base64,") == len(expected)
    assert "http://" not in page.html and "https://" not in page.html  # no network needed
    assert "The record at row " in page.html  # the plain-language notes


@pytest.mark.slow
def test_report_of_a_sweep_and_errors(survey, tmp_path):
    numeric = survey[["height", "weight", "age", "score"]]
    s = sweep(
        "rwn", {"eps": [0.0, 0.4]}, numeric, fixed={"k": 5}, response="weight", random_state=3
    )
    page = report(sweep=s, path=tmp_path / "sweep.html")
    for name in ("sweep_utility", "sweep_outliers", "sweep_risk", "ru_map", "neighborhoods"):
        assert name in page.figures
    assert 'id="recommendation"' in page.html
    with pytest.raises(ParameterError, match="needs an assessment"):
        report()
    with pytest.raises(ParameterError, match="Assessment"):
        report("not an assessment")
