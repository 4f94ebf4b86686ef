from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import (
    cell_key_perturb,
    compare_information_loss,
    design_ptable,
    information_loss,
    perturb_deviations,
)


def test_distribution_and_counts_small_example():
    table = pd.DataFrame(
        {"x": list("abcde"), "count": [0, 0, 4, 10, 1], "perturbed": [0, 3, 4, 12, 0]}
    )
    loss = information_loss(table, "perturbed")
    assert loss.false_zeros == 1 and loss.false_nonzeros == 1
    assert loss.nonzero_cells == 3
    assert loss.distribution["cells"].to_dict() == {0: 1, 1: 1, 2: 1}
    assert loss.mean_abs_deviation == pytest.approx(1.0)
    assert loss.max_abs_deviation == 3


def test_two_tables_matched_on_dims(keyed):
    result = cell_key_perturb(keyed, design_ptable(3, 2.01), dims=["age", "sex"]).internal
    protected = result[["sex", "age", "perturbed"]].iloc[::-1]
    a = information_loss(result, protected, dims=["age", "sex"], protected_value="perturbed")
    b = information_loss(result, "perturbed")
    pd.testing.assert_frame_equal(a.distribution, b.distribution)
    assert a.mean_abs_deviation == b.mean_abs_deviation
    assert a.distribution["percent"].sum() == pytest.approx(100.0)
    with pytest.raises(DataError):
        information_loss(
            result, protected.iloc[1:], dims=["age", "sex"], protected_value="perturbed"
        )
    with pytest.raises(ParameterError):
        information_loss(result, protected)
    with pytest.raises(ParameterError, match="true column itself"):
        information_loss(result, "count")


def test_protected_table_file_is_compared_by_its_protected_column(keyed):
    """Issue 24: with a protected table holding both count and perturbed, the protected
    column was never passed and count was compared with count (mean deviation 0)."""
    internal = cell_key_perturb(keyed, design_ptable(3, 2.01), dims=["age", "sex"]).internal
    truth = internal[["age", "sex", "count"]]
    expected = float(
        np.abs(internal["perturbed"] - internal["count"])[internal["count"] > 0].mean()
    )
    assert expected > 0
    loss = information_loss(truth, internal, dims=["age", "sex"])
    assert loss.compared == ("count", "perturbed")
    assert loss.mean_abs_deviation == pytest.approx(expected)


def test_compare_layout():
    t = pd.DataFrame({"count": [3, 5, 8], "a": [3, 6, 8], "b": [4, 5, 5]})
    table = compare_information_loss({"A": information_loss(t, "a"), "B": information_loss(t, "b")})
    assert list(table.columns) == ["A", "B"]
    assert table.loc["mean abs. dev.", "B"] == pytest.approx(4 / 3)


def test_perturbed_deviations_keep_frequencies():
    rng = np.random.default_rng(5)
    d = np.clip(np.rint(rng.normal(0, 2, size=50_000)), -6, 6).astype(int)
    publication = perturb_deviations(d, alpha=0.8, random_state=1)
    freq = publication.frequencies
    assert freq["n_d"].sum() == freq["n_d_star"].sum() == len(d)
    # expected counts are preserved exactly; the draw deviates by sampling noise only
    assert np.allclose(freq["n_d"].to_numpy() @ publication.matrix, freq["n_d"].to_numpy())
    tolerance = 5 * np.sqrt(freq["n_d"].to_numpy()) + 5
    assert (freq["difference"].abs().to_numpy() <= tolerance).all()
    assert (publication.perturbed != d).mean() > 0.05


def test_perturb_deviations_errors():
    with pytest.raises(ParameterError):
        perturb_deviations(np.array([]))
    with pytest.raises(DataError):
        perturb_deviations(np.array([0.5, 1.0]))
