"""Identifiability of the swap count (our addition to Kifer 2015, Section 4.1).

When the attributes carry no information about the swap attribute, Algorithm 1
fits latent classes among the attributes and reports a confident alpha near
alpha* = n0 n1 / N. ``SwapCountEstimate.identifiability`` (an association test
with a permutation p-value, and the gain over the latent-class model at
alpha*) must flag those estimates and leave informative ones alone. Three
experiments:

1. **Placebo on real attributes.** A "swap attribute" drawn independently of
   everything (Bernoulli(0.4), never swapped) beside the Adult attributes of
   Section 5.3 (rL, rR, both, and {education, race}). The truth is "not
   identified"; we report Algorithm 1's alpha/N and profile SE, how often the
   old verdict (alpha > 2 SE, small imbalance) would have reported swapping, and
   how often the check flags the estimate.
2. **Size of the association test.** Synthetic null data, N = 1000, s
   independent of the attributes: (a) four binary attributes sharing a latent
   cluster (P(a) = 0.75 or 0.25), (b) eight sharing a stronger one (0.9 or
   0.1), (c) one lognormal attribute. Naive Bayes is wrong under the null in
   all three (correlated attributes; a non-normal margin). Rejection rate at
   0.05 of the chi-square p-value and of the permutation p-value (a fresh
   permutation seed per data set), and how often the estimate is flagged.
3. **Informative attributes are not flagged.** Adult income with the same
   attribute sets at alpha/N = 0, 0.05, 0.1 (alpha pairs swapped, Section 2),
   and Section 5.1's Gaussian data (N = 10,000) at alpha/N = 0, 0.1, 0.2.

    .venv/bin/python examples/validation/swaprate_identifiability.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.swaprate import estimate_swap_count, imbalance_check, swap_group_count

sys.path.insert(0, str(Path(__file__).resolve().parent))
from swaprate_adult import LEFT, RIGHT, load_adult

SETS = {
    "rL": LEFT,
    "rR": RIGHT,
    "rL + rR": [*LEFT, *RIGHT],
    "{education, race}": ["education", "race"],
}


def clustered_null(
    n: int, rng: np.random.Generator, k: int = 4, strength: float = 0.75
) -> pd.DataFrame:
    cluster = rng.random(n) < 0.5
    p = np.where(cluster, strength, 1 - strength)
    columns = {f"x{j}": np.where(rng.random(n) < p, "a", "b") for j in range(k)}
    columns["s"] = (rng.random(n) < 0.4).astype(int)
    return pd.DataFrame(columns)


def lognormal_null(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"x": rng.lognormal(0.0, 1.0, n), "s": (rng.random(n) < 0.4).astype(int)})


def placebo(adult: pd.DataFrame, runs: int) -> None:
    print(f"1. Placebo swap attribute beside the Adult attributes (N = {len(adult)}), {runs} draws")
    print(
        "| attributes | mean alpha/N | median SE/N | old verdict 'swapped' | imbalance > 0.01 "
        "| flagged not identified |"
    )
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(20260)
    for name, attrs in SETS.items():
        rates, ses, claimed, large, flagged = [], [], 0, 0, 0
        for _ in range(runs):
            data = adult.assign(placebo=(rng.random(len(adult)) < 0.4).astype(int))
            est = estimate_swap_count(data, "placebo", attrs, calibrate=False)
            rates.append(est.alpha / est.n)
            ses.append(est.standard_error / est.n)
            is_large = imbalance_check(est).large
            large += is_large
            claimed += (est.alpha > 2 * est.standard_error) and not is_large
            flagged += not est.identified
        print(
            f"| {name} | {np.mean(rates):.4f} | {np.median(ses):.4f} | {claimed}/{runs} "
            f"| {large}/{runs} | {flagged}/{runs} |"
        )


def size(runs: int) -> None:
    print(f"\n2. Association test under the null (N = 1000), {runs} data sets each")
    print("| null data | chi-square rejects | permutation rejects | flagged not identified |")
    print("|---|---|---|---|")
    designs = {
        "(a) 4 binary, cluster 0.75": lambda rng: clustered_null(1000, rng),
        "(b) 8 binary, cluster 0.9": lambda rng: clustered_null(1000, rng, 8, 0.9),
        "(c) 1 lognormal": lambda rng: lognormal_null(1000, rng),
    }
    for name, draw in designs.items():
        rng = np.random.default_rng(7)
        chi = perm = flagged = 0
        for i in range(runs):
            est = estimate_swap_count(
                draw(rng), "s", profile_se=False, random_state=i, calibrate=False
            )
            check = est.identifiability
            chi += check.asymptotic_p_value < 0.05
            perm += check.permutation_p_value < 0.05
            flagged += not est.identified
        print(f"| {name} | {chi / runs:.3f} | {perm / runs:.3f} | {flagged}/{runs} |")


def informative(adult: pd.DataFrame) -> None:
    print("\n3. Informative attributes")
    print(
        "| data | attributes | alpha/N | alpha_hat/N | association G | latent-class stat | identified |"
    )
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(11)
    for rate in (0.0, 0.05, 0.1):
        alpha = round(rate * len(adult))
        released = (
            swap_group_count(adult, "income", alpha, random_state=rng).data if alpha else adult
        )
        for name, attrs in SETS.items():
            est = estimate_swap_count(released, "income", attrs, profile_se=False, calibrate=False)
            check = est.identifiability
            print(
                f"| Adult income | {name} | {rate:g} | {est.alpha / est.n:.4f} "
                f"| {check.association_statistic:.0f} | {check.latent_class_statistic:.0f} "
                f"| {est.identified} |"
            )
    n = 10000
    s = np.repeat([0, 1], [n // 2, n // 2])
    for rate in (0.0, 0.1, 0.2):
        data = pd.DataFrame({"r": rng.normal(s.astype(float), 1.0), "s": s})
        alpha = round(rate * n)
        released = swap_group_count(data, "s", alpha, random_state=rng).data if alpha else data
        est = estimate_swap_count(
            released, "s", ["r"], model="gaussian", profile_se=False, calibrate=False
        )
        check = est.identifiability
        print(
            f"| Gaussian 5.1 | r | {rate:g} | {est.alpha / est.n:.4f} "
            f"| {check.association_statistic:.0f} | {check.latent_class_statistic:.0f} "
            f"| {est.identified} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Fewer repetitions.")
    args = parser.parse_args()
    adult = load_adult()
    placebo(adult, 3 if args.quick else 20)
    size(30 if args.quick else 200)
    informative(adult)


if __name__ == "__main__":
    main()
