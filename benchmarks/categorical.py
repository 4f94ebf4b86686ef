"""Benchmark: categorical key risk against a pandas group-by of the same keys (the floor).

On synthetic records with 5 and with 10 categorical keys (Categorical
columns of 2 to 40 categories, skewed), each measure is timed against
``data.groupby(keys, observed=True, dropna=False)[keys[0]].transform("size")``,
the per-record frequency by pandas, in the same run:

* ``key_risk`` (frequencies, sample uniques, k-anonymity), as before and with
  weights (population frequencies);
* ``individual_risk`` with sampling weights and households (Benedetti &
  Franconi risk, expected re-identifications, household risk);
* ``key_risk(missing="any")`` with 2% of the key values missing (a missing
  value matches any value);
* ``suda`` (minimal sample uniques of at most 4 keys, SUDA scores), part ``suda``;
* ``pram`` (invariant PRAM of 5 keys) on ``--pram-n`` records (10^7), part ``pram``;
* the k-anonymity search (:func:`~sdckit.microdata.kanon.search_lattice`, k = 5,
  at most 5% left to suppression) over 8 keys, each with a two-level hierarchy
  (values in groups of three, then ``*``; a two-valued key straight to ``*``),
  then the whole :func:`~sdckit.microdata.kanon` with local suppression of
  every single key, part ``kanon``.

    .venv/bin/python benchmarks/categorical.py [--n 1000000] [--parts risk,suda,pram] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import timeit

import numpy as np
import pandas as pd

from sdckit.assess import individual_risk, key_risk, suda
from sdckit.microdata import Hierarchy, kanon, pram
from sdckit.microdata.kanon import search_lattice

LEVELS = (2, 5, 9, 12, 40, 3, 7, 15, 25, 4)


def make_data(n: int, n_keys: int, seed: int, missing_share: float = 0.0) -> pd.DataFrame:
    """Skewed categorical keys, sampling weights and households of about 3 records."""
    rng = np.random.default_rng(seed)
    columns: dict[str, object] = {}
    for j in range(n_keys):
        k = LEVELS[j]
        p = rng.dirichlet(np.ones(k) * 0.7)
        codes = rng.choice(k, size=n, p=p)
        if missing_share:
            codes[rng.random(n) < missing_share] = -1
        columns[f"k{j}"] = pd.Categorical.from_codes(codes, [f"c{c}" for c in range(k)])
    columns["w"] = rng.uniform(50, 150, n)
    columns["hid"] = np.sort(rng.integers(0, max(1, n // 3), n))
    return pd.DataFrame(columns)


TIMER = time.perf_counter


def best_of(func, repeats: int) -> float:
    """The shortest of ``repeats`` runs, in seconds (wall clock, or CPU with ``--cpu``)."""
    return min(timeit.repeat(func, number=1, repeat=repeats, timer=TIMER))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="records (default 10^6)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", default="risk,suda,pram", help="risk, suda, pram, kanon")
    parser.add_argument("--pram-n", type=int, default=10_000_000, help="records for PRAM")
    parser.add_argument("--keys", default="5,10", help="numbers of keys (default 5,10)")
    parser.add_argument(
        "--cpu", action="store_true", help="time CPU seconds of this process, not the wall clock"
    )
    args = parser.parse_args()
    global TIMER
    if args.cpu:
        TIMER = time.process_time
    parts = set(args.parts.split(","))
    print(
        f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{args.n} records; ratios to a pandas group-by size of the same keys, same run "
        f"({'CPU' if args.cpu else 'wall-clock'} time; PRAM on {args.pram_n} records)\n"
    )
    print("| keys | measure | x group-by floor |")
    print("|---:|---|---:|")
    counted = parts & {"risk", "suda"}
    for n_keys in (int(k) for k in args.keys.split(",") if counted):
        keys = [f"k{j}" for j in range(n_keys)]
        data = make_data(args.n, n_keys, seed=n_keys)
        holes = make_data(args.n, n_keys, seed=n_keys, missing_share=0.02)

        def floor(frame: pd.DataFrame = data, keys: list[str] = keys) -> None:
            frame.groupby(keys, observed=True, dropna=False)[keys[0]].transform("size")

        base = best_of(floor, args.repeats)
        jobs = (
            {}
            if "risk" not in parts
            else {
                "key_risk": (key_risk, data, {}),
                "key_risk, weighted": (key_risk, data, {"weight": "w"}),
                "individual_risk (weights, households)": (
                    individual_risk,
                    data,
                    {"weight": "w", "household": "hid"},
                ),
                "key_risk, missing='any' (2% missing)": (key_risk, holes, {"missing": "any"}),
            }
        )
        if "suda" in parts:
            jobs["suda, MSUs of at most 4 keys"] = (suda, data, {"max_size": 4})
        print(f"| {n_keys} | pandas group-by size (floor: {base:.3f} s) | 1.0 |")
        for name, (measure, frame, options) in jobs.items():
            seconds = best_of(
                lambda m=measure, f=frame, k=keys, o=options: m(f, k, **o), args.repeats
            )
            print(f"| {n_keys} | {name} | {seconds / base:.2f} |")
    if "kanon" in parts:
        kanon_part(args.n, args.repeats)
    if "pram" in parts:
        keys = [f"k{j}" for j in range(5)]
        data = make_data(args.pram_n, 5, seed=5)

        def pram_floor(frame: pd.DataFrame = data, keys: list[str] = keys) -> None:
            frame.groupby(keys, observed=True, dropna=False)[keys[0]].transform("size")

        base = best_of(pram_floor, 1)
        seconds = best_of(lambda: pram(data, columns=keys, random_state=1), 1)
        print(f"| 5 ({args.pram_n} records) | pandas group-by size (floor: {base:.3f} s) | 1.0 |")
        print(
            f"| 5 ({args.pram_n} records) | pram, invariant ({seconds:.1f} s) | {seconds / base:.2f} |"
        )


def grouped_hierarchy(levels: int) -> Hierarchy:
    """Values c0.. in groups of three, then ``*`` (straight to ``*`` for two values)."""
    if levels <= 2:
        return Hierarchy(table=pd.DataFrame([(f"c{c}", "*") for c in range(levels)]))
    rows = [(f"c{c}", f"g{c // 3}", "*") for c in range(levels)]
    return Hierarchy(table=pd.DataFrame(rows))


def kanon_part(n: int, repeats: int) -> None:
    """The k-anonymity search and the whole kanon on n records x 8 keys, against the floor."""
    keys = [f"k{j}" for j in range(8)]
    data = make_data(n, 8, seed=8)
    hierarchies = {key: grouped_hierarchy(LEVELS[j]) for j, key in enumerate(keys)}

    def floor() -> None:
        data.groupby(keys, observed=True, dropna=False)[keys[0]].transform("size")

    base = best_of(floor, repeats)
    found: list = []
    search = best_of(
        lambda: found.append(search_lattice(data, keys, hierarchies, k=5, max_suppression=0.05)),
        repeats,
    )
    whole = best_of(
        lambda: kanon(data, columns=keys, hierarchies=hierarchies, k_anonymity=5, combinations=1),
        1,
    )
    result = found[-1]
    print(f"| 8 ({n} records) | pandas group-by size (floor: {base:.3f} s) | 1.0 |")
    print(
        f"| 8 ({n} records) | kanon search, k = 5 ({search:.1f} s; {result.evaluated} of "
        f"{result.lattice_size} nodes counted) | {search / base:.2f} |"
    )
    print(
        f"| 8 ({n} records) | kanon with local suppression ({whole:.1f} s) | {whole / base:.2f} |"
    )


if __name__ == "__main__":
    main()
