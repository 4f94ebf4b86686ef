"""Validation: SUDA's minimal sample uniques on Adult against an enumeration, and a planted record.

Keys age, education, marital_status, occupation, race, sex, native_country
(missing values a category of their own). Two checks:

1. **Enumeration.** For every subset S of the keys up to ``--max-size``, pandas
   counts the records sharing each record's values on S; a record's MSUs are
   the subsets it is unique on while unique on *no* proper subset (every
   proper subset checked, not only those one key smaller, which is what
   :func:`sdckit.assess.suda` relies on). The MSUs must be the same sets.
2. **A planted record** (a known truth): a copy of an ordinary record (one
   of the largest class on all keys, so it has no MSU) given a native country
   that no record has. It must then have exactly one MSU, {native_country},
   and the largest SUDA score of the file, with native_country carrying all
   of it.

    .venv/bin/python examples/validation/suda_adult.py [--max-size 3]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.assess import suda

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"
KEYS = ["age", "education", "marital_status", "occupation", "race", "sex", "native_country"]


def enumerate_msus(data: pd.DataFrame, keys: list[str], max_size: int) -> set:
    """(record position, key tuple) of every MSU, by pandas group-bys of every subset."""
    frame = data[keys].astype(object).fillna("<missing>").reset_index(drop=True)
    unique: dict[tuple[str, ...], np.ndarray] = {}
    for m in range(1, max_size + 1):
        for subset in itertools.combinations(keys, m):
            sizes = frame.groupby(list(subset), sort=False)[subset[0]].transform("size")
            unique[subset] = sizes.to_numpy() == 1
    found = set()
    for subset, flags in unique.items():
        candidates = flags.copy()
        for r in range(1, len(subset)):
            for proper in itertools.combinations(subset, r):
                candidates &= ~unique[proper]
        found.update((int(i), subset) for i in np.flatnonzero(candidates))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-size", type=int, default=3)
    args = parser.parse_args()
    data = pd.read_csv(DATA, na_values=["?"], skipinitialspace=True)
    sizes = data.groupby(KEYS, dropna=False)["age"].transform("size")
    planted = data.loc[[int(sizes.to_numpy().argmax())]].copy()
    planted["native_country"] = "Atlantis"
    data = pd.concat([data, planted], ignore_index=True)
    target = len(data) - 1

    start = time.perf_counter()
    result = suda(data, KEYS, max_size=args.max_size, keep_msus=True)
    seconds = time.perf_counter() - start
    assert result.msus is not None
    ours = {
        (int(r), tuple(k)) for r, k in zip(result.msus.record, result.msus["keys"], strict=True)
    }
    start = time.perf_counter()
    truth = enumerate_msus(data, KEYS, args.max_size)
    enumeration_seconds = time.perf_counter() - start

    print(f"Adult + 1 planted record: {len(data)} records, keys {', '.join(KEYS)}")
    print(f"MSUs of at most {args.max_size} keys:")
    print()
    print("| figure | sdckit | enumeration |")
    print("|---|---:|---:|")
    by_size = result.msus["size"].value_counts().sort_index()
    truth_sizes = pd.Series([len(s) for _, s in truth]).value_counts().sort_index()
    for m in range(1, args.max_size + 1):
        print(f"| MSUs of {m} key(s) | {int(by_size.get(m, 0))} | {int(truth_sizes.get(m, 0))} |")
    print(
        f"| records with an MSU | {int((result.scores > 0).sum())} | {len({r for r, _ in truth})} |"
    )
    print(f"| same (record, keys) sets | {ours == truth} | |")
    print(f"| seconds | {seconds:.2f} | {enumeration_seconds:.2f} |")
    print()
    mine = sorted(k for r, k in ours if r == target)
    rank = int((result.scores > result.scores.iloc[target]).sum()) + 1
    contribution = result.contributions.iloc[target]["native_country"]
    print(
        f"planted record (row {target + 1}): MSUs {mine}; SUDA score "
        f"{result.scores.iloc[target]:.4g}, rank {rank} of {len(data)} (ties share the rank); "
        f"share from native_country {contribution:.3g}"
    )
    print()
    print("```")
    print(result.summary())
    print("```")
    assert ours == truth, "the MSUs differ from the enumeration"
    assert mine == [("native_country",)] and rank == 1 and contribution == 1.0


if __name__ == "__main__":
    main()
