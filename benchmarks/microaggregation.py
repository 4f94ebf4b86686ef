"""Benchmark: MDAV microaggregation on 10^4, 10^5 and 10^6 records x 5 variables, k = 3.

Baseline: a plain textbook numpy MDAV (Domingo-Ferrer & Mateo-Sanz 2002), a
full distance pass over the remaining records at every step, timed in the
same run. It is run only where it finishes in reasonable time (10^4 records,
and 2 x 10^4 to show its n^2 growth); at larger sizes the baseline time is
extrapolated from the 10^4 measurement as (n / 10^4)^2 and the ratio is
labelled "extrapolated". sdckit's default (block_size=10,000) gives exactly
the textbook groups at 10^4 (checked here) and works in spatially compact
blocks above. At 10^5 the exact single-block run (block_size=None) is also
timed, to show what blocking costs in information loss (within-group SSE /
total SSE).

    .venv/bin/python benchmarks/microaggregation.py [--quick]

--quick runs the textbook at 10^4 only and sdckit at 10^4 and 10^5 (blocked).

    .venv/bin/python benchmarks/microaggregation.py --blas [--n 30000]

--blas times exact MDAV (one block) with the BLAS thread pool as it is
(``blas_threads=None``: as many threads as the BLAS library chose) and capped
at one thread (``blas_threads=1``, the default), alternately in the same
process, and prints the ratio and that both give the same groups.
Wall-clock seconds are the claim's basis; the CPU seconds of the sdckit run
are printed too, because on a shared machine they show the work done.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from sdckit.microdata import mdav_groups
from sdckit.microdata._reference import textbook_mdav


def sse_ratio(x: np.ndarray, labels: np.ndarray) -> float:
    counts = np.bincount(labels)
    centroids = np.column_stack(
        [np.bincount(labels, weights=x[:, j]) / counts for j in range(x.shape[1])]
    )
    return float(((x - centroids[labels]) ** 2).sum() / ((x - x.mean(axis=0)) ** 2).sum())


def timed(func):
    """Result, wall-clock seconds and CPU seconds of this process (the machine is shared)."""
    start, cpu = time.perf_counter(), time.process_time()
    value = func()
    timed.cpu = time.process_time() - cpu
    return value, time.perf_counter() - start


def make_data(n: int, seed: int) -> np.ndarray:
    """Correlated normal data, standardised (as MDAV sees it)."""
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((5, 5)) + 0.5 * np.eye(5)
    x = rng.multivariate_normal(np.zeros(5), cov, size=n)
    return (x - x.mean(axis=0)) / x.std(axis=0)


def blas_comparison(n: int, k: int, rounds: int) -> None:
    """Exact MDAV with the BLAS pool as it is and capped at one thread, alternately."""
    from threadpoolctl import threadpool_info

    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    shown = ", ".join(f"{p['internal_api']} {p['num_threads']} threads" for p in pools)
    print(f"exact MDAV (block_size=None), {n} records x 5 variables, k = {k}; BLAS: {shown}")
    x = make_data(n, seed=n)
    times: dict[str, list[float]] = {"pool as it is": [], "capped at 1": []}
    labels = {}
    for _ in range(rounds):
        for name, threads in (("pool as it is", None), ("capped at 1", 1)):
            start = time.perf_counter()
            labels[name] = mdav_groups(x, k, block_size=None, blas_threads=threads)
            times[name].append(time.perf_counter() - start)
    same = np.array_equal(labels["pool as it is"], labels["capped at 1"])
    for name, values in times.items():
        print(f"  {name:<14} " + "  ".join(f"{v:7.2f} s" for v in values))
    ratio = min(times["pool as it is"]) / min(times["capped at 1"])
    print(
        f"  best pool-as-it-is / best capped: {ratio:.2f}x; "
        f"{'same groups' if same else 'GROUPS DIFFER'}; load average {os.getloadavg()[0]:.1f}"
    )


TARGETS = {100_000: 10.0, 1_000_000: 300.0}  # issue 4: seconds of wall time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="stop at 10^5 records")
    parser.add_argument("--blas", action="store_true", help="BLAS pool vs one thread only")
    parser.add_argument("--n", type=int, default=30_000, help="records for --blas")
    parser.add_argument("--rounds", type=int, default=3, help="alternations for --blas")
    args = parser.parse_args()
    k = 3
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    if args.blas:
        blas_comparison(args.n, k, args.rounds)
        return
    print(f"MDAV, 5 variables, k = {k}")
    header = (
        f"{'n':>9} {'textbook s':>11} {'sdckit s':>9} {'(cpu s)':>8} {'speed-up':>12}  "
        f"{'SSE/SST':>8}  notes"
    )
    print(header)
    base_n, base_time = None, None
    for n in (10_000,) if args.quick else (10_000, 20_000):
        x = make_data(n, seed=n)
        reference, t_text = timed(lambda x=x: textbook_mdav(x, k))
        labels, t_ours = timed(lambda x=x: mdav_groups(x, k))
        same = "same groups" if np.array_equal(labels, reference) else "blocked (groups differ)"
        print(
            f"{n:>9} {t_text:>11.2f} {t_ours:>9.2f} {timed.cpu:>8.2f} {t_text / t_ours:>11.1f}x  "
            f"{sse_ratio(x, labels):>8.4f}  textbook measured; {same}"
        )
        if n == 10_000:
            base_n, base_time = n, t_text
    sizes = (100_000,) if args.quick else (100_000, 1_000_000)
    for n in sizes:
        x = make_data(n, seed=n)
        labels, t_ours = timed(lambda x=x: mdav_groups(x, k))
        sizes_ok = np.bincount(labels).min() >= k and np.bincount(labels).max() <= 2 * k - 1
        estimate = base_time * (n / base_n) ** 2
        print(
            f"{n:>9} {estimate:>10.0f}* {t_ours:>9.2f} {timed.cpu:>8.2f} {estimate / t_ours:>11.0f}x  "
            f"{sse_ratio(x, labels):>8.4f}  *textbook extrapolated as n^2; group sizes "
            f"{'k..2k-1' if sizes_ok else 'WRONG'}"
        )
        target = TARGETS.get(n)
        if target is not None:
            verdict = "met" if t_ours <= target else "NOT met"
            print(f"{'':>9} issue 4's target at this size: under {target:.0f} s wall: {verdict}")
        if n == 100_000 and not args.quick:
            exact, t_exact = timed(lambda x=x: mdav_groups(x, k, block_size=None))
            print(
                f"{n:>9} {'':>11} {t_exact:>9.2f} {timed.cpu:>8.2f} {estimate / t_exact:>11.0f}x  "
                f"{sse_ratio(x, exact):>8.4f}  exact MDAV in one block (block_size=None); "
                f"blocked / exact time {t_ours / t_exact:.3f}"
            )


if __name__ == "__main__":
    main()
