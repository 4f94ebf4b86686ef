"""RWN on mixed files: per-column changed shares with plain one-hot dummies vs balanced steps.

Masks two public files from ``../shared/data`` with RWN's defaults (k = 5, q = 1),
once with ``balance_steps=False`` (plain 0/1 dummies, as in Matloff & Tendick
2015) and once with the default ``balance_steps=True``, and prints for each
masked column the share of cells changed, the expected share q(1 - sum p^2),
and the masked/original mean and variance ratios; then a few associations a
user of the file would compute (Cramér's V between categorical columns, the
correlation ratio of a numeric column across a categorical one).

    .venv/bin/python examples/validation/rwn_categorical.py [--seed 1] [--adult-rows 0]

``testdata``: sdcMicro's household survey test file (4,580 people); the
household id and the two weight columns are left out, the codes urbrur, roof,
walls, water, electcon, relat, sex and hhcivil are declared categorical.
``adult``: the complete records of UCI Adult (45,222), four numeric and seven
categorical variables (``--adult-rows N`` takes the first N for a quick run).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit import rwn

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def cramers_v(a: pd.Series, b: pd.Series) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    n = table.sum()
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / n
    chi2 = ((table - expected) ** 2 / np.where(expected > 0, expected, 1)).sum()
    r, c = table.shape
    return float(np.sqrt(chi2 / n / max(min(r, c) - 1, 1)))


def eta(numeric: pd.Series, groups: pd.Series) -> float:
    x = numeric.astype(float)
    means = x.groupby(groups, observed=True).transform("mean")
    return float(np.sqrt(((means - x.mean()) ** 2).sum() / ((x - x.mean()) ** 2).sum()))


def run(name: str, data: pd.DataFrame, pairs, etas, seed: int) -> None:
    print(
        f"\n### {name}: {len(data)} records x {data.shape[1]} columns, k = 5, q = 1, seed {seed}\n"
    )
    results = {b: rwn(data, k=5, q=1.0, random_state=seed, balance_steps=b) for b in (False, True)}
    plain, balanced = results[False].column_changes, results[True].column_changes
    print(
        "| column | kind | expected | changed, plain dummies | changed, balanced "
        "| mean ratio plain / balanced | var ratio plain / balanced |"
    )
    print("|---|---|---|---|---|---|---|")
    for col in plain.index:
        p, b = plain.loc[col], balanced.loc[col]
        ratios = (
            f"{p.mean_ratio:.3f} / {b.mean_ratio:.3f}" if np.isfinite(p.mean_ratio) else "-",
            f"{p.variance_ratio:.3f} / {b.variance_ratio:.3f}"
            if np.isfinite(p.variance_ratio)
            else "-",
        )
        print(
            f"| {col} | {p.kind} | {p.expected_share:.1%} | {p.changed_share:.2%} "
            f"| {b.changed_share:.2%} | {ratios[0]} | {ratios[1]} |"
        )
    print(f"\nbalanced variables and factors: {results[True].stats.get('balanced_variables')}")
    print(f"reference distance: {results[True].stats.get('reference_distance', float('nan')):.4g}")
    print("\n| association | original | plain dummies | balanced |")
    print("|---|---|---|---|")
    for a, b in pairs:
        values = [cramers_v(d[a], d[b]) for d in (data, results[False].data, results[True].data)]
        print(f"| Cramér's V {a} ~ {b} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
    for x, g in etas:
        values = [eta(d[x], d[g]) for d in (data, results[False].data, results[True].data)]
        print(f"| correlation ratio {x} ~ {g} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
    for label, res in (("plain", results[False]), ("balanced", results[True])):
        warned = [w for w in res.warnings if "practically unmasked" in w]
        print(f"\ncolumns practically unmasked ({label}): {len(warned)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--adult-rows", type=int, default=0, help="0 = all complete records")
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"{DATA} is absent: this validation reads the shared public datasets")

    td = pd.read_csv(DATA / "testdata.csv")
    codes = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "hhcivil"]
    td = td[[*codes, "age", "expend", "income", "savings"]].copy()
    for c in codes:
        td[c] = pd.Categorical(td[c])
    run(
        "testdata",
        td,
        [("urbrur", "water"), ("roof", "walls"), ("relat", "hhcivil")],
        [("age", "relat"), ("income", "urbrur")],
        args.seed,
    )

    adult = pd.read_csv(DATA / "adult.csv").dropna()
    if args.adult_rows:
        adult = adult.head(args.adult_rows)
    cats = ["workclass", "marital_status", "occupation", "relationship", "race", "sex", "income"]
    adult = adult[["age", "education_num", "hours_per_week", "capital_gain", *cats]].copy()
    for c in cats:
        adult[c] = pd.Categorical(adult[c])
    run(
        "adult",
        adult,
        [("sex", "relationship"), ("marital_status", "relationship"), ("income", "sex")],
        [("hours_per_week", "sex"), ("age", "marital_status"), ("education_num", "occupation")],
        args.seed,
    )


if __name__ == "__main__":
    main()
