"""RWN's neighbourhood strategies for large files: utility and risk side by side (issue 17).

On n records (default 10^5) of the benchmark's latent-factor microdata (3
latent factors, 10 variables, four of them discrete: ``make_data("factor")``
of ``benchmarks/rwn_scaling.py``), RWN with k = 10, q = 1 and each
neighbourhood strategy — exact, faiss HNSW and IVF (approximate), Method 1
(a fixed sample of m = 10,000 records, and a fresh sample of m = 400 per
record) and Method 2 (n·m/2 random pairs, m = 64) of Perry, Matloff &
Tendick (2022), Section 11 — then, with ``sdckit.assess`` (all exact searches):

* utility: the mean absolute correlation difference over the 45 pairs, and
  the mean confidence-interval overlap (Karr et al. 2006) of the regression
  of x9 on x0..x8;
* risk: the distance from each original record to the closest masked record
  (median and 5th percentile; an intruder holding a record's true values
  finds a candidate this close), and the share of original records whose
  closest masked record is their own row;
* the recall@10 and k-th-neighbour distance ratio RWN measured, and the time.

    .venv/bin/python examples/validation/rwn_large_files.py [--n 100000] [--seed 1] [--only ivf]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit import rwn
from sdckit.assess import compare_correlations, compare_regression, distance_to_closest
from sdckit.neighbors import SampleBackend
from sdckit.neighbors.search import nearest_records
from sdckit.schema import build_design

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from rwn_scaling import make_data  # the benchmark's data, not a copy of it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--only", help="comma list of strategy labels' first words (e.g. ivf,pairs)"
    )
    args = parser.parse_args()
    data = make_data("factor", args.n)
    columns = list(data.columns)
    strategies = {
        "exact": "exact",
        "hnsw": "hnsw",
        "ivf": "ivf",
        "sample (m = 10,000)": "sample",
        "fresh sample (m = 400)": SampleBackend(400, fresh=True, random_state=args.seed),
        "pairs (m = 64)": "pairs",
    }
    print(f"latent-factor data, n = {args.n:,}, p = 10, k = 10, q = 1, seed {args.seed}\n")
    print(
        f"{'strategy':<24}{'time s':>8}{'recall':>8}{'dist x':>8}{'corr err':>10}"
        f"{'CI overlap':>12}{'DCR median':>12}{'DCR p5':>9}{'own row':>9}"
    )
    if args.only:
        wanted = set(args.only.split(","))
        strategies = {k: v for k, v in strategies.items() if k.split()[0] in wanted}
    for label, strategy in strategies.items():
        start = time.perf_counter()
        result = rwn(data, k=10, q=1.0, neighbors=strategy, random_state=args.seed)
        seconds = time.perf_counter() - start
        masked = result.data
        corr = compare_correlations(data, masked, columns=columns)
        reg = compare_regression(data, masked, "x9", columns[:9])
        dcr = distance_to_closest(data, masked, columns=columns)
        # Is an original record's closest masked record its own (masked) row?
        design = build_design(pd.concat([data, masked], ignore_index=True), columns=columns).matrix
        n = len(data)
        _, idx = nearest_records(design[n:], design[:n], k=1)
        own = float(np.mean(idx[:, 0] == np.arange(n)))
        to_masked = dcr.original_to_masked
        print(
            f"{label:<24}{seconds:>8.1f}{result.stats.get('recall_at_k', 1.0):>8.3f}"
            f"{result.stats.get('neighbor_distance_ratio', 1.0):>8.2f}"
            f"{corr.mean_abs_difference:>10.4f}{reg.mean_ci_overlap:>12.3f}"
            f"{to_masked.median():>12.4f}{to_masked.quantile(0.05):>9.4f}{own:>9.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
