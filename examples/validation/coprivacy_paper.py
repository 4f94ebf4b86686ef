"""Domingo-Ferrer (2011), "Coprivacy": Example 2, the N-player collapse, the P2P search on AOL users, δ.

    .venv/bin/python examples/validation/coprivacy_paper.py [--peers 128] [--rounds 200]

Prints markdown tables (docs/validation.md quotes them):

1. Example 2 (§5): the 2 x 2 matrix of PRF_2 utilities, the dominant
   strategy solution, the pure Nash equilibria (weak and strict).
2. The N-player game (the Pollution Game): dominant solution, equilibria,
   utility of all hiding vs all publishing, N = 2..6.
3. §4 on the AOL sample: the users are the peers, queries in time order,
   topics = exact query text and ODP239 level-1 categories; entropy vs the
   engine with and without the protocol, each peer's loss to the other
   peers, the share forwarded and δ (the share of forwarding situations in
   which (S_ik, T_ki) was a Nash equilibrium).
4. §5's protocols: tit-for-tat and reputation on a small-world graph, the
   ε of the ε-correlated equilibria they reach.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import networkx as nx
import pandas as pd

from sdckit.coprivacy import (
    disclosure_game,
    dominant_strategies,
    log_workload,
    pure_nash,
    repeated_disclosure,
    simulate_p2p,
)

LOG = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "aol_query_log_sample.csv"


def example_2() -> None:
    game = disclosure_game(2)
    print("### Example 2 (§5)\n\n| profile | u1 | u2 |\n|---|---|---|")
    for profile in (("H", "H"), ("H", "P"), ("P", "H"), ("P", "P")):
        u = game.utility(game.profile_index(profile))
        print(f"| ({', '.join(profile)}) | {u[0]:g} | {u[1]:g} |")
    dominant = dominant_strategies(game)
    print(f"\ndominant strategy solution: ({', '.join(dominant.solution or ())})")
    print(f"pure Nash equilibria (weak inequality, §2): {pure_nash(game)}")
    print(f"strict pure Nash equilibria: {pure_nash(game, strict=True)}\n")


def collapse(largest: int) -> None:
    print("### N-player disclosure game (Pollution Game)\n")
    print(
        "| N | dominant solution | pure equilibria | with 2+ publishers | u all hide | u all publish |"
    )
    print("|---|---|---|---|---|---|")
    for n in range(2, largest + 1):
        game = disclosure_game(n)
        equilibria = pure_nash(game)
        hide = game.utility(game.profile_index(("H",) * n))[0]
        publish = game.utility(game.profile_index(("P",) * n))[0]
        solution = "".join(dominant_strategies(game).solution or ())
        several = sum(p.count("P") >= 2 for p in equilibria)
        print(f"| {n} | {solution} | {len(equilibria)} | {several} | {hide:g} | {publish:g} |")
    print()


def p2p(peers: int | None) -> None:
    if not LOG.exists():
        print(f"{LOG} is not present: the P2P simulation on AOL users is skipped")
        return
    frame = pd.read_csv(LOG, dtype=str, keep_default_na=False)
    if peers is not None:
        frame = frame[frame["AnonID"].isin(frame["AnonID"].value_counts().index[:peers])]
    print("### P2P anonymous keyword search on the AOL users (§4), seed 1\n")
    print(
        "| topics | peers | queries | forwarded | δ | H vs engine without | H vs engine with | "
        "max share learned by one peer (mean, worst) | requests accepted |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for topics in ("query", "category"):
        result = simulate_p2p(log_workload(frame, topics=topics), random_state=1)
        p = result.per_peer
        print(
            f"| {topics} | {len(p)} | {len(result.outcomes):,} | {result.forwarded_share:.1%} | "
            f"{result.delta:.3f} | {p['entropy_alone'].mean():.3f} | "
            f"{p['entropy_vs_engine'].mean():.3f} | {p['max_share_learned_by_a_peer'].mean():.1%}, "
            f"{p['max_share_learned_by_a_peer'].max():.1%} | "
            f"{p['requests_accepted'].sum():,} of {p['requests_received'].sum():,} |"
        )
    print()


def protocols(rounds: int) -> None:
    graph = nx.watts_strogatz_graph(200, 6, 0.1, seed=1)
    print(
        f"### Tit-for-tat and reputation (§5), 200 users (Watts-Strogatz k=6, p=0.1), {rounds} rounds, seed 1\n"
    )
    print("| protocol | noise | share disclosing | mean utility | stage-game ε | repeated-game ε |")
    print("|---|---|---|---|---|---|")
    for protocol in ("tit_for_tat", "reputation"):
        for noise in (0.0, 0.05):
            play = repeated_disclosure(
                graph, protocol=protocol, rounds=rounds, noise=noise, random_state=1
            )
            print(
                f"| {protocol} | {noise:g} | {play.disclosure_rate.mean():.1%} | "
                f"{play.mean_payoff:.3f} | {play.stage_epsilon:.4f} | {play.repeated_epsilon:.4f} |"
            )
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peers", type=int, default=None, help="Most active AOL users kept.")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--largest", type=int, default=6)
    args = parser.parse_args()
    example_2()
    collapse(args.largest)
    p2p(args.peers)
    protocols(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
