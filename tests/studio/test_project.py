"""The project: kinds and roles, the history tree, states recomputed from an untouched input."""

from __future__ import annotations

import pandas as pd
import pytest
from studio_cases import STEPS

from sdckit.errors import ParameterError, SchemaError
from sdckit.io import read_table


def test_roles_are_suggested_from_the_data(testdata):
    from sdckit.studio import Project

    project = Project(testdata)
    assert project.roles["ori_hid"] == "id"
    assert "identifier" in project.suggestions["ori_hid"]
    assert project.describe()["columns"][0]["release"] == "published"
    assert project.kinds["sex"] == "categorical"  # 1/2 codes are categories
    assert project.kinds["income"] == "numeric"
    assert project.fingerprint.startswith("sha256:") and len(project.fingerprint) == 71


def test_weights_are_suggested_as_weights_never_as_categorical_codes(testdata):
    from sdckit.studio import Project

    project = Project(testdata)
    described = {c["name"]: c for c in project.describe()["columns"]}
    # Both weights of testdata.csv take few values, which the code rule flags.
    for name in ("sampling_weight", "household_weights"):
        assert project.kinds[name] == "numeric", name
        assert described[name]["suggested_kind"] is None, name
        assert described[name]["suggestion"].startswith("weight:"), name
        assert project.roles[name] == "other"  # suggested, not set: "weight" may be a body weight
    assert described["sampling_weight"]["suggested_role"] == "weight"
    assert described["household_weights"]["suggested_role"] == "pass"  # one weight per project
    assert described["sex"]["suggested_kind"] == "categorical"  # codes are still codes
    assert described["ori_hid"]["suggested_role"] == "id"


def test_the_risk_panel_counts_a_blank_key_as_local_suppression_does(project):
    from sdckit._keys import SUPPRESSED_MISSING
    from sdckit.assess import key_risk

    keys = ["urbrur", "roof", "sex", "age"]
    assert project.metrics_of(0)["risk"]["k_anonymity"] < 3
    step = project.apply("local_suppression", {"columns": keys, "k_anonymity": 3}, seed=1)
    state = project.state()
    assert state[keys].isna().any().any()  # blanks were made
    risk = step.metrics["risk"]
    # What the method guarantees, the panel shows: no record below k = 3.
    assert (
        risk["k_anonymity"] >= 3 and risk["records_below_k3"] == 0 and risk["sample_uniques"] == 0
    )
    found = key_risk(state, keys, weight="sampling_weight", missing=SUPPRESSED_MISSING)
    assert risk["key_combinations"] == found.n_combinations


def test_every_method_that_blanks_keys_counts_blanks_as_the_panel_does():
    from sdckit._keys import MISSING_CONVENTIONS, SUPPRESSED_MISSING
    from sdckit.studio import method_forms

    takers = []
    for form in method_forms():
        for spec in form["parameters"]:
            # A "missing" parameter choosing how a blank key value counts (not rwn's policy).
            if spec["name"] == "missing" and set(spec.get("choices") or ()) == {
                *MISSING_CONVENTIONS
            }:
                takers.append(form["name"])
                assert spec["default"] == SUPPRESSED_MISSING, form["name"]
    assert {"local_suppression", "kanon"} <= set(takers)


def test_household_risk_is_in_the_panel_once_a_household_column_is_declared(testdata):
    from sdckit.assess import individual_risk
    from sdckit.studio import Project

    project = Project(testdata)
    keys = ["urbrur", "roof", "sex"]
    project.set_columns(by_role={"key": keys, "weight": ["sampling_weight"]})
    assert "household_risk" not in project.metrics_of(0)["risk"]
    project.set_columns(roles={"ori_hid": "household"})
    risk = project.metrics_of(0)["risk"]
    direct = individual_risk(
        project.original, keys, weight="sampling_weight", household="ori_hid", missing="any"
    )
    assert risk["household_risk"] == pytest.approx(direct.household_global_risk)
    assert risk["global_risk"] == pytest.approx(direct.global_risk)
    assert risk["household_risk"] > risk["global_risk"]  # a household is at risk if any member is


def test_suda_is_computed_on_request_with_progress_and_kept_by_the_step(project):
    from sdckit.assess import suda

    keys = ["urbrur", "roof", "sex", "age"]
    assert "suda_special_uniques" not in project.metrics_of(0)["risk"]
    seen: list[tuple[int, int]] = []
    figures = project.suda(progress=lambda done, total: seen.append((done, total)))
    direct = suda(project.original, keys)
    assert figures["suda_special_uniques"] == direct.special_uniques
    assert figures["suda_records_at_risk"] == int((direct.scores > 0).sum())
    assert seen and seen[-1][0] == seen[-1][1] == 2**4 - 1  # every subset of the four keys
    assert project.describe()["metrics"]["risk"]["suda_special_uniques"] == direct.special_uniques
    project.set_columns(roles={"age": "other"})  # other keys: the old figures are gone
    assert "suda_special_uniques" not in project.metrics_of(0)["risk"]
    project.set_columns(roles={"urbrur": "other", "roof": "other", "sex": "other"})
    with pytest.raises(ParameterError, match="key"):
        project.suda()


