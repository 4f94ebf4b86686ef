"""Calibration study of the swap-rate verdict on the real Adult data (issue 30).

Swaps ``income`` of ../shared/data/adult.csv (all 48,842 records; rows with a
missing value in the attributes used are dropped first, so the truth is
exact) with the rho data swap ``sdckit.microdata.swap`` at rates 0, 0.01,
0.02, 0.05 and 0.1, then runs the default estimator (Algorithm 1 with its
verdict and the re-swap calibration, or Consensus) on attribute sets of 2 to
7 attributes, Naive Bayes, the Gaussian model and Consensus. For every run:
the verdict code, and for the confident ones (``estimated``, ``no_evidence``)
whether the true group swap count lies in the stated 95% interval.

Aim (issue 30): among confident verdicts the truth outside the interval in at
most 5% of runs.

    .venv/bin/python examples/validation/swaprate_calibration.py --runs 200 [--out runs.csv]

``--runs`` is the total; it is spread evenly over the (rate, attribute set)
cells (at least one run each). ``--sets "sex, race;rL (3)"`` restricts the sets
and ``--first-run K`` starts the seeds at run index K, to add runs to an
earlier invocation.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.microdata import swap
from sdckit.swaprate import consensus_swap_count, estimate_swap_count

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"
LEFT = ["workclass", "relationship", "sex"]
RIGHT = ["education", "marital_status", "occupation", "race"]
SIX = ["age", "education", "sex", "relationship", "occupation", "hours_per_week"]
RATES = (0.0, 0.01, 0.02, 0.05, 0.1)
#: name -> (attributes, model); a pair of lists is Consensus (left, right).
SETS: dict[str, tuple] = {
    "sex, race": (["sex", "race"], "naive-bayes"),
    "education, race": (["education", "race"], "naive-bayes"),
    "age, education, sex": (["age", "education", "sex"], "naive-bayes"),
    "rL (3)": (LEFT, "naive-bayes"),
    "rR (4)": (RIGHT, "naive-bayes"),
    "six": (SIX, "naive-bayes"),
    "rL + rR (7)": (LEFT + RIGHT, "naive-bayes"),
    "gaussian: age, education_num, hours": (
        ["age", "education_num", "hours_per_week"],
        "gaussian",
    ),
    "consensus rL | rR": ((LEFT, RIGHT), "naive-bayes"),
}


def one_run(adult: pd.DataFrame, name: str, rate: float, seed: int) -> dict:
    attrs, model = SETS[name]
    consensus = isinstance(attrs, tuple)
    used = [*attrs[0], *attrs[1]] if consensus else list(attrs)
    data = adult.dropna(subset=[*used, "income"])[[*used, "income"]].reset_index(drop=True)
    if rate > 0:
        swapped = swap(data, columns="income", rate=rate, random_state=seed)
        released, truth = swapped.data, swapped.alpha
    else:
        released, truth = data, 0
    start = time.perf_counter()
    if consensus:
        result = consensus_swap_count(
            released, "income", attrs[0], attrs[1], model=model, random_state=seed
        )
    else:
        result = estimate_swap_count(released, "income", attrs, model=model, random_state=seed)
    seconds = time.perf_counter() - start
    verdict = result.verdict
    low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
    return {
        "set": name,
        "rate": rate,
        "seed": seed,
        "n": len(data),
        "truth": truth,
        "code": verdict.code,
        "alpha_hat": result.alpha,
        "low": low,
        "high": high,
        "covers": bool(low <= truth <= high) if verdict.quotable else None,
        "reason": "; ".join(verdict.reasons)[:200],
        "seconds": seconds,
    }


def markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += [
        "| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
        for row in frame.to_numpy()
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="total runs (default 200)")
    parser.add_argument("--out", type=Path, help="write every run to this CSV")
    parser.add_argument("--sets", help="semicolon-separated names of attribute sets (default all)")
    parser.add_argument(
        "--first-run",
        type=int,
        default=0,
        help="index of the first run per cell (seeds differ per index), to add runs later",
    )
    parser.add_argument(
        "--summarise",
        nargs="+",
        type=Path,
        metavar="CSV",
        help="run nothing: print the tables of runs written earlier with --out",
    )
    args = parser.parse_args()
    names = list(SETS) if not args.sets else [s.strip() for s in args.sets.split(";")]
    if args.summarise:
        runs = pd.concat([pd.read_csv(path) for path in args.summarise], ignore_index=True)
        runs["covers"] = runs["covers"].map(
            {True: True, False: False, "True": True, "False": False}
        )
        summarise(runs, [n for n in SETS if n in set(runs["set"])])
        return
    cells = len(names) * len(RATES)
    per_cell = max(1, math.ceil(args.runs / cells))
    adult = pd.read_csv(DATA)
    print(f"adult.csv: {len(adult)} records; {per_cell} run(s) per cell, {per_cell * cells} runs\n")
    rows = []
    for k in range(args.first_run, args.first_run + per_cell):
        for name in names:
            for rate in RATES:
                row = one_run(adult, name, rate, seed=1000 * k + int(1000 * rate) + 1)
                rows.append(row)
                print(
                    f"  {name:<38} rate {rate:<5g} truth {row['truth']:>5} -> {row['code']:<14}"
                    f" alpha_hat {row['alpha_hat']:>9.1f} interval [{row['low']:.0f}, "
                    f"{row['high']:.0f}] covers {row['covers']} ({row['seconds']:.1f} s)",
                    flush=True,
                )
    runs = pd.DataFrame(rows)
    if args.out:
        runs.to_csv(args.out, index=False)
    summarise(runs, names)


def summarise(runs: pd.DataFrame, names: list[str]) -> None:
    """The table of verdict codes by set and rate, and the coverage of confident verdicts."""
    short = {"estimated": "e", "no_evidence": "n", "unreliable": "u", "not_identified": "x"}
    table = (
        runs.assign(c=runs["code"].map(short))
        .groupby(["set", "rate"])["c"]
        .agg(lambda c: " ".join(f"{v}{(c == v).sum()}" for v in "enux" if (c == v).any()))
        .unstack("rate")
        .reindex(names)
        .reset_index()
    )
    print(
        "\n## Verdict codes by attribute set and true swap rate\n\n"
        "(e = estimated, n = no_evidence, u = unreliable, x = not_identified; counts of runs)\n"
    )
    print(markdown(table))
    confident = runs[runs["code"].isin(["estimated", "no_evidence"])]
    misses = int((~confident["covers"].astype(bool)).sum())
    print(
        f"\n## Coverage\n\nruns: {len(runs)}; confident verdicts: {len(confident)} "
        f"(estimated {int((confident['code'] == 'estimated').sum())}, no_evidence "
        f"{int((confident['code'] == 'no_evidence').sum())}); truth outside the 95% interval: "
        f"{misses} ({100 * misses / max(len(confident), 1):.1f}% of confident verdicts)"
    )
    if len(confident):
        by_set = (
            confident.groupby("set")
            .agg(confident=("covers", "size"), covered=("covers", "sum"))
            .reset_index()
        )
        print("\n" + markdown(by_set))
    wrong = confident[~confident["covers"].astype(bool)]
    if len(wrong):
        print("\nconfident verdicts that missed the truth:")
        print(markdown(wrong[["set", "rate", "seed", "truth", "code", "alpha_hat", "low", "high"]]))
    print(f"\nmedian seconds per run: {runs['seconds'].median():.1f}")
    print("\nwhat decided the unreliable verdicts (runs naming each check):")
    reasons = runs.loc[runs["code"] == "unreliable", "reason"].fillna("")
    for label, pattern in (
        ("model fit check", "does not reproduce"),
        ("imbalance", "imbalance"),
        ("re-swap calibration", "NOT follow"),
        ("latent-class comparison", "latent-class"),
        ("impossible number", "impossible"),
    ):
        print(f"  {label}: {int(reasons.str.contains(pattern).sum())}")


if __name__ == "__main__":
    main()
