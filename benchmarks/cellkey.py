"""Benchmark: tabulate + cell key perturbation of a 350 x 21 x 2 table, sdckit vs the ONS package.

Issue 6. Both tools get the same synthetic records in the same run:
``area`` (350 categories), ``age`` (21), ``sex`` (2), with record keys. sdckit
builds the table *with all margins* (351 x 22 x 3 = 23,166 cells) and
perturbs every cell; the ONS ``cell-key-perturbation`` package's
``create_perturbed_table`` builds the 14,700 inner cells only (it has no
margins) with its own 256-key p-table (threshold 0, so nothing is
suppressed).

The ONS package is not a dependency of sdckit: install it outside the
project, e.g. ``pip install --no-deps --target /tmp/ons_ckp cell-key-perturbation``
and pass ``--ons-path /tmp/ons_ckp``. Without it, the baseline is a plain
pandas group-by + merge implementation of the same lookup, and the output
says so.

    .venv/bin/python benchmarks/cellkey.py [--quick] [--ons-path DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.tables import add_record_keys, cell_key_perturb, design_ptable

SHAPE = (350, 21, 2)


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame(
        {
            "area": rng.integers(0, SHAPE[0], n, dtype=np.int64),
            "age": rng.integers(0, SHAPE[1], n, dtype=np.int64),
            "sex": rng.integers(0, SHAPE[2], n, dtype=np.int64),
            "ons_key": rng.integers(0, 256, n, dtype=np.int64),
        }
    )
    return add_record_keys(data, seed + 1)


def best_of(repeats: int, func) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def pandas_baseline(data: pd.DataFrame, ptable_frame: pd.DataFrame) -> pd.DataFrame:
    """Group-by sum of keys + merge on the tidy p-table (inner cells only)."""
    grouped = data.groupby(["area", "age", "sex"]).agg(
        count=("record_key", "size"), key_sum=("record_key", "sum")
    )
    grouped = grouped.reset_index()
    grouped["u"] = (grouped["key_sum"] % (2**31 - 1)) / (2**31 - 1)
    last = int(ptable_frame["i"].max())
    grouped["i"] = np.minimum(grouped["count"], last)
    merged = grouped.merge(ptable_frame[["i", "v", "p_int_lb", "p_int_ub"]], on="i")
    hit = (merged["u"] >= merged["p_int_lb"]) & (merged["u"] < merged["p_int_ub"])
    merged = merged[hit]
    merged["perturbed"] = merged["count"] + merged["v"]
    return merged


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10^5 and 10^6 records only")
    parser.add_argument(
        "--ons-path",
        default=os.environ.get("ONS_CKP_PATH", "/tmp/ons_ckp"),
        help="directory where cell-key-perturbation was installed with pip --target",
    )
    args = parser.parse_args()
    sizes = [10**5, 10**6] if args.quick else [10**6, 10**7]
    repeats = 1 if args.quick else 3

    baseline_name = "pandas group-by + merge (ONS package not found)"
    ons = None
    if Path(args.ons_path).is_dir():
        sys.path.insert(0, args.ons_path)
        try:
            from cell_key_perturbation.create_perturbed_table import create_perturbed_table

            ons = create_perturbed_table
            baseline_name = "ONS cell-key-perturbation create_perturbed_table"
        except ImportError:
            ons = None
    ptable = design_ptable(3, 2.01)
    ptable_frame = ptable.to_frame()
    ons_ptable = None
    if ons is not None:
        ons_ptable = pd.read_csv(Path(args.ons_path) / "ptable_10_5_rule.csv")

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
    )
    print(f"baseline: {baseline_name}")
    print(
        f"table: {SHAPE[0]} x {SHAPE[1]} x {SHAPE[2]}; sdckit includes margins "
        f"({(SHAPE[0] + 1) * (SHAPE[1] + 1) * (SHAPE[2] + 1)} cells), the baseline does not"
    )
    for n in sizes:
        data = synthetic(n)

        def ours(data=data):
            return cell_key_perturb(data, ptable, dims=["area", "age", "sex"]).table

        if ons is not None:

            def theirs(data=data):
                import contextlib
                import io

                with contextlib.redirect_stdout(io.StringIO()):
                    return ons(data, ons_ptable, ["area"], ["age", "sex"], "ons_key", threshold=0)
        else:

            def theirs(data=data):
                return pandas_baseline(data, ptable_frame)

        t_ours, table = best_of(repeats, ours)
        t_theirs, other = best_of(repeats, theirs)
        assert not table["perturbed"].isin([1, 2]).any()
        print(
            f"n = {n:>10,d}: sdckit {len(table):,} cells, baseline {len(other):,} cells; "
            f"speed-up (baseline time / sdckit time) = {t_theirs / t_ours:.1f}x"
        )
        del data
        gc.collect()


if __name__ == "__main__":
    main()
