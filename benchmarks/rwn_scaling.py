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

Large files (issue 17): ``--strategies hnsw,ivf,sample,pairs`` times RWN with
each neighbourhood strategy of :func:`sdckit.neighbors.make_strategy` instead,
one fresh process per measurement, and prints per strategy and n: total RWN
time; its ratio to the strategy's own floor (the backend's fit plus one
k-nearest-neighbour query of every record, timed in its own process); its
ratio to exact RWN where exact RWN was run in the same invocation (``exact``
in the list); recall@k estimated by RWN on 1,000 records against exact search;
peak memory; CPU seconds; the load average (``uptime``) before and after the
row. ``--no-floor`` skips the floor runs; ``--exact-subsample N`` estimates
exact RWN's floor at large n from the KD-tree build and the query of N
records, scaled to n, instead of running it; ``RWN_PROFILE=1`` runs RWN on
one search thread and prints its processor-time profile to stderr;
``RWN_N_JOBS`` sets RWN's search threads and ``RWN_FAISS_THREADS`` faiss's
OpenMP threads (to look for oversubscription: both default to the cores). ``--n`` is ``--sizes``. ``--tune`` instead measures recall@10 and query time of HNSW
(efSearch) and IVF (nprobe) on ``--sizes`` to choose their defaults.
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
    extra: dict = {}
    if task.startswith(("rwn:", "floor:", "exactsub:")):
        return strategy_child(task, data)
    if task == "tune":
        return tune_child(data)
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
    return {"seconds": elapsed, **usage(), **extra}


def usage() -> dict:
    """Peak resident memory and CPU seconds (all threads) of this process so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"peak_mb": own.ru_maxrss / 1024, "cpu_s": own.ru_utime + own.ru_stime}


def args_n_jobs() -> int | None:
    """RWN's search threads from ``RWN_N_JOBS`` (default: one per core)."""
    value = os.environ.get("RWN_N_JOBS")
    return int(value) if value else None


def strategy_child(task: str, data: pd.DataFrame) -> dict:
    """RWN with one strategy (``rwn:NAME``), or that strategy's bare fit + query (``floor:NAME``)."""
    from sdckit import build_design, rwn
    from sdckit.neighbors import make_strategy

    what, name = task.split(":", 1)
    extra: dict = {}
    cpu0 = usage()["cpu_s"]  # the data generation is not the strategy's
    if what == "rwn":
        profiler, n_jobs = None, args_n_jobs()
        if os.environ.get("RWN_FAISS_THREADS"):  # faiss's own OpenMP threads (default: cores)
            import faiss

            faiss.omp_set_num_threads(int(os.environ["RWN_FAISS_THREADS"]))
        if os.environ.get("RWN_PROFILE"):  # processor time, one search thread: where the work goes
            import cProfile

            profiler, n_jobs = cProfile.Profile(time.process_time), 1
            profiler.enable()
        start = time.perf_counter()
        result = rwn(data, k=K, q=1.0, neighbors=name, random_state=1, n_jobs=n_jobs)
        elapsed = time.perf_counter() - start
        if profiler is not None:
            import io
            import pstats

            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
            print(text.getvalue(), file=sys.stderr)
        extra = {
            "recall": result.stats.get("recall_at_k", 1.0),
            "ratio": result.stats.get("neighbor_distance_ratio", 1.0),
            "recall_seconds": result.stats.get("recall_seconds", 0.0),
        }
    elif what == "exactsub":
        # Exact RWN's floor from a subsample: the KD-tree build on all n records, then
        # the (k+1)-NN query of `name` random records, scaled to n (RWN is 1.0-1.4 times
        # this floor: section "RWN: total time against the bare exact k-NN query").
        from sklearn.neighbors import KDTree

        matrix = build_design(data).matrix
        rows = np.random.default_rng(0).choice(len(matrix), size=int(name), replace=False)
        scale = len(matrix) / len(rows)
        start, cpu = time.perf_counter(), time.process_time()
        tree = KDTree(matrix)
        build, cpu_build = time.perf_counter() - start, time.process_time() - cpu
        tree.query(matrix[rows], k=K + 1)
        query = time.perf_counter() - start - build
        cpu_query = time.process_time() - cpu - cpu_build
        elapsed = build + query * scale
        extra = {"recall": 1.0, "ratio": 1.0, "cpu_estimate": cpu_build + cpu_query * scale}
    else:
        matrix = build_design(data).matrix
        rows = np.arange(len(matrix))
        start = time.perf_counter()
        backend = make_strategy(name, random_state=1)
        backend.fit(matrix)
        for a in range(0, len(rows), 8192):
            backend.kneighbors(rows[a : a + 8192], K + 1)
        elapsed = time.perf_counter() - start
    out = usage()
    out["cpu_s"] = extra.pop("cpu_estimate", out["cpu_s"] - cpu0)
    return {"seconds": elapsed, **out, **extra}


