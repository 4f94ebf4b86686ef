"""Column kinds, roles and the distance design (Matloff & Tendick 2015, 'Code and Tuning Parameters'; Perry, Matloff & Tendick 2022, Section 8.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import ParameterError, Schema, SchemaError, build_design
from sdckit.schema import Kind, Role


def test_kinds_inferred_from_dtypes(mixed_data):
    data = mixed_data.assign(
        grade=pd.Categorical(["a", "b"] * 100, categories=["a", "b"], ordered=True)
    )
    schema = Schema.infer(data)
    assert schema["height"].kind is Kind.NUMERIC
    assert schema["children"].kind is Kind.NUMERIC
    assert schema["region"].kind is Kind.CATEGORICAL
    assert schema["smoker"].kind is Kind.CATEGORICAL
    assert schema["grade"].kind is Kind.ORDINAL
    assert schema["grade"].categories == ("a", "b")
    assert schema["smoker"].categories == ("no", "yes")


def test_overrides_and_roles(mixed_data):
    schema = Schema.infer(
        mixed_data, kinds={"children": "ordinal"}, roles={"id": "id", "region": "key"}
    )
    assert schema["children"].kind is Kind.ORDINAL
    assert schema["children"].categories == (0, 1, 2, 3)
    assert schema["id"].role is Role.ID
    assert schema.by_role("key") == ["region"]
    assert "id" not in schema.maskable()
    assert schema.with_roles({"smoker": "sensitive"}).by_role("sensitive") == ["smoker"]


def test_errors_name_the_column(mixed_data):
    bad = mixed_data.assign(weight=mixed_data["weight"].astype(object))
    bad.loc[bad.index[4], "weight"] = "heavy"
    with pytest.raises(SchemaError, match=r"'weight'.*'heavy'.*row 5 \(index 19\)"):
        Schema.infer(bad, kinds={"weight": "numeric"})
    with pytest.raises(SchemaError, match="unknown column"):
        Schema.infer(mixed_data, kinds={"nope": "numeric"})
    with pytest.raises(SchemaError, match="'height'.*unknown kind 'float'"):
        Schema.infer(mixed_data, kinds={"height": "float"})
    with pytest.raises(SchemaError, match="'id'.*unknown role"):
        Schema.infer(mixed_data, roles={"id": "identifier"})
    dates = pd.DataFrame({"when": pd.date_range("2020-01-01", periods=3), "x": [1.0, 2.0, 3.0]})
    # A date column passes through by default (role ignore) ...
    assert Schema.infer(dates)["when"].role is Role.IGNORE
    assert build_design(dates).variables == ["x"]
    # ... and is refused, by name, when asked to define distances.
    with pytest.raises(SchemaError, match="'when'.*dates"):
        build_design(dates, columns=["when", "x"])
    with pytest.raises(SchemaError, match="'when'.*dates"):
        Schema.infer(dates, roles={"when": "key"})


def test_minmax_design_and_dummies(mixed_data):
    design = build_design(mixed_data, columns=["height", "region"])
    assert design.feature_names == ["height", "region=east", "region=north", "region=south"]
    m = design.matrix
    assert m[:, 0].min() == 0.0 and m[:, 0].max() == 1.0
    assert set(np.unique(m[:, 1:])) == {0.0, 1.0}
    assert (m[:, 1:].sum(axis=1) == 1).all()


def test_standard_design_is_z_scores(mixed_data):
    design = build_design(mixed_data, columns=["height", "weight"], scale="standard")
    np.testing.assert_allclose(design.matrix.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(design.matrix.std(axis=0, ddof=1), 1, atol=1e-12)
    raw = build_design(mixed_data, columns=["height"], scale=None)
    np.testing.assert_array_equal(raw.matrix[:, 0], mixed_data["height"].to_numpy())


def test_weights_scale_contributions(mixed_data):
    plain = build_design(mixed_data, columns=["height", "region"])
    weighted = build_design(mixed_data, columns=["height", "region"], weights={"region": 0.6})
    np.testing.assert_allclose(weighted.matrix[:, 1:], 0.6 * plain.matrix[:, 1:])
    np.testing.assert_array_equal(weighted.matrix[:, 0], plain.matrix[:, 0])
    with pytest.raises(SchemaError, match="'smoker'"):
        build_design(mixed_data, columns=["height"], weights={"smoker": 1.0})
    with pytest.raises(ParameterError, match="'height'.*negative"):
        build_design(mixed_data, columns=["height"], weights={"height": -0.5})
    with pytest.raises(ParameterError, match="every distance variable has weight 0"):
        build_design(mixed_data, columns=["height", "region"], weights={"height": 0, "region": 0})


def test_constant_column_kept_and_reported(mixed_data):
    data = mixed_data.assign(country=1.0)
    for scale in ("minmax", "standard", None):
        design = build_design(data, columns=["height", "country"], scale=scale)
        assert design.constant_columns == ["country"]
        assert np.isfinite(design.matrix).all()


def test_bad_scale_is_named(mixed_data):
    with pytest.raises(ParameterError, match="scale"):
        build_design(mixed_data, scale="robust")
