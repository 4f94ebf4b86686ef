"""Benchmark: the studio's "apply -> refreshed risk panel" against the library calls alone.

Issue 28 target: on 10^5 x 10 and 10^6 x 20, the time from "apply" (``POST
/api/apply``) to the refreshed risk and utility panel (the job done, ``GET
/api/state``) is at most 1.5 times the library calls that give the same
release and the figures the panel shows after it: ``mask(method, data,
schema=..., ...)`` (which also gives the per-column changes) and the
measures the step can have changed, as a person using the library would
call them: ``key_risk(release, keys)`` after PRAM on a key (the numbers are
untouched, so their moments are those of the step before), and
``compare_moments`` and ``compare_correlations`` after noise on numbers (the
keys are untouched, so their risk is that of the step before). The studio
decides the same from the data (``sdckit.studio.metrics``). Both are timed
in this run on this machine, best of ``--repeats``.

The client waits for the job with the long poll of ``GET /api/jobs/{id}?wait=``
(the page does the same), so the timing is the studio's, not a poller's: a
client asking every few milliseconds would compete with the worker thread
for the interpreter. Each time is printed as wall-clock seconds and as the
process's CPU seconds (every thread; on a loaded machine the CPU seconds are
the fairer ratio).

Opening: ``Studio.open`` of the file (reading, fingerprint, role
suggestions, the original's figures) against ``sdckit.io.read_table`` alone,
both in the child process, best of ``--repeats``.

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
#: The measures each step can change (see the module's docstring).
MEASURES = {"pram": ("key_risk",), "additive_noise": ("moments", "correlations")}


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


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> np.ndarray:
    wall, cpu = _clocks()
    return np.array([wall - start[0], cpu - start[1]])


def library_seconds(path: Path, method: str, params: dict, repeats: int) -> np.ndarray:
    """Best (wall, CPU) seconds of the library calls giving the panel's figures.

    mask, then the measures of :data:`MEASURES`.
    """
    from sdckit.assess import compare_correlations, compare_moments, key_risk
    from sdckit.io import read_table
    from sdckit.microdata import mask
    from sdckit.schema import Schema

    data = read_table(path)
    roles = dict.fromkeys(KEYS, "key")
    best = np.array([np.inf, np.inf])
    for _ in range(repeats):
        start = _clocks()
        schema = Schema.infer(data, roles=roles)
        release = mask(method, data, schema=schema, random_state=1, **params).data
        numeric = [c for c in data.columns if c not in KEYS]
        if "key_risk" in MEASURES[method]:
            key_risk(release, KEYS, schema=Schema.infer(release, roles=roles))
        if "moments" in MEASURES[method]:
            compare_moments(data, release, columns=numeric, schema=schema)
            compare_correlations(data, release, columns=numeric, schema=schema)
        best = np.minimum(best, _since(start))
    return best


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
    from sdckit.io import read_table

    opening = {"read_table": np.array([np.inf, np.inf]), "studio": np.array([np.inf, np.inf])}
    for _ in range(repeats):
        start = _clocks()
        read_table(path)
        opening["read_table"] = np.minimum(opening["read_table"], _since(start))
        studio.project = None
        start = _clocks()
        studio.open(studio.allow(Path(path)))
        opening["studio"] = np.minimum(opening["studio"], _since(start))
    times = {}
    with TestClient(create_app(studio), headers={"X-Studio-Token": studio.token}) as client:
        client.post("/api/roles", json={"by_role": {"key": KEYS}})
        for method, params in METHODS:
            best = np.array([np.inf, np.inf])
            for _ in range(repeats):
                client.post("/api/goto", json={"step": 0})
                start = _clocks()
                job = client.post(
                    "/api/apply", json={"method": method, "params": params, "seed": 1}
                ).json()["job"]
                while client.get(f"/api/jobs/{job}", params={"wait": 30}).json()["status"] in (
                    "queued",
                    "running",
                ):
                    pass  # the long poll returns when the job ends
                state = client.get("/api/state").json()
                best = np.minimum(best, _since(start))
                assert state["metrics"]["risk"]["sample_uniques"] >= 0
            times[method] = best.tolist()
    remove_uploads(studio)
    queue.put(
        {
            "times": times,
            "opening": {k: v.tolist() for k, v in opening.items()},
            "before": before,
            "peak": _rss_bytes(),
        }
    )


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
        print("apply -> refreshed panel; wall-clock and CPU seconds (best of each)")
        print(
            f"{'method':<16} {'library s':>10} {'studio s':>10} {'ratio':>7}"
            f" {'library cpu':>12} {'studio cpu':>11} {'cpu ratio':>10}"
        )
        for method, params in METHODS:
            base = library_seconds(path, method, params, args.repeats)
            studio = np.array(found["times"][method])
            ratio = studio / base
            print(
                f"{method:<16} {base[0]:>10.3f} {studio[0]:>10.3f} {ratio[0]:>7.2f}"
                f" {base[1]:>12.3f} {studio[1]:>11.3f} {ratio[1]:>10.2f}"
            )
        read, opened = (np.array(found["opening"][k]) for k in ("read_table", "studio"))
        print(
            f"opening the file: read_table {read[0]:.3f} s ({read[1]:.3f} cpu), studio "
            f"{opened[0]:.3f} s ({opened[1]:.3f} cpu) = {opened[0] / read[0]:.2f} x "
            f"({opened[1] / read[1]:.2f} x in cpu)"
        )
    grown = found["peak"] - found["before"]
    print(
        f"studio peak memory: {found['peak'] / 2**20:.0f} MiB resident, "
        f"{grown / 2**20:.0f} MiB beyond the process before opening the file = "
        f"{grown / frame_bytes:.1f} x the frame"
    )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
