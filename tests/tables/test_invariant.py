from __future__ import annotations

import numpy as np
import pytest

from sdckit.errors import InfeasibleError, ParameterError
from sdckit.tables import design_ptable
from sdckit.tables.invariant import (
    banded_transition,
    invariant_matrix,
    invariant_transform,
    split_small_counts,
)

# Example 1 (Giessing & Höhne 2011, Section 3.2): frequencies of counts 1..5 (the tail is ours)
EXAMPLE_1 = np.array([0, 96, 32, 20, 16, 15, 12, 10, 9, 8, 7, 6, 5, 5, 4, 4], dtype=float)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_plain_invariance(alpha):
    rng = np.random.default_rng(1)
    v = rng.integers(0, 50, size=12).astype(float)
    P = banded_transition(12, D=2, stay=0.7)
    R = invariant_transform(P, v, alpha)
    assert np.allclose(v @ R, v)
    assert np.allclose(R.sum(axis=1), 1.0)
    assert (R >= -1e-15).all()


def test_invariant_matrix_from_ptable_is_invariant():
    result = invariant_matrix(design_ptable(3, 2.01, js=0), EXAMPLE_1, 0.6, no_small_cells=False)
    assert np.allclose(EXAMPLE_1[1:] @ result.matrix[1:], np.r_[0, EXAMPLE_1[1:]])
    assert result.matrix[0, 0] == 1.0


def test_no_small_cells_preserves_total_under_four():
    result = invariant_matrix(banded_transition(16, D=2, stay=0.8), EXAMPLE_1, 0.7)
    R = result.matrix
    assert np.allclose(R.sum(axis=1), 1.0)
    assert np.all(R[:, 1:3] == 0)
    expected = result.expected_frequencies()
    assert expected[0] + expected[3] == pytest.approx(148.0)
    assert np.allclose(expected[4:], EXAMPLE_1[4:])
    # expected total of the small counts is preserved as 3s
    assert 3 * expected[3] == pytest.approx(96 + 2 * 32 + 3 * 20)
    assert "148" in result.summary()


def test_example_1_table_3_reproduced_from_table_2():
    outflow = np.array([2.9690406, 0.4069246])
    rows, delta = split_small_counts([96, 32, 20], outflow, outflow.sum(), stay3=0.6)
    n = np.array([96, 32, 20])[:, None] * rows
    assert n[0, 0] == pytest.approx(60.531974, abs=1e-5)
    assert n[0, 3] == pytest.approx(35.468026, abs=1e-5)
    assert n[1, 0] == pytest.approx(9.510658, abs=1e-5)
    assert n[1, 3] == pytest.approx(22.489342, abs=1e-5)
    assert n[2, 0] == pytest.approx(4.6240348, abs=1e-6)
    assert n[2, 3] == pytest.approx(12.0)
    assert n[2, 4:] == pytest.approx(outflow)
    assert n[:, [0, 3]].sum() + outflow.sum() == pytest.approx(148.0)
    assert delta == pytest.approx(0.1084, abs=1e-4)


def test_errors():
    with pytest.raises(ParameterError):
        invariant_matrix(np.eye(3), EXAMPLE_1, 0.5)
    with pytest.raises(ParameterError):
        invariant_matrix(np.eye(16), EXAMPLE_1, 1.5)
    with pytest.raises(InfeasibleError):
        split_small_counts([1, 0, 0], np.array([5.0]), 0.0)
