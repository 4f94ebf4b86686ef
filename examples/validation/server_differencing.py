"""Differencing risk under Drop q: equation (5) against simulation, and the bounds (6).

Lucero et al. (2011), Section 4: for a pair of 2 x 2 tables over
U(n) and U(n-1), n = 978, k = 3..7, the paper reports that equation (5)
"generally agrees with the empirical probability of a disclosure to two
decimal places". The paper's CPS March 2000 table is not published, so we use
a gender x employment-status table of n = 978 with unequal cells, plus the
equal-proportion table that attains the lower bound of (6).

Three numbers per k:

* xi(5): equation (5), computed exactly (generating-function recursion);
* "sim": the differencing attack simulated with independent
  multivariate-hypergeometric Drop q draws (sdckit.server.simulate_differencing);
* "Drop q": the attack run against the server's actual keyed-hash Drop q
  (sdckit.server.DropQ) on 978 units, a fresh server secret per trial - what
  an intruder faces across deployments whose secret she does not know.

Run:  .venv/bin/python examples/validation/server_differencing.py [--quick]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from _shared import differencing_population, differencing_verdict

from sdckit.server import DropQ, simulate_differencing
from sdckit.server.differencing import xi, xi_bounds

TABLES = {
    # rows: male, female; columns: employed, unemployed
    "unequal (412, 87 / 351, 128)": np.array([412, 87, 351, 128]),
    "near-equal (245, 244 / 245, 244)": np.array([245, 244, 245, 244]),
}
TARGET = 1  # the target unit is an unemployed man


def attack_real_dropq(counts: np.ndarray, k: int, trials: int, seed: int) -> tuple[float, float]:
    """Correct and apparent-but-wrong rates against the keyed-hash Drop q, fresh secret per trial."""
    rng, cells, keys, everyone, without_target = differencing_population(counts, TARGET, seed)
    correct = wrong = 0
    for _ in range(trials):
        dropq = DropQ(keys, rng.bytes(32), k)
        kept_n = dropq.subsample(everyone).kept
        kept_n1 = dropq.subsample(without_target).kept
        table_n = np.bincount(cells[kept_n], minlength=counts.size)
        table_n1 = np.bincount(cells[kept_n1], minlength=counts.size)
        diff = table_n - table_n1
        right, mistaken = differencing_verdict(diff, TARGET)
        correct, wrong = correct + right, wrong + mistaken
    return correct / trials, wrong / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials (about 10 s)")
    args = parser.parse_args()
    sim_trials = 50_000 if args.quick else 400_000
    real_trials = 2_000 if args.quick else 20_000
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(
        f"hypergeometric trials per k: {sim_trials}; keyed-hash Drop q trials per k: {real_trials}"
    )
    for name, counts in TABLES.items():
        pi = counts / counts.sum()
        print(f"\n2 x 2 table {name}, n = {counts.sum()}, target cell {TARGET}")
        print(
            "| k | xi (5) | sim correct | sim apparent-wrong | Drop q correct | "
            "Drop q apparent-wrong | lower (6) | upper (6) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        gaps_sim, gaps_real, outside, at_k5 = [], [], 0, None
        for k in range(3, 8):
            sim = simulate_differencing(counts, TARGET, k, trials=sim_trials, random_state=100 + k)
            real_correct, real_wrong = attack_real_dropq(counts, k, real_trials, seed=200 + k)
            low, high = xi_bounds(counts.size, k)
            value = xi(pi, k)
            print(
                f"| {k} | {value:.4f} | {sim.correct_rate:.4f} | {sim.apparent_wrong_rate:.4f} "
                f"| {real_correct:.4f} | {real_wrong:.4f} | {low:.4f} | {high:.4f} |"
            )
            gaps_sim.append(abs(value - sim.correct_rate))
            # binomial standard error of the real attack's correct rate
            se = max(np.sqrt(value * (1 - value) / real_trials), 1e-12)
            gaps_real.append(abs(value - real_correct) / se)
            outside += not (low - 1e-12 <= value <= high + 1e-12)
            if k == 5:
                at_k5 = (real_correct, real_wrong)
        print(
            f"\nEquation (5) against the simulator: largest gap {max(gaps_sim):.4f}; against the "
            f"keyed-hash Drop q: largest gap {max(gaps_real):.1f} standard errors; values outside "
            f"the bounds (6): {outside}."
        )
        if at_k5 is not None:
            right, wrong = at_k5
            share = right / (right + wrong) if right + wrong else float("nan")
            print(
                f"At k = 5 (the server's default) the attack on the real Drop q is right "
                f"{right:.1%} of the time and clean-looking but wrong {wrong:.1%}: a clean "
                f"difference is right {share:.0%} of the time."
            )


if __name__ == "__main__":
    main()
