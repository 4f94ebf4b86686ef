"""Scoring the differencing battery as the intruder can know it, over fresh server secrets (issue 25).

The end-to-end test's data (500 firms, two of them the only northern firm
of their size bin; ``tests/attacks/planted_firms.py``) served by sdckit's
AnalysisServer with its default rules, a fresh random secret per run, and
attacked by ``server_attack`` as ``sdckit attack server`` runs it in the
test (2 targets, 4 padded pairs, seed = run). Per run: whether any attack
*learned* a value (two distinct estimates agree within 0.5% and within 1%
of the truth) and whether any single estimate fell within 1% (the oracle's
view, which the old scoring called "recovered"); for the regression
intercept, the median relative error of its estimates and the share of
them within 1%.

Run:  .venv/bin/python examples/validation/attacks_scoring.py --runs 200
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "attacks"))

from planted_firms import service_firms

from sdckit.attacks import RECOVERY_TOLERANCE, LibraryServer, server_attack
from sdckit.server import AnalysisServer, generate_secret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="fresh server secrets")
    args = parser.parse_args()
    data, metadata = service_firms()
    learned = oracle = 0
    intercept_errors: list[float] = []
    within = []
    for run in range(args.runs):
        server = LibraryServer(AnalysisServer(data, metadata, secret=generate_secret()))
        result = server_attack(
            data, target=server, sensitive="turnover", max_targets=2, padding_pairs=4,
            random_state=run,
        )  # fmt: skip
        table = result.table.set_index("attack")
        learned += bool((table["learned"] > 0).any())
        oracle += bool((table["oracle_recovered"] > 0).any())
        intercept_errors.append(float(table.loc["regression intercept", "median_error"]))
        within.append(float(table.loc["regression intercept", "oracle_recovered"]))
    errors = np.asarray(intercept_errors)
    errors = errors[np.isfinite(errors)]
    print(f"{args.runs} server secrets, 2 targets each:")
    print(f"  runs in which an attack learned a value (agreeing estimates): {learned}")
    print(f"  runs with a single estimate within {RECOVERY_TOLERANCE:.0%} (oracle view): {oracle}")
    print(
        f"  regression intercept: median relative error per run, median {np.median(errors):.2f},"
        f" min {errors.min():.2f}; share of targets with an estimate within"
        f" {RECOVERY_TOLERANCE:.0%}: {np.mean(within):.4f}"
    )


if __name__ == "__main__":
    main()
