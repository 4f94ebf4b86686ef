"""Benchmark: the studio's "apply -> refreshed risk panel" against the library calls alone.

Issue 28 target: on 10^5 x 10 and 10^6 x 20, the time from "apply" (``POST
/api/apply``) to the refreshed risk and utility panel (the job done, ``GET
/api/state``) is at most 1.5 times the library calls that give the same
release and the same key risk: ``mask(method, data, schema=..., ...)`` then
``key_risk(release, keys)``, ``compare_moments`` and ``compare_correlations``
(the figures the panel shows). Both are timed in this run on this machine,
best of ``--repeats``. The studio recomputes only the figures a step can
have changed (a PRAM step on a key leaves the moments alone).

Memory: the studio runs in a child process; its peak resident size beyond
what it held before the file was opened (after a warm-up on 1,000 records
that loads every module) is given as a ratio to the data
frame's own size (``DataFrame.memory_usage(deep=True)``).

    nice -n 10 .venv/bin/python benchmarks/studio.py                 # 10^5 x 10
    nice -n 10 .venv/bin/python benchmarks/studio.py --large         # 10^6 x 20
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

KEYS = ["region", "sex", "agegroup", "status"]
METHODS = [
    ("pram", {"columns": ["region"], "min_diagonal": 0.8}),
    ("additive_noise", {"columns": ["v0", "v1", "v2"], "variance_factor": 0.1}),
]


def make_data(n: int, m: int, seed: int = 0) -> pd.DataFrame:
    """n records x m columns: 4 categorical keys, m - 4 continuous variables from 3 factors."""
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, 3))
    numeric = factors @ rng.normal(size=(3, m - 4)) + 0.3 * rng.normal(size=(n, m - 4))
    data = pd.DataFrame(numeric, columns=[f"v{j}" for j in range(m - 4)])
    data["region"] = rng.choice([f"r{i:02d}" for i in range(40)], size=n)
    data["sex"] = rng.choice(["f", "m"], size=n)
    data["agegroup"] = rng.choice([f"a{i}" for i in range(15)], size=n)
    data["status"] = rng.choice(["single", "married", "widowed", "divorced"], size=n)
    return data


def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def library_seconds(path: Path, method: str, params: dict, repeats: int) -> float:
    """Best time of the library calls giving the panel's figures: mask, key risk, moments, correlations."""
    from sdckit.assess import compare_correlations, compare_moments, key_risk
    from sdckit.io import read_table
    from sdckit.microdata import mask
    from sdckit.schema import Schema

    data = read_table(path)
    roles = dict.fromkeys(KEYS, "key")
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        schema = Schema.infer(data, roles=roles)
        release = mask(method, data, schema=schema, random_state=1, **params).data
        key_risk(release, KEYS, schema=Schema.infer(release, roles=roles))
        numeric = [c for c in data.columns if c not in KEYS]
        compare_moments(data, release, columns=numeric, schema=schema)
        compare_correlations(data, release, columns=numeric, schema=schema)
        best = min(best, time.perf_counter() - start)
    return float(best)


def studio_child(path: str, repeats: int, queue: multiprocessing.Queue) -> None:
    """In a child process: the studio's apply -> refreshed state, and its peak memory."""
    from fastapi.testclient import TestClient

    from sdckit.studio.app import Studio, create_app, remove_uploads

    # A warm-up on the first 1,000 records loads every module the timed runs use.
    small = Path(path).with_name("warmup.parquet")
    pd.read_parquet(path).head(1000).to_parquet(small, index=False)
    studio = Studio(output_dir=Path(path).parent)
    studio.open(studio.allow(small))
    studio.project.set_columns(by_role={"key": KEYS})
    for method, params in METHODS:
        studio.project.apply(method, params, seed=1)
    studio.project = None
    before = _rss_bytes()
    studio.open(studio.allow(Path(path)))
    times = {}
    with TestClient(create_app(studio), headers={"X-Studio-Token": studio.token}) as client:
        client.post("/api/roles", json={"by_role": {"key": KEYS}})
        for method, params in METHODS:
            best = np.inf
            for _ in range(repeats):
                client.post("/api/goto", json={"step": 0})
                start = time.perf_counter()
                job = client.post(
                    "/api/apply", json={"method": method, "params": params, "seed": 1}
                ).json()["job"]
                while client.get(f"/api/jobs/{job}").json()["status"] in ("queued", "running"):
                    time.sleep(0.002)
                state = client.get("/api/state").json()
                best = min(best, time.perf_counter() - start)
                assert state["metrics"]["risk"]["sample_uniques"] >= 0
            times[method] = float(best)
    remove_uploads(studio)
    queue.put({"times": times, "before": before, "peak": _rss_bytes()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="10^6 x 20 instead of 10^5 x 10")
    parser.add_argument("--repeats", type=int, default=3, help="timings per method (best kept)")
    args = parser.parse_args()
    n, m = (1_000_000, 20) if args.large else (100_000, 10)
    data = make_data(n, m)
    frame_bytes = int(data.memory_usage(deep=True).sum())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(
        f"data: {n:,} records x {m} columns (4 categorical keys, {m - 4} continuous); "
        f"frame {frame_bytes / 2**20:.0f} MiB"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.parquet"
        data.to_parquet(path, index=False)
        del data
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        child = context.Process(target=studio_child, args=(str(path), args.repeats, queue))
        child.start()
        found = queue.get()
        child.join()
        print(f"{'method':<16} {'library s':>10} {'studio s':>10} {'ratio':>7}")
        for method, params in METHODS:
            base = library_seconds(path, method, params, args.repeats)
            studio = found["times"][method]
            print(f"{method:<16} {base:>10.3f} {studio:>10.3f} {studio / base:>7.2f}")
    grown = found["peak"] - found["before"]
    print(
        f"studio peak memory: {found['peak'] / 2**20:.0f} MiB resident, "
        f"{grown / 2**20:.0f} MiB beyond the process before opening the file = "
        f"{grown / frame_bytes:.1f} x the frame"
    )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
