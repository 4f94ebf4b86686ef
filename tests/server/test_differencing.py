"""Differencing risk under Drop q: equation (5), the bounds (6) and the simulator (Lucero et al. 2011, Section 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sdckit.errors import ParameterError
from sdckit.server.differencing import simulate_differencing, xi, xi_bounds


def xi_by_enumeration(pi, k):
    """Equation (5) summed term by term."""
    total = 0.0
    for q in range(2, k + 1):
        for x in itertools.product(range(q + 1), repeat=len(pi)):
            if sum(x) != q:
                continue
            coef = math.factorial(q) / math.prod(math.factorial(v) for v in x)
            total += coef**2 * math.prod(p ** (2 * v) for p, v in zip(pi, x, strict=True))
    return total / (k - 1) ** 2


@pytest.mark.parametrize("k", [2, 3, 5, 7])
@pytest.mark.parametrize(
    "pi",
    [(0.25, 0.25, 0.25, 0.25), (0.6, 0.2, 0.15, 0.05), (0.5, 0.5), (0.1, 0.2, 0.3, 0.25, 0.15)],
)
def test_xi_matches_term_by_term_enumeration(pi, k):
    assert xi(pi, k) == pytest.approx(xi_by_enumeration(pi, k), rel=1e-12)


def test_bounds_hold_and_are_attained():
    rng = np.random.default_rng(0)
    for k in range(3, 8):
        for _ in range(50):
            pi = rng.dirichlet(np.full(4, 0.7))
            low, high = xi_bounds(4, k)
            assert low - 1e-15 <= xi(pi, k) <= high + 1e-15
        low, high = xi_bounds(4, k)
        assert xi([0.25] * 4, k) == pytest.approx(low)
        # A single populated cell: X = Y whenever q1 = q2, so xi = 1/(k-1).
        assert xi([1.0, 0.0, 0.0, 0.0], k) == pytest.approx(high)
        assert high == pytest.approx(1 / (k - 1))


def test_xi_decreases_with_k():
    pi = (0.45, 0.1, 0.35, 0.1)
    values = [xi(pi, k) for k in range(3, 8)]
    assert all(a > b for a, b in itertools.pairwise(values))


@pytest.mark.parametrize("k", [3, 5, 7])
def test_simulation_agrees_with_equation_5(k):
    counts = np.array([412, 87, 351, 128])  # n = 978, a 2 x 2 table
    sim = simulate_differencing(counts, target=1, k=k, trials=60_000, random_state=k)
    expected = xi(counts / counts.sum(), k)
    # (5) is a large-n approximation; at n = 978 it agrees to about two decimals.
    assert abs(sim.correct_rate - expected) < 5 * sim.correct_se + 0.005
    assert 0 < sim.apparent_wrong_rate < sim.correct_rate
    assert sim.precision > 0.5


def test_simulation_is_reproducible_and_validates():
    a = simulate_differencing([50, 50], 0, 4, trials=2000, random_state=1)
    b = simulate_differencing([50, 50], 0, 4, trials=2000, random_state=1)
    assert a == b
    with pytest.raises(ParameterError, match="target"):
        simulate_differencing([50, 0], 1, 4)
    with pytest.raises(ParameterError, match="k"):
        simulate_differencing([50, 50], 0, 1)
    with pytest.raises(ParameterError, match="sum to 1"):
        xi([0.5, 0.4], 3)
