"""Benchmark: protecting synthetic search logs of 10^4 (and 10^5) users, k = 5, levels 2.

The logs are drawn to resemble ``../shared/data/aol_query_log_sample.csv``:
each synthetic user's number of queries is resampled from the sample's
per-user counts, and her queries are drawn from the queries of one to three
sample users (topics mixed per user). Each size is written to a temporary CSV
in the AOL layout and run in a fresh process, so peak memory (ru_maxrss) is
that of the run alone.

Baseline (the floor every method pays): reading the log and classifying it in
the ODP239 taxonomy (``read_log`` + ``classification_matrices``), timed in
the same run. Printed: protect's wall time (reading included) over the
floor's, peak memory, and, at 10^4 users, the SRP of blocked mode beside the
exact mode on a 2,000-user subset (the exact incidence matrix of 10^4 users
would need about 1.6 GB).

    .venv/bin/python benchmarks/querylog.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
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


def run_one(path: str, mode: str, n_users: int) -> None:
    """Child process: time one stage and print a JSON line."""
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
    out: dict[str, Any] = {}
    if mode == "floor":
        log = read_log(path)
        classification_matrices(
            log, classifier=QueryClassifier(taxonomy, levels=2, categories_per_term=1)
        )
    elif mode in ("blocked", "exact"):
        result = protect(
            path,
            k=5,
            taxonomy=taxonomy,
            levels=2,
            block_size=1000 if mode == "blocked" else None,
            random_state=0,
        )
        out["smallest_group"] = result.stats["smallest_group"]
        out["blocks"] = result.stats["n_blocks"]
        out["seconds_protect"] = time.perf_counter() - start
        if n_users <= 2000:
            report = evaluate(result, taxonomy=taxonomy, levels=2, random_repeats=1, random_state=0)
            out["srp"] = report.srp
    out.setdefault("seconds_protect", time.perf_counter() - start)
    out["seconds"] = out["seconds_protect"]
    out["cpu"] = time.process_time() - cpu
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def child(path: Path, mode: str, n_users: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path), mode, str(n_users)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        run_one(args.child[0], args.child[1], int(args.child[2]))
        return
    if not SAMPLE.exists() or not ODP.exists():
        sys.exit(f"needs {SAMPLE} and {ODP}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print("| users | lines | floor (read + classify) s | protect (blocked) s | ratio | peak MB |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n_users in [int(s) for s in args.sizes.split(",")]:
            path = Path(tmp) / f"log_{n_users}.csv"
            lines = synthetic_log(n_users, path)
            floor = child(path, "floor", n_users)
            blocked = child(path, "blocked", n_users)
            ratio = float(blocked["seconds"]) / float(floor["seconds"])
            print(
                f"| {n_users:,} | {lines:,} | {floor['seconds']:.1f} | {blocked['seconds']:.1f} "
                f"| {ratio:.2f} | {blocked['peak_mb']:.0f} |"
            )
        subset = Path(tmp) / "log_2000.csv"
        synthetic_log(2000, subset, seed=1)
        exact = child(subset, "exact", 2000)
        blocked = child(subset, "blocked", 2000)
        print()
        print("2,000 users, k = 5: SRP level 1, level 2")
        print(
            f"  exact   (1 block):   {exact['srp'][0]:.3f}, {exact['srp'][1]:.3f}; "
            f"{exact['seconds']:.1f} s, peak {exact['peak_mb']:.0f} MB"
        )
        print(
            f"  blocked ({blocked['blocks']} blocks): {blocked['srp'][0]:.3f}, "
            f"{blocked['srp'][1]:.3f}; {blocked['seconds']:.1f} s, peak {blocked['peak_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
