"""Benchmark: sdckit.distributed against a plain Dask read and DuckDB on the same Parquet files.

Issue 18: census-like person records generated file by file (never whole in
memory) as Parquet, then on a local Dask cluster of 1 and of 2 worker
processes (``--workers``): a plain ``dask.dataframe.read_parquet`` of every
column (the I/O floor), sdckit's own read (schema enforced per file), a 3-way
table with margins and a region hierarchy, its cell key perturbation,
key-risk counts on 3 keys with the l-diversity of tenure, and RWN by random
partitions (k = 5, q = 1, every column; ``--neighbors``, default ``pairs``,
the paper's Method 3.2) on the first files only (``--rwn-files``, 0 skips it;
its ratio is to a plain read of those files: RWN's work is CPU, not I/O).
DuckDB's group-by of the same files (the table's counts and key sums, and the
key counts with distinct sensitive values; DuckDB given as many threads as
Dask has workers) is the second floor, when DuckDB is installed.

Every job is printed as a ratio to the I/O floor timed in the same run, the
tables and key counts also as a ratio to DuckDB's, with the 2-worker/1-worker
speed-up and each worker's peak resident memory; the CPU seconds of every job
(this process and every worker) are printed beside the same jobs' DuckDB CPU
seconds, the comparison a loaded shared machine disturbs least. From the 1-worker run, the
compute time of every Dask task is summed (the work) and the rest of the wall
time is the driver's (graph, reduce, scheduling); ``--project-records`` and
``--project-workers`` print driver + work x (records ratio) / workers, a
projection to a larger cluster from measured per-partition costs (not a
measurement: it assumes the work grows with the records and the driver's part
does not, and ignores the network). The total wall and CPU of the tables and
key counts and the peak memory of the driver plus the workers are printed
against the issue's aim at 10^8 records (under 20 minutes, within 20 GB).

    .venv/bin/python benchmarks/distributed.py                     # 10^6 records, 10 files
    .venv/bin/python benchmarks/distributed.py --records 100000    # quick
    nice -n 10 .venv/bin/python benchmarks/distributed.py --records 10000000 --files 40
    .venv/bin/python benchmarks/distributed.py --records 100000000 --files 400 --rwn-files 0
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

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from distributed import Client, get_task_stream  # noqa: E402
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
    """n person records in n_files Parquet files, each drawn from its own stream.

    The categories are drawn as codes and their text taken by pyarrow: the
    draws of ``Generator.choice``, the same records as drawing text with it,
    for half the CPU (no column of numpy strings converted per file).
    """
    regions = pa.array([f"r{j}" for j in range(1, 9)])
    sexes = pa.array(["female", "male"])
    tenures = pa.array(["own", "rent", "other"])
    tenure_cdf = np.cumsum([0.6, 0.35, 0.05])
    tenure_cdf /= tenure_cdf[-1]
    sizes = np.diff(np.linspace(0, n, n_files + 1).astype(np.int64))
    for i, size in enumerate(sizes):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        age = rng.integers(0, 95, size=size)
        hours = np.clip(rng.normal(35, 10, size=size), 0, 80).round(1)
        log_income = 9 + 0.02 * np.minimum(age, 60) + 0.015 * hours + rng.normal(0, 0.4, size=size)
        # the order of the draws is that of the columns, as Generator.choice makes them
        region = regions.take(rng.integers(0, len(regions), size=size))
        age_group = np.minimum(age // 5, 18)
        sex = sexes.take(rng.integers(0, len(sexes), size=size))
        tenure = tenures.take(np.searchsorted(tenure_cdf, rng.random(size), side="right"))
        table = pa.table(
            {
                "region": region,
                "age_group": age_group,
                "sex": sex,
                "tenure": tenure,
                "age": age,
                "hours": hours,
                "income": np.round(np.exp(log_income), 2),
                "record_key": rng.integers(0, 2**31 - 1, size=size),
            }
        )
        pq.write_table(table, directory / f"part-{i:04d}.parquet")


def cpu_seconds() -> float:
    """CPU seconds (user + system) used by this process and its threads so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(job: Callable[[], object], client: Client) -> tuple[float, float, float]:
    """Wall time of ``job``, the summed compute time of its Dask tasks (the work), and the
    CPU seconds it used in this process and in every worker (robust on a loaded machine)."""
    before = cpu_seconds() + sum(client.run(cpu_seconds).values())
    started = time.perf_counter()
    with get_task_stream() as stream:
        job()
    wall = time.perf_counter() - started
    cpu = cpu_seconds() + sum(client.run(cpu_seconds).values()) - before
    work = sum(
        part["stop"] - part["start"]
        for task in stream.data
        for part in task.get("startstops", ())
        if part.get("action") == "compute"
    )
    return wall, float(work), float(cpu)


