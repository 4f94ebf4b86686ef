"""The keyed perturbation: mean-preserving counts without 1 or 2, consistent by set of units."""

from __future__ import annotations

import numpy as np
import pytest
from server_fixtures import SECRET

from sdckit.errors import ParameterError
from sdckit.server.perturbation import Perturbation, count_noise_table


def test_released_count_distributions_keep_the_mean_and_never_show_one_or_two():
    for count, dist in count_noise_table(12).items():
        assert sum(dist.values()) == pytest.approx(1.0)
        assert sum(v * p for v, p in dist.items()) == pytest.approx(count)
        assert not {1, 2} & {v for v, p in dist.items() if p > 0}
        assert min(dist) >= 0
    assert count_noise_table()[0] == {0: 1.0}


def test_same_set_same_noise_and_one_unit_changes_it():
    keys = np.arange(1000, dtype=np.int64) * 13 + 5
    perturb = Perturbation(keys, SECRET)
    cells = np.arange(1000) % 4
    first = perturb.cell_counts(np.arange(1000), cells, 4)
    order = np.random.default_rng(0).permutation(1000)
    assert np.array_equal(perturb.cell_counts(order, cells[order], 4), first)
    assert np.array_equal(Perturbation(keys, SECRET).cell_counts(np.arange(1000), cells, 4), first)
    assert np.abs(first - np.bincount(cells)).max() <= 2
    # Over many sets that differ by one unit, the noises of the two are unrelated.
    rng = np.random.default_rng(1)
    same = 0
    for _ in range(300):
        members = np.sort(rng.choice(1000, 400, replace=False))
        a = perturb.count(members)
        b = perturb.count(members[1:])
        same += a - b == 1
    assert 0.15 < same / 300 < 0.4  # P(equal noises) = 0.26


def test_factors_and_weights():
    keys = np.arange(5000, dtype=np.int64)
    perturb = Perturbation(keys, SECRET, (0.05, 0.15))
    f = perturb.value_factors("wage", np.arange(5000))
    deviation = np.abs(f - 1.0)
    assert deviation.min() >= 0.05 and deviation.max() <= 0.15
    assert abs(f.mean() - 1.0) < 0.01
    assert np.array_equal(perturb.value_factors("wage", [7, 3]), f[[7, 3]])
    assert not np.array_equal(perturb.value_factors("hours", np.arange(50)), f[:50])
    w = perturb.weights(np.arange(100), released_count=103)
    assert w.sum() == pytest.approx(103.0)
    with pytest.raises(ParameterError, match="weight range"):
        Perturbation(keys, SECRET, (0.3, 0.1))
