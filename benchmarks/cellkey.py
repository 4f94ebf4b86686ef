"""Benchmark: tabulate + cell key perturbation of a 350 x 21 x 2 table, sdckit vs the ONS package.

Issue 6, re-done for issue 24 so that both tools do the same work: the same
synthetic records (``area`` 350 categories, ``age`` 21, ``sex`` 2, record keys
0..255), the same p-table (``design_ptable(D=3, V=2.01)`` written in the ONS
layout by ``write_ptable(..., format="ons")`` and read back by both), threshold
0. The ONS ``cell-key-perturbation`` package's ``create_perturbed_table``
builds the 14,700 inner cells; sdckit is timed twice: on the same inner cells
(``margins=False``: the like-for-like ratio) and with all margins (351 x 22 x 3
= 23,166 cells, what a producer publishes). The run also counts the inner
cells on which the two perturbed tables agree (all of them, if both implement
the same method).

The ONS package is not a dependency of sdckit: install it outside the
project, e.g. ``pip install --no-deps --target /tmp/ons_ckp cell-key-perturbation``
and pass ``--ons-path /tmp/ons_ckp``. Without it, the baseline is a plain
pandas group-by + merge on the same key-by-key p-table, and the output says so.

    .venv/bin/python benchmarks/cellkey.py [--quick] [--ons-path DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from _timing import best_run

from sdckit.tables import cell_key_perturb, design_ptable, read_ptable, write_ptable

SHAPE = (350, 21, 2)


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame(
        {
            "area": rng.integers(0, SHAPE[0], n, dtype=np.int64),
            "age": rng.integers(0, SHAPE[1], n, dtype=np.int64),
            "sex": rng.integers(0, SHAPE[2], n, dtype=np.int64),
            "record_key": rng.integers(0, 256, n, dtype=np.int64),
        }
    )
    return data


def pandas_baseline(data: pd.DataFrame, ons_frame: pd.DataFrame) -> pd.DataFrame:
    """Group-by count and key sum, then a merge on (row, cell key): inner cells only."""
    grouped = data.groupby(["area", "age", "sex"]).agg(
        count=("record_key", "size"), ckey=("record_key", "sum")
    )
    grouped = grouped.reset_index()
    grouped["ckey"] %= 256
    grouped["pcv"] = np.where(
        grouped["count"] <= 750, grouped["count"], (grouped["count"] - 1) % 250 + 501
    )
    merged = grouped.merge(ons_frame, on=["pcv", "ckey"], how="left")
    merged["perturbed"] = merged["count"] + merged["pvalue"].fillna(0).astype(int)
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

    baseline_name = "pandas group-by + merge on the same p-table (ONS package not found)"
    ons = None
    if Path(args.ons_path).is_dir():
        sys.path.insert(0, args.ons_path)
        try:
            from cell_key_perturbation.create_perturbed_table import create_perturbed_table

            ons = create_perturbed_table
            baseline_name = "ONS cell-key-perturbation create_perturbed_table"
        except ImportError:
            ons = None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ptable_ons.csv"
        write_ptable(design_ptable(3, 2.01), path, format="ons")
        ons_frame = pd.read_csv(path)
    ptable = read_ptable(ons_frame)

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
    )
    print(f"baseline: {baseline_name}")
    print(
        f"table: {SHAPE[0]} x {SHAPE[1]} x {SHAPE[2]}; p-table D=3, V=2.01 in the ONS layout "
        "(256 cell keys) for both; threshold 0"
    )
    dims = ["area", "age", "sex"]
    for n in sizes:
        data = synthetic(n)

        def inner(data=data):
            return cell_key_perturb(data, ptable, dims=dims, margins=False).table

        def with_margins(data=data):
            return cell_key_perturb(data, ptable, dims=dims).table

        if ons is not None:

            def theirs(data=data):
                with contextlib.redirect_stdout(io.StringIO()):
                    return ons(data, ons_frame, ["area"], ["age", "sex"], "record_key", threshold=0)
        else:

            def theirs(data=data):
                return pandas_baseline(data, ons_frame)

        t_theirs, other = best_run(theirs, repeats)
        t_inner, table = best_run(inner, repeats)
        t_margins, full = best_run(with_margins, repeats)
        assert not full["perturbed"].isin([1, 2]).any()
        ours = table.astype({d: "int64" for d in dims}).set_index(dims)["perturbed"]
        theirs_counts = other.set_index(dims)["count" if ons is not None else "perturbed"]
        agree = int(
            (ours.reindex(theirs_counts.index).to_numpy() == theirs_counts.to_numpy()).sum()
        )
        print(
            f"n = {n:>10,d}: inner cells {len(table):,} (sdckit) / {len(other):,} (baseline), "
            f"identical {agree:,}; speed-up (baseline time / sdckit time): "
            f"same cells {t_theirs / t_inner:.1f}x, sdckit with margins "
            f"({len(full):,} cells) {t_theirs / t_margins:.1f}x"
        )
        del data
        gc.collect()


if __name__ == "__main__":
    main()
