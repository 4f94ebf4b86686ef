"""Benchmark: protecting synthetic search logs of 10^4 to 10^6 users, k = 5, levels 2.

The logs are drawn to resemble ``../shared/data/aol_query_log_sample.csv``
(:func:`synthetic_log_batched`): each synthetic user's number of queries is
resampled from the sample's per-user counts, and her lines are drawn from the
lines of one to three sample users (topics mixed per user; each line keeps
its time and click). Each size is written to a temporary CSV in the AOL
layout and run in a fresh process, so peak memory (VmHWM) is that of the
run alone.

Baseline (the floor every method pays): reading the log and classifying it in
the ODP239 taxonomy (``read_log`` + ``classification_matrices``), timed in
the same run. Printed: protect's wall time (reading included) over the
floor's, peak memory, the peak when each stage ends, and the SRP of blocked
mode beside the exact mode (one block) on ``--exact-users`` users, for each
k of ``--k`` (the first k is that of the timed runs), with the relative gap.

    nice -n 10 .venv/bin/python benchmarks/querylog.py --sizes 10000,100000,1000000

Ratios are printed both by wall time and by CPU time (the process's own
seconds on a core): on a shared machine the wall time of each child depends
on the load while it ran, the CPU time much less. ``--logs DIR`` keeps the
generated logs in DIR and reuses one already there (the same seed writes the
same file), so a 10^6-user log (about 8 GB) is drawn once.
"""

from __future__ import annotations

import argparse
import inspect
import json
import operator
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SAMPLE = DATA / "aol_query_log_sample.csv"
ODP = DATA / "odp239_taxonomy.csv"


def synthetic_log(n_users: int, path: Path, seed: int = 0) -> int:
    """Write an AOL-like CSV log of ``n_users`` users; return its number of lines."""
    from sdckit.querylog import read_log

    sample = read_log(SAMPLE)
    rng = np.random.default_rng(seed)
    counts = np.bincount(sample.line_users)
    by_user = [sample.line_queries[sample.line_users == u] for u in range(sample.n_users)]
    lines = 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("AnonID,Query,QueryTime,ItemRank,ClickURL\n")
        for user in range(n_users):
            n = int(rng.choice(counts))
            sources = rng.choice(sample.n_users, size=int(rng.integers(1, 4)), replace=False)
            pool = np.concatenate([by_user[s] for s in sources])
            picks = sample.queries[rng.choice(pool, size=n)]
            uid = 100000 + user
            handle.writelines(
                f'{uid},"{q.replace(chr(34), chr(34) * 2)}",2006-03-01 00:00:00,,\n' for q in picks
            )
            lines += n
    return lines


