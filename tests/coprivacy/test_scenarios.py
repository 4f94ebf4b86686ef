"""The vehicular (§6) and fingerprinted-multicast (§7) scenarios of Domingo-Ferrer (2011)."""

from __future__ import annotations

import numpy as np
import pytest

from cli_words import sdckit
from sdckit.coprivacy import (
    check_multicast,
    check_vehicular,
    correlated_equilibrium,
    is_coprivate,
    multicast_forwarding_games,
    multicast_game,
    pure_nash,
    vehicular_forwarding_games,
    vehicular_game,
)
from sdckit.errors import ParameterError


def test_vehicular_payoffs_by_hand() -> None:
    game = vehicular_game(3, threshold=2, functionality=1.0, privacy_cost=2.0)
    # Two endorsers: credited, each loses 2 / 2; the silent one enjoys the alert.
    assert game.utility(game.profile_index(("announce", "announce", "silent"))) == (0.0, 0.0, 1.0)
    # One endorser: not credited, not published, nothing lost.
    assert game.utility(game.profile_index(("announce", "silent", "silent"))) == (0.0, 0.0, 0.0)
    assert game.utility(game.profile_index(("announce",) * 3)) == pytest.approx((1 / 3,) * 3)


@pytest.mark.parametrize("threshold", [2, 3, 4])
def test_credited_equilibria_have_exactly_threshold_endorsers(threshold: int) -> None:
    game = vehicular_game(6, threshold=threshold, functionality=1.5, privacy_cost=2.0)
    sizes = {p.count("announce") for p in pure_nash(game)}
    # functionality 1.5 > 2 / threshold: exactly t endorsers, or too few to credit anything
    # (t - 1 is no equilibrium: a silent vehicle gains 1.5 - 2 / t by joining).
    assert sizes == {*range(threshold - 1), threshold}
    # The best correlated equilibrium credits the alert with exactly t endorsers.
    best = correlated_equilibrium(game)
    assert {p.count("announce") for p, _ in best.support()} == {threshold}


def test_vehicular_coprivacy_is_general_and_needs_the_threshold() -> None:
    for t, f, expected in [(2, 1.0, True), (3, 0.7, True), (3, 0.6, False), (1, 5.0, False)]:
        privacy, general = vehicular_forwarding_games(
            threshold=t, functionality=f, privacy_cost=2.0
        )
        assert not is_coprivate(privacy).coprivate  # privacy alone: nobody endorses
        assert is_coprivate(general).coprivate is expected, (t, f)
    check = check_vehicular(threshold=1, functionality=5.0, privacy_cost=2.0)
    assert "does not hold" in check.summary().splitlines()[0]
    assert "with threshold 1 she never does" in check.summary()


def test_multicast_without_audit_has_no_pure_equilibrium_and_the_mixed_one_by_hand() -> None:
    params = dict(
        fingerprint_cost=1.0, detection=0.5, forwarder_penalty=10.0, receiver_penalty=10.0
    )
    game = multicast_game(**params, leak_gain=2.0)
    assert pure_nash(game) == []
    check = check_multicast(**params, leak_gain=2.0)
    (forwarder, receiver), *_ = check.mixed.equilibria
    # The receiver is indifferent when 2 = q * 0.5 * 10; the forwarder when 1 = l * 0.5 * 10.
    np.testing.assert_allclose(forwarder, [0.4, 0.6], atol=1e-9)
    np.testing.assert_allclose(receiver, [0.8, 0.2], atol=1e-9)
    audited = multicast_game(**params, leak_gain=2.0, audit=0.5, audit_penalty=4.0)
    assert pure_nash(audited) == [("fingerprint", "honest")]
    # An undeterred receiver leaks even fingerprinted content.
    assert pure_nash(multicast_game(**params, leak_gain=6.0)) == [("fingerprint", "leak")]


def test_multicast_forwarding_is_coprivate_only_when_fingerprinting_is_cheap() -> None:
    base = dict(
        detection=0.5,
        forwarder_penalty=10.0,
        receiver_penalty=10.0,
        leak_gain=2.0,
        unicast_cost=5.0,
        oblivion_loss=10.0,
    )
    for cost, audit, expected in [(4.0, 0.0, True), (6.0, 0.0, False), (6.0, 0.5, True)]:
        _, general = multicast_forwarding_games(
            fingerprint_cost=cost, audit=audit, audit_penalty=4.0, **base
        )
        # Coprivate iff cost <= audit x 4 + 0.5 x 10.
        assert is_coprivate(general).coprivate is expected, (cost, audit)


def test_scenarios_bad_input_and_cli(capsys) -> None:
    with pytest.raises(ParameterError, match="threshold 7 is larger than the number of vehicles"):
        vehicular_game(6, threshold=7, functionality=1.0, privacy_cost=1.0)
    with pytest.raises(ParameterError, match="detection must be a probability"):
        multicast_game(
            fingerprint_cost=1, detection=2, forwarder_penalty=1, receiver_penalty=1, leak_gain=1
        )
    assert sdckit("coprivacy vehicular --vehicles 5 --threshold 2") == 0
    assert "general coprivacy holds" in capsys.readouterr().out
    assert sdckit("coprivacy multicast --audit 0.5 4") == 0
    assert "(fingerprint, honest)" in capsys.readouterr().out
    assert sdckit("coprivacy vehicular --vehicles 30") == 2
    assert "n_vehicles must be at most 20" in capsys.readouterr().err
