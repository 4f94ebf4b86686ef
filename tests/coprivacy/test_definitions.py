"""Definitions 1-2 of Domingo-Ferrer (2011) on constructed forwarding games."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from sdckit.coprivacy import (
    ForwardingGame,
    delta_coprivacy,
    general_forwarding_game,
    is_coprivate,
    is_correlated_coprivate,
    is_mixed_coprivate,
    pure_nash,
)
from sdckit.errors import ParameterError


def _game(direct, helped, rejected, process, reject) -> ForwardingGame:
    return ForwardingGame(
        direct, np.array(helped), np.array(rejected), np.array(process), np.array(reject)
    )


# P^1 loses privacy submitting herself (0.2) and gains being helped (1.0); P2 gains by helping.
HELPFUL = _game(0.2, [1.0, 0.5], [0.2, 0.2], [0.3, -0.1], [0.0, 0.0])
# Nobody gains by helping: the request goes to the system player.
SELFISH = _game(0.2, [1.0, 1.0], [0.2, 0.2], [-0.1, -0.5], [0.0, 0.0])


def test_coprivate_when_the_best_helper_gains_by_helping() -> None:
    verdict = is_coprivate(HELPFUL)
    assert verdict.coprivate
    assert verdict.helpers == ("P2",)
    # P3 answers "reject" in the profile: the worse answer for P1, so she keeps asking P2.
    assert verdict.equilibrium == ("P2", "process", "reject")
    assert verdict.strength["P2"] == pytest.approx(0.8)
    assert "coprivate" in verdict.summary()


def test_not_coprivate_when_no_peer_gains_by_helping() -> None:
    verdict = is_coprivate(SELFISH)
    assert not verdict.coprivate
    assert verdict.equilibrium is None
    assert verdict.summary().startswith("not coprivate")
    assert ("P0", "reject", "reject") in pure_nash(SELFISH.to_game())


def test_closed_form_agrees_with_the_normal_form_on_random_games() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(1, 4))
        game = _game(
            float(rng.integers(-2, 3)),
            rng.integers(-2, 3, m),
            rng.integers(-2, 3, m),
            rng.integers(-2, 3, m),
            rng.integers(-2, 3, m),
        )
        verdict = is_coprivate(game)
        equilibria = pure_nash(game.to_game())
        helpers = {
            e[0] for e in equilibria if e[0] != "P0" and e[1 + game.peers.index(e[0])] == "process"
        }
        assert set(verdict.helpers) == helpers
        if verdict.equilibrium is not None:
            assert verdict.equilibrium in equilibria


def test_general_coprivacy_functionality_can_tip_the_verdict() -> None:
    functionality = _game(0.0, [0.0, 0.0], [0.0, 0.0], [0.5, 0.5], [0.0, 0.0])
    assert not is_coprivate(SELFISH).coprivate
    general = general_forwarding_game(SELFISH, functionality, weight=1.0)
    assert is_coprivate(general).helpers == ("P2", "P3")


def test_mixed_coprivacy_is_trivial_without_bounds_and_not_with_them() -> None:
    assert is_mixed_coprivate(SELFISH).coprivate  # Nash (1951): always, as the paper notes
    assert not is_mixed_coprivate(SELFISH, min_request=0.5, min_help=0.5).coprivate
    assert is_mixed_coprivate(HELPFUL, min_request=0.9, min_help=0.9).helpers == ("P2",)
    # A peer indifferent to helping may mix: P1 asks only if being helped often enough.
    indifferent = _game(0.5, [1.0], [0.0], [0.0], [0.0])
    assert is_mixed_coprivate(indifferent, min_request=1.0, min_help=0.5).coprivate
    # ... and not if she is not helped often enough to beat submitting herself.
    assert not is_mixed_coprivate(_game(0.6, [0.5], [0.0], [0.0], [0.0]), min_request=0.5).coprivate


def test_correlated_coprivacy_reaches_help_only_when_helping_is_an_equilibrium() -> None:
    assert is_correlated_coprivate(HELPFUL, min_help=0.99).helpers == ("P2",)
    strict = is_correlated_coprivate(SELFISH, min_help=0.01)
    assert not strict.coprivate
    assert max(strict.strength.values()) == pytest.approx(0.0, abs=1e-9)
    # Allowing an incentive epsilon to deviate lets some help happen: 0.1 / 0.5 of the time.
    relaxed = is_correlated_coprivate(SELFISH, epsilon=0.1, min_help=0.2)
    assert relaxed.strength["P3"] == pytest.approx(0.2, abs=1e-7)
    assert relaxed.strength["P2"] == pytest.approx(1.0)


def test_delta_coprivacy_estimates_a_known_probability() -> None:
    # Peer P2 helps when her prior leakage makes helping worth it: process ~ U(-1, 1) -> p = 1/2.
    def draw(rng: np.random.Generator) -> ForwardingGame:
        return _game(0.2, [1.0], [0.2], [rng.uniform(-1, 1)], [0.0])

    estimate = delta_coprivacy(draw, n_draws=2000, random_state=1)
    assert estimate.low < 0.5 < estimate.high
    assert estimate.high - estimate.low < 0.05
    assert estimate.at_least(0.3) == "yes"
    assert estimate.at_least(0.7) == "no"
    again = delta_coprivacy(draw, n_draws=2000, random_state=1)
    assert again.n_coprivate == estimate.n_coprivate
    mixed = delta_coprivacy(
        draw, n_draws=200, check=functools.partial(is_mixed_coprivate), random_state=2
    )
    assert mixed.probability == 1.0


def test_bad_forwarding_games_are_refused() -> None:
    with pytest.raises(ParameterError, match="rejected has 1 value"):
        _game(0.0, [1.0, 1.0], [0.0], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ParameterError, match="process must be finite: the value for peer 2 is nan"):
        _game(0.0, [1.0, 1.0], [0.0, 0.0], [0.0, np.nan], [0.0, 0.0])
    with pytest.raises(ParameterError, match="min_help"):
        is_correlated_coprivate(HELPFUL, min_help=0.0)
    with pytest.raises(ParameterError, match="n_draws"):
        delta_coprivacy(lambda rng: HELPFUL, n_draws=0)
    with pytest.raises(ParameterError, match="ForwardingGame"):
        is_coprivate("a game")  # type: ignore[arg-type]
