"""Benchmark: sdckit.distributed against a plain Dask read of the same Parquet files.

Issue 18: census-like person records generated file by file (never whole in
memory) as Parquet, then on a local Dask cluster of 1 and of 2 worker
processes: a plain ``dask.dataframe.read_parquet`` of every column (the I/O
floor), sdckit's own read (schema enforced per file), a 3-way table with
margins and a region hierarchy, its cell key perturbation, key-risk counts on
3 keys with the l-diversity of tenure, and RWN by random partitions (k = 5, q = 1, every
column) on the first files only (``--rwn-files``; its ratio is to a plain read of
those files: RWN's work is CPU, not I/O, and a shared 2-core machine cannot
spare the ~5 CPU-minutes of 10^6 records twice). Every job is printed as a ratio to the I/O floor timed in the same
run, with the 2-worker/1-worker speed-up and each worker's peak resident
memory. (DuckDB, the issue's second floor, is not a dependency of sdckit and
is not run here.)

    .venv/bin/python benchmarks/distributed.py                     # 10^6 records, 10 files
    .venv/bin/python benchmarks/distributed.py --records 100000    # quick
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the ``distributed`` package, and Python puts its folder
# first on the import path: take the folder off before Dask imports ``distributed``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import dask.dataframe as dd  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sdckit.distributed import (  # noqa: E402
    cell_key_perturb_by_partition,
    dask_client,
    key_risk_by_partition,
    read_parquet,
    rwn_by_partition,
    tabulate_by_partition,
)
from sdckit.tables import design_ptable  # noqa: E402

DIMS = ["region", "age_group", "sex"]
KEYS = ["region", "age_group", "sex"]
HIERARCHY = {"region": {"north": ["r1", "r2", "r3"], "south": ["r4", "r5", "r6", "r7", "r8"]}}


def write_census(directory: Path, n: int, n_files: int, seed: int) -> None:
    """n person records in n_files Parquet files, each drawn from its own stream."""
    sizes = np.diff(np.linspace(0, n, n_files + 1).astype(np.int64))
    for i, size in enumerate(sizes):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        age = rng.integers(0, 95, size=size)
        hours = np.clip(rng.normal(35, 10, size=size), 0, 80).round(1)
        log_income = 9 + 0.02 * np.minimum(age, 60) + 0.015 * hours + rng.normal(0, 0.4, size=size)
        pd.DataFrame(
            {
                "region": rng.choice([f"r{j}" for j in range(1, 9)], size=size),
                "age_group": np.minimum(age // 5, 18),
                "sex": rng.choice(["female", "male"], size=size),
                "tenure": rng.choice(["own", "rent", "other"], size=size, p=[0.6, 0.35, 0.05]),
                "age": age,
                "hours": hours,
                "income": np.round(np.exp(log_income), 2),
                "record_key": rng.integers(0, 2**31 - 1, size=size),
            }
        ).to_parquet(directory / f"part-{i:04d}.parquet", index=False)


def timed(job: Callable[[], object]) -> float:
    started = time.perf_counter()
    job()
    return time.perf_counter() - started


def peak_memory_mb() -> float:
    """Peak resident memory of this process, in MB (ru_maxrss is in kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _plain_read(paths: str | list[str]) -> None:
    frame = dd.read_parquet(paths)
    frame.map_partitions(lambda p: p.memory_usage(deep=True).sum()).compute()


def run(
    directory: Path, workers: int, memory_limit: str, partitions: int, rwn_files: int
) -> dict[str, float]:
    times: dict[str, float] = {}
    ptable = design_ptable(D=3, V=2.01, js=2)
    subset = sorted(str(p) for p in directory.glob("*.parquet"))[:rwn_files]
    with dask_client(
        n_workers=workers, memory_limit=memory_limit, dashboard_address=None
    ) as client:

        def sdckit_read() -> None:
            frame = read_parquet(directory).frame
            frame.map_partitions(lambda p: p.memory_usage(deep=True).sum()).compute()

        with tempfile.TemporaryDirectory() as out:
            jobs = {
                "plain Dask read (I/O floor)": lambda: _plain_read(str(directory)),
                "sdckit read (schema enforced)": sdckit_read,
                "3-way table + margins + hierarchy": lambda: tabulate_by_partition(
                    directory, DIMS, hierarchies=HIERARCHY, record_key="record_key"
                ),
                "cell key perturbation (same table)": lambda: cell_key_perturb_by_partition(
                    directory, ptable, dims=DIMS, hierarchies=HIERARCHY
                ),
                "key risk (3 keys, l-diversity of tenure)": lambda: key_risk_by_partition(
                    directory, KEYS, sensitive="tenure"
                ),
                "RWN subset: plain Dask read (its floor)": lambda: _plain_read(subset),
                "RWN subset: random partitions, written": lambda: rwn_by_partition(
                    os.path.join(str(directory), f"part-000[0-{rwn_files - 1}].parquet"),
                    n_partitions=partitions,
                    output=Path(out) / "masked",
                    overwrite=True,
                    random_state=1,
                ),
            }
            for name, job in jobs.items():
                times[name] = timed(job)
        peaks = client.run(peak_memory_mb)
        times["peak MB per worker"] = max(peaks.values())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=4, help="RWN partitions")
    parser.add_argument(
        "--rwn-files", type=int, default=2, help="RWN runs on the first files only (1 to 10)"
    )
    parser.add_argument("--memory-limit", default="3GB")
    args = parser.parse_args()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "census"
        directory.mkdir()
        write_census(directory, args.records, args.files, seed=18)
        results = {
            w: run(directory, w, args.memory_limit, args.partitions, args.rwn_files) for w in (1, 2)
        }
    floor = {w: results[w]["plain Dask read (I/O floor)"] for w in (1, 2)}
    rwn_floor = {w: results[w]["RWN subset: plain Dask read (its floor)"] for w in (1, 2)}
    rwn_records = args.records * args.rwn_files // args.files
    print(
        f"{args.records} records in {args.files} Parquet files; local cluster of worker processes "
        f"(memory limit {args.memory_limit} each)"
    )
    print("| job | 1 worker: x I/O floor | 2 workers: x I/O floor | speed-up 2 vs 1 |")
    print("|---|---:|---:|---:|")
    for name in results[1]:
        if name == "peak MB per worker":
            continue
        one, two = results[1][name], results[2][name]
        base = rwn_floor if name.startswith("RWN subset") else floor
        label = name.replace("RWN subset", f"RWN on {rwn_records} records ({args.rwn_files} files)")
        print(f"| {label} | {one / base[1]:.1f} | {two / base[2]:.1f} | {one / two:.2f} |")
    print(
        f"| peak resident memory per worker (MB) | {results[1]['peak MB per worker']:.0f} "
        f"| {results[2]['peak MB per worker']:.0f} | |"
    )
    print(f"I/O floor: {floor[1]:.2f} s with 1 worker, {floor[2]:.2f} s with 2 (for scale only)")


if __name__ == "__main__":
    main()
