from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.tables import add_record_keys, cell_key_perturb, design_ptable, tabulate
from sdckit.tables.cellkey import lookup_noise


@pytest.fixture(scope="module")
def ptable():
    return design_ptable(3, 2.01)


def test_no_perturbed_ones_or_twos(keyed, ptable):
    result = cell_key_perturb(keyed, ptable, dims=["district", "age", "sex"])
    perturbed = result.internal["perturbed"]
    assert not perturbed.isin([1, 2]).any()
    assert (result.internal["count"] <= 2).any()  # the table had small cells to remove
    assert (np.abs(result.internal["noise"]) <= 3).all()
    assert (perturbed[result.internal["count"] == 0] == 0).all()
    assert list(result.table.columns) == ["district", "age", "sex", "perturbed"]
    assert result.stats["small_cells"] == 0


def test_identical_record_sets_identical_perturbation_across_tables(keyed, ptable):
    a = cell_key_perturb(keyed, ptable, dims=["district", "sex"]).table
    b = cell_key_perturb(keyed, ptable, dims=["sex", "age"]).table
    c = cell_key_perturb(keyed, ptable, dims=["age", "district", "sex"]).table
    for sex in ["F", "M", "Total"]:
        va = a[(a.district == "Total") & (a.sex == sex)]["perturbed"].item()
        vb = b[(b.sex == sex) & (b.age == "Total")]["perturbed"].item()
        vc = c[(c.age == "Total") & (c.district == "Total") & (c.sex == sex)]["perturbed"].item()
        assert va == vb == vc


def test_removing_records_changes_only_their_cells(keyed, ptable):
    full = cell_key_perturb(keyed, ptable, dims=["district", "sex"]).table
    dropped = keyed[~((keyed.district == "d1") & (keyed.sex == "F"))].iloc[:]
    part = cell_key_perturb(dropped, ptable, dims=["district", "sex"]).table
    untouched = (
        (full.district != "d1")
        & (full.district != "Total")
        & (full.sex != "F")
        & (full.sex != "Total")
    )
    assert (
        full.loc[untouched, "perturbed"].to_numpy() == part.loc[untouched, "perturbed"].to_numpy()
    ).all()


def test_noise_frequencies_follow_the_ptable(ptable):
    rng = np.random.default_rng(0)
    n = 200_000
    keys = rng.random(n)
    noise = lookup_noise(np.full(n, 10), keys, ptable)
    expected = ptable.deviation_probabilities()[-1]
    observed = np.bincount(noise + 3, minlength=7) / n
    assert np.allclose(observed, expected, atol=4 * np.sqrt(0.25 / n))
    assert abs(noise.mean()) < 4 * np.sqrt(2.01 / n)


def test_table_mode_and_threshold(keyed, ptable):
    table = tabulate(keyed, ["district", "age"], record_key="record_key")
    before = table.copy()
    result = cell_key_perturb(table, ptable, threshold=5)
    pd.testing.assert_frame_equal(table, before)
    t = result.table
    assert t["perturbed"].dtype == "Int64"
    assert t.loc[t["suppressed"], "perturbed"].isna().all()
    published = t["perturbed"].dropna()
    assert ((published == 0) | (published >= 5)).all()


def test_uniform_keys_work(census, ptable):
    keyed = add_record_keys(census, 5, kind="uniform")
    result = cell_key_perturb(keyed, ptable, dims=["district", "age"])
    assert not result.table["perturbed"].isin([1, 2]).any()


def test_errors(census, keyed, ptable):
    with pytest.raises(SchemaError):
        cell_key_perturb(census, ptable, dims=["sex"])
    with pytest.raises(ParameterError):
        cell_key_perturb(keyed, ptable)
    with pytest.raises(ParameterError):
        cell_key_perturb(keyed, "ptable", dims=["sex"])
    bad = pd.DataFrame({"count": [1.5], "cell_key": [3]})
    with pytest.raises(DataError):
        cell_key_perturb(bad, ptable)
    text_keys = pd.DataFrame({"count": [4, 7], "cell_key": ["0.25", "key"]})
    with pytest.raises(DataError, match="'cell_key'"):
        cell_key_perturb(text_keys, ptable)
