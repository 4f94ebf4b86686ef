"""RWN by partitions against single-machine RWN: utility of random and spatial partitioning.

Perry, Matloff & Tendick (2022), §11.3, Method 3 masks each of u partitions
by the original method. This script masks 10^5 census-like records (income
depending on age and hours, generated here with a fixed seed) three ways,
with the same RWN parameters (k = 5, q = 1): on one machine
(:func:`sdckit.microdata.rwn`), by u = 10 random partitions and by u = 10
spatial partitions (:func:`sdckit.distributed.rwn_by_partition` on a local
Dask cluster of 2 workers). For each it prints the mean and largest absolute
difference of the correlation matrices of the numeric variables, the mean
confidence-interval overlap of the regression income ~ age + hours (Karr et
al. 2006), the median distance from an original record to the closest masked
record, and the mean absolute change of the scaled numeric values.

    .venv/bin/python examples/validation/distributed_rwn.py [--records 100000] [--partitions 10]
    .venv/bin/python examples/validation/distributed_rwn.py --records 1000000 --neighbors ivf

``--neighbors ivf`` (the inverted-file search of :mod:`sdckit.neighbors`,
approximate) replaces the exact search in all three releases, for 10^6
records, where the exact search is too slow for this shared machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.assess import compare_correlations, compare_regression, distance_to_closest
from sdckit.distributed import dask_client, rwn_by_partition
from sdckit.microdata import rwn

NUMERIC = ["age", "hours", "income"]


def census_like(n: int, seed: int) -> pd.DataFrame:
    """Person records: region, sex, tenure (categorical), age, hours, income."""
    rng = np.random.default_rng(seed)
    age = rng.integers(16, 90, size=n)
    hours = np.clip(rng.normal(35, 10, size=n) - 0.2 * np.maximum(age - 60, 0), 0, 80).round(1)
    log_income = 9 + 0.02 * np.minimum(age, 60) + 0.015 * hours + rng.normal(0, 0.4, size=n)
    return pd.DataFrame(
        {
            "region": rng.choice(["r1", "r2", "r3", "r4", "r5"], size=n),
            "sex": rng.choice(["female", "male"], size=n),
            "tenure": rng.choice(["own", "rent", "other"], size=n, p=[0.6, 0.35, 0.05]),
            "age": age,
            "hours": hours,
            "income": np.round(np.exp(log_income), 2),
        }
    )


def utility(original: pd.DataFrame, masked: pd.DataFrame) -> dict[str, float]:
    """The figures of the comparison for one release."""
    corr = compare_correlations(original, masked, columns=NUMERIC)
    reg = compare_regression(original, masked, "income", ["age", "hours"])
    dcr = distance_to_closest(original, masked, columns=NUMERIC, n_jobs=1)
    low, span = original[NUMERIC].min(), original[NUMERIC].max() - original[NUMERIC].min()
    change = ((masked[NUMERIC] - low) / span - (original[NUMERIC] - low) / span).abs()
    return {
        "corr. mean abs. diff.": corr.mean_abs_difference,
        "corr. max abs. diff.": corr.max_abs_difference,
        "regression CI overlap": reg.mean_ci_overlap,
        "median dist. original to masked": float(dcr.original_to_masked.median()),
        "mean abs. scaled change": float(change.to_numpy().mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2022)
    parser.add_argument(
        "--neighbors",
        default="exact",
        choices=["exact", "ivf", "hnsw"],
        help="RWN's neighbour search, the same in all three releases (ivf: approximate)",
    )
    args = parser.parse_args()
    data = census_like(args.records, args.seed)
    rows = {}
    started = time.perf_counter()
    single = rwn(data, k=5, q=1.0, random_state=args.seed, n_jobs=1, neighbors=args.neighbors)
    rows["single machine"] = utility(data, single.data)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "census"
        directory.mkdir()
        for i, chunk in enumerate(np.array_split(np.arange(len(data)), 8)):
            data.iloc[chunk].to_parquet(directory / f"part-{i}.parquet", index=False)
        with dask_client(n_workers=2, processes=False, dashboard_address=None):
            for partitioning in ("random", "spatial"):
                result = rwn_by_partition(
                    directory,
                    n_partitions=args.partitions,
                    partitioning=partitioning,
                    k=5,
                    q=1.0,
                    neighbors=args.neighbors,
                    random_state=args.seed,
                )
                assert result.data is not None
                rows[f"{args.partitions} {partitioning} partitions"] = utility(data, result.data)
    table = pd.DataFrame(rows).T
    print(
        f"RWN (k = 5, q = 1, {args.neighbors} neighbour search) of {args.records} census-like "
        f"records, seed {args.seed} ({time.perf_counter() - started:.0f} s, "
        f"{time.process_time():.0f} CPU s)"
    )
    print("| release | " + " | ".join(table.columns) + " |")
    print("|---|" + "---:|" * len(table.columns))
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in row) + " |")


if __name__ == "__main__":
    main()