def synthetic_log_batched(n_users: int, path: Path, seed: int = 0, batch: int = 20_000) -> int:
    """Write an AOL-like log of ``n_users`` users, whole sample lines, batch by batch.

    The same model as :func:`synthetic_log` (a user's number of lines from the
    sample's per-user counts, her lines drawn from the pooled lines of one to
    three sample users), drawn with array operations so that 10^6 users
    (about 1.5 x 10^8 lines) take minutes; each drawn line keeps the sample
    line's time, rank and click. Returns the number of lines.
    """
    import pandas as pd

    sample = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    sample = sample[~sample["Query"].isin(["", "-"])].reset_index(drop=True)
    user_of_line = pd.factorize(sample["AnonID"])[0]
    order = np.argsort(user_of_line, kind="stable")
    sample = sample.iloc[order].reset_index(drop=True)
    sizes = np.bincount(user_of_line)
    first_line = np.r_[0, np.cumsum(sizes)[:-1]]
    n_sample = len(sizes)
    text = sample.drop(columns="AnonID").to_csv(header=False, index=False, lineterminator="\n")
    tails = np.array(text.splitlines(keepends=True), dtype=object)
    rng = np.random.default_rng(seed)
    written = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("AnonID,Query,QueryTime,ItemRank,ClickURL\n")
        for start in range(0, n_users, batch):
            size = min(batch, n_users - start)
            lines_per_user = rng.choice(sizes, size=size)
            n_sources = rng.integers(1, 4, size=size)
            sources = np.argsort(rng.random((size, n_sample)), axis=1)[:, :3]
            pool = np.where(np.arange(3) < n_sources[:, None], sizes[sources], 0)
            cumulative = np.cumsum(pool, axis=1)
            user = np.repeat(np.arange(size), lines_per_user)
            draw = (rng.random(len(user)) * cumulative[user, 2]).astype(np.int64)
            which = (draw[:, None] >= cumulative[user]).sum(axis=1)
            offset = draw - np.where(which > 0, cumulative[user, np.maximum(which - 1, 0)], 0)
            line = first_line[sources[user, which]] + offset
            ids = np.array([f"{100000 + start + u}," for u in range(size)], dtype=object)
            handle.write("".join(map(operator.add, np.repeat(ids, lines_per_user), tails[line])))
            written += len(line)
    return written


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM).

    Not ``ru_maxrss``: Linux keeps it across the fork and exec that start a
    child, so a child would report its parent's peak when that is larger.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(path: str, mode: str, n_users: int, k: int, block_size: int) -> None:
    """Child process: time one stage and print a JSON line."""
    from sdckit.io import write_table
    from sdckit.querylog import (
        ODP239Taxonomy,
        QueryClassifier,
        classification_matrices,
        evaluate,
        protect,
        read_log,
    )

    taxonomy = ODP239Taxonomy(ODP)
    start = time.perf_counter()
    cpu = time.process_time()
    out: dict[str, Any] = {"stage_peak_mb": {"imports": _peak_mb()}}
    if mode == "floor":
        log = read_log(path)
        classification_matrices(
            log, classifier=QueryClassifier(taxonomy, levels=2, categories_per_term=1)
        )
    elif mode in ("blocked", "blocked+srp", "exact"):
        stage_peak: dict[str, float] = out["stage_peak_mb"]
        stage_start = {"reading": start}
        current = ["reading"]

        def progress(stage: str, done: int, total: int) -> None:
            # The peak so far when a stage starts is the peak of the stages before it.
            if stage != current[0]:
                stage_peak[current[0]] = _peak_mb()
                stage_start[stage] = time.perf_counter()
                # Partial figures as they come (stderr is not captured), for long runs.
                print(
                    f"  [{n_users:,} users, {mode}] {current[0]} done: "
                    f"{stage_start[stage] - start:.0f} s, CPU {time.process_time() - cpu:.1f} s, "
                    f"peak {stage_peak[current[0]]:.0f} MB, load {_load()}",
                    file=sys.stderr,
                    flush=True,
                )
                current[0] = stage

        result = protect(
            path,
            k=k,
            taxonomy=taxonomy,
            levels=2,
            block_size=None if mode == "exact" else block_size,
            random_state=0,
            progress=progress,
        )
        stage_peak[f"{current[0]} + aggregation"] = _peak_mb()
        print(
            f"  [{n_users:,} users, {mode}] protect done: {time.perf_counter() - start:.0f} s, "
            f"CPU {time.process_time() - cpu:.1f} s, peak {_peak_mb():.0f} MB, load {_load()}",
            file=sys.stderr,
            flush=True,
        )
        out["smallest_group"] = result.stats["smallest_group"]
        out["blocks"] = result.stats["n_blocks"]
        out["released"] = result.stats["n_released_queries"]
        out["seconds_protect"] = time.perf_counter() - start
        out["cpu"] = time.process_time() - cpu  # protect alone, not the writing below
        with tempfile.TemporaryDirectory() as tmp:
            write_table(result.data, Path(tmp) / "protected.csv")
        stage_peak["writing the release"] = _peak_mb()
        out["seconds_write"] = time.perf_counter() - start - out["seconds_protect"]
        out["peak_mb"] = _peak_mb()
        if mode != "blocked":  # the exact-vs-blocked check
            report = evaluate(result, taxonomy=taxonomy, levels=2, random_repeats=1, random_state=0)
            out["srp"] = report.srp
    out.setdefault("seconds_protect", time.perf_counter() - start)
    out["seconds"] = out["seconds_protect"]
    out.setdefault("cpu", time.process_time() - cpu)
    out.setdefault("peak_mb", _peak_mb())
    print(json.dumps(out))


