"""Regressions through the server: the rules of Lucero et al. (2011), Section 3.2, against the
artificial-outlier and strategic-dummy attacks of Bleninger, Drechsler & Ronning (2011)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, Metadata, Refusal, RegressionResult


@pytest.fixture(scope="module")
def attack_setup():
    data = make_people(1500, seed=21)
    rng = np.random.default_rng(5)
    n = len(data)
    # The intruder's target m: a unit whose exact hours she knows.
    m_pos = 123
    hours_m = data.hours.iloc[m_pos]
    # What the artificial outlier z = 1/(|x - x_m| + eps) would be (Bleninger et al. eq. 1),
    # here offered as if an administrator had published such a variable.
    data["z"] = 1.0 / (np.abs(data.hours - hours_m) + 1e-4)
    # A 0/1 variable that is 1 for the target only: a strategic dummy (eq. 2).
    data["flag"] = 0.0
    data.iloc[m_pos, data.columns.get_loc("flag")] = 1.0
    # A categorical whose one level identifies the target (e.g. a rare branch).
    branch = rng.choice(["trade", "services", "industry"], n, p=[0.5, 0.3, 0.2]).astype(object)
    branch[m_pos] = "mining"
    data["branch"] = branch
    # A legal form with a level of 12 units, one of them the only male.
    legal = np.where(rng.random(n) < 0.6, "gmbh", "ag").astype(object)
    small = np.flatnonzero(data.sex.to_numpy() == "female")[:11]
    legal[small] = "kg"
    legal[m_pos] = "kg"
    data["legal"] = legal
    data.iloc[m_pos, data.columns.get_loc("sex")] = "male"
    # A response almost determined by hours (R-squared near 1).
    data["payroll"] = 40.0 * data.hours + rng.normal(0, 0.01, n)
    # A response driven by one rare but allowed category (retry by absorbing).
    group = np.where(rng.random(n) < 0.7, "common", "other").astype(object)
    group[:15] = "rare"
    data["group"] = group
    data["spike"] = rng.normal(0, 1, n) + np.where(group == "rare", 1000.0, 0.0)
    union = np.full(n, "no", dtype=object)
    employed_pos = np.flatnonzero(data.employed.to_numpy() == "yes")
    union[employed_pos[200:206]] = "yes"
    data["union"] = union
    metadata = Metadata.infer(data, beta=30, categorical=["branch", "legal", "group"])
    server = AnalysisServer(data, metadata, secret=SECRET)
    kept = server._prepare("ALL", {}).positions
    assert m_pos in set(kept), "choose a target Drop q keeps"
    return data, server, m_pos


def refused_by(result, rule: str) -> bool:
    return isinstance(result, Refusal) and rule in result.rules


def test_artificial_outlier_works_without_rules(attack_setup):
    data, _, m = attack_setup
    x = sm.add_constant(data.z.to_numpy())
    fit = sm.OLS(data.wage.to_numpy(), x).fit()
    # The attack is real: the fitted value of the target is its wage.
    assert fit.fittedvalues[m] == pytest.approx(data.wage.iloc[m], rel=1e-2)


def test_artificial_outlier_expression_is_refused(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "wage ~ 1/(abs(hours - 41.2) + 0.0001)")
    assert refused_by(result, "formula_syntax")
    result = server.regress("ALL", "wage ~ reciprocal_distance(hours)")
    assert refused_by(result, "approved_transformations")


def test_artificial_outlier_variable_is_refused_by_leverage(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "wage ~ z")
    assert refused_by(result, "leverage_bound")
    assert "leverage" in result.reasons[0]
    assert result.to_dict()["status"] == "refused"


def test_strategic_dummy_as_numeric_is_refused(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "wage ~ hours + flag")
    assert refused_by(result, "binary_predictor_support")


def test_strategic_dummy_category_is_absorbed(attack_setup):
    data, server, m = attack_setup
    result = server.regress("ALL", "wage ~ hours + branch")
    assert isinstance(result, RegressionResult)
    terms = [c.term for c in result.coefficients]
    assert "branch[mining]" not in terms
    assert result.references["branch"] == "trade"
    notes = " ".join(a for v in result.verdicts for a in v.adjustments)
    assert "mining" in notes and "absorbed" in notes
    # The released coefficients do not give the target's wage back.
    p = result.params
    predicted = p["Intercept"] + p["hours"] * data.hours.iloc[m]
    assert abs(predicted - data.wage.iloc[m]) / data.wage.iloc[m] > 0.01


def test_strategic_dummy_by_interaction_is_absorbed(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "wage ~ hours + sex + legal + legal:sex")
    assert isinstance(result, RegressionResult)
    terms = [c.term for c in result.coefficients]
    # legal = kg and sex = male holds the target alone: the interaction would fit
    # that cell's mean (the target's wage), so the whole interaction is left out.
    assert not any(":" in t for t in terms)
    assert "legal[kg]" in terms
    notes = " ".join(a for v in result.verdicts for a in v.adjustments)
    assert "legal:sex: left out" in notes


def test_r_squared_suppression(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "payroll ~ hours")
    assert refused_by(result, "r_squared_bound")
    ok = server.regress("ALL", "payroll ~ age")
    assert isinstance(ok, RegressionResult)


def test_retry_by_absorbing_categories(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "spike ~ hours + group")
    assert isinstance(result, RegressionResult)
    terms = [c.term for c in result.coefficients]
    assert "group[rare]" not in terms and "group[other]" in terms
    assert result.r_squared < 0.95
    notes = " ".join(a for v in result.verdicts for a in v.adjustments)
    assert "so that the output could be released" in notes
    strict = AnalysisServer(
        attack_setup[0], server.metadata, {"max_absorption_retries": 0}, secret=SECRET
    )
    assert refused_by(strict.regress("ALL", "spike ~ hours + group"), "r_squared_bound")


def test_ols_matches_statsmodels_on_the_subsample(attack_setup):
    data, perturbed, _ = attack_setup
    server = AnalysisServer(data, perturbed.metadata, {"perturbation": False}, secret=SECRET)
    result = server.regress("ALL", "log(wage) ~ age + square(age) + sex")
    kept = server._prepare("ALL", {}).positions
    sub = data.iloc[kept]
    x = np.column_stack([np.ones(len(sub)), sub.age, sub.age**2, (sub.sex == "male").astype(float)])
    fit = sm.OLS(np.log(sub.wage.to_numpy()), x).fit()
    # Reference category is the most common one in the subsample.
    ref = sub.sex.value_counts().idxmax()
    assert result.references["sex"] == ref
    if ref == "female":
        np.testing.assert_allclose(list(result.params.values()), fit.params, rtol=1e-8)
    assert result.n_obs == len(sub)
    ss = sum(a.sum_of_squares for a in result.anova)
    centred = np.log(sub.wage) - np.log(sub.wage).mean()
    assert ss == pytest.approx(float(centred @ centred), rel=1e-8)


def test_output_has_no_per_record_values(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "wage ~ hours + age")
    d = result.to_dict()
    assert set(d) == {
        "status",
        "analysis",
        "universe",
        "family",
        "formula",
        "coefficients",
        "anova",
        "n_obs",
        "df_model",
        "df_resid",
        "r_squared",
        "adj_r_squared",
        "references",
        "event",
        "verdicts",
    }
    assert len(d["coefficients"]) == 3


def test_logit(attack_setup):
    _, server, _ = attack_setup
    result = server.regress("ALL", "employed ~ age + sex", family="logit")
    assert isinstance(result, RegressionResult)
    assert result.event == "yes"
    assert [a.source for a in result.anova] == ["age", "sex"]
    # union = yes for 6 units, all employed: a dummy would separate them; it is absorbed.
    absorbed = server.regress("ALL", "employed ~ age + union", family="logit")
    assert isinstance(absorbed, RegressionResult)
    assert "union[yes]" not in [c.term for c in absorbed.coefficients]


def test_static_rules_through_the_server(attack_setup):
    _, server, _ = attack_setup
    assert refused_by(server.regress("ALL", "wage ~ age + age:sex"), "interaction_hierarchy")
    assert refused_by(server.regress("ALL", "wage ~ sex*region"), "no_fully_interacted_dummy_model")
    assert refused_by(server.regress("ALL", "wage ~ ssn"), "allowed_variables")
    assert refused_by(server.regress("ALL", "wage ~ log(sex)"), "approved_transformations")
    assert refused_by(server.regress("ALL", "sex ~ age"), "response_variable")
    assert refused_by(server.regress("ALL", "wage ~ log(spike)"), "transformation_domain")
    assert isinstance(server.regress("ALL", "log(hours) ~ log(age)"), RegressionResult)
    with pytest.raises(Exception, match="family"):
        server.regress("ALL", "wage ~ age", family="probit")


def test_aliased_terms_are_dropped_as_r_does():
    """A term that is a linear combination of earlier ones is left out and said so, not refused."""
    data = make_people(1200, seed=3)
    data["double_hours"] = 2.0 * data["hours"] + 1.0
    data["shift"] = np.where(data["sex"] == "male", "day", "night")  # the same split as sex
    metadata = Metadata.infer(data, beta=30)
    server = AnalysisServer(data, metadata, {"perturbation": False}, secret=SECRET)
    result = server.regress("ALL", "wage ~ hours + double_hours + sex + shift")
    assert isinstance(result, RegressionResult)
    terms = [c.term for c in result.coefficients]
    assert "double_hours" not in terms and not any(t.startswith("shift[") for t in terms)
    (rank,) = [v for v in result.verdicts if v.rule == "design_rank"]
    assert rank.passed and len(rank.adjustments) == 2
    assert rank.adjustments[0].startswith("double_hours: dropped, aliased")
    assert [a.source for a in result.anova] == ["hours", "sex", "Residual"]
    # The same coefficients as the model without the aliased terms, on the same units.
    plain = server.regress("ALL", "wage ~ hours + sex")
    assert result.params == pytest.approx(plain.params, rel=1e-9)
    assert result.df_resid == plain.df_resid


def test_design_rank_refuses_when_no_predictor_is_left():
    from sdckit.server import rules

    verdict = rules.design_rank(["x"], predictors_left=0)
    assert not verdict.passed and "widen the universe" in verdict.reason
    assert rules.design_rank(["x"], predictors_left=1).adjustments == (
        "x: dropped, aliased with the terms before it (an exact linear combination of them in "
        "this universe; R's lm reports its coefficient as NA)",
    )
