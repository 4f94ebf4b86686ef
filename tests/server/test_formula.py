"""Formulas are parsed into an allowed structure and never evaluated."""

from __future__ import annotations

import pytest

from sdckit.server.formula import (
    Factor,
    Formula,
    FormulaError,
    Term,
    as_formula,
    parse_factor,
    parse_formula,
)


def test_parse_main_effects_transforms_and_interactions():
    f = parse_formula("log(wage) ~ age + square(age) + sex + age:sex")
    assert f.response == Factor("wage", "log")
    assert f.main_effects == (Factor("age"), Factor("age", "square"), Factor("sex"))
    assert f.interactions == (Term((Factor("age"), Factor("sex"))),)
    assert f.variables == ("wage", "age", "sex")


def test_star_expands_to_all_lower_order_terms():
    f = parse_formula("y ~ a*b*c")
    orders = [t.order for t in f.terms]
    assert orders == [1, 1, 1, 2, 2, 2, 3]
    assert Term((Factor("c"), Factor("a"))) in f.terms


def test_roundtrips():
    f = parse_formula("y ~ x + log(z) + x:log(z)")
    assert parse_formula(f.to_string()) == f
    assert Formula.from_dict(f.to_dict()) == f
    assert as_formula(f) == f
    assert parse_factor("sqrt(x)") == Factor("x", "sqrt")


@pytest.mark.parametrize(
    "text",
    [
        "wage ~ 1/(abs(hours - 41) + 0.0001)",  # Bleninger et al. artificial outlier
        "wage ~ I(hours == 41)",  # a strategic dummy by expression
        "wage ~ __import__('os').system('id')",
        "wage ~ hours; import os",
        "wage ~ hours.__class__",
        "wage ~ log(sqrt(hours))",
        "wage ~ hours - 1",
        "wage ~ hours + ",
        "wage hours",
        "wage ~ hours:sex*age",
        "wage ~ wage",
        "wage ~ age:age",
        "x" * 3000 + " ~ y",
    ],
)
def test_rejects_anything_outside_the_grammar(text):
    with pytest.raises(FormulaError):
        parse_formula(text)


def test_error_names_the_position():
    with pytest.raises(FormulaError) as info:
        parse_formula("wage ~ hours + 5")
    assert info.value.position == 15
    assert "position 15" in str(info.value)


def test_unknown_function_names_parse_but_are_left_to_the_rules():
    f = parse_formula("wage ~ inv(hours)")
    assert f.main_effects == (Factor("hours", "inv"),)


@pytest.mark.parametrize(
    "mapping",
    [
        {"response": {"variable": "y"}, "terms": []},
        {"response": {"variable": "y; drop"}, "terms": [[{"variable": "x"}]]},
        {"response": {"variable": "y"}, "terms": [[{"variable": "x", "transform": "a b"}]]},
        {"terms": [[{"variable": "x"}]]},
    ],
)
def test_bad_mappings(mapping):
    with pytest.raises(FormulaError):
        Formula.from_dict(mapping)


@pytest.mark.parametrize(
    "text", ["wage ~ square(wage)", "log(wage) ~ wage + age", "wage ~ age * sqrt(wage)"]
)
def test_response_may_not_reappear_among_predictors(text):
    # A regression of a variable on a transformation of itself fits almost
    # perfectly and discloses its values (Bleninger et al.-style leakage).
    with pytest.raises(FormulaError, match="response variable 'wage' also appears"):
        parse_formula(text)
    with pytest.raises(FormulaError, match="response variable 'wage' also appears"):
        Formula.from_dict(
            parse_formula("wage ~ age").to_dict()
            | {"terms": [[{"variable": "wage", "transform": "log"}]]}
        )
