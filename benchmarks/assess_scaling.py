"""Benchmark: assessing a masked release vs the RWN masking that produced it.

Issue 3 target: assessing a 100,000 x 10 pair of datasets (every measure
except the random-forest prediction check) takes at most 5 times as long as
the RWN masking (k = 5, q = 1) that produced the release. Both are timed in
this run on this machine; the ratio is the claim.

    .venv/bin/python benchmarks/assess_scaling.py          # 100,000 x 10
    .venv/bin/python benchmarks/assess_scaling.py --quick  # 20,000 x 10
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd

from sdckit import rwn
from sdckit.assess import assess


def make_data(n: int, seed: int = 0) -> pd.DataFrame:
    """n records x 10 columns: 7 continuous, an integer status, two categorical keys.

    The continuous variables are driven by three latent factors plus noise,
    as real measurements are (the bodyfat data of Perry, Matloff & Tendick 2022: PC1 alone explains
    60% of the variance); full-rank 10-dimensional Gaussian noise would be an
    unrealistic worst case for any exact neighbour search.
    """
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, 3))
    loadings = rng.normal(size=(3, 7))
    x = factors @ loadings + 0.3 * rng.normal(size=(n, 7))
    data = pd.DataFrame(x, columns=[f"v{j}" for j in range(7)])
    data["status"] = np.clip((factors[:, 0] + 1.5 + 0.5 * rng.normal(size=n)).astype(int), 0, 3)
    data["sex"] = rng.choice(["f", "m"], size=n)
    data["region"] = pd.Categorical(rng.choice(["north", "south", "east", "west"], size=n))
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20,000 records instead of 100,000")
    parser.add_argument("--repeats", type=int, default=3, help="timings per step (best is kept)")
    args = parser.parse_args()
    n = 20_000 if args.quick else 100_000
    data = make_data(n)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )
    print(
        f"data: {n:,} records x {data.shape[1]} columns (7 continuous from 3 latent factors, "
        "an integer status, 2 categorical keys)"
    )

    mask_times, assess_times = [], []
    for rep in range(args.repeats):
        t0 = time.perf_counter()
        result = rwn(data, k=5, q=1.0, random_state=rep)
        mask_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        a = assess(
            data,
            result,
            response="v0",
            keys=["sex", "region"],
            sensitive="status",
        )
        assess_times.append(time.perf_counter() - t0)
    masking, assessing = min(mask_times), min(assess_times)
    measured = [
        name
        for name, present in (
            ("correlations", a.utility.correlation),
            ("means/covariance ratio", a.utility.moments),
            ("PCA", a.utility.pca),
            ("regression + Cook's distance", a.utility.regression),
            ("mutual information", a.utility.mutual_information),
            ("Mahalanobis", a.risk.mahalanobis),
            ("distance to closest record (3 searches)", a.risk.distance_to_closest),
            ("record linkage", a.risk.linkage),
            ("interval disclosure", a.risk.interval),
            ("k-anonymity / l-diversity", a.risk.keys),
        )
        if present is not None
    ]
    print(f"measures: {', '.join(measured)}")
    print(f"RWN masking (k=5, q=1), best of {args.repeats}: {masking:.2f} s")
    print(f"assessment (all but the random forest), best of {args.repeats}: {assessing:.2f} s")
    ratio = assessing / masking
    print(
        f"ratio assessment / masking: {ratio:.2f}x (target <= 5x): "
        f"{'met' if ratio <= 5 else 'NOT met'}"
    )
    print(
        f"linkage rate {a.risk.linkage.rate:.4f}, mean |corr diff| "
        f"{a.utility.correlation.mean_abs_difference:.4f}"
    )


if __name__ == "__main__":
    main()
