"""The two examples at the top of docs/swaprate.md, run as written; prints the verdict of each.

1. Where the method works: Kifer (2015) Section 5.1's Gaussian data (the
   Gaussian model is the true model), 500 known swaps.
2. Where it does not: the real Adult data, income swapped at rho = 0.05 by
   ``sdckit.microdata.swap`` (seed 1: alpha = 888), Naive Bayes on age,
   education and sex (a model that does not fit these data).
3. The misspecification example of the "Diagnostics" section: Algorithm 1 with
   {education, race} on the never-swapped Adult data (the truth is 0).

    .venv/bin/python examples/validation/swaprate_docs_examples.py [--seeds 20]

``--seeds N`` repeats example 1 with N seeds (data seed i, swap seed i + 1) and
counts the intervals that hold the true alpha (about 18 s a seed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.microdata import swap
from sdckit.swaprate import (
    estimate_swap_count,
    identifiability_check,
    imbalance_check,
    swap_group_count,
)

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"


def coverage(seeds: int) -> None:
    """Example 1 over ``seeds`` seeds: how many 95% intervals hold alpha = 500."""
    inside = 0
    for seed in range(1, seeds + 1):
        rng = np.random.default_rng(seed)
        s = np.repeat([0, 1], 5000)
        data = pd.DataFrame({"r": rng.normal(s, 1.0), "s": s})
        released = swap_group_count(data, "s", 500, random_state=seed + 1).data
        est = estimate_swap_count(released, "s", ["r"], model="gaussian")
        low, high = est.verdict.interval
        hit = low <= 500 <= high
        inside += hit
        print(
            f"seed {seed}: {est.verdict.code}, alpha {est.group_swap_count:,.0f}, "
            f"interval {low:,.0f} to {high:,.0f}, {'holds' if hit else 'misses'} 500"
        )
    print(f"example 1 over {seeds} seeds: {inside} of {seeds} intervals hold the true alpha = 500")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=0)
    if (seeds := parser.parse_args().seeds) > 0:
        coverage(seeds)
        return
    # Example 1 (docs/swaprate.md): the method works.
    rng = np.random.default_rng(1)
    s = np.repeat([0, 1], 5000)
    data = pd.DataFrame({"r": rng.normal(s, 1.0), "s": s})
    released = swap_group_count(data, "s", 500, random_state=2).data
    est = estimate_swap_count(released, "s", ["r"], model="gaussian")
    print("example 1, true alpha = 500")
    print(est.verdict)

    # Example 2 (docs/swaprate.md): the method does not work, and says so.
    adult = pd.read_csv(ADULT)
    result = swap(adult, columns="income", rate=0.05, random_state=1)
    est = estimate_swap_count(result.data, "income", ["age", "education", "sex"])
    print(f"\nexample 2, true alpha = {result.alpha}")
    print(est.verdict)

    # Example 3 (docs/swaprate.md, "Diagnostics"): identified, balanced, and wrong.
    est = estimate_swap_count(adult, "income", ["education", "race"])
    n = est.n0 + est.n1
    ident = identifiability_check(est)
    imb = imbalance_check(est)
    print("\nexample 3, never swapped (true alpha = 0), Naive Bayes on education, race")
    print(
        f"alpha/N = {est.group_swap_count / n:.3f} (SE {est.standard_error / n:.3f}), "
        f"imbalance {imb.imbalance:.3f}, identified {ident.identified} "
        f"(association statistic {ident.association_statistic:,.0f} on "
        f"{ident.degrees_of_freedom} degrees of freedom; gain over the latent-class "
        f"model {ident.latent_class_statistic:,.0f})"
    )


if __name__ == "__main__":
    main()
