"""Statistical properties of RWN that Perry, Matloff & Tendick (2022, Sections 5-7) and Matloff & Tendick (2015) promise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import DataError, ParameterError, rwn
from sdckit.microdata.neighbors import BruteBackend
from sdckit.schema import build_design


def brute_neighborhoods(matrix: np.ndarray, k: int, eps: float | None) -> list[set[int]]:
    """Perry, Matloff & Tendick (2022) Section 5 step 2, straight from the full distance matrix."""
    d = np.sqrt(((matrix[:, None, :] - matrix[None, :, :]) ** 2).sum(axis=2))
    n = len(matrix)
    out = []
    for i in range(n):
        others = np.delete(np.arange(n), i)
        order = others[np.argsort(d[i, others], kind="stable")]
        knn = set(order[:k].tolist())
        ball = set(others[d[i, others] <= eps].tolist()) if eps is not None else set()
        out.append(ball if len(ball) > len(knn) else knn)
    return out


@pytest.fixture
def continuous() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(rng.normal(size=(150, 3)), columns=["x", "y", "z"])


@pytest.mark.parametrize("scale", ["minmax", "standard"])
@pytest.mark.parametrize("k,eps", [(3, None), (5, 0.1), (2, 0.25), (0, 0.2), (4, 0.6)])
def test_neighborhood_sizes_match_brute_force(continuous, scale, k, eps):
    if scale == "standard" and eps is not None:
        eps = eps * 4  # z-scores spread wider than [0, 1]
    result = rwn(continuous, k=k, eps=eps, scale=scale, random_state=0)
    matrix = build_design(continuous, scale=scale).matrix
    expected = brute_neighborhoods(matrix, k, eps)
    sizes = result.diagnostics["neighborhood_size"].to_numpy()
    np.testing.assert_array_equal(sizes, [len(s) for s in expected])


def test_donors_come_from_the_neighbourhood(continuous):
    # With a tiny neighbourhood, every masked value must be a neighbour's value.
    result = rwn(continuous, k=2, random_state=5)
    matrix = build_design(continuous).matrix
    hoods = brute_neighborhoods(matrix, 2, None)
    for j, col in enumerate(continuous.columns):
        for i in range(len(continuous)):
            allowed = {continuous[col].iloc[m] for m in hoods[i]}
            assert result.data[col].iloc[i] in allowed, (i, col)
        del j


def test_record_is_never_its_own_neighbour_even_with_duplicates():
    data = pd.DataFrame({"a": [1.0, 1.0, 1.0, 5.0, 9.0], "b": [0, 0, 0, 1, 1]})
    result = rwn(data, k=1, random_state=0)
    # The three identical records each have exactly one neighbour, an identical record.
    assert (result.diagnostics["neighborhood_size"] == 1).all()
    assert (result.diagnostics["distance_to_closest"].iloc[:3] == 0).all()


def test_brute_backend_agrees_with_tree(continuous):
    a = rwn(continuous, k=4, eps=0.15, random_state=9).data
    b = rwn(continuous, k=4, eps=0.15, backend=BruteBackend(), random_state=9).data
    pd.testing.assert_frame_equal(a, b)


def test_share_of_modified_cells_is_close_to_q():
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.normal(size=(4000, 4)), columns=list("abcd"))
    q = 0.3
    result = rwn(data, k=5, q=q, random_state=1)
    cells = data.size
    modified = result.diagnostics["cells_modified"].sum()
    sd = np.sqrt(cells * q * (1 - q))
    assert abs(modified - cells * q) < 4 * sd
    # Continuous data: a modified cell almost surely gets a different value.
    changed = (result.data != data).to_numpy().sum()
    assert changed == result.diagnostics["cells_changed"].sum()
    assert abs(changed - modified) <= 5


def test_modprop_modifies_exactly_that_share_of_records():
    rng = np.random.default_rng(1)
    data = pd.DataFrame(rng.normal(size=(1000, 3)), columns=list("abc"))
    result = rwn(data, k=3, modprop=0.25, random_state=2)
    touched = (result.data != data).any(axis=1)
    assert touched.sum() == 250


def test_pure_radius_leaves_isolated_records_missing_or_original():
    data = pd.DataFrame({"x": [0.0, 0.01, 0.02, 0.5, 1.0], "n": [1, 2, 3, 4, 5]})
    res = rwn(data, k=0, eps=0.05, columns=["x", "n"], distance_columns=["x"], random_state=0)
    isolated = res.diagnostics["empty_neighborhood"]
    assert isolated.tolist() == [False, False, False, True, True]
    assert res.data.loc[isolated, "x"].isna().all()
    assert res.data["n"].dtype == "Int64"  # integers that receive missing values become nullable
    assert res.stats["cells_left_missing"] == 4
    kept = rwn(data, k=0, eps=0.05, distance_columns=["x"], empty="keep", random_state=0)
    pd.testing.assert_frame_equal(kept.data.loc[isolated], data.loc[isolated])
    assert kept.data.dtypes.equals(data.dtypes)
    assert (kept.diagnostics.loc[isolated, "cells_modified"] == 0).all()
    assert (res.diagnostics.loc[isolated, "cells_modified"] == 2).all()


def test_per_record_eps():
    data = pd.DataFrame({"x": np.linspace(0, 1, 11)})
    eps = np.where(np.arange(11) < 5, 0.0, 0.35)
    res = rwn(data, k=1, eps=eps, random_state=0)
    sizes = res.diagnostics["neighborhood_size"].to_numpy()
    assert (sizes[:5] == 1).all() and (sizes[5:] > 1).all()
    with pytest.raises(ParameterError, match="record 2"):
        rwn(data, k=1, eps=np.array([0.1, 0.1, -1.0] + [0.1] * 8))
    with pytest.raises(ParameterError, match="one value per record"):
        rwn(data, k=1, eps=[0.1, 0.2])


def test_categorical_values_are_whole_categories(mixed_data):
    res = rwn(mixed_data, k=5, columns=["region", "smoker", "height"], random_state=3)
    assert res.data["region"].dtype == mixed_data["region"].dtype
    assert set(res.data["smoker"].unique()) <= {"yes", "no"}


def test_weights_change_neighbourhoods_and_are_checked(mixed_data):
    cols = ["height", "weight", "region"]
    a = rwn(mixed_data, k=3, columns=cols, random_state=4)
    b = rwn(mixed_data, k=3, columns=cols, weights={"region": 0.0}, random_state=4)
    assert not a.data.equals(b.data)
    with pytest.raises(ParameterError, match="'height'.*negative"):
        rwn(mixed_data, k=3, columns=cols, weights={"height": -1.0})
    with pytest.raises(Exception, match="'nope'"):
        rwn(mixed_data, k=3, columns=cols, weights={"nope": 1.0})


def test_missing_values_error_or_impute(mixed_data):
    data = mixed_data.copy()
    data.loc[data.index[[3, 8]], "height"] = np.nan
    with pytest.raises(DataError, match="'height' \\(2\\)"):
        rwn(data, k=3)
    res = rwn(data, k=3, missing="impute", random_state=0)
    # real values (missing ones included) are copied: every value comes from the column
    assert set(res.data["height"].dropna()) <= set(data["height"].dropna())
    assert len(res.data) == len(data)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"k": -1}, "k must be >= 0"),
        ({"k": 0}, "k=0 needs eps"),
        ({"q": 1.5}, "q must be in"),
        ({"modprop": -0.1}, "modprop"),
        ({"eps": -0.1}, "eps must be"),
        ({"scale": "log"}, "scale"),
        ({"metric": "cosine"}, "metric"),
        ({"empty": "drop"}, "empty"),
        ({"columns": ["nope"]}, "unknown column"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters_name_the_parameter(mixed_data, kwargs, match):
    with pytest.raises(ParameterError if "unknown" not in match else Exception, match=match):
        rwn(mixed_data, **kwargs)


@pytest.mark.slow
def test_correlation_recovered_as_neighbourhoods_shrink():
    """Perry, Matloff & Tendick (2022) Section 6 theorem: as eps -> 0, (U, V) has the joint law of (X, Y)."""
    rng = np.random.default_rng(2022)
    xy = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=20_000)
    data = pd.DataFrame(xy, columns=["x", "y"])

    def error(masked: pd.DataFrame) -> float:
        return abs(np.corrcoef(masked["x"], masked["y"])[0, 1] - 0.8)

    by_k = {k: error(rwn(data, k=k, random_state=11).data) for k in (1000, 50, 2)}
    assert by_k[2] < by_k[50] < by_k[1000]
    assert by_k[2] < 0.01
    assert error(rwn(data, k=1, eps=0.01, random_state=12).data) < 0.01
    # A wide radius mixes dissimilar records: the relation is destroyed (Perry, Matloff & Tendick 2022, Section 7).
    small = data.iloc[:2000]
    assert error(rwn(small, k=1, eps=0.3, random_state=12).data) > 0.3


def test_wide_balls_are_fetched_in_bounded_parts(continuous):
    """A block whose eps-balls exceed max_entries comes in parts with the same neighbourhoods."""
    from sdckit.microdata.neighbors import TreeBackend, iter_neighborhoods

    matrix = build_design(continuous).matrix
    eps = np.full(len(matrix), 0.4)

    def hoods(max_entries):
        out, parts = {}, 0
        for _, chunk in iter_neighborhoods(
            matrix, k=3, eps=eps, backend=TreeBackend(), chunk_size=64, max_entries=max_entries
        ):
            parts += 1
            assert chunk.indices.size <= max(max_entries, int(chunk.sizes.max()))
            for i, row in enumerate(chunk.rows):
                out[int(row)] = chunk.indices[chunk.indptr[i] : chunk.indptr[i + 1]].tolist()
        return out, parts

    whole, whole_parts = hoods(1 << 24)
    split, split_parts = hoods(200)
    assert whole == split
    assert split_parts > whole_parts
    expected = brute_neighborhoods(matrix, 3, 0.4)
    assert [set(whole[i]) for i in range(len(matrix))] == expected
