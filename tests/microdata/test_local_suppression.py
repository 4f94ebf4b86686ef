"""Local suppression: every requested key combination k-anonymous, under both missing conventions.

The property is checked by an independent count (every pair of records
compared for ``missing="any"``; ``value_counts`` with missing values kept
for ``"category"``), on random files where sdcMicro's ``localSuppression``
is known to leave combinations unprotected (its issues #352 and #225).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ParameterError
from sdckit.microdata import local_suppression


def _smallest_class(frame: pd.DataFrame, combo: list[str], missing: str) -> int:
    if missing == "category":
        return int(frame[combo].astype(object).fillna("<NA>").value_counts().min())
    values = frame[combo].astype(object).to_numpy()
    blank = pd.isna(values)
    a, b = values[:, None, :], values[None, :, :]
    match = ((a == b) | blank[:, None, :] | blank[None, :, :]).all(axis=2)
    return int(match.sum(axis=1).min())


@st.composite
def _files(draw):
    n = draw(st.integers(2, 30))
    p = draw(st.integers(1, 4))
    columns = {}
    for j in range(p):
        values = draw(
            st.lists(st.one_of(st.none(), st.sampled_from("abcd")), min_size=n, max_size=n)
        )
        columns[f"k{j}"] = values
    frame = pd.DataFrame(columns)
    k = draw(st.integers(1, n))
    size = draw(st.integers(1, p))
    missing = draw(st.sampled_from(["any", "category"]))
    return frame, k, size, missing


@settings(max_examples=80, deadline=None)
@given(_files())
def test_every_requested_combination_is_k_anonymous(case):
    frame, k, size, missing = case
    before = frame.copy()
    result = local_suppression(
        frame, columns=list(frame.columns), k_anonymity=k, combinations=size, missing=missing
    )
    pd.testing.assert_frame_equal(frame, before)
    out = result.data
    for m in range(1, size + 1):
        for combo in itertools.combinations(frame.columns, m):
            assert _smallest_class(out, list(combo), missing) >= k, (combo, missing)
    assert result.stats["achieved_k"] >= k
    # Only blanks are added: every shown value is the original one.
    shown = out.notna().to_numpy()
    np.testing.assert_array_equal(out.to_numpy()[shown], frame.to_numpy()[shown])


def test_small_example_by_hand():
    data = pd.DataFrame(
        {
            "sex": ["f", "f", "f", "m", "m", "m", "m"],
            "region": ["n", "n", "n", "s", "s", "s", "n"],
            "income": [1.0, 2, 3, 4, 5, 6, 7],
        }
    )
    # (m, n) is unique; region has fewer... both keys have 2 values: sex (first listed) is
    # blanked last with importance ["sex", "region"], so record 7 loses its region and,
    # matching any value, joins (m, s).
    result = local_suppression(
        data, columns=["sex", "region"], k_anonymity=2, importance=["sex", "region"]
    )
    assert result.data["region"].isna().tolist() == [False] * 6 + [True]
    assert result.stats["cells_suppressed"] == 1
    assert list(result.diagnostics["suppressed"]) == [0] * 6 + [1]
    pd.testing.assert_series_equal(result.data["income"], data["income"])


def test_category_convention_fills_the_blank_class():
    # Under "category" the blanked record forms a class of its own: it needs company.
    data = pd.DataFrame({"a": ["x", "x", "y", "y", "z"]})
    result = local_suppression(data, columns=["a"], k_anonymity=2, missing="category")
    assert result.data["a"].isna().sum() >= 2
    assert _smallest_class(result.data, ["a"], "category") >= 2


def test_int_column_becomes_nullable_only_when_blanked():
    data = pd.DataFrame({"a": np.array([1, 1, 2], dtype=np.int64), "b": [1, 1, 1]})
    result = local_suppression(data, columns=["a", "b"], k_anonymity=2)
    assert str(result.data["a"].dtype) == "Int64" and result.data["a"].isna().sum() == 1
    assert result.data["b"].dtype == np.int64


def test_bad_parameters_are_named():
    data = pd.DataFrame({"a": ["x", "y"]})
    with pytest.raises(ParameterError, match="k_anonymity = 3 is larger than the number"):
        local_suppression(data, columns=["a"], k_anonymity=3)
    with pytest.raises(ParameterError, match="importance"):
        local_suppression(data, columns=["a"], k_anonymity=2, importance=["a", "a"])
    with pytest.raises(ParameterError, match="combinations"):
        local_suppression(data, columns=["a"], k_anonymity=2, combinations=[["b"]])
    with pytest.raises(ParameterError, match="columns"):
        local_suppression(data)
