"""RWN on awkward inputs: dates beside the masked columns, integer labels, infinities, bad eps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.microdata.rwn import rwn
from sdckit.schema import Schema, build_design


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 40
    return pd.DataFrame(
        {
            "x": rng.random(n),
            "y": rng.integers(0, 9, n),
            "when": pd.date_range("2021-01-01", periods=n),
        },
        index=pd.Index([f"r{i}" for i in range(n)]),
    )


def test_date_column_outside_the_masked_columns_passes_through(frame):
    before = frame.copy()
    result = rwn(frame, columns=["x", "y"], k=3, random_state=0)
    pd.testing.assert_frame_equal(frame, before)
    assert result.data["when"].equals(frame["when"])
    assert result.data.dtypes.equals(frame.dtypes)
    assert result.stats["share_of_cells_changed"] > 0


def test_date_column_among_masked_columns_is_still_refused(frame):
    # By default a date column passes through (schema role 'ignore') ...
    out = rwn(frame, k=3, random_state=0).data
    assert out["when"].equals(frame["when"])
    # ... but selecting it for masking is refused by name.
    with pytest.raises(Exception, match="'when' holds dates"):
        rwn(frame, k=3, columns=list(frame.columns), random_state=0)


def test_integer_column_labels(frame):
    data = frame[["x", "y"]].set_axis([0, 1], axis=1)
    result = rwn(data, k=3, weights={1: 0.5}, random_state=0)
    assert list(result.data.columns) == [0, 1]
    assert result.params["weights"] == {0: 1.0, 1: 0.5}
    assert set(result.data[1]) <= set(data[1])
    assert 0 in Schema.infer(data)


def test_infinite_value_names_column_and_row(frame):
    data = frame[["x", "y"]].copy()
    data.loc["r7", "x"] = np.inf
    with pytest.raises(DataError, match=r"column 'x' holds 1 infinite value.*row 8 \(index 'r7'\)"):
        rwn(data, k=3, random_state=0)
    with pytest.raises(DataError, match="infinite"):
        build_design(data)


def test_non_numeric_per_record_eps_is_a_parameter_error(frame):
    with pytest.raises(ParameterError, match="eps"):
        rwn(frame[["x", "y"]], k=3, eps=["wide"] * len(frame), random_state=0)


@pytest.mark.parametrize("param", ["columns", "distance_columns"])
def test_explicitly_empty_column_lists_are_named(frame, param):
    with pytest.raises(ParameterError, match=f"^{param} is empty"):
        rwn(frame[["x", "y"]], k=3, random_state=0, **{param: []})


def test_missing_value_message_names_the_command_line_option(frame):
    data = frame[["x", "y"]].astype({"x": "float64"})
    data.iloc[3, 0] = np.nan
    with pytest.raises(DataError, match="--impute"):
        rwn(data, k=3, random_state=0)
