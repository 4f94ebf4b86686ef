"""Domingo-Ferrer (2011), §6-7: the vehicular and fingerprinted-multicast scenarios, checked.

The paper states its claims on these scenarios in words only; sdckit models
them (``sdckit.coprivacy.scenarios``, assumptions in its docstring and in
docs/coprivacy.md) and this script checks them with the game machinery:

1. vehicular networks: pure equilibria of the N-vehicle endorsement game
   (how many announce) and Definition 1's verdict, privacy alone and
   general, over a grid of thresholds and functionality values;
2. general δ-coprivacy (Definition 2) by Monte Carlo when functionality is
   drawn uniformly in [0, 1] (privacy cost 1), beside the closed form the
   model implies, 1 - 1/max(t, 2) for t >= 2 and 0 for t = 1;
3. fingerprinted multicast: pure and mixed equilibria of the forwarder-receiver
   game with and without an audit, and δ when the fingerprinting cost is
   uniform in [0, 10] (closed form: P(cost <= audit x penalty + 0.5 x 10)).

    .venv/bin/python examples/validation/coprivacy_scenarios.py [--draws 2000]
"""

from __future__ import annotations

import argparse

from sdckit.coprivacy import (
    check_multicast,
    delta_coprivacy,
    is_coprivate,
    multicast_forwarding_games,
    pure_nash,
    vehicular_forwarding_games,
    vehicular_game,
)

MULTICAST = {
    "detection": 0.5,
    "forwarder_penalty": 10.0,
    "receiver_penalty": 10.0,
    "leak_gain": 2.0,
    "unicast_cost": 5.0,
    "oblivion_loss": 10.0,
}


def vehicular_table() -> None:
    print(
        "| vehicles | threshold | functionality | announcers in pure equilibria | Def. 1, privacy "
        "alone | general coprivacy |"
    )
    print("|---|---|---|---|---|---|")
    for threshold in (1, 2, 3, 4):
        for functionality in (0.3, 0.6, 1.2):
            game = vehicular_game(
                6, threshold=threshold, functionality=functionality, privacy_cost=1.0
            )
            sizes = sorted({p.count("announce") for p in pure_nash(game)})
            privacy, general = vehicular_forwarding_games(
                threshold=threshold, functionality=functionality, privacy_cost=1.0
            )
            print(
                f"| 6 | {threshold} | {functionality:g} | {', '.join(map(str, sizes))} | "
                f"{'yes' if is_coprivate(privacy).coprivate else 'no'} | "
                f"{'yes' if is_coprivate(general).coprivate else 'no'} |"
            )


def vehicular_delta(draws: int, seed: int) -> None:
    print("\n| threshold | general δ (Monte Carlo) | 95% interval | closed form |")
    print("|---|---|---|---|")
    for threshold in (1, 2, 3, 5):

        def draw(rng, t=threshold):
            return vehicular_forwarding_games(
                threshold=t, functionality=float(rng.uniform(0, 1)), privacy_cost=1.0
            )[1]

        found = delta_coprivacy(draw, n_draws=draws, random_state=seed)
        exact = 0.0 if threshold == 1 else 1 - 1 / max(threshold, 2)
        print(
            f"| {threshold} | {found.probability:.3f} | [{found.low:.3f}, {found.high:.3f}] "
            f"| {exact:.3f} |"
        )


def multicast(draws: int, seed: int) -> None:
    print()
    for audit, penalty in ((0.0, 0.0), (0.5, 4.0)):
        check = check_multicast(
            fingerprint_cost=1.0, audit=audit, audit_penalty=penalty, **MULTICAST
        )
        print(f"audit {audit:g}, audit penalty {penalty:g}:")
        print("\n".join("  " + line for line in check.summary().splitlines()[2:4]))
    print("\n| audit x penalty | general δ (Monte Carlo) | 95% interval | closed form |")
    print("|---|---|---|---|")
    for audit, penalty in ((0.0, 0.0), (0.5, 4.0)):

        def draw(rng, a=audit, q=penalty):
            return multicast_forwarding_games(
                fingerprint_cost=float(rng.uniform(0, 10)),
                audit=a,
                audit_penalty=q,
                **MULTICAST,
            )[1]

        found = delta_coprivacy(draw, n_draws=draws, random_state=seed)
        exact = min(1.0, (audit * penalty + 0.5 * 10.0) / 10.0)
        print(
            f"| {audit * penalty:g} | {found.probability:.3f} | [{found.low:.3f}, "
            f"{found.high:.3f}] | {exact:.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("Vehicular networks (§6), privacy cost 1:\n")
    vehicular_table()
    vehicular_delta(args.draws, args.seed)
    print("\nFingerprinted multicast (§7):")
    multicast(args.draws, args.seed)


if __name__ == "__main__":
    main()
