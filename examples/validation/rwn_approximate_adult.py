"""RWN with approximate and sampled neighbourhoods on real data with a known truth (issue 17).

The six numeric variables of the UCI Adult file (48,842 records, from
``../shared/data/adult.csv``) are masked by RWN (k = 10, q = 1, seed 1) with
exact search, which is the truth here, and with each strategy of Perry, Matloff &
Tendick (2022), Sections 10-11: faiss HNSW and IVF, Method 1 (a fixed
sample of m records) and Method 2 (n·m/2 random pairs). For each strategy:

* the recall@10 RWN *estimates* on 1,000 records (``stats["recall_at_k"]``,
  with its standard error ``stats["recall_standard_error"]``) against the
  *true* recall@10 over every record, computed here on the very
  design RWN searched, with the same distance-tie rule
  (:func:`sdckit.neighbors.estimate_recall` on all n records);
* the share of masked cells equal to exact RWN's masked file (same seed:
  where the neighbourhoods are the true ones, the draws are the same);
* whether the first line of the summary (what ``sdckit rwn`` prints first) is
  true of the masked file, and whether the recall it prints lies within
  three of its own standard errors of the true recall.

    .venv/bin/python examples/validation/rwn_approximate_adult.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from sdckit import rwn
from sdckit.neighbors import estimate_recall, make_strategy

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"
COLUMNS = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
K = 10


def main() -> None:
    if not DATA.exists():
        raise SystemExit(f"skipped: {DATA} is absent (the shared data folder)")
    data = pd.read_csv(DATA, usecols=COLUMNS)[COLUMNS]
    n = len(data)
    print(f"UCI Adult, {n:,} records x {len(COLUMNS)} numeric variables; k = {K}, q = 1, seed 1\n")
    start = time.perf_counter()
    exact = rwn(data, k=K, q=1.0, random_state=1)
    print(f"exact RWN: {time.perf_counter() - start:.1f} s (the truth below)\n")
    print(
        f"{'strategy':<9}{'time s':>8}{'estimated':>11}{'SE':>8}{'true':>8}{'within 3 SE':>13}"
        f"{'cells as exact':>16}{'first line true':>17}"
    )
    for name in ("hnsw", "ivf", "sample", "pairs"):
        backend = make_strategy(name, random_state=1 if name in ("sample", "pairs") else None)
        start = time.perf_counter()
        result = rwn(data, k=K, q=1.0, neighbors=backend, random_state=1)
        seconds = time.perf_counter() - start
        design = backend._matrix  # the design RWN built and searched (balanced, scaled)
        truth = estimate_recall(backend, design, k=K, sample_size=n, random_state=0)
        estimated = result.stats["recall_at_k"]
        # The estimate's own standard error (the sampled records' spread, finite population).
        se = result.stats["recall_standard_error"]
        within = abs(estimated - truth.recall) <= 3 * se + 1e-12
        same = float((result.data.to_numpy() == exact.data.to_numpy()).mean())
        first = result.summary().splitlines()[0]
        first_true = (
            first == f"rwn: {len(result.data)} records x {result.data.shape[1]} columns"
            and (result.data.shape == data.shape)
        )
        print(
            f"{name:<9}{seconds:>8.1f}{estimated:>11.4f}{se:>8.4f}{truth.recall:>8.4f}{within!s:>13}"
            f"{same:>16.3f}{first_true!s:>17}",
            flush=True,
        )
        print(f"    printed first: {first!r}")
        recall_line = [line for line in result.summary().splitlines() if "recall@" in line]
        print(f"    printed recall: {recall_line[0].strip()!r}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
