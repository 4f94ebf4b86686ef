"""The employee-database example of Matloff & Tendick (2015, Section "Example"), redone with sdckit.

The paper samples records of computer occupations (Census codes 100-109) from
regtools' ``prgeng``, keeps age, sex, weeks worked, MS and PhD dummies and wage
income, masks them with ``nbrs(p1, eps = 0.3, wts = c(2, 4, 5, rep(0.05, 3)))``
— the pure-radius method on standardised data, with the sex, MS and PhD
dummies down-weighted to 0.05 — and compares the coefficients of the
regression of wage income on the other five variables.

R's sampling stream cannot be reproduced, so we draw our own samples (several
replications) and report the original and masked coefficients and their
relative change, beside the paper's single run. Records whose eps-ball holds
no other record get missing values (Matloff & Tendick 2015) and drop out of the masked
regression, as ``lm`` drops NA rows.

Run: ``.venv/bin/python examples/validation/rwn_prgeng.py [--reps 10] [--n 1000] [--eps 0.3 0.2]``

``--example`` runs the paper's worked example instead: in a sample of 5,000
records "there was one female worker with age under 31" holding a PhD; after
masking with eps = 0.3 "there are now four women fitting the given
conditions, none of which was the one we highlighted", and with eps = 0.2
none. We draw ``--reps`` samples of ``--n`` records (give ``--n 5000``),
count the records matching the query (sex 2, PhD, age < 31) in the original
and in each masked release, and how many masked matches are an original
match's own row (the person found again).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from _shared import markdown

from sdckit import rwn

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "prgeng.csv"
PREDICTORS = ["age", "sex", "wkswrkd", "ms", "phd"]
PAPER = {
    "original": [447.2, -9591.7, 1286.4, 17333.0, 21291.3],
    "eps=0.3": [518.8, -8695.9, 1300.9, 17686.6, 21953.4],
    "eps=0.2": [492.5, -10266.6, 1284.2, 18187.0, 21649.7],
}


def load() -> pd.DataFrame:
    if not DATA.exists():
        sys.exit(f"{DATA} is absent: this validation reads ../shared/data/prgeng.csv")
    pe = pd.read_csv(DATA)
    pe = pe[(pe["occ"] >= 100) & (pe["occ"] <= 109)].copy()
    pe["ms"] = (pe["educ"] == 14).astype(int)
    pe["phd"] = (pe["educ"] == 16).astype(int)
    return pe[["age", "sex", "wkswrkd", "ms", "phd", "wageinc"]].reset_index(drop=True)


def coefficients(frame: pd.DataFrame) -> np.ndarray:
    complete = frame.dropna()
    x = sm.add_constant(complete[PREDICTORS].astype(float))
    return sm.OLS(complete["wageinc"].astype(float), x).fit().params[PREDICTORS].to_numpy()


def query(frame: pd.DataFrame) -> pd.Index:
    """Rows of the paper's query: female (sex 2), PhD, age under 31."""
    hit = (frame["sex"] == 2) & (frame["phd"] == 1) & (frame["age"] < 31)
    return frame.index[hit.fillna(False).to_numpy(bool)]


def worked_example(population: pd.DataFrame, args: argparse.Namespace) -> None:
    """The paper's uniqueness check, over --reps samples of --n records."""
    rng = np.random.default_rng(args.seed)
    weights = {"sex": 0.05, "ms": 0.05, "phd": 0.05}
    rows = []
    for rep in range(args.reps):
        sample = population.sample(n=args.n, random_state=rng.integers(2**32)).reset_index(
            drop=True
        )
        targets = query(sample)
        row = {"sample": rep + 1, "original matches": len(targets)}
        for eps in args.eps:
            masked = rwn(sample, k=0, eps=eps, scale="standard", weights=weights, random_state=rng)
            found = query(masked.data)
            row[f"eps={eps:g} matches"] = len(found)
            row[f"eps={eps:g} of them a target's own row"] = len(found.intersection(targets))
        rows.append(row)
    table = pd.DataFrame(rows)
    print(
        f"computer occupations in prgeng: {len(population)} records; {args.reps} samples of "
        f"{args.n} (seed {args.seed}); query: sex 2, PhD, age < 31\n"
    )
    print(markdown(table))
    print("\npaper (one sample of 5,000): 1 original match; eps=0.3: 4 matches, 0 of them her;")
    print("eps=0.2: 0 matches")
    single = table[table["original matches"] == 1]
    print(f"\nsamples with exactly one original match, as in the paper: {len(single)}")
    for eps in args.eps:
        hits = table[f"eps={eps:g} matches"]
        own = table[f"eps={eps:g} of them a target's own row"]
        print(
            f"eps={eps:g}: masked matches per sample {hits.min()}-{hits.max()} (mean "
            f"{hits.mean():.1f}); a target's own row among them in {int((own > 0).sum())} of "
            f"{len(table)} samples"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--n", type=int, default=1000, help="records sampled per replication")
    parser.add_argument("--eps", type=float, nargs="+", default=[0.3, 0.2])
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--example", action="store_true", help="the paper's worked example")
    args = parser.parse_args()

    population = load()
    if args.example:
        worked_example(population, args)
        return
    rng = np.random.default_rng(args.seed)
    weights = {"sex": 0.05, "ms": 0.05, "phd": 0.05}
    rows = {"original": []}
    isolated = {eps: [] for eps in args.eps}
    for eps in args.eps:
        rows[f"eps={eps:g}"] = []
    for _ in range(args.reps):
        sample = population.sample(n=args.n, random_state=rng.integers(2**32)).reset_index(
            drop=True
        )
        rows["original"].append(coefficients(sample))
        for eps in args.eps:
            result = rwn(sample, k=0, eps=eps, scale="standard", weights=weights, random_state=rng)
            isolated[eps].append(result.stats["records_with_empty_neighborhood"])
            rows[f"eps={eps:g}"].append(coefficients(result.data))

    print(
        f"computer occupations in prgeng: {len(population)} records; samples of {args.n}, "
        f"{args.reps} replications (seed {args.seed})\n"
    )
    header = f"{'':<26}" + "".join(f"{p:>12}" for p in PREDICTORS)
    print(header)
    original = np.mean(rows["original"], axis=0)
    for name, values in rows.items():
        mean = np.mean(values, axis=0)
        print(f"{'sdckit ' + name + ' (mean)':<26}" + "".join(f"{v:>12.1f}" for v in mean))
        if name != "original":
            rel = (mean - original) / np.abs(original)
            print(f"{'  relative change':<26}" + "".join(f"{v:>12.1%}" for v in rel))
    print()
    paper_orig = np.array(PAPER["original"])
    for name, values in PAPER.items():
        print(f"{'paper ' + name:<26}" + "".join(f"{v:>12.1f}" for v in values))
        if name != "original":
            rel = (np.array(values) - paper_orig) / np.abs(paper_orig)
            print(f"{'  relative change':<26}" + "".join(f"{v:>12.1%}" for v in rel))
    print()
    for eps in args.eps:
        print(
            f"eps={eps:g}: records with an empty neighbourhood (left missing) per sample: "
            f"mean {np.mean(isolated[eps]):.1f}"
        )


if __name__ == "__main__":
    main()
