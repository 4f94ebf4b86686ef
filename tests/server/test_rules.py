"""Each confidentiality rule on small hand-built inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.server import rules
from sdckit.server.cutpoints import Binning
from sdckit.server.formula import parse_formula
from sdckit.server.metadata import CATEGORICAL, CONTINUOUS, Metadata, Variable
from sdckit.server.universe import evaluate_universe, parse_universe


@pytest.fixture(scope="module")
def meta() -> Metadata:
    return Metadata(
        {
            "sex": Variable("sex", CATEGORICAL, "", ("male", "female")),
            "region": Variable("region", CATEGORICAL, "", ("north", "south", "east")),
            "race": Variable("race", CATEGORICAL, "", ("a", "b")),
            "age": Variable("age", CONTINUOUS, "", binning=Binning("given", (0, 30, 60, 90))),
            "wage": Variable("wage", CONTINUOUS, "", binning=Binning("given", (0, 10, 20))),
        }
    )


def small_data(counts: dict[tuple[str, str], int]) -> pd.DataFrame:
    rows = [(s, r) for (s, r), c in counts.items() for _ in range(c)]
    return pd.DataFrame(rows, columns=["sex", "region"])


def evaluate(meta, counts, text):
    data = small_data(counts)
    codes = {
        "sex": meta.variable("sex").encode(data.sex),
        "region": meta.variable("region").encode(data.region),
    }
    return evaluate_universe(parse_universe(text, meta), meta, codes)


#: Counts of the north and south cells both rule tests start from (east varies).
NORTH_SOUTH = {
    ("male", "north"): 40,
    ("female", "north"): 35,
    ("male", "south"): 30,
    ("female", "south"): 28,
}


def test_no_marginal_1_or_2(meta):
    counts = {**NORTH_SOUTH, ("male", "east"): 2, ("female", "east"): 0}
    # Margin over sex for region=east is 2: refused.
    ev = evaluate(meta, counts, "sex = female AND region in {north, south}")
    verdict = rules.no_marginal_1_or_2(ev)
    assert not verdict.passed and verdict.rule == "no_marginal_1_or_2"
    assert "2" not in verdict.reason.replace("1 or 2", "").replace("one or two", "")
    counts[("male", "east")] = 3
    assert rules.no_marginal_1_or_2(evaluate(meta, counts, "sex = female")).passed
    counts[("male", "east")] = 0  # a zero margin is allowed
    assert rules.no_marginal_1_or_2(evaluate(meta, counts, "sex = female")).passed


def test_universe_gamma_threshold_is_not_revealed(meta):
    counts = {**NORTH_SOUTH, ("male", "east"): 12, ("female", "east"): 9}
    ev = evaluate(meta, counts, "region = east")
    verdict = rules.universe_gamma(ev, gamma=25, gamma_star=10)
    assert not verdict.passed
    assert "21" not in verdict.reason and "25" not in verdict.reason


def test_allowed_variables(meta):
    assert rules.allowed_variables(["sex", "age"], meta).passed
    verdict = rules.allowed_variables(["sex", "ssn"], meta)
    assert not verdict.passed and "ssn" in verdict.reason


def test_response_variable(meta):
    assert not rules.response_variable(parse_formula("sex ~ age"), meta, "ols").passed
    assert rules.response_variable(parse_formula("sex ~ age"), meta, "logit").passed
    assert not rules.response_variable(parse_formula("region ~ age"), meta, "logit").passed
    assert not rules.response_variable(parse_formula("wage ~ age"), meta, "logit").passed


def test_max_predictors_does_not_count_interactions(meta):
    f = parse_formula("wage ~ age*sex*region")
    assert rules.max_predictors(f, limit=3).passed
    verdict = rules.max_predictors(f, limit=2)
    assert not verdict.passed and "3 predictor" in verdict.reason


def test_approved_transformations(meta):
    approved = ("square", "sqrt", "log")
    assert rules.approved_transformations(
        parse_formula("log(wage) ~ sqrt(age)"), meta, approved=approved
    ).passed
    verdict = rules.approved_transformations(
        parse_formula("wage ~ inv(age)"), meta, approved=approved
    )
    assert not verdict.passed and "inv" in verdict.reason and "square" in verdict.reason
    verdict = rules.approved_transformations(
        parse_formula("wage ~ log(sex)"), meta, approved=approved
    )
    assert not verdict.passed and "categorical" in verdict.reason


@pytest.mark.parametrize(
    ("formula", "ok"),
    [
        ("wage ~ age + sex + age:sex", True),
        ("wage ~ age + age:sex", False),
        ("wage ~ age + sex + region + age:sex:region", False),
        ("wage ~ age + sex + region + age:sex + age:region + region:sex + age:sex:region", True),
        ("wage ~ age*sex*region", True),
        ("wage ~ age*sex*region*race", False),
    ],
)
def test_interaction_hierarchy(meta, formula, ok):
    assert rules.interaction_hierarchy(parse_formula(formula), max_order=3).passed is ok


def test_no_fully_interacted_dummy_model(meta):
    assert not rules.no_fully_interacted_dummy_model(
        parse_formula("wage ~ sex*region"), meta
    ).passed
    assert not rules.no_fully_interacted_dummy_model(
        parse_formula("wage ~ sex*region*race"), meta
    ).passed
    assert rules.no_fully_interacted_dummy_model(parse_formula("wage ~ sex + region"), meta).passed
    assert rules.no_fully_interacted_dummy_model(parse_formula("wage ~ age*sex"), meta).passed
    # Not the top interaction: sex:region with race uninteracted.
    assert rules.no_fully_interacted_dummy_model(
        parse_formula("wage ~ sex + region + race + sex:region"), meta
    ).passed


def test_category_support_reference_is_most_common():
    reference, kept, absorbed, verdict = rules.category_support(
        "region", ["north", "south", "east", "west"], [30, 55, 4, 0], min_size=10, rules="mas2011"
    )
    assert reference == "south"
    assert kept == ["north"]
    assert absorbed == ["east"]
    assert verdict.passed and "east" in verdict.adjustments[0]
    # The default set absorbs the empty category like the sparse one: no "none vs few" signal.
    *_, absorbed, verdict = rules.category_support(
        "region", ["north", "south", "east", "west"], [30, 55, 4, 0], min_size=10
    )
    assert absorbed == ["east", "west"]
    many = rules.category_support(
        "region", ["north", "south", "east", "west"], [30, 55, 4, 4], min_size=10
    )
    assert many[3].adjustments == verdict.adjustments


def test_binary_predictor_support():
    dummy = np.zeros(100)
    dummy[17] = 1.0  # a strategic dummy selecting one unit
    assert not rules.binary_predictor_support({"x": dummy}, min_size=10).passed
    dummy[:20] = 1.0
    assert rules.binary_predictor_support({"x": dummy}, min_size=10).passed
    assert not rules.binary_predictor_support({"c": np.ones(50)}, min_size=10).passed
    assert rules.binary_predictor_support({"age": np.arange(50.0)}, min_size=10).passed


def test_output_rules():
    assert rules.r_squared_bound(0.5, maximum=0.95).passed
    assert not rules.r_squared_bound(0.999, maximum=0.95).passed
    assert not rules.r_squared_bound(float("nan"), maximum=0.95).passed
    assert rules.leverage_bound(np.array([0.1, 0.2]), maximum=0.8).passed
    assert not rules.leverage_bound(np.array([0.1, 0.999]), maximum=0.8).passed
    resid = np.random.default_rng(0).normal(size=200)
    assert rules.exact_prediction(resid, scale=1.0, tolerance=1e-6, min_group=10).passed
    resid[:3] = 0.0
    assert not rules.exact_prediction(resid, scale=1.0, tolerance=1e-6, min_group=10).passed
    resid[:40] = 0.0  # a large group (a big category with one value) is group-level information
    assert rules.exact_prediction(resid, scale=1.0, tolerance=1e-6, min_group=10).passed
    assert not rules.residual_degrees_of_freedom(5, minimum=10).passed
    assert not rules.analysis_sample_size(3, minimum=25).passed
    assert not rules.design_rank(["x2"]).passed and rules.design_rank([]).passed


def test_design_rank_names_the_later_terms_never_the_intercept():
    from sdckit.server.analyses import _dependent_columns

    rng = np.random.default_rng(0)
    a, x = (rng.random(100) < 0.5).astype(float), rng.normal(size=100)
    # 1 - a and 2x + a add nothing to the columns before them: those are the ones to remove.
    design = np.column_stack([np.ones(100), a, x, 1 - a, 2 * x + a])
    assert _dependent_columns(design) == [3, 4]
    assert _dependent_columns(design[:, :3]) == []


def test_design_rank_does_not_depend_on_a_column_s_units():
    """A squared income (values about 10^11) beside the intercept is not aliasing."""
    from sdckit.server.analyses import _dependent_columns

    rng = np.random.default_rng(1)
    n = 5000
    income = rng.lognormal(12, 0.6, n)
    group = rng.integers(0, 4, n)
    dummies = np.column_stack([(group == g).astype(float) for g in (1, 2, 3)])
    design = np.column_stack([np.ones(n), income**2, dummies])
    assert _dependent_columns(design) == []
    # Real aliasing is still found at any scale: a dummy repeated, the intercept's multiple.
    aliased = np.column_stack([design, dummies[:, 0], 1e6 * np.ones(n)])
    assert _dependent_columns(aliased) == [5, 6]


def test_no_small_cells():
    assert rules.no_small_cells(np.array([[5, 0], [3, 9]])).passed
    assert not rules.no_small_cells(np.array([[5, 1], [3, 9]])).passed
    # Cells fine, but a margin of 2: refused.
    assert not rules.no_small_cells(
        np.array([[0, 0, 2], [0, 0, 0]]) + np.array([[0, 0, 0], [0, 0, 0]])
    ).passed


def test_dominance():
    tops = np.array([95.0, 50.0])
    totals = np.array([100.0, 100.0])
    sensitive, verdict = rules.dominance(tops, totals, n=2, k=0.9)
    assert sensitive.tolist() == [True, False]
    assert verdict.passed and verdict.adjustments


def test_correlation_bound():
    assert rules.correlation_bound(np.array([[1, 0.5], [0.5, 1]]), ["a", "b"], maximum=0.95).passed
    verdict = rules.correlation_bound(np.array([[1, 0.999], [0.999, 1]]), ["a", "b"], maximum=0.95)
    assert not verdict.passed and "a and b" in verdict.reason


def test_verdict_to_dict():
    d = rules.Verdict("r", False, "why", ("x",)).to_dict()
    assert d == {"rule": "r", "passed": False, "reason": "why", "adjustments": ["x"]}
