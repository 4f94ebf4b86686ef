"""Equilibria of textbook games whose answers are known (Domingo-Ferrer (2011), §2-3)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sdckit.coprivacy import (
    Game,
    correlated_equilibrium,
    correlated_regret,
    dominant_strategies,
    mixed_equilibria,
    pareto_set,
    pure_nash,
)
from sdckit.errors import ParameterError

# Payoffs as (player, row strategy, column strategy).
PRISONERS = Game(
    np.array([[[-1, -3], [0, -2]], [[-1, 0], [-3, -2]]]),
    players=["A", "B"],
    strategies=[["silent", "confess"], ["silent", "confess"]],
)
PENNIES = Game(np.array([[[1, -1], [-1, 1]], [[-1, 1], [1, -1]]]))
SEXES = Game(np.array([[[3, 0], [0, 2]], [[2, 0], [0, 3]]]), strategies=[["opera", "football"]] * 2)
CHICKEN = Game(np.array([[[0, 7], [2, 6]], [[0, 2], [7, 6]]]), strategies=[["dare", "chicken"]] * 2)


def test_prisoners_dilemma_confess_is_strictly_dominant_and_the_only_equilibrium() -> None:
    assert pure_nash(PRISONERS) == [("confess", "confess")]
    dominant = dominant_strategies(PRISONERS)
    assert dominant.solution == ("confess", "confess")
    assert dominant.unique_equilibrium
    assert ("confess", "confess") not in pareto_set(PRISONERS)
    assert ("silent", "silent") in pareto_set(PRISONERS)
    mixed = mixed_equilibria(PRISONERS)
    assert len(mixed.equilibria) == 1
    np.testing.assert_allclose(mixed.equilibria[0][0], [0, 1])


def test_matching_pennies_has_only_the_half_half_mixed_equilibrium() -> None:
    assert pure_nash(PENNIES) == []
    mixed = mixed_equilibria(PENNIES)
    assert mixed.solver.startswith("nashpy")
    assert len(mixed.equilibria) == 1
    for probs in mixed.equilibria[0]:
        np.testing.assert_allclose(probs, [0.5, 0.5])
    assert mixed.payoffs[0] == pytest.approx((0.0, 0.0))
    assert dominant_strategies(PENNIES).solution is None


def test_battle_of_the_sexes_has_three_equilibria() -> None:
    assert pure_nash(SEXES) == [("opera", "opera"), ("football", "football")]
    mixed = mixed_equilibria(SEXES)
    assert mixed.complete and not mixed.degenerate
    assert len(mixed.equilibria) == 3
    interior = [eq for eq in mixed.equilibria if np.all(eq[0] > 0)]
    assert len(interior) == 1
    np.testing.assert_allclose(interior[0][0], [0.6, 0.4])
    np.testing.assert_allclose(interior[0][1], [0.4, 0.6])


def test_chickens_best_correlated_equilibrium_beats_its_mixed_one() -> None:
    mixed = mixed_equilibria(CHICKEN)
    symmetric = [
        pay for eq, pay in zip(mixed.equilibria, mixed.payoffs, strict=True) if np.all(eq[0] > 0)
    ]
    assert symmetric[0] == pytest.approx((14 / 3, 14 / 3))
    best = correlated_equilibrium(CHICKEN)
    assert best.welfare == pytest.approx(10.5)
    assert best.welfare > sum(symmetric[0]) + 1
    assert best.regret <= 1e-9
    assert best.distribution[0, 0] == pytest.approx(0.0, abs=1e-9)  # never (dare, dare)
    # Every Nash equilibrium is a correlated one: the pure ones have no regret.
    assert correlated_regret(CHICKEN, np.array([[0, 1], [0, 0]])) == 0.0
    # Recommending (chicken, chicken) always leaves each a gain of 1 by daring.
    assert correlated_regret(CHICKEN, np.array([[0, 0], [0, 1]])) == pytest.approx(1.0)


def test_epsilon_relaxes_the_correlated_programme() -> None:
    strict = correlated_equilibrium(PRISONERS)
    assert strict.welfare == pytest.approx(-4.0)
    relaxed = correlated_equilibrium(PRISONERS, epsilon=0.5)
    assert relaxed.welfare > strict.welfare
    assert relaxed.regret == pytest.approx(0.5, abs=1e-7)
    fair = correlated_equilibrium(SEXES, objective="egalitarian")
    assert fair.payoffs == pytest.approx((2.5, 2.5))
    assert "correlated equilibrium" in fair.summary()


def test_utility_functions_build_the_same_game_as_the_array() -> None:
    def u(i: int):
        return lambda s: float(SEXES.payoffs[(i, *SEXES.profile_index(s))])

    built = Game.from_utilities([u(0), u(1)], SEXES.strategies)
    np.testing.assert_array_equal(built.payoffs, SEXES.payoffs)


def test_three_player_pure_equilibria_match_a_loop() -> None:
    rng = np.random.default_rng(3)
    game = Game(rng.integers(0, 4, size=(3, 3, 4, 2)).astype(float))
    expected = []
    for s in np.ndindex(*game.shape):
        ok = True
        for i in range(3):
            for alt in range(game.shape[i]):
                t = list(s)
                t[i] = alt
                if game.payoffs[(i, *t)] > game.payoffs[(i, *s)]:
                    ok = False
        if ok:
            expected.append(game.profile_names(s))
    assert pure_nash(game) == expected


def test_game_is_frozen_and_pickles() -> None:
    with pytest.raises(ValueError):
        SEXES.payoffs[0, 0, 0] = 5
    again = pickle.loads(pickle.dumps(SEXES))
    np.testing.assert_array_equal(again.payoffs, SEXES.payoffs)
    assert "2 players" in SEXES.summary()


@pytest.mark.parametrize(
    ("payoffs", "kwargs", "message"),
    [
        (np.zeros((3, 2, 2)), {}, "first axis must have one entry per player"),
        (np.zeros(4), {}, "must have shape"),
        (
            np.array([[[0, np.nan], [0, 0]], [[0, 0], [0, 0]]]),
            {},
            "player P1 at profile (s1, s2) is nan",
        ),
        (
            np.array([[[0, 1], [0, 0]], [[0, 0], [np.inf, 0]]]),
            {},
            "player P2 at profile (s2, s1) is inf",
        ),
        (np.zeros((2, 2, 2)), {"players": ["a"]}, "players has 1 name(s)"),
        (
            np.zeros((2, 2, 2)),
            {"strategies": [["x", "y", "z"], ["x", "y"]]},
            "strategies of player P1",
        ),
        ("abc", {}, "numeric array"),
    ],
)
def test_bad_games_are_refused_in_one_line(payoffs, kwargs, message) -> None:
    with pytest.raises(ParameterError) as caught:
        Game(payoffs, **kwargs)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert "np.float64" not in str(caught.value)


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        correlated_equilibrium(SEXES, epsilon=-1)
    with pytest.raises(ParameterError, match="objective"):
        correlated_equilibrium(SEXES, objective="fairest")
    with pytest.raises(ParameterError, match="distribution"):
        correlated_regret(SEXES, np.array([1.0, 1.0, 0.0, 0.0]))
    with pytest.raises(ParameterError, match="no strategy 'ballet'"):
        SEXES.profile_index(("ballet", "opera"))


def test_three_player_mixed_equilibrium_through_pygambit() -> None:
    game = Game(np.random.default_rng(0).integers(0, 5, (3, 2, 2, 2)).astype(float))
    try:
        import pygambit  # noqa: F401
    except ImportError:
        # Without the 'games' extra the refusal is one clear line, not a crash.
        with pytest.raises(ParameterError, match="need pygambit"):
            mixed_equilibria(game)
        return
    found = mixed_equilibria(game)
    assert found.solver.startswith("pygambit")
    mix = found.equilibria[0]
    for i in range(3):
        # No pure deviation beats the equilibrium's expected utility.
        value = game.payoffs[i]
        for j in reversed(range(3)):
            if j != i:
                value = np.tensordot(value, mix[j], axes=([j], [0]))
        assert value.max() <= found.payoffs[0][i] + 1e-6
