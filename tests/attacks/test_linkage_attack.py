"""One-to-one linkage: exact answers on constructed files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.attacks.linkage import linkage_attack
from sdckit.errors import ParameterError, SchemaError


@pytest.fixture
def original() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {"a": rng.normal(size=80), "b": rng.normal(size=80), "c": rng.choice(["x", "y"], 80)}
    )


@pytest.mark.parametrize("distance", ["euclidean", "gower"])
def test_identical_release_is_linked_whole(original, distance):
    result = linkage_attack(original, original.copy(), distance=distance, random_state=0)
    assert result.assignment_rate == 1.0
    assert result.nearest_rate == 1.0


def test_assignment_beats_nearest_when_neighbours_collide():
    # Pairs of close records, each masked towards its partner: the nearest-record
    # intruder links both to the same masked record; the one-to-one one cannot.
    base = np.repeat(np.arange(20.0) * 10, 2)
    original = pd.DataFrame({"a": base + np.tile([0.0, 1.0], 20)})
    masked = pd.DataFrame({"a": base + np.tile([0.7, 1.4], 20)})
    result = linkage_attack(original, masked, random_state=0)
    assert result.nearest_rate == pytest.approx(0.5)
    assert result.assignment_rate == 1.0


def test_tied_masked_records_are_not_credited_by_row_order():
    # Microaggregation-like groups of identical masked records: which of them is
    # one's own is a guess, not a link the row order may give away.
    original = pd.DataFrame({"a": np.arange(400.0)})
    masked = pd.DataFrame({"a": np.repeat(np.arange(0.0, 400.0, 4) + 1.5, 4)})
    result = linkage_attack(original, masked, random_state=0)
    assert result.nearest_rate == pytest.approx(0.25)
    assert 0.1 < result.assignment_rate < 0.45


def test_bad_inputs(original):
    with pytest.raises(SchemaError, match="'zz'"):
        linkage_attack(original, original, columns=["a", "zz"])
    with pytest.raises(ParameterError, match="distance"):
        linkage_attack(original, original, distance="manhattan")
    with pytest.raises(ParameterError, match="max_records"):
        linkage_attack(original, original, max_records=10)
