"""The contract: every registered method has a generated form, and its defaults work or name a parameter."""

from __future__ import annotations

import pytest

from sdckit.errors import SDCError
from sdckit.microdata import available_maskers
from sdckit.studio import method_forms

FORMS = {form["name"]: form for form in method_forms()}


def test_every_registered_method_has_a_form():
    assert set(FORMS) == set(available_maskers())
    for form in FORMS.values():
        names = [p["name"] for p in form["parameters"]]
        assert "random_state" not in names and "schema" not in names and "progress" not in names
        assert all(p["type"] for p in form["parameters"])


def test_forms_carry_types_choices_ranges_and_help_from_the_code():
    params = {p["name"]: p for p in FORMS["rwn"]["parameters"]}
    assert params["k"]["type"] == "integer" and params["k"]["default"] == 5
    assert (params["q"]["minimum"], params["q"]["maximum"]) == (0, 1)
    assert params["columns"]["type"] == "columns"
    assert params["algorithm"]["choices"] == ["auto", "kd_tree", "ball_tree", "brute"]
    assert params["k"]["help"]
    micro = {p["name"]: p for p in FORMS["microaggregation"]["parameters"]}
    assert micro["method"]["type"] == "choice" and "mdav" in micro["method"]["choices"]
    assert micro["sample_weights"]["type"] == "column"


@pytest.mark.parametrize("name", sorted(FORMS))
def test_defaults_work_or_name_a_parameter(name, project):
    form = FORMS[name]
    defaults = {p["name"]: p["default"] for p in form["parameters"] if p["default"] is not None}
    before = (dict(project.steps), project.current)
    try:
        step = project.apply(name, defaults, seed=7)
    except SDCError as exc:
        message = str(exc)
        named = [p["name"] for p in form["parameters"]] + list(project.kinds)
        assert any(n in message for n in named), message
        assert (dict(project.steps), project.current) == before
    else:
        assert step.method == name and project.current == step.id


@pytest.mark.parametrize(
    ("method", "parameter"),
    [("local_suppression", "columns"), ("kanon", "columns"), ("pram", "columns")],
)
def test_a_parameter_the_method_cannot_run_without_is_required_in_its_form(
    method, parameter, project
):
    spec = {p["name"]: p for p in FORMS[method]["parameters"]}[parameter]
    assert spec["required"] and not spec["nullable"]
    # The form is right: without it, the method refuses, naming it.
    with pytest.raises(SDCError, match=parameter):
        project.apply(method, {}, seed=1)


def test_an_optional_columns_parameter_stays_optional():
    spec = {p["name"]: p for p in FORMS["microaggregation"]["parameters"]}["columns"]
    assert not spec["required"] and spec["nullable"]
