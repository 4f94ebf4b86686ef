"""Validation: a Table-5-style comparison (Giessing & Höhne 2011, Section 6)
on a census-like table built from the Adult data (../shared/data/adult.csv).

Test table: native_country x age group x sex, all margins included (as the
paper's Region x Age x Country_of_Birth). Methods:

* SAFE (pre-tabular): elementary table native_country x age group x sex x race,
  controlled tables native_country x age x sex, age x sex x race and
  native_country x race;
* cell key noise with D = 3, 4, 5 and V = 2.01 (maximum-entropy design), before and
  after restoring additivity with the two-stage CTA (max deviation = D).

Prints the percentage of non-zero cells by absolute deviation, the mean and
maximum absolute deviation, false zeros and non-zeros, and checks that no
published cell is 1 or 2 and that SAFE and the adjusted tables are additive.

    .venv/bin/python examples/validation/tables_adult.py [--seed 2011] [--pstay 0.7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.tables import (
    add_record_keys,
    cell_key_perturb,
    compare_information_loss,
    design_ptable,
    information_loss,
    restore_additivity,
    safe_perturb,
    tabulate,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"
DIMS = ["native_country", "age_group", "sex"]


def load() -> pd.DataFrame:
    adult = pd.read_csv(DATA)
    adult["native_country"] = adult["native_country"].fillna("unknown")
    bands = [0, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 120]
    adult["age_group"] = pd.cut(adult["age"], bands, right=False).astype(str)
    return adult


def additive(table: pd.DataFrame, column: str) -> bool:
    structure = table.attrs["structure"]
    matrix, _ = structure.relations()
    y = np.zeros(structure.n_cells)
    y[structure.cell_positions(table)] = table[column].to_numpy(float)
    return bool(np.all(matrix @ y == 0))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=2011)
    parser.add_argument("--pstay", type=float, default=None, help="fix p_ii (the paper: 0.7)")
    args = parser.parse_args()
    adult = add_record_keys(load(), args.seed)
    original = tabulate(adult, DIMS, record_key="record_key")
    print(
        f"test table {' x '.join(DIMS)}: {len(original)} cells, "
        f"{int((original['count'] > 0).sum())} non-zero, "
        f"{int(original['count'].isin([1, 2]).sum())} cells of 1 or 2"
    )
    results, notes = {}, []

    start = time.perf_counter()
    safe = safe_perturb(
        adult,
        [DIMS, ["age_group", "sex", "race"], ["native_country", "race"]],
        random_state=args.seed,
    )
    structure = original.attrs["structure"]
    leaves = {d: list(structure.categories[i][: structure.n_leaves[i]]) for i, d in enumerate(DIMS)}
    protected = tabulate(safe.data, DIMS, categories=leaves)
    merged = original.assign(safe=protected["count"].to_numpy())
    results["SAFE"] = information_loss(merged, "safe")
    notes.append(
        f"SAFE: {time.perf_counter() - start:.1f}s, {safe.stats['records_changed']} records changed, "
        f"max deviation in controlled tables {safe.stats['max_abs_deviation']}, "
        f"small cells {int(merged['safe'].isin([1, 2]).sum())}, additive {additive(merged, 'safe')}"
    )
    for D in (3, 4, 5):
        perturbed = cell_key_perturb(original, design_ptable(D, 2.01, pstay=args.pstay)).internal
        start = time.perf_counter()
        restored = restore_additivity(perturbed, max_deviation=D, method="two-stage")
        table = restored.internal
        results[f"noiseD{D} adj."] = information_loss(table, "restored")
        results[f"noiseD{D}"] = information_loss(table, "perturbed")
        notes.append(
            f"noise D={D}: CTA {time.perf_counter() - start:.1f}s "
            f"(binaries {restored.stats['binaries']}, joint fallback {restored.stats['joint_fallback']}), "
            f"small cells before/after {int(table['perturbed'].isin([1, 2]).sum())}/"
            f"{int(table['restored'].isin([1, 2]).sum())}, additive before/after "
            f"{additive(table, 'perturbed')}/{additive(table, 'restored')}"
        )
    comparison = compare_information_loss(results)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(comparison.round(2).to_string())
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
