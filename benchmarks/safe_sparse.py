"""Benchmark: SAFE on a census-style file whose elementary table has over 10^8 possible cells.

Issue 24. ``--records`` census-style synthetic records (default 10^6) with six
classifying variables (district 600, age band 20, sex 2, marital status 5,
occupation 40, country of birth 50: 2.4 * 10^8 possible elementary cells, most
of them empty), skewed so that small cells occur, correlated (age with marital
status, sex with occupation) as census variables are. Three controlled tables
of three variables each. :func:`sdckit.tables.safe_perturb` holds the
non-empty elementary cells only.

Baseline, timed in the same run on the same records: tabulating the non-empty
elementary cells alone (``numpy.unique`` of the records' linear cell positions,
with counts) — what any sparse tabulation of the file costs. Printed: SAFE's
CPU time (the figure to read on a shared machine), wall time and peak memory
(``tracemalloc``, which sees numpy's allocations) as ratios to the baseline's.
Each is run twice with the same seed: timed without tracing (tracemalloc
slows the allocations of SAFE's many small array operations several times
over), then traced for the peak memory; the CPU time under tracing is printed
too (the figure of the runs before session 11, which were traced and timed at
once), and the two runs must give the same result.
``max_deviation_limit`` is raised to ``LIMIT``: on these skewed files the
bound of the first feasible solution passes the default of 50 (the
implementation before session 10 stopped at 50 with 55 unsafe cells left at
10^5 records), and the benchmark is about time and memory.

    .venv/bin/python benchmarks/safe_sparse.py [--records 1000000] [--seed 2011]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

from sdckit.tables import safe_perturb

SIZES = {"district": 600, "age": 20, "sex": 2, "marital": 5, "occupation": 40, "country": 50}
LIMIT = 1000
CONTROLLED = [["district", "age", "sex"], ["age", "marital", "occupation"], ["sex", "country"]]


def census(n: int, seed: int) -> pd.DataFrame:
    """Skewed, correlated census-style records (integer codes as categoricals)."""
    rng = np.random.default_rng(seed)

    def zipf(k: int, size: int, power: float = 1.1) -> np.ndarray:
        p = 1.0 / np.arange(1, k + 1) ** power
        return rng.choice(k, size=size, p=p / p.sum())

    age = np.minimum(rng.geometric(0.12, n) - 1, SIZES["age"] - 1)
    marital = np.minimum(age // 4 + rng.integers(-1, 2, n), SIZES["marital"] - 1).clip(0)
    sex = rng.integers(0, 2, n)
    occupation = (zipf(SIZES["occupation"], n, 2.0) + 7 * sex) % SIZES["occupation"]
    columns = {
        "district": zipf(SIZES["district"], n, 1.6),
        "age": age,
        "sex": sex,
        "marital": marital,
        "occupation": occupation,
        "country": zipf(SIZES["country"], n, 3.0),
    }
    return pd.DataFrame(
        {k: pd.Categorical.from_codes(v, categories=range(SIZES[k])) for k, v in columns.items()}
    )


def timed(function):  # type: ignore[no-untyped-def]
    """(result, CPU seconds, wall seconds) of one call, memory not traced."""
    start, cpu = time.perf_counter(), time.process_time()
    result = function()
    return result, time.process_time() - cpu, time.perf_counter() - start


def traced(function):  # type: ignore[no-untyped-def]
    """(result, peak bytes traced by tracemalloc, CPU seconds under tracing) of one call."""
    tracemalloc.start()
    cpu = time.process_time()
    result = function()
    cpu = time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="SAFE on a sparse census-style file")
    parser.add_argument("--records", type=int, default=1_000_000, help="number of records")
    parser.add_argument("--seed", type=int, default=2011, help="seed of the records and of SAFE")
    args = parser.parse_args()
    versions = f"Python {sys.version.split()[0]}, numpy {np.__version__}, pandas {pd.__version__}"
    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {versions}, load average {load:.1f}"
    )
    data = census(args.records, args.seed)
    variables = list(SIZES)
    shape = tuple(SIZES.values())

    def tabulate_nonempty() -> tuple[np.ndarray, np.ndarray]:
        codes = [data[v].cat.codes.to_numpy(np.int64) for v in variables]
        return np.unique(np.ravel_multi_index(codes, shape), return_counts=True)

    (_, counts), c_base, t_base = timed(tabulate_nonempty)
    _, m_base, _ = traced(tabulate_nonempty)
    print(
        f"baseline: tabulating the non-empty elementary cells alone (numpy.unique): "
        f"{len(counts):,} non-empty of {int(np.prod(shape)):,} possible cells, "
        f"{int(((counts == 1) | (counts == 2)).sum()):,} of them 1 or 2"
    )

    def protect():  # type: ignore[no-untyped-def]
        return safe_perturb(
            data, CONTROLLED, variables=variables, max_deviation_limit=LIMIT, random_state=args.seed
        )

    result, c_safe, t_safe = timed(protect)
    again, m_safe, c_traced = traced(protect)
    if again.summary() != result.summary():  # same seed, same records: the same run
        raise SystemExit("the traced run of SAFE differs from the timed one")
    s = result.stats
    print(result.summary())
    print(
        f"{args.records:,} records: SAFE / tabulation CPU time = {c_safe / c_base:,.0f}x, "
        f"peak memory = {m_safe / m_base:.1f}x "
        f"(SAFE {c_safe:.1f} s CPU, {t_safe:.1f} s wall, {m_safe / 2**20:.0f} MiB, "
        f"{c_traced:.1f} s CPU under tracemalloc; "
        f"tabulation {c_base:.2f} s CPU, {t_base:.2f} s wall, {m_base / 2**20:.0f} MiB); "
        f"records changed {s['records_changed']:,}; max |deviation| in controlled tables "
        f"{s['max_abs_deviation']} (first feasible bound {s['feasible_bound']}); "
        f"phase 1 passes {s['phase1_passes']:,}; phase 2 stopped: {s['phase2_stop']}; "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )


if __name__ == "__main__":
    main()