def test_a_column_with_two_roles_is_refused_by_name(project):
    before = dict(project.roles)
    with pytest.raises(SchemaError, match="'sex'"):
        project.set_columns(by_role={"id": ["sex"], "key": ["sex"]})
    with pytest.raises(SchemaError, match="'nosuch'"):
        project.set_columns(roles={"nosuch": "key"})
    with pytest.raises(ParameterError, match="'roof'"):
        project.set_columns(roles={"roof": "secret"})
    assert project.roles == before


def test_history_is_a_tree_with_undo_redo_goto_and_snapshots(project, testdata):
    untouched = read_table(testdata)
    (m1, p1, s1), (m2, p2, s2), (m3, p3, s3) = STEPS
    first = project.apply(m1, p1, seed=s1)
    second = project.apply(m2, p2, seed=s2)
    project.snapshot("after pram")
    assert project.undo() == first.id
    third = project.apply(m3, p3, seed=s3)  # a branch from the first step
    assert third.parent == first.id
    assert set(project.steps) == {0, first.id, second.id, third.id}  # the other branch is kept
    assert [s.id for s in project.path_to()] == [first.id, third.id]
    assert project.undo() == first.id
    assert project.redo() == third.id  # the child visited last
    assert project.goto(project.snapshots["after pram"]) == second.id
    assert project.undo() == first.id and project.undo() == 0 and project.undo() == 0
    assert project.redo() == first.id and project.redo() == second.id
    pd.testing.assert_frame_equal(project.original, untouched)  # the input is never modified


def test_a_state_recomputed_from_the_original_equals_the_cached_one(project):
    for method, params, seed in STEPS:
        project.apply(method, params, seed=seed)
    cached = project.state().copy()
    project._cache.clear()
    pd.testing.assert_frame_equal(project.state(), cached)


def test_a_failing_method_leaves_the_history_unchanged(project):
    project.apply(*STEPS[0][:2], seed=1)
    before = (dict(project.steps), project.current)
    with pytest.raises(ParameterError, match="group_size"):
        project.apply("microaggregation", {"columns": ["expend"], "group_size": 0}, seed=1)
    with pytest.raises(ParameterError, match="nosuch"):
        project.apply("pram", {"nosuch": 1}, seed=1)
    assert (dict(project.steps), project.current) == before


def test_risk_falls_after_recoding_and_the_change_is_reported(project):
    risk_before = project.metrics_of(0)["risk"]
    project.apply(*STEPS[0][:2], seed=1)
    described = project.describe()
    risk_after = described["metrics"]["risk"]
    assert risk_after["sample_uniques"] < risk_before["sample_uniques"]
    assert described["change"]["risk"]["sample_uniques"] == (
        risk_after["sample_uniques"] - risk_before["sample_uniques"]
    )
    # The figure is the library's own: key_risk on the state with the same keys.
    from sdckit.assess import key_risk

    direct = key_risk(project.state(), ["urbrur", "roof", "sex", "age"], weight="sampling_weight")
    assert risk_after["sample_uniques"] == direct.sample_uniques


def test_figures_updated_from_the_parent_equal_a_full_recomputation(project):
    for method, params, seed in STEPS:
        step = project.apply(method, params, seed=seed)
        assert step.metrics == project.metrics(project.state(step.id)), method


def test_a_step_computed_before_a_role_change_is_recomputed_under_the_new_roles(project):
    from sdckit.studio.recipe import replay_step

    version = project.columns_version
    result, figures = project.compute_step("microaggregation", {"group_size": 3}, seed=1)
    project.set_columns(roles={"expend": "pass"})  # now passed through, not masked
    step = project.add_step(
        "microaggregation",
        {"group_size": 3},
        seed=1,
        parent=0,
        result=result,
        metrics=figures,
        columns_version=version,
    )
    kinds, roles = project.schema_overrides()
    replayed = replay_step(
        project.original, "microaggregation", {"group_size": 3}, seed=1, kinds=kinds, roles=roles
    ).data
    assert not result.data.equals(replayed)  # the role change matters to this method
    assert project.state(step.id).equals(replayed)
    assert project.metrics_of(step.id) == project.metrics(replayed)
