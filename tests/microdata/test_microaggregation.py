"""MDAV and individual ranking (Erola et al. 2011, Section 2.1; Domingo-Ferrer & Mateo-Sanz 2002)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import microdata
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.microdata import mdav_groups, microaggregate
from sdckit.microdata._reference import textbook_mdav


@pytest.mark.parametrize(
    ("n", "d", "k", "seed"), [(7, 2, 3, 0), (40, 2, 3, 1), (600, 5, 3, 2), (1000, 3, 5, 3)]
)
def test_same_groups_as_textbook(n, d, k, seed):
    x = np.random.default_rng(seed).standard_normal((n, d))
    assert np.array_equal(mdav_groups(x, k), textbook_mdav(x, k))


def test_same_groups_as_textbook_on_skewed_data():
    x = np.random.default_rng(9).lognormal(0.0, 1.0, size=(900, 4))
    assert np.array_equal(mdav_groups(x, 4), textbook_mdav(x, 4))


def _sizes_ok(labels: np.ndarray, k: int) -> bool:
    sizes = np.bincount(labels)
    return bool(sizes.min() >= k and sizes.max() <= 2 * k - 1)


def test_blocking_keeps_group_sizes():
    x = np.random.default_rng(4).standard_normal((3001, 5))
    labels = mdav_groups(x, 3, block_size=400)
    assert _sizes_ok(labels, 3)
    assert (labels >= 0).all()

    # Blocking changes groups only through the cuts: information loss stays close.
    def sse(lab):
        cent = np.stack([np.bincount(lab, weights=x[:, j]) / np.bincount(lab) for j in range(5)], 1)
        return float(((x - cent[lab]) ** 2).sum())

    exact = mdav_groups(x, 3, block_size=None)
    assert sse(labels) < 1.3 * sse(exact)


def test_masked_data_are_k_anonymous(mixed_data):
    # Input unmodified, index and dtypes kept: tests/microdata/test_contract.py.
    result = microaggregate(mixed_data, columns=["height", "weight", "children"], group_size=4)
    out = result.data
    assert (out["id"] == mixed_data["id"]).all()
    combos = out.groupby(["height", "weight", "children"]).size()
    assert combos.min() >= 4
    sizes = result.diagnostics["group_size"]
    assert sizes.min() >= 4 and sizes.max() <= 7
    assert result.stats["smallest_group"] >= 4 and result.stats["largest_group"] <= 7


def test_group_means_and_sse_ratio(mixed_data):
    result = microaggregate(mixed_data, columns=["height", "weight"], group_size=3)
    groups = result.groups
    means = mixed_data.groupby(groups.to_numpy())["height"].transform("mean")
    np.testing.assert_allclose(result.data["height"], means)
    # Overall means are kept exactly by group means.
    assert result.data["weight"].mean() == pytest.approx(mixed_data["weight"].mean())
    z = (mixed_data[["height", "weight"]] - mixed_data[["height", "weight"]].mean()) / mixed_data[
        ["height", "weight"]
    ].std()
    zc = z.groupby(groups.to_numpy()).transform("mean")
    expected = float(((z - zc) ** 2).to_numpy().sum() / (z**2).to_numpy().sum())
    assert result.stats["sse_ratio"] == pytest.approx(expected)
    assert 0 < result.stats["sse_ratio"] < 0.2


def test_individual_ranking(mixed_data):
    result = microaggregate(
        mixed_data, columns=["height", "weight"], group_size=5, method="individual_ranking"
    )
    for col in ["height", "weight"]:
        counts = result.data[col].value_counts()
        assert counts.min() >= 5
        sizes = np.bincount(result.diagnostics[f"group_{col}"])
        assert sizes.min() >= 5 and sizes.max() <= 9
        # Groups are runs of consecutive ranks: the masked values keep the order.
        order = np.argsort(mixed_data[col].to_numpy(), kind="stable")
        assert np.all(np.diff(result.data[col].to_numpy()[order]) >= 0)
    with pytest.raises(ParameterError, match="per variable"):
        _ = result.groups


def test_categorical_error_or_mode(mixed_data):
    with pytest.raises(SchemaError, match="categorical='mode'"):
        microaggregate(mixed_data, columns=["height", "region"], group_size=3)
    result = microaggregate(
        mixed_data, columns=["height", "region", "smoker"], group_size=3, categorical="mode"
    )
    out = result.data
    assert out["region"].dtype == mixed_data["region"].dtype
    assert out["smoker"].dtype == mixed_data["smoker"].dtype
    assert out.groupby(["height", "region", "smoker"], observed=True).size().min() >= 3
    # Each group's category is one of the group's most frequent.
    groups = result.groups.to_numpy()
    for g in np.unique(groups)[:20]:
        members = mixed_data["region"][groups == g]
        counts = members.value_counts()
        assert counts[out["region"][groups == g].iloc[0]] == counts.max()


def test_sample_weights_give_weighted_means():
    rng = np.random.default_rng(5)
    data = pd.DataFrame(
        {"x": rng.normal(size=300), "y": rng.normal(size=300), "w": rng.uniform(1, 50, 300)}
    )
    result = microaggregate(data, columns=["x", "y"], group_size=3, sample_weights="w")
    groups = result.groups.to_numpy()
    weighted_total = (data["w"] * data["x"]).groupby(groups).sum()
    masked_total = (data["w"] * result.data["x"]).groupby(groups).sum()
    np.testing.assert_allclose(masked_total, weighted_total)
    unweighted = microaggregate(data, columns=["x", "y"], group_size=3).data
    assert not np.allclose(unweighted["x"], result.data["x"])
    assert (result.data["w"] == data["w"]).all()


def test_bad_input_is_refused(mixed_data):
    with pytest.raises(ParameterError, match="group_size=500"):
        microaggregate(mixed_data, columns=["height"], group_size=500)
    with pytest.raises(ParameterError, match="method"):
        microaggregate(mixed_data, columns=["height"], method="kmeans")
    broken = mixed_data.copy()
    broken.loc[broken.index[3], "height"] = np.nan
    with pytest.raises(DataError, match="height"):
        microaggregate(broken, columns=["height", "weight"])
    with pytest.raises(ParameterError, match="block_size"):
        mdav_groups(np.zeros((100, 2)), 5, block_size=10)


def test_registered_and_progress(mixed_data):
    seen = []
    result = microdata.mask(
        "microaggregation",
        mixed_data,
        columns=["height", "weight"],
        group_size=3,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert result.method == "microaggregation"
    assert seen[-1] == (len(mixed_data), len(mixed_data))
    assert "sse ratio" in result.summary()


def test_weight_role_in_the_schema_is_honoured():
    from sdckit.schema import Schema

    rng = np.random.default_rng(6)
    data = pd.DataFrame(
        {"x": rng.normal(size=120), "y": rng.normal(size=120), "w": rng.uniform(1, 9, 120)}
    )
    schema = Schema.infer(data, roles={"w": "weight"})
    by_role = microaggregate(data, group_size=3, schema=schema)
    by_name = microaggregate(data, columns=["x", "y"], group_size=3, sample_weights="w")
    pd.testing.assert_frame_equal(by_role.data, by_name.data)
    assert by_role.params["sample_weights"] == "w"
    two = Schema.infer(data, roles={"w": "weight", "y": "weight"})
    with pytest.raises(ParameterError, match="several weight columns"):
        microaggregate(data, columns=["x"], group_size=3, schema=two)


def test_named_sample_weights_column_is_left_out_of_the_default_columns():
    rng = np.random.default_rng(5)
    data = pd.DataFrame(
        {"x": rng.normal(size=60), "y": rng.normal(size=60), "w": rng.uniform(1, 5, 60)}
    )
    result = microaggregate(data, group_size=3, sample_weights="w")
    assert result.params["columns"] == ["x", "y"]
    pd.testing.assert_series_equal(result.data["w"], data["w"])
    w = data["w"].to_numpy()
    assert np.isclose(np.average(result.data["x"], weights=w), np.average(data["x"], weights=w))


def test_blas_cap_changes_nothing_but_threads():
    rng = np.random.default_rng(5)
    points = rng.normal(size=(600, 4))
    capped = mdav_groups(points, 3, block_size=None)  # blas_threads=1 by default
    free = mdav_groups(points, 3, block_size=None, blas_threads=None)
    np.testing.assert_array_equal(capped, free)
    with pytest.raises(ParameterError, match="blas_threads"):
        mdav_groups(points, 3, blas_threads=0)