def peak_memory_mb() -> float:
    """Peak resident memory of this process, in MB (ru_maxrss is in kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _plain_read(paths: str | list[str]) -> None:
    frame = dd.read_parquet(paths)
    frame.map_partitions(lambda p: p.memory_usage(deep=True).sum()).compute()


def duckdb_jobs(directory: Path, threads: int) -> dict[str, Callable[[], object]]:
    """DuckDB's group-by of the same files: the second floor (empty when DuckDB is absent)."""
    try:
        import duckdb
    except ImportError:
        print("DuckDB is not installed: no second floor (pip install duckdb)")
        return {}
    files = str(directory / "*.parquet")
    dims, keys = ", ".join(DIMS), ", ".join(KEYS)

    def query(sql: str) -> Callable[[], object]:
        def run() -> object:
            with duckdb.connect() as con:
                con.execute(f"SET threads = {threads}")
                return con.execute(sql).fetchall()

        return run

    return {
        "DuckDB: 3-way group-by (count, key sum)": query(
            f"SELECT {dims}, count(*), sum(record_key) FROM read_parquet('{files}') GROUP BY {dims}"
        ),
        "DuckDB: key counts (f_k, distinct tenure)": query(
            f"SELECT {keys}, sum(n), count(*) FROM (SELECT {keys}, tenure, count(*) AS n "
            f"FROM read_parquet('{files}') GROUP BY {keys}, tenure) GROUP BY {keys}"
        ),
    }


