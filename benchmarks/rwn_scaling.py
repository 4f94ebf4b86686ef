"""RWN scaling: RWN's total time against scikit-learn's bare exact k-NN query on the same data.

For n = 10^4, 10^5 (and 10^6 with ``--full``), p = 10, k = 10, q = 1, on two
kinds of data:

* ``gaussian``: i.i.d. standard normal (the hardest case for exact search);
* ``factor``: 10 variables driven by 3 latent factors plus noise, four of them
  discrete (like real microdata).

Each measurement runs in a fresh child process (so its peak memory is its
own); RWN and the baseline alternate, and the median over ``--repeats`` runs
is used (one run for n >= 10^5). Printed: RWN time / k-NN time, and both peak memories. Both use all
cores (the baseline is ``NearestNeighbors(algorithm="kd_tree", n_jobs=-1)``).

At n = 5,000 RWN is also timed against a straightforward per-record loop over
all distances, as in Matloff & Tendick's (2015) reference R code (reimplemented in numpy).

Run: ``.venv/bin/python benchmarks/rwn_scaling.py [--full] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

P = 10
K = 10


def make_data(kind: str, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return pd.DataFrame(rng.standard_normal((n, P)), columns=[f"x{j}" for j in range(P)])
    factors = rng.standard_normal((n, 3))
    loadings = rng.uniform(-1, 1, size=(3, P))
    x = factors @ loadings + 0.5 * rng.standard_normal((n, P))
    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(P)])
    for j in range(4):  # discrete variables: counts and ratings
        frame[f"x{j}"] = np.clip(np.round(frame[f"x{j}"] * 2 + 4), 0, 10).astype(np.int64)
    return frame


def child(task: str, kind: str, n: int) -> dict:
    from sklearn.neighbors import NearestNeighbors

    from sdckit import build_design, rwn

    data = make_data(kind, n)
    if task == "rwn":
        start = time.perf_counter()
        rwn(data, k=K, q=1.0, random_state=1)
        elapsed = time.perf_counter() - start
    elif task == "knn":
        matrix = build_design(data).matrix  # the same scaled design RWN searches
        start = time.perf_counter()
        NearestNeighbors(n_neighbors=K + 1, algorithm="kd_tree", n_jobs=-1).fit(matrix).kneighbors(
            matrix
        )
        elapsed = time.perf_counter() - start
    elif task == "loop":
        start = time.perf_counter()
        per_record_loop(data, K, np.random.default_rng(1))
        elapsed = time.perf_counter() - start
    else:
        raise SystemExit(f"unknown task {task}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "peak_mb": peak_mb}


def per_record_loop(data: pd.DataFrame, k: int, rng: np.random.Generator) -> np.ndarray:
    """Matloff & Tendick's (2015) reference algorithm: for each record, all distances, then p independent draws."""
    x = data.to_numpy(dtype=float)
    lo, hi = x.min(axis=0), x.max(axis=0)
    z = (x - lo) / np.where(hi > lo, hi - lo, 1.0)
    out = x.copy()
    n, p = x.shape
    for i in range(n):
        d = np.sqrt(((z - z[i]) ** 2).sum(axis=1))
        d[i] = np.inf
        nbrs = np.argpartition(d, k)[:k]
        donors = nbrs[rng.integers(0, k, size=p)]
        out[i] = x[donors, np.arange(p)]
    return out


def run(task: str, kind: str, n: int) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", task, kind, str(n)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(a: str, b: str, kind: str, n: int, repeats: int) -> tuple[list[dict], list[dict]]:
    ra, rb = [], []
    for _ in range(repeats):
        ra.append(run(a, kind, n))
        rb.append(run(b, kind, n))
    return ra, rb


def med(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=3, metavar=("TASK", "KIND", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--full", action="store_true", help="also n = 10^6")
    parser.add_argument("--quick", action="store_true", help="n = 10^4 only, 1 repeat")
    parser.add_argument("--repeats", type=int, default=3, help="repeats for n < 10^5 (1 above)")
    parser.add_argument("--kinds", default="gaussian,factor", help="comma list of data kinds")
    parser.add_argument("--sizes", help="comma list of n (overrides --full/--quick)")
    parser.add_argument("--no-loop", action="store_true", help="skip the n = 5,000 loop comparison")
    args = parser.parse_args()
    if args.child:
        task, kind, n = args.child
        print(json.dumps(child(task, kind, int(n))))
        return

    repeats = 1 if args.quick else args.repeats
    sizes = [10_000] if args.quick else [10_000, 100_000] + ([1_000_000] if args.full else [])
    if args.sizes:
        sizes = [int(v) for v in args.sizes.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"p = {P}, k = {K}, q = 1; medians of {repeats} run(s), each in a fresh process\n")
    print(
        f"{'data':<10}{'n':>10}{'RWN / k-NN':>12}{'RWN s':>9}{'k-NN s':>9}{'RWN MB':>9}{'k-NN MB':>9}"
    )
    kinds = [k.strip() for k in args.kinds.split(",")]
    for kind in kinds:
        for n in sizes:
            r_rwn, r_knn = compare("rwn", "knn", kind, n, repeats if n < 100_000 else 1)
            print(
                f"{kind:<10}{n:>10,}{med(r_rwn, 'seconds') / med(r_knn, 'seconds'):>12.2f}"
                f"{med(r_rwn, 'seconds'):>9.2f}{med(r_knn, 'seconds'):>9.2f}"
                f"{med(r_rwn, 'peak_mb'):>9.0f}{med(r_knn, 'peak_mb'):>9.0f}",
                flush=True,
            )
    if args.no_loop:
        return
    print()
    for kind in kinds:
        r_loop, r_rwn = compare("loop", "rwn", kind, 5_000, repeats)
        ratio = med(r_loop, "seconds") / med(r_rwn, "seconds")
        print(
            f"n = 5,000 {kind}: per-record loop / RWN = {ratio:.1f}x "
            f"(loop {med(r_loop, 'seconds'):.2f} s, RWN {med(r_rwn, 'seconds'):.3f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