def tune_child(data: pd.DataFrame) -> dict:
    """Recall@10 and query time of HNSW over efSearch and of IVF over nprobe."""
    from sdckit import build_design
    from sdckit.neighbors import HNSWBackend, IVFBackend, estimate_recall

    matrix = build_design(data).matrix
    rows = np.arange(0, len(matrix), max(1, len(matrix) // 20_000))
    out: dict = {}
    for label, backend, knob, values in (
        ("hnsw", HNSWBackend(), "ef_search", (16, 32, 64, 128)),
        ("ivf", IVFBackend(), "nprobe", (4, 8, 16, 32)),
    ):
        start = time.perf_counter()
        backend.fit(matrix)
        build = time.perf_counter() - start
        for value in values:
            if label == "hnsw":
                backend._index.hnsw.efSearch = value
            else:
                backend._index.nprobe = value
            start = time.perf_counter()
            backend.kneighbors(rows, K + 1)
            per_record = (time.perf_counter() - start) / len(rows)
            est = estimate_recall(backend, matrix, k=K, sample_size=1000, random_state=0)
            out[f"{label} {knob}={value}"] = {
                "recall": est.recall,
                "build_s": build,
                "query_us_per_record": per_record * 1e6,
            }
    return {"seconds": 0.0, "peak_mb": 0.0, "cpu_s": 0.0, "tune": out}


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
        stdout=subprocess.PIPE,  # the result; stderr (warnings, RWN_PROFILE) passes through
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
    parser.add_argument("--sizes", "--n", help="comma list of n (overrides --full/--quick)")
    parser.add_argument(
        "--no-floor", action="store_true", help="with --strategies: skip the floor runs"
    )
    parser.add_argument(
        "--exact-subsample",
        type=int,
        help="with --strategies exact: estimate exact RWN's floor from the KD-tree build and "
        "the query of this many records, scaled to n, instead of running exact RWN",
    )
    parser.add_argument("--no-loop", action="store_true", help="skip the n = 5,000 loop comparison")
    parser.add_argument(
        "--strategies", help="comma list of neighbour strategies (exact,hnsw,ivf,sample,pairs)"
    )
    parser.add_argument("--tune", action="store_true", help="choose HNSW/IVF defaults")
    args = parser.parse_args()
    if args.child:
        task, kind, n = args.child
        print(json.dumps(child(task, kind, int(n))))
        return

    if args.strategies or args.tune:
        large_files(args)
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
    above = []
    for kind in kinds:
        for n in sizes:
            r_rwn, r_knn = compare("rwn", "knn", kind, n, repeats if n < 100_000 else 1)
            if med(r_rwn, "seconds") / med(r_knn, "seconds") > 1.5:
                above.append(f"{kind} n = {n:,}")
            print(
                f"{kind:<10}{n:>10,}{med(r_rwn, 'seconds') / med(r_knn, 'seconds'):>12.2f}"
                f"{med(r_rwn, 'seconds'):>9.2f}{med(r_knn, 'seconds'):>9.2f}"
                f"{med(r_rwn, 'peak_mb'):>9.0f}{med(r_knn, 'peak_mb'):>9.0f}",
                flush=True,
            )
    print(
        "issue 2's target, RWN at most 1.5 times the bare k-NN query: "
        + ("met on every row" if not above else f"NOT met on {', '.join(above)}")
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


def large_files(args: argparse.Namespace) -> None:
    """The issue-17 table: each strategy against its own floor and against exact RWN."""
    sizes = [int(v) for v in (args.sizes or "100000").split(",")]
    kinds = [k.strip() for k in args.kinds.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    if args.tune:
        for kind in kinds:
            for n in sizes:
                for setting, row in run("tune", kind, n)["tune"].items():
                    print(
                        f"{kind:<10}{n:>10,}  {setting:<16} recall@{K} {row['recall']:.3f}  "
                        f"query {row['query_us_per_record']:.0f} us/record  "
                        f"build {row['build_s']:.1f} s",
                        flush=True,
                    )
        return
    names = [s.strip() for s in args.strategies.split(",")]
    print(f"p = {P}, k = {K}, q = 1; one run each, in a fresh process")
    print("CPU s: the run's processor time, all threads (the work; wall time grows with load)")
    if args.exact_subsample:
        print(
            f"exact: estimated, not run: KD-tree build + {args.exact_subsample:,} queries x "
            "n / that (the exact floor; exact RWN is 1.0-1.4 times it)"
        )
    print(
        f"\n{'data':<10}{'n':>11}{'strategy':>9}{'RWN s':>9}{'CPU s':>8}{'/floor':>8}"
        f"{'/exact':>8}{'recall':>8}{'dist x':>8}{'RWN MB':>8}{'floor s':>9}  load (uptime)"
    )
    for kind in kinds:
        for n in sizes:
            exact_s = None
            for name in names:
                before = os.getloadavg()[0]
                if name == "exact" and args.exact_subsample:
                    r = run(f"exactsub:{args.exact_subsample}", kind, n)
                    floor = exact_s = r["seconds"]
                else:
                    r = run(f"rwn:{name}", kind, n)
                    if args.no_floor:
                        floor = float("nan")
                    elif name == "exact":
                        floor = run("knn", kind, n)["seconds"]
                    else:
                        floor = run(f"floor:{name}", kind, n)["seconds"]
                if name == "exact":
                    exact_s = r["seconds"]
                vs_exact = f"{r['seconds'] / exact_s:8.3f}" if exact_s else f"{'-':>8}"
                print(
                    f"{kind:<10}{n:>11,}{name:>9}{r['seconds']:>9.1f}{r['cpu_s']:>8.1f}"
                    f"{r['seconds'] / floor:>8.2f}{vs_exact}{r['recall']:>8.3f}{r['ratio']:>8.2f}"
                    f"{r['peak_mb']:>8.0f}{floor:>9.1f}  {before:.1f}-{os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