def breakdown(directory: Path) -> None:
    """Where a counting job's CPU goes, in this process (no cluster), against DuckDB on 1 thread.

    The Arrow read of the needed columns (``read_codes``), the counting
    (``count_codes``), then the whole job on Dask's synchronous scheduler (the
    difference is the graph and the combine step: the reduce, margins and
    hierarchy), and DuckDB's group-by with one thread.
    """
    from sdckit.distributed._io import read_codes, read_parquet
    from sdckit.distributed._partitions import count_codes

    source = read_parquet(directory)
    jobs = {
        "3-way table (count, key sum)": (
            DIMS,
            ["record_key"],
            lambda: tabulate_by_partition(directory, DIMS, record_key="record_key"),
            "DuckDB: 3-way group-by (count, key sum)",
        ),
        "key counts (3 keys x tenure)": (
            [*KEYS, "tenure"],
            [],
            lambda: key_risk_by_partition(directory, KEYS, sensitive="tenure"),
            "DuckDB: key counts (f_k, distinct tenure)",
        ),
    }
    duck = duckdb_jobs(directory, 1)
    print(
        "\nBreakdown in one process (no cluster), CPU seconds; DuckDB with 1 thread "
        f"(uptime: {os.popen('uptime').read().strip()})"
    )
    print(
        "| job | Arrow read of its columns | + count (bincount) | whole job, Dask synchronous "
        "| DuckDB, 1 thread | read / DuckDB | whole job / DuckDB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (groups, values, job, duck_name) in jobs.items():
        read = count = 0.0
        for path in source.files:  # file by file: the codes of 10^8 records would fill GBs
            started = cpu_seconds()
            item = read_codes(path, source.dtypes, groups, values)
            read += cpu_seconds() - started
            assert item is not None
            started = cpu_seconds()
            count_codes(item.codes, item.levels, groups, source.dtypes, n=item.n, count="n")
            count += cpu_seconds() - started
        with dask.config.set(scheduler="sync"):
            started = cpu_seconds()
            job()
            whole = cpu_seconds() - started
        floor = float("nan")
        if duck_name in duck:
            started = cpu_seconds()
            duck[duck_name]()
            floor = cpu_seconds() - started
        print(
            f"| {name} | {read:.2f} | {count:.2f} | {whole:.2f} | {floor:.2f} | "
            f"{read / floor:.1f} | {whole / floor:.1f} |"
        )


def run(
    directory: Path, workers: int, memory_limit: str, args: argparse.Namespace
) -> dict[str, tuple[float, float, float]]:
    times: dict[str, tuple[float, float, float]] = {}
    ptable = design_ptable(D=3, V=2.01, js=2)
    subset = sorted(str(p) for p in (directory.parent / "rwn_subset").glob("*.parquet"))
    with dask_client(
        n_workers=workers, memory_limit=memory_limit, dashboard_address=None
    ) as client:
        # the CPU an idle cluster uses (scheduler in this process, worker heartbeats): a job's
        # CPU seconds include this rate times its wall time, which the load of the machine sets
        before = cpu_seconds() + sum(client.run(cpu_seconds).values())
        started = time.perf_counter()
        time.sleep(5)
        idle = cpu_seconds() + sum(client.run(cpu_seconds).values()) - before
        times["idle cluster, CPU s per wall s"] = (0.0, 0.0, idle / (time.perf_counter() - started))
        print(
            f"  {workers} worker(s): idle cluster: {times['idle cluster, CPU s per wall s'][2]:.3f} "
            "CPU s per wall second",
            flush=True,
        )

        def sdckit_read() -> None:
            frame = read_parquet(directory).frame
            frame.map_partitions(lambda p: p.memory_usage(deep=True).sum()).compute()

        with tempfile.TemporaryDirectory(dir=directory.parent) as out:
            jobs: dict[str, Callable[[], object]] = {
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
                **duckdb_jobs(directory, workers),
            }
            if args.rwn_files:
                jobs["RWN subset: plain Dask read (its floor)"] = lambda: _plain_read(subset)
                jobs["RWN subset: random partitions, written"] = lambda: rwn_by_partition(
                    directory.parent / "rwn_subset",
                    n_partitions=args.partitions,
                    output=Path(out) / "masked",
                    overwrite=True,
                    neighbors=args.neighbors,
                    sample_size=args.sample_size,
                    recall_sample=0,
                    random_state=1,
                )
            for name, job in jobs.items():
                times[name] = timed(job, client)
                print(
                    f"  {workers} worker(s): {name}: {times[name][0]:.1f} s "
                    f"(tasks {times[name][1]:.1f} s, CPU {times[name][2]:.2f} s)",
                    flush=True,
                )
        peaks = client.run(peak_memory_mb)
        # (max over the workers, their sum, this process: scheduler, DuckDB, generation)
        times["peak MB per worker"] = (max(peaks.values()), sum(peaks.values()), peak_memory_mb())
        print(
            f"  {workers} worker(s): peak resident memory {max(peaks.values()):.0f} MB per worker, "
            f"{peak_memory_mb():.0f} MB driver",
            flush=True,
        )
    return times


#: Entries of a run's results that are not jobs.
_NOT_JOBS = ("peak MB per worker", "idle cluster, CPU s per wall s")
#: The jobs of the issue's aim at 10^8 records: tables and key counts under 20 minutes.
_COUNTING = (
    "3-way table + margins + hierarchy",
    "cell key perturbation (same table)",
    "key risk (3 keys, l-diversity of tenure)",
)


def _duckdb_floor(name: str) -> str | None:
    """The DuckDB job a Dask job is compared with."""
    if name.startswith(("3-way table", "cell key")):
        return "DuckDB: 3-way group-by (count, key sum)"
    if name.startswith("key risk"):
        return "DuckDB: key counts (f_k, distinct tenure)"
    return None


def report(
    results: dict[int, dict[str, tuple[float, float, float]]], args: argparse.Namespace
) -> None:
    """The markdown table of ratios, speed-up, memory, and the projection."""
    workers = sorted(results)
    floor = {w: results[w]["plain Dask read (I/O floor)"][0] for w in workers}
    rwn_records = args.records * args.rwn_files // args.files
    print(
        f"{args.records} records in {args.files} Parquet files; local cluster of worker processes "
        f"(memory limit {args.memory_limit} each)"
    )
    head = [f"{w} worker(s): x I/O floor" for w in workers]
    head += [f"{w} worker(s): x DuckDB" for w in workers]
    if 1 in results and 2 in results:
        head.append("speed-up 2 vs 1")
    print("| job | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))
    for name in results[workers[0]]:
        if name in _NOT_JOBS:
            continue
        base = floor
        if name.startswith("RWN subset"):
            base = {w: results[w]["RWN subset: plain Dask read (its floor)"][0] for w in workers}
        cells = [f"{results[w][name][0] / base[w]:.1f}" for w in workers]
        duck = _duckdb_floor(name)
        for w in workers:
            ok = duck is not None and duck in results[w]
            cells.append(f"{results[w][name][0] / results[w][duck][0]:.1f}" if ok else "")
        if 1 in results and 2 in results:
            cells.append(f"{results[1][name][0] / results[2][name][0]:.2f}")
        label = name.replace(
            "RWN subset",
            f"RWN ({args.neighbors}) on {rwn_records} records ({args.rwn_files} files)",
        )
        print(f"| {label} | " + " | ".join(cells) + " |")
    peaks = " | ".join(f"{results[w]['peak MB per worker'][0]:.0f}" for w in workers)
    print(f"| peak resident memory per worker (MB) | {peaks} |")
    print(
        "\nCPU seconds (this process and every worker, user + system), the measure that a "
        "loaded machine disturbs least"
    )
    head = [f"{w} worker(s): CPU s" for w in workers] + [
        f"{w} worker(s): x DuckDB CPU" for w in workers
    ]
    print("| job | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))
    for name in results[workers[0]]:
        if name in _NOT_JOBS:
            continue
        cells = [f"{results[w][name][2]:.2f}" for w in workers]
        duck = _duckdb_floor(name)
        for w in workers:
            ok = duck is not None and duck in results[w] and results[w][duck][2] > 0
            cells.append(f"{results[w][name][2] / results[w][duck][2]:.1f}" if ok else "")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"| peak resident memory per worker (MB) | {peaks} |")
    idle = " | ".join(f"{results[w]['idle cluster, CPU s per wall s'][2]:.3f}" for w in workers)
    print(f"| idle cluster: CPU s per wall second (in every job's CPU s) | {idle} |")
    print(
        "I/O floor: "
        + ", ".join(f"{floor[w]:.1f} s with {w} worker(s)" for w in workers)
        + " (for scale only)"
    )
    print(
        "\nTables and key counts (the 3-way table, its cell key perturbation, the key risk), "
        "wall and CPU in total; peak resident memory of the driver (this process: scheduler, "
        "DuckDB, file generation) plus every worker"
    )
    aim = args.records >= 100_000_000
    for w in workers:
        wall = sum(results[w][name][0] for name in _COUNTING)
        cpu = sum(results[w][name][2] for name in _COUNTING)
        _, workers_mb, driver_mb = results[w]["peak MB per worker"]
        memory = (workers_mb + driver_mb) / 1024
        verdict = ""
        if aim:
            met = wall < 20 * 60 and memory < 20
            verdict = (
                f"; issue 18's aim at 10^8 records (under 20 minutes, within 20 GB): "
                f"{'met' if met else 'NOT met'}"
            )
        print(
            f"  {w} worker(s): {wall:.0f} s ({wall / 60:.1f} min) wall, {cpu:.1f} CPU s; "
            f"{memory:.1f} GB ({driver_mb:.0f} MB driver + {workers_mb:.0f} MB workers){verdict}"
        )
    base_w = workers[0]
    scale = args.project_records / args.records
    print(
        f"\nProjection (not a measurement) to {args.project_records:.0e} records on "
        f"{args.project_workers} workers, from the {base_w}-worker run: driver + work x "
        f"{scale:g} / {args.project_workers}"
    )
    print("| job | wall | work (task compute) | driver | projected wall |")
    print("|---|---:|---:|---:|---:|")
    for name, (wall, work, _) in results[base_w].items():
        if name in _NOT_JOBS or name.startswith(("DuckDB", "RWN subset: plain")):
            continue
        job_scale = scale * (args.records / rwn_records if name.startswith("RWN") else 1)
        driver = max(wall - work / base_w, 0.0)
        projected = driver + work * job_scale / args.project_workers
        print(f"| {name} | {wall:.1f} s | {work:.1f} s | {driver:.1f} s | {projected:.0f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--workers", default="1,2", help="local cluster sizes, e.g. 1,2")
    parser.add_argument("--partitions", type=int, default=4, help="RWN partitions")
    parser.add_argument(
        "--rwn-files", type=int, default=2, help="RWN runs on the first files only (0: no RWN)"
    )
    parser.add_argument("--neighbors", default="pairs", help="RWN's neighbour search")
    parser.add_argument("--sample-size", type=int, default=None, help="m of sample or pairs")
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--project-records", type=float, default=1e8)
    parser.add_argument("--project-workers", type=int, default=32)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also time the read, the count and the whole job in this process (no cluster)",
    )
    parser.add_argument(
        "--tmp", default=None, help="where the generated files go (default: the system's)"
    )
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    if args.tmp is not None:
        Path(args.tmp).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        directory = Path(tmp) / "census"
        directory.mkdir()
        started, cpu = time.perf_counter(), cpu_seconds()
        write_census(directory, args.records, args.files, seed=18)
        subset = Path(tmp) / "rwn_subset"
        subset.mkdir()
        for path in sorted(directory.glob("*.parquet"))[: args.rwn_files]:
            os.link(path, subset / path.name)
        size = sum(p.stat().st_size for p in directory.iterdir()) / 1e6
        print(
            f"generated {size:.0f} MB in {time.perf_counter() - started:.0f} s "
            f"({cpu_seconds() - cpu:.0f} CPU s)",
            flush=True,
        )
        results = {w: run(directory, w, args.memory_limit, args) for w in workers}
        print(f"uptime: {os.popen('uptime').read().strip()}")
        report(results, args)
        if args.breakdown:  # after the report: a long run stopped here keeps the cluster figures
            breakdown(directory)
            print(f"uptime: {os.popen('uptime').read().strip()}")


if __name__ == "__main__":
    main()
