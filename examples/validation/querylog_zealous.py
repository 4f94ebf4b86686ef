"""Planted queries against semantic microaggregation and against ZEALOUS.

Götz, Machanavajjhala, Wang, Xiao & Gehrke (2012) show that k-anonymity of a
search log falls to an attacker who plants fake users, and propose ZEALOUS,
which releases query frequencies with differential privacy. On the AOL sample
(`../shared/data/aol_query_log_sample.csv`, 128 users) this script:

1. runs the planted-query attack (``sdckit.querylog.planted_query_attack``)
   against ``protect`` (Erola et al. 2011) for k = 3 and 5, on targets drawn
   at random among users with at least 4 distinct queries, the attacker
   knowing the first half of each target's distinct queries;
2. runs the same attacker against ``zealous`` (epsilon = 1, delta = 1e-5,
   m = 5), guessing for each hidden query of the target and as many decoys
   whether she asked it;
3. shows what ZEALOUS releases on the sample and on AOL-like synthetic logs of
   10^4 and 10^5 users (queries resampled from the sample, as
   ``benchmarks/querylog.py`` draws them).

    .venv/bin/python examples/validation/querylog_zealous.py --targets 30

``--zealous-seeds N`` prints only the attack on ZEALOUS, on the same targets, with
the attack's random stream seeded 0..N-1 (the noise ZEALOUS adds and the decoys
drawn): how far the share of right guesses moves with the random stream alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from pathlib import Path

import numpy as np

from sdckit.querylog import planted_query_attack, read_log, zealous
from sdckit.querylog.taxonomy import ODP239Taxonomy

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "querylog.py"


def targets(log, n: int, seed: int) -> list[str]:
    """Users with at least 4 distinct queries, ``n`` of them at random."""
    distinct = np.array(
        [len(np.unique(log.line_queries[log.line_users == u])) for u in range(log.n_users)]
    )
    eligible = log.user_ids[distinct >= 4]
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(eligible, size=min(n, len(eligible)), replace=False).tolist())


def zealous_spread(log, chosen: list[str], seeds: int) -> None:
    """The attack on ZEALOUS with the attack's random stream seeded 0..seeds-1."""
    print("| attack seed | guesses | right |")
    print("|---|---|---|")
    shares = []
    for seed in range(seeds):
        runs = [
            planted_query_attack(log, target=t, method="zealous", random_state=seed) for t in chosen
        ]
        tested = sum(r.n_claimed for r in runs)
        shares.append(sum(r.n_correct for r in runs) / tested)
        print(f"| {seed} | {tested:,} | {shares[-1]:.1%} |")
    spread = np.array(shares)
    print(
        f"\nover {seeds} seeds: mean {spread.mean():.1%}, range {spread.min():.1%} - "
        f"{spread.max():.1%}, sd {spread.std(ddof=1):.1%} (a coin: 50%, binomial sd of one "
        f"seed's share {np.sqrt(0.25 / tested):.1%}); the noise allows at most {runs[0].bound:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--targets", type=int, default=30, help="targets per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--zealous-seeds", type=int, default=0, help="only ZEALOUS, with attack seeds 0..N-1"
    )
    args = parser.parse_args()
    log = read_log(DATA / "aol_query_log_sample.csv")
    odp = ODP239Taxonomy(DATA / "odp239_taxonomy.csv")
    chosen = targets(log, args.targets, args.seed)
    print(f"AOL sample: {log.n_users} users, {log.n_lines:,} queries; {len(chosen)} targets\n")
    if args.zealous_seeds:
        zealous_spread(log, chosen, args.zealous_seeds)
        return

    print(
        "| protection | targets | grouped with the sybils | hidden queries revealed | claims true |"
    )
    print("|---|---|---|---|---|")
    for k in (3, 5):
        runs = [
            planted_query_attack(log, target=t, k=k, taxonomy=odp, random_state=args.seed)
            for t in chosen
        ]
        grouped = sum(bool(r.grouped_with_sybils) for r in runs)
        revealed = sum(r.n_correct for r in runs) / sum(r.n_hidden for r in runs)
        claims = sum(r.n_claimed for r in runs)
        true = sum(r.n_correct for r in runs) / claims if claims else float("nan")
        print(
            f"| semantic microaggregation, k = {k} | {len(runs)} | {grouped} | "
            f"{revealed:.1%} | {true:.1%} of {claims:,} |"
        )
    runs = [
        planted_query_attack(log, target=t, method="zealous", random_state=args.seed)
        for t in chosen
    ]
    tested = sum(r.n_claimed for r in runs)
    right = sum(r.n_correct for r in runs) / tested
    print(
        f"| ZEALOUS, epsilon = 1, delta = 1e-5, m = 5 | {len(runs)} | - | - "
        f"| {right:.1%} of {tested:,} guesses right (hidden queries and as many decoys: "
        f"a coin gets 50%, the noise allows at most {runs[0].bound:.1%}) |"
    )

    print("\n| log | users | epsilon | released queries | share of query lines covered |")
    print("|---|---|---|---|---|")
    spec = importlib.util.spec_from_file_location("bench_querylog", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    with tempfile.TemporaryDirectory() as tmp:
        logs = [("AOL sample", log)]
        for n in (10_000, 100_000):
            path = Path(tmp) / f"synthetic-{n}.csv"
            bench.synthetic_log(n, path, seed=args.seed)
            logs.append(("AOL-like synthetic", read_log(path)))
        for name, each in logs:
            for eps in (1.0, 5.0):
                r = zealous(each, epsilon=eps, random_state=args.seed)
                print(
                    f"| {name} | {each.n_users:,} | {eps:g} | {r.stats['n_released']:,} | "
                    f"{r.stats['line_share_released']:.1%} |"
                )


if __name__ == "__main__":
    main()
