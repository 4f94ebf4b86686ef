"""Cell key perturbation of magnitude tables (sums and means)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import (
    cell_key_perturb,
    design_ptable,
    magnitude_information_loss,
    magnitude_perturb,
    perturb_sums,
)


def _cell(frame, **where):
    mask = np.ones(len(frame), dtype=bool)
    for dim, label in where.items():
        mask &= (frame[dim].astype(str) == label).to_numpy()
    return frame[mask]


def test_same_records_same_perturbed_sum_in_every_table(keyed):
    a = magnitude_perturb(keyed, ["district", "sex"], "income").table
    b = magnitude_perturb(keyed, ["sex", "age"], "income").table
    c = magnitude_perturb(keyed, ["age", "district", "sex"], "income").table
    arrays = perturb_sums(keyed["income"], keyed["record_key"], keyed["sex"]).table
    for sex in ["F", "M"]:
        va = _cell(a, district="Total", sex=sex)["perturbed_sum"].item()
        vb = _cell(b, sex=sex, age="Total")["perturbed_sum"].item()
        vc = _cell(c, age="Total", district="Total", sex=sex)["perturbed_sum"].item()
        assert va == pytest.approx(vb, rel=1e-12) and vb == pytest.approx(vc, rel=1e-12)
        assert arrays.loc[sex, "perturbed_sum"] == pytest.approx(va, rel=1e-12)


def test_noise_scaled_to_largest_contributions_and_never_zero(keyed):
    result = magnitude_perturb(keyed, ["district", "age"], "income", scale=0.1, top_k=1)
    internal = result.internal
    nonempty = internal["count"] > 0
    # |noise| in [0.05, 0.1) of the largest contribution: compare with the cell maximum
    biggest = keyed.groupby(["district", "age"], observed=True)["income"].max()
    for (district, age), top in biggest.items():
        row = _cell(internal, district=district, age=age)
        noise = abs(row["sum_noise"].item())
        assert 0.05 * top - 1e-9 <= noise < 0.1 * top + 1e-9
    assert (internal.loc[~nonempty, "perturbed_sum"] == 0).all()
    assert result.stats["unchanged_nonempty"] == 0
    assert not {"count", "true_sum", "cell_key", "sum_noise"} & set(result.table.columns)


def test_means_from_perturbed_sums_and_counts(keyed):
    ptable = design_ptable(3, 2.01)
    result = magnitude_perturb(keyed, ["district", "sex"], "income", ptable=ptable)
    counts = cell_key_perturb(keyed, ptable, dims=["district", "sex"]).table
    table = result.table
    np.testing.assert_array_equal(table["perturbed_count"], counts["perturbed"])
    ok = table["perturbed_count"] > 0
    np.testing.assert_allclose(
        table.loc[ok, "perturbed_mean"],
        table.loc[ok, "perturbed_sum"] / table.loc[ok, "perturbed_count"],
    )
    assert not table["perturbed_count"].isin([1, 2]).any()
    loss = magnitude_information_loss(result.internal)
    assert loss["cells"].sum() == int((result.internal["count"] > 0).sum())
    # relative noise shrinks as cells grow
    assert loss["mean_rel_dev_sum"].iloc[-1] < loss["mean_rel_dev_sum"].iloc[0]


def test_zero_mean_noise_over_many_cells():
    rng = np.random.default_rng(5)
    n = 40_000
    values = rng.gamma(2.0, 100.0, size=n)
    keys = rng.integers(0, 2**31 - 1, size=n)
    cells = rng.integers(0, 4000, size=n)
    result = perturb_sums(values, keys, cells, top_k=1, min_noise=0.0, scale=1.0)
    internal = result.internal
    top = pd.Series(values).groupby(cells).max().to_numpy()
    relative = internal["sum_noise"].to_numpy() / top
    # uniform on (-1, 1): mean 0 with standard error sqrt(1/3 / 4000) ~ 0.009
    assert abs(relative.mean()) < 0.04
    assert relative.var() == pytest.approx(1 / 3, abs=0.03)


def test_errors(keyed):
    with pytest.raises(ParameterError, match="min_noise"):
        perturb_sums([1.0], [3], [0], min_noise=1.0)
    with pytest.raises(ParameterError, match="one entry per record"):
        perturb_sums([1.0, 2.0], [3], [0, 0])
    bad = keyed.assign(income=keyed["income"].astype(object))
    bad.loc[bad.index[4], "income"] = "n/a"
    with pytest.raises(DataError, match="row 5"):
        magnitude_perturb(bad, ["sex"], "income")
