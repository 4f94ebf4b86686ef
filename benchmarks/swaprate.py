"""Benchmark: Algorithm 1 (Kifer 2015) with Naive Bayes on 1,000,000 records x 8 categorical attributes.

Prints the time per EM iteration against the floor: one vectorised pass
computing log P(r | s) for every record under a fitted Naive Bayes model,
measured in the same run. Also reports the whole estimate (all starts, the
profile standard error, the identifiability check with its 199-permutation
association test) as a multiple of the floor, and the same without the
permutations (``permutations=0``: chi-square p-value).

Issue 30: the default re-swap calibration (two more estimates on the data
re-swapped at rho' = 0.05 and 0.1, without identifiability test and profile
SE) as a ratio to one estimate without it (``calibrate=False``), both timed
in the same run.

    .venv/bin/python benchmarks/swaprate.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from _timing import best_of

from sdckit.microdata import swap
from sdckit.swaprate import NaiveBayes, estimate_swap_count
from sdckit.swaprate.likelihood import change_probabilities, class_weights, scaled_densities

DOMAINS = (2, 3, 4, 5, 6, 8, 10, 12)


def make_data(n: int, seed: int) -> pd.DataFrame:
    """Naive Bayes data: s ~ Bernoulli(0.3), attribute j given s multinomial over DOMAINS[j] values."""
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.3).astype(np.int8)
    columns = {}
    for j, k in enumerate(DOMAINS):
        table = rng.dirichlet(np.ones(k) * 2, size=2)
        cdf = np.cumsum(table[s], axis=1)
        codes = np.minimum((rng.random(n)[:, None] > cdf).sum(axis=1), k - 1)
        columns[f"a{j}"] = pd.Categorical.from_codes(codes, [f"v{c}" for c in range(k)])
    columns["s"] = s
    return pd.DataFrame(columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100,000 records instead of 10^6")
    args = parser.parse_args()
    n = 100_000 if args.quick else 1_000_000
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    data = make_data(n, seed=1)
    released = swap(data, columns="s", rate=0.1, random_state=2)
    attrs = [f"a{j}" for j in range(len(DOMAINS))]
    print(
        f"data: {n} records x {len(attrs)} categorical attributes (domains {DOMAINS}); "
        f"true alpha = {released.alpha} (alpha/N = {released.alpha / n:.4f})"
    )

    model = NaiveBayes()
    frame = released.data
    records = model.encode(frame[attrs])
    s = frame["s"].to_numpy().astype(np.int8)
    w = np.ones(n)
    n1 = float(s.sum())
    n0 = n - n1
    t = np.full(n, 0.05)
    theta = model.fit(records, class_weights(t, s, w))

    # The floor: one vectorised pass computing log P(r | s) for all records.
    floor = best_of(lambda: model.log_likelihood(theta, records), 5)

    def em_step() -> None:
        parameters = model.fit(records, class_weights(t, s, w))  # M step
        _, p0, p1 = scaled_densities(model.log_likelihood(parameters, records))
        change_probabilities(0.05 * min(n0, n1), p0, p1, s, n0, n1)  # E step

    em = best_of(em_step, 5)

    start = time.perf_counter()
    est = estimate_swap_count(frame, "s", attrs, calibrate=False)
    total = time.perf_counter() - start
    per_step = total / est.em_iterations
    start = time.perf_counter()
    estimate_swap_count(frame, "s", attrs, permutations=0, calibrate=False)
    total_chi = time.perf_counter() - start
    start = time.perf_counter()
    calibrated = estimate_swap_count(frame, "s", attrs)
    total_calibrated = time.perf_counter() - start

    print(f"\nfloor (one P(r|s) pass over {n} records):            1.00")
    print(f"one EM iteration on all records / floor:              {em / floor:.2f}")
    print(f"full estimate per EM step (merged records) / floor:   {per_step / floor:.2f}")
    print(
        f"full estimate / floor:                                {total / floor:.1f} "
        f"({est.em_iterations} EM steps over {len(est.starts)} starts, profile SE and "
        f"identifiability check with {est.identifiability.permutations} permutations included)"
    )
    print(f"full estimate with permutations=0 / floor:            {total_chi / floor:.1f}")
    print(
        f"\ndefault estimate with re-swap calibration / one estimate without it: "
        f"{total_calibrated / total:.2f} (calibration rates "
        f"{calibrated.calibration.extra_rates}, response per swapped record "
        f"{calibrated.calibration.slope:.3f}; verdict {calibrated.verdict.code})"
    )
    print(f"verdict: {calibrated.verdict}")
    check = est.identifiability
    print(
        f"identifiability: identified {check.identified}, association G = "
        f"{check.association_statistic:.0f} (permutation p = {check.permutation_p_value:.3f}), "
        f"latent-class statistic {check.latent_class_statistic:.0f}"
    )
    print(
        f"\nestimate: alpha = {est.alpha:.1f} (SE {est.standard_error:.1f}), true {released.alpha}; "
        f"imbalance {est.imbalance:.5f}; converged {est.converged}"
    )
    print(
        f"(absolute, for the record only: floor {floor * 1e3:.1f} ms, EM iteration "
        f"{em * 1e3:.1f} ms, full estimate {total:.1f} s, with permutations=0 {total_chi:.1f} s, "
        f"with the calibration {total_calibrated:.1f} s)"
    )


if __name__ == "__main__":
    main()
