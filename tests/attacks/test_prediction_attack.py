"""Prediction of the sensitive value from the quasi-identifiers of a masked release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.attacks import prediction_attack
from sdckit.errors import ParameterError, SchemaError


@pytest.fixture
def people():
    rng = np.random.default_rng(3)
    n = 400
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(4),
            "region": rng.choice(["north", "south", "east"], n),
            "income": np.exp(rng.normal(10, 0.6, n)),
        }
    )


def _row(result, predictor):
    return result.table.set_index("predictor").loc[predictor]


def test_an_unmasked_release_gives_every_value_away(people):
    result = prediction_attack(
        people, people.copy(), sensitive="income", keys=["age", "hours", "region"], random_state=0
    )
    nearest = _row(result, "nearest record")
    # Keys unique: the nearest released record is the target's own, its income exact.
    assert nearest["release"] == 1.0
    # Without her record, the others predict her income within 1% rarely.
    assert nearest["baseline"] < 0.05
    assert result.excess > 0.9
    assert result.summary().startswith("The release lets an intruder who knows age, hours, region")


def test_a_release_whose_sensitive_values_are_shuffled_gives_nothing(people):
    masked = people.copy()
    masked["income"] = np.random.default_rng(9).permutation(masked["income"].to_numpy())
    result = prediction_attack(
        people, masked, sensitive="income", keys=["age", "hours", "region"], random_state=0
    )
    assert (result.table["release"] < 0.05).all()
    assert result.excess < 0.05


def test_a_value_the_population_predicts_is_not_counted_as_the_releases(people):
    # Income a function of the keys: the other records predict it as well as the release.
    data = people.assign(age=people["age"] // 10, income=1000.0 * (people["age"] // 10))
    data = data.drop(columns=["hours", "region"])
    result = prediction_attack(data, data.copy(), sensitive="income", keys=["age"], random_state=0)
    nearest = _row(result, "nearest record")
    assert nearest["release"] == 1.0 and nearest["baseline"] == 1.0
    assert result.excess == 0.0
    assert result.summary().startswith("The release gives an intruder who knows age no prediction")


def test_a_categorical_sensitive_variable(people):
    result = prediction_attack(
        people, people.copy(), sensitive="region", keys=["age", "hours"], random_state=0
    )
    assert result.task == "categorical"
    assert _row(result, "nearest record")["release"] == 1.0
    # Region is independent of the keys: the baseline is near chance (1 in 3).
    assert _row(result, "nearest record")["baseline"] < 0.5
    assert "release_median_error" not in result.table.columns


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"keys": ["age", "zip"]}, SchemaError, "keys: column 'zip' is not in the original file"),
        ({"keys": ["age", "income"]}, ParameterError, "keys: the sensitive variable 'income'"),
        ({"keys": []}, ParameterError, "keys: give at least one"),
        ({"keys": ["age"], "tolerance": 2}, ParameterError, "tolerance must be in (0, 1)"),
    ],
)
def test_bad_input(people, kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        prediction_attack(people, people, sensitive="income", **kwargs)
