"""Core properties of RWN (Perry, Matloff & Tendick 2022, Section 5) on small mixed data."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit import ParameterError, rwn


def test_values_only_copied_and_structure_kept(mixed_data):
    # Input unmodified, index, column order and dtypes kept: tests/microdata/test_contract.py.
    result = rwn(
        mixed_data,
        k=5,
        columns=["height", "weight", "children", "region", "smoker"],
        random_state=0,
    )
    out = result.data
    assert out["region"].cat.categories.equals(mixed_data["region"].cat.categories)
    for col in ["height", "weight", "children", "region", "smoker"]:
        assert set(out[col]).issubset(set(mixed_data[col]))
    assert (out["id"] == mixed_data["id"]).all()


def test_q_zero_is_identity(mixed_data):
    result = rwn(mixed_data, k=5, q=0.0, random_state=1)
    pd.testing.assert_frame_equal(result.data, mixed_data)
    assert result.diagnostics["cells_modified"].sum() == 0


def test_same_seed_same_output(mixed_data):
    a = rwn(mixed_data, k=4, eps=0.2, random_state=7).data
    b = rwn(mixed_data, k=4, eps=0.2, random_state=7).data
    c = rwn(mixed_data, k=4, eps=0.2, random_state=8).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_k_at_least_n_is_refused(mixed_data):
    with pytest.raises(ParameterError, match="k=200"):
        rwn(mixed_data, k=200)


def test_summary_labels_the_cell_count_in_words(mixed_data):
    """The summary line of ``stats["cells_masked_columns"]`` reads as English (issue 29)."""
    result = rwn(mixed_data, k=3, random_state=0)
    n_cells = len(mixed_data) * len(result.params["columns"])
    assert result.stats["cells_masked_columns"] == n_cells
    assert f"  cells in the masked columns: {n_cells}" in result.summary().splitlines()
    assert "cells masked columns" not in result.summary()