def child(path: Path, mode: str, n_users: int, k: int, block_size: int) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(path),
            mode,
            str(n_users),
            str(k),
            str(block_size),
        ],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000")
    parser.add_argument(
        "--exact-users",
        type=int,
        default=10_000,
        help="users of the exact-vs-blocked check (0: no check)",
    )
    parser.add_argument(
        "--logs", type=Path, help="keep the generated logs here and reuse those already there"
    )
    parser.add_argument("--k", default="5", help="k of the runs; several (5,10) for the SRP check")
    parser.add_argument(
        "--block-size", type=int, help="largest block of blocked mode (default: protect's)"
    )
    parser.add_argument("--child", nargs=5)
    args = parser.parse_args()
    if args.child:
        path, mode, n_users, k, block_size = args.child
        run_one(path, mode, int(n_users), int(k), int(block_size))
        return
    ks = [int(v) for v in args.k.split(",")]
    if args.block_size is None:
        from sdckit.querylog import protect

        args.block_size = inspect.signature(protect).parameters["block_size"].default
    if not SAMPLE.exists() or not ODP.exists():
        sys.exit(f"needs {SAMPLE} and {ODP}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(
        "| users | lines | floor (read + classify) s, CPU s | protect (blocked) s, CPU s "
        "| ratio (wall) | ratio (CPU) | peak MB | above imports, MB per 10^6 lines "
        "| load before, after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    stages = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n_users in [int(s) for s in args.sizes.split(",") if s]:
            kept = args.logs is not None
            path = (args.logs if kept else Path(tmp)) / f"log_{n_users}.csv"
            if kept and path.exists():
                with open(path, "rb") as handle:
                    lines = (
                        sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))
                        - 1
                    )
            else:
                lines = synthetic_log_batched(n_users, path)
            load = _load()
            # protect first: on a long run its time and memory are the aims' figures.
            blocked = child(path, "blocked", n_users, ks[0], args.block_size)
            floor = child(path, "floor", n_users, ks[0], args.block_size)
            if not kept:
                path.unlink()
            ratio = float(blocked["seconds"]) / float(floor["seconds"])
            cpu_ratio = float(blocked["cpu"]) / float(floor["cpu"])
            above = blocked["peak_mb"] - blocked["stage_peak_mb"]["imports"]
            stages[n_users] = blocked
            print(
                f"| {n_users:,} | {lines:,} | {floor['seconds']:.1f}, {floor['cpu']:.1f} "
                f"| {blocked['seconds']:.1f}, {blocked['cpu']:.1f} "
                f"| {ratio:.2f} | {cpu_ratio:.2f} | {blocked['peak_mb']:.0f} "
                f"| {above / lines * 1e6:.0f} | {load}; {_load()} |",
                flush=True,
            )
        print()
        print("Peak memory (MB) when each stage ends, and writing the release:")
        for n_users, run in stages.items():
            shown = ", ".join(f"{k} {v:.0f}" for k, v in run["stage_peak_mb"].items())
            print(f"  {n_users:,} users: {shown}; writing took {run['seconds_write']:.1f} s")
        if args.exact_users <= 0:
            print(f"load average at the end: {_load()}")
            return
        subset = Path(tmp) / f"log_{args.exact_users}.csv"
        synthetic_log_batched(args.exact_users, subset, seed=1)
        for k in ks:
            exact = child(subset, "exact", args.exact_users, k, args.block_size)
            blocked = child(subset, "blocked+srp", args.exact_users, k, args.block_size)
            gaps = ", ".join(
                f"{b / e - 1:+.1%}" for b, e in zip(blocked["srp"], exact["srp"], strict=True)
            )
            print()
            print(
                f"{args.exact_users:,} users, k = {k}, blocks of at most {args.block_size:,}: "
                "SRP level 1, level 2"
            )
            print(
                f"  exact   (1 block):   {exact['srp'][0]:.3f}, {exact['srp'][1]:.3f}; "
                f"{exact['seconds']:.1f} s, peak {exact['peak_mb']:.0f} MB"
            )
            print(
                f"  blocked ({blocked['blocks']} blocks): {blocked['srp'][0]:.3f}, "
                f"{blocked['srp'][1]:.3f}; {blocked['seconds']:.1f} s, "
                f"peak {blocked['peak_mb']:.0f} MB"
            )
            print(f"  blocked against exact: {gaps}")
        print(f"load average at the end: {_load()}")


if __name__ == "__main__":
    main()
