"""Configuration of thresholds and the metadata analysts see."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.server import DEFAULT_CONFIG, Metadata, ServerConfig, load_config


def test_defaults_are_documented_values():
    c = DEFAULT_CONFIG
    assert (c.gamma, c.gamma_star, c.drop_q_k, c.max_predictors) == (50, 25, 5, 20)
    assert c.approved_transformations == ("square", "sqrt", "log")
    assert c.size_class(49) == "small" and c.size_class(5000) == "medium"
    assert c.size_class(10_000) == "large"


def test_yaml_roundtrip(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"gamma": 80, "gamma_star": 40, "drop_q_k": 7}))
    config = load_config(path)
    assert (config.gamma, config.gamma_star, config.drop_q_k) == (80, 40, 7)
    assert ServerConfig.from_dict(config.to_dict()) == config
    assert load_config(None) is DEFAULT_CONFIG


@pytest.mark.parametrize(
    ("mapping", "match"),
    [
        ({"gamma": 10, "gamma_star": 20}, "gamma_star"),
        ({"drop_q_k": 1}, "drop_q_k"),
        ({"gamma": 6, "gamma_star": 3}, "drop_q_k \\+ min_cell_count"),
        ({"r_squared_max": 1.5}, "r_squared_max"),
        ({"approved_transformations": ["exp"]}, "exp"),
        ({"max_interaction_order": 4}, "at most 3"),
        ({"gamm": 3}, "unknown config"),
        ({"gamma": 2.5}, "integer"),
        ({"size_class_bounds": [10, 5]}, "size_class_bounds"),
    ],
)
def test_bad_config(mapping, match):
    with pytest.raises(ParameterError, match=match):
        ServerConfig.from_dict(mapping)


def test_metadata_infer_encode_and_yaml(tmp_path, people):
    metadata = Metadata.infer(people, beta=40, methods={"age": "partitioned"})
    assert metadata.variable("sex").levels == ("female", "male")
    assert metadata.variable("age").binning.method == "partitioned"
    assert metadata.variable("hours").binning.method == "minimum_width"
    path = metadata.to_yaml(tmp_path / "meta.yaml")
    again = Metadata.from_yaml(path)
    public = again.to_dict()
    assert "counts" not in yaml.safe_dump(public)
    assert again.variable("age").binning.edges == metadata.variable("age").binning.edges
    codes = again.encode(people)
    assert set(codes) == set(people.columns)
    assert codes["sex"].min() >= 0


def test_integer_coded_categories_match_levels():
    data = pd.DataFrame({"g": [1.0, 2.0, np.nan, 2.0], "x": [1.0, 2.0, 3.0, 4.0]})
    metadata = Metadata.infer(data, categorical=["g"], beta=1)
    assert metadata.variable("g").levels == ("1", "2")
    assert metadata.variable("g").encode(data.g).tolist() == [0, 1, -1, 1]


def test_metadata_errors(people):
    metadata = Metadata.infer(people, beta=40)
    with pytest.raises(SchemaError, match="not available"):
        metadata.variable("ssn")
    bad = people.copy()
    bad.loc[bad.index[3], "sex"] = "unknown"
    with pytest.raises(DataError, match=r"'sex' holds 'unknown' at row 4 \(index \d+\),"):
        metadata.encode(bad)
    with pytest.raises(SchemaError, match="lack"):
        metadata.encode(people.drop(columns="age"))
    with pytest.raises(SchemaError, match="cutpoints"):
        Metadata.from_dict({"variables": {"age": {"kind": "continuous"}}})
    with pytest.raises(ParameterError, match="categorical and continuous"):
        Metadata.infer(people, categorical=["age"], continuous=["age"])
