"""Cutpoints: the four binning methods of Lucero et al. (2011), Section 3.1.3 (Table 3, Figure 4)."""

from __future__ import annotations

import numpy as np
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.server.cutpoints import METHODS, Binning, cutpoints

TABLE3_DATA = [1, 1, 2, 2, 4, 4, 5, 6]


def observed_groups(binning: Binning, data) -> list[list[float]]:
    codes = binning.assign(data)
    return [sorted(set(np.asarray(data, float)[codes == j])) for j in range(binning.n_bins)]


def test_table3_fixed_width():
    # Table 3: 1-2, 3-4, 5-6 (width 2 on integers).
    b = cutpoints(TABLE3_DATA, "fixed_width", beta=2)
    assert b.width == pytest.approx(2.0)
    assert b.edges == (1.0, 3.0, 5.0, 7.0)
    assert b.counts == (4, 2, 2)


def test_table3_minimum_width():
    # Table 3: 1-1, 2-2, 4-4, 5-6.
    b = cutpoints(TABLE3_DATA, "minimum_width", beta=2)
    assert observed_groups(b, TABLE3_DATA) == [[1], [2], [4], [5, 6]]
    assert b.counts == (2, 2, 2, 2)


def test_table3_increasing_width():
    # Table 3: 1-2, 3-6.
    b = cutpoints(TABLE3_DATA, "increasing_width", beta=2)
    assert b.edges == (1.0, 3.0, 7.0)
    assert b.counts == (4, 4)


def test_table3_partitioned_and_figure4_tree():
    b = cutpoints(TABLE3_DATA, "partitioned", beta=2)
    assert observed_groups(b, TABLE3_DATA) == [[1], [2], [4], [5, 6]]
    # Figure 4: {1,1,2,2,4,4,5,6} -> {1,1,2,2} | {4,4,5,6} -> four leaves.
    nodes = {n.node_id: n.bins for n in b.nodes()}
    assert nodes == {0: (0, 1, 2, 3), 1: (0, 1), 2: (2, 3), 3: (0,), 4: (1,), 5: (2,), 6: (3,)}
    assert [len(n.children) for n in b.nodes()] == [2, 2, 2, 0, 0, 0, 0]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("beta", [5, 25])
def test_every_bin_holds_beta(method, beta):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=400), rng.exponential(5, size=100)])
    x = np.round(x, 1)  # ties, as in real data
    b = cutpoints(x, method, beta=beta)
    counts = np.bincount(b.assign(x), minlength=b.n_bins)
    assert counts.tolist() == list(b.counts)
    assert counts.min() >= beta
    assert counts.sum() == x.size


@pytest.mark.parametrize("method", ["minimum_width", "partitioned"])
def test_equal_values_never_split(method):
    x = np.repeat([1.0, 2.0, 3.0, 7.0], [30, 3, 12, 20])
    b = cutpoints(x, method, beta=10)
    codes = b.assign(x)
    for value in np.unique(x):
        assert np.unique(codes[x == value]).size == 1


def test_fixed_width_is_the_smallest_passing_width():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 60, size=300).astype(float)
    beta = 12
    b = cutpoints(x, "fixed_width", beta=beta)
    lo = x.min()
    chosen = np.floor((x - lo) / b.width + 1e-9).astype(int)
    assert np.bincount(chosen).min() >= beta
    # Brute force on a fine grid of smaller widths: each fails, or (bins being
    # constant between breakpoints) puts every value in the same bin.
    for w in np.arange(0.05, b.width, 0.01):
        codes = np.floor((x - lo) / w + 1e-9).astype(int)
        assert np.bincount(codes).min() < beta or np.array_equal(codes, chosen)


def test_assign_missing_and_out_of_range():
    b = cutpoints(TABLE3_DATA, "minimum_width", beta=2)
    codes = b.assign([np.nan, -100.0, 100.0, 4.0])
    assert codes.tolist() == [-1, 0, 3, 2]


def test_roundtrip_dict():
    b = cutpoints(TABLE3_DATA, "partitioned", beta=2)
    again = Binning.from_dict(b.to_dict(include_counts=True))
    assert again == b
    assert "counts" not in b.to_dict()


def test_bad_parameters():
    with pytest.raises(ParameterError, match="method"):
        cutpoints(TABLE3_DATA, "quantile", beta=2)
    with pytest.raises(ParameterError, match="beta"):
        cutpoints(TABLE3_DATA, "fixed_width", beta=0)
    with pytest.raises(DataError, match="beta=20"):
        cutpoints(TABLE3_DATA, "fixed_width", beta=20)
    with pytest.raises(ParameterError, match="increase"):
        Binning("given", (1.0, 1.0, 2.0))


def test_input_not_modified():
    x = np.array([3.0, 1.0, 2.0, 2.0, 5.0, np.nan])
    before = x.copy()
    cutpoints(x, "fixed_width", beta=2)
    np.testing.assert_array_equal(x, before)
