"""Benchmark: the assessment's distance searches before and after the shared neighbour layer.

Issue 14, item 2 moved the distance-to-closest-record and record-linkage
searches of ``sdckit.assess`` from their own KD-tree loops onto
``sdckit.neighbors`` (one backend interface, one chunked executor). The
claim is "speed unchanged": this script times both measures with the code
before the move and with the code after it, alternating the two in fresh
processes on the same data in one run, and prints the median of each and
their ratio, wall-clock and CPU time (CPU time is the steadier figure on a
shared machine). It also checks both give the same figures.

    .venv/bin/python benchmarks/assess_search_before_after.py --before-commit 7841812
    git archive 7841812 | tar -x -C /tmp/before     # or: the code before the move by hand
    .venv/bin/python benchmarks/assess_search_before_after.py --before /tmp/before/src
    .venv/bin/python benchmarks/assess_search_before_after.py --before /tmp/before/src \\
        --n 100000 --reps 5 --n-jobs 2
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

AFTER = Path(__file__).resolve().parents[1] / "src"

ONE_RUN = """
import sys, time
import numpy as np, pandas as pd
import sdckit.assess as A
n, jobs = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
x = rng.normal(size=(n, 5))
original = pd.DataFrame(x, columns=list("abcde"))
masked = original + rng.normal(scale=0.05, size=x.shape)
A.distance_to_closest(original.iloc[:2000], masked.iloc[:2000], n_jobs=jobs)  # imports, warm-up
t0, c0 = time.perf_counter(), time.process_time()
d = A.distance_to_closest(original, masked, n_jobs=jobs)
t1, c1 = time.perf_counter(), time.process_time()
link = A.record_linkage(original, masked, n_jobs=jobs)
t2, c2 = time.perf_counter(), time.process_time()
print(t1 - t0, t2 - t1, c1 - c0, c2 - c1, repr(float(d.within_original.median())), repr(link.rate))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--before", help="src/ folder of the code before the move")
    where.add_argument(
        "--before-commit", help="git commit of the code before the move (extracted to a temp dir)"
    )
    parser.add_argument("--n", type=int, default=50_000, help="records (5 normal columns)")
    parser.add_argument("--reps", type=int, default=7, help="runs of each version, alternated")
    parser.add_argument("--n-jobs", type=int, default=1, help="search threads")
    args = parser.parse_args()
    if args.before_commit:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(
                ["git", "-C", str(AFTER.parent), "archive", args.before_commit, "src"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            print(f"code before the move: commit {args.before_commit}")
            compare(str(Path(tmp) / "src"), args)
        return
    compare(str(Path(args.before).resolve()), args)


def compare(before: str, args: argparse.Namespace) -> None:
    """Time both trees alternately and print the medians and ratios."""
    trees = {"before": before, "after": str(AFTER)}
    times: dict[str, list[list[float]]] = {name: [[], [], [], []] for name in trees}
    figures: dict[str, list[str]] = {}
    for _ in range(args.reps):
        for name, src in trees.items():
            env = {**os.environ, "PYTHONPATH": src}
            out = subprocess.run(
                [sys.executable, "-c", ONE_RUN, str(args.n), str(args.n_jobs)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            for i in range(4):
                times[name][i].append(float(out[i]))
            figures[name] = out[4:]
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"n = {args.n} x 5, n_jobs = {args.n_jobs}, median of {args.reps} alternated runs"
    )
    labels = (
        "distance_to_closest, wall",
        "record_linkage, wall",
        "distance_to_closest, CPU",
        "record_linkage, CPU",
    )
    for i, label in enumerate(labels):
        old = statistics.median(times["before"][i])
        new = statistics.median(times["after"][i])
        print(f"{label:<27} before {old:8.3f} s  after {new:8.3f} s  after/before {new / old:.3f}")
    same = figures["before"] == figures["after"]
    print(f"same figures before and after: {same} ({figures['after']})")


if __name__ == "__main__":
    main()
