"""The social-network game of Domingo-Ferrer (2011), §5: Example 2, the collapse, the protocols."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from sdckit.coprivacy import (
    correlated_equilibrium,
    disclosure_game,
    dominant_strategies,
    pareto_set,
    prf2,
    privacy_functionality,
    privacy_scores,
    pure_nash,
    repeated_disclosure,
)
from sdckit.errors import ParameterError


def test_example_2_payoffs_exactly_as_printed() -> None:
    game = disclosure_game(2)
    u = {
        profile: game.utility(game.profile_index(profile))
        for profile in [("H", "H"), ("H", "P"), ("P", "H"), ("P", "P")]
    }
    assert u[("H", "H")] == (0.0, 0.0)
    assert u[("H", "P")] == (1.0, 0.0)
    assert u[("P", "H")] == (0.0, 1.0)
    assert u[("P", "P")] == (0.5, 0.5)


def test_example_2_hiding_is_dominant_and_the_only_dominant_solution() -> None:
    game = disclosure_game(2)
    dominant = dominant_strategies(game)
    assert dominant.solution == ("H", "H")
    assert dominant.weak == {"user1": ("H",), "user2": ("H",)}
    assert not dominant.unique_equilibrium  # weakly, not strictly: u1(H, H) = u1(P, H) = 0
    # With the paper's weak inequality, the profiles where one user publishes and gets 0
    # either way are equilibria too; (H, H) is the only one in dominant strategies.
    assert pure_nash(game) == [("H", "H"), ("H", "P"), ("P", "H")]
    assert ("P", "P") not in pure_nash(game)
    assert ("P", "P") in pareto_set(game) and ("H", "H") not in pareto_set(game)


@pytest.mark.parametrize("n_users", [3, 4, 5])
def test_the_n_player_game_collapses_to_nobody_publishing(n_users: int) -> None:
    game = disclosure_game(n_users)
    assert dominant_strategies(game).solution == ("H",) * n_users
    everybody = game.utility(game.profile_index(("P",) * n_users))
    assert everybody == pytest.approx((0.5 * (n_users - 1),) * n_users)
    assert all(v == 0 for v in game.utility(game.profile_index(("H",) * n_users)))
    # No equilibrium has two publishers: each would rather hide.
    assert all(profile.count("P") <= 1 for profile in pure_nash(game))


def test_two_attributes_and_prf2_agree_with_the_game() -> None:
    game = disclosure_game(3, [1.0, 2.0])
    profile = ("PH", "HP", "PP")
    disclosed = np.array([[1, 0], [0, 1], [1, 1]])
    np.testing.assert_allclose(
        game.utility(game.profile_index(profile)), prf2(disclosed, [1.0, 2.0])
    )
    np.testing.assert_allclose(prf2(disclosed, [1.0, 2.0]), [5 / 2, 4 / 3, 3 / 4])


def test_prf_on_a_path_graph_counts_only_users_within_reach() -> None:
    graph = nx.path_graph(3)  # 0 - 1 - 2
    visibility = np.ones((3, 1, 2))  # one attribute, visible at distances 1 and 2
    beta = np.array([[1.0, 0.5]])
    np.testing.assert_allclose(privacy_scores(visibility, beta), [1.5, 1.5, 1.5])
    # User 0 sees user 1 at distance 1 (beta 1) and user 2 at distance 2 (beta 0.5).
    np.testing.assert_allclose(
        privacy_functionality(graph, visibility, beta), [1.5 / 2.5, 2 / 2.5, 1.5 / 2.5]
    )
    with pytest.raises(ParameterError, match="must agree"):
        privacy_scores(visibility, np.ones((2, 2)))


def test_correlation_cannot_buy_mutual_disclosure_but_epsilon_can() -> None:
    game = disclosure_game(2)
    exact = correlated_equilibrium(game)
    assert exact.distribution[1, 1] == pytest.approx(0.0, abs=1e-9)
    # A user told to publish gains p(P, P) * (1 - 1/2) by hiding: at most epsilon.
    mutual = np.array([[0.0, 0.0], [0.0, 1.0]])
    relaxed = correlated_equilibrium(game, epsilon=0.25, objective=mutual)
    assert relaxed.distribution[1, 1] == pytest.approx(0.5)
    assert relaxed.regret == pytest.approx(0.25)


def test_tit_for_tat_sustains_disclosure_and_a_deviation_gains_little() -> None:
    graph = nx.cycle_graph(30)
    play = repeated_disclosure(graph, protocol="tit_for_tat", rounds=100, random_state=0)
    assert play.disclosure_rate.min() == 1.0
    assert play.mean_payoff == pytest.approx(0.5)
    assert play.stage_epsilon == pytest.approx(0.5)  # one-shot temptation: 1 - 1/2
    assert play.deviation_gains["always_hide"] < 0
    assert play.repeated_epsilon == pytest.approx(0.5 / 100)  # only the last round pays
    again = repeated_disclosure(
        graph, protocol="tit_for_tat", rounds=100, noise=0.1, random_state=3
    )
    assert np.array_equal(
        again.disclosure_rate,
        repeated_disclosure(
            graph, protocol="tit_for_tat", rounds=100, noise=0.1, random_state=3
        ).disclosure_rate,
    )
    assert "tit_for_tat" in again.summary()


def test_reputation_punishes_a_user_who_always_hides() -> None:
    graph = nx.complete_graph(8)
    play = repeated_disclosure(graph, protocol="reputation", rounds=50, noise=0.02, random_state=1)
    assert play.disclosure_rate.mean() > 0.9
    assert play.deviation_gains["always_hide"] < -0.3


def test_bad_parameters_of_the_social_game() -> None:
    with pytest.raises(ParameterError, match="protocol"):
        repeated_disclosure(nx.path_graph(2), protocol="grim")
    with pytest.raises(ParameterError, match="at least one edge"):
        repeated_disclosure(nx.empty_graph(3))
    with pytest.raises(ParameterError, match="n_users"):
        disclosure_game(1)
    with pytest.raises(ParameterError, match="noise"):
        repeated_disclosure(nx.path_graph(2), noise=2)
