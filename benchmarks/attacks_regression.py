"""Benchmark: the regression-attack battery against the floor of one bare least-squares fit per target.

Issue 25 target: the full battery over every record of a 10,000-record file
(one regression per target record and table row; the artificial outlier
and the strategic dummy; four quantile subsets: all, 0.5, 0.75, 0.9) within
3 times the time of one bare ``numpy.linalg.lstsq`` call per such
regression on a prebuilt n x 2 design (the floor: it builds no regressor
and reads off nothing). Both are timed in this run on this machine; the
ratio is the claim.

    .venv/bin/python benchmarks/attacks_regression.py          # 10,000 records
    .venv/bin/python benchmarks/attacks_regression.py --quick  # 2,000 records
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd

from sdckit.attacks import quantile_subsets, regression_attack

QUANTILES = (0.0, 0.5, 0.75, 0.9)
BACKGROUND = ["size", "state"]


def make_establishments(n: int, seed: int = 0) -> pd.DataFrame:
    """n establishments: integer employees (log-normal, many ties), 16 states, turnover."""
    rng = np.random.default_rng(seed)
    size = np.maximum(1, np.round(np.exp(rng.normal(2.5, 1.4, size=n)))).astype(float)
    state = rng.choice([f"s{i:02d}" for i in range(16)], size=n)
    turnover = size * np.exp(rng.normal(11.0, 0.6, size=n))
    return pd.DataFrame({"size": size, "state": state, "turnover": turnover})


def battery(data: pd.DataFrame) -> pd.DataFrame:
    """Both attacks, approximate size (δ = 0.025), the four subsets."""
    return regression_attack(
        data,
        sensitive="turnover",
        background=BACKGROUND,
        approx=0.025,
        quantiles=QUANTILES,
    ).table


def floor(data: pd.DataFrame, rows_per_subset: int) -> float:
    """One lstsq on a prebuilt n x 2 design per regression of the battery; returns seconds."""
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    for _, positions in quantile_subsets(data, "size", QUANTILES):
        y = data["turnover"].to_numpy()[positions]
        design = np.column_stack([np.ones(len(positions)), rng.normal(size=len(positions))])
        for _ in range(rows_per_subset * len(positions)):
            np.linalg.lstsq(design, y, rcond=None)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2,000 records instead of 10,000")
    args = parser.parse_args()
    n = 2_000 if args.quick else 10_000
    data = make_establishments(n)
    started = time.perf_counter()
    table = battery(data)
    ours = time.perf_counter() - started
    rows_per_subset = int((table["quantile"] == 0).sum())
    regressions = int(table["targets"].sum())
    base = floor(data, rows_per_subset)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(
        f"{n} records; {rows_per_subset} table rows x {len(QUANTILES)} subsets; {regressions} regressions"
    )
    print(f"battery (sdckit.attacks.regression_attack): {ours:.2f} s")
    print(f"floor (one numpy.linalg.lstsq per regression): {base:.2f} s")
    print(f"ratio battery / floor: {ours / base:.2f} (aim: <= 3)")
    shown = table[["quantile", "attack", "indicators", "N", "identified", "recovered"]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
