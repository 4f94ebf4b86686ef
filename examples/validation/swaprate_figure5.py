"""Kifer (2015), Figure 5: Algorithm 1 on semi-synthetic Adult, with its verdict (issue 30).

Semi-synthetic Adult (Kifer 2015, Section 5): a Naive Bayes model with Laplace
smoothing is fitted to Adult with income as the class, and records are drawn
from it, so that Naive Bayes is the true model. Here: the first 32,561 records
of ../shared/data/adult.csv (the UCI adult.data file the paper used), rows with
a missing value in the attributes used removed (N = 30,718); income drawn from its margin, then every attribute
drawn independently from its Laplace-smoothed distribution given income (age
and hours per week by their level frequencies, as integers). alpha =
round(alpha/N x N) pairs of records with differing income exchange it (the
paper's fixed-alpha view of the swap, Section 2), and the default estimator
(Algorithm 1 with Naive Bayes, its verdict and the re-swap calibration) runs on
rL = {workclass, relationship, sex} and on six attributes {age, education,
sex, relationship, occupation, hours_per_week}.

Also the Gaussian data of Section 5.1 (N = 10,000; r ~ N(0, 1) or N(1, 1),
half the records each class; the Gaussian model), where the method should
also reach ``estimated``.

Prints, per setting and alpha/N: runs coded ``estimated`` and ``no_evidence``,
mean error |alpha_hat - alpha| / N, and how many of the confident runs
(``estimated`` or ``no_evidence``) have the truth inside their 95% interval.

    .venv/bin/python examples/validation/swaprate_figure5.py --runs 50

``--settings``, ``--first-run`` and ``--out`` split the work over several
processes (each run appended to the CSV as it ends); ``--summarise A.csv B.csv``
prints the table from their files.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _shared import markdown, naive_bayes_resample

from sdckit.swaprate import estimate_swap_count, swap_group_count

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"
LEFT = ["workclass", "relationship", "sex"]
SIX = ["age", "education", "sex", "relationship", "occupation", "hours_per_week"]
ATTRIBUTES = sorted(set(LEFT) | set(SIX))
RATES = (0.01, 0.025, 0.05, 0.075, 0.1)


def load_adult() -> pd.DataFrame:
    data = pd.read_csv(DATA).iloc[:32561]
    return data[[*ATTRIBUTES, "income"]].dropna().reset_index(drop=True)


def semi_synthetic(adult: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Draw N records from a Laplace-smoothed Naive Bayes model fitted to ``adult``."""
    return pd.DataFrame(naive_bayes_resample(adult, ATTRIBUTES, rng))


def gaussian_data(n: int, rng: np.random.Generator) -> pd.DataFrame:
    s = np.repeat([0, 1], [n - n // 2, n // 2])
    return pd.DataFrame({"r": rng.normal(s.astype(float), 1.0), "s": s})


def one_run(adult: pd.DataFrame, setting: str, rate: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    if setting == "gaussian (Section 5.1)":
        data, swap_attribute, attrs, model = gaussian_data(10_000, rng), "s", ["r"], "gaussian"
    else:
        data, swap_attribute, model = semi_synthetic(adult, rng), "income", "naive-bayes"
        attrs = LEFT if setting == "semi-synthetic Adult, rL" else SIX
    n = len(data)
    alpha = round(rate * n)
    released = swap_group_count(data, swap_attribute, alpha, random_state=rng).data
    start = time.perf_counter()
    result = estimate_swap_count(released, swap_attribute, attrs, model=model, random_state=seed)
    verdict = result.verdict
    low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
    return {
        "setting": setting,
        "alpha/N": rate,
        "code": verdict.code,
        "error/N": abs(result.alpha - alpha) / n,
        "covers": bool(low <= alpha <= high) if verdict.quotable else None,
        "reason": "; ".join(verdict.reasons),
        "seconds": time.perf_counter() - start,
    }


SETTINGS = ("semi-synthetic Adult, rL", "semi-synthetic Adult, six", "gaussian (Section 5.1)")


def summarise(runs: pd.DataFrame) -> None:
    """Print the table of Figure 5 from the runs (one row a run)."""
    table = (
        runs.groupby(["setting", "alpha/N"], sort=False)
        .agg(
            runs=("code", "size"),
            estimated=("code", lambda c: int((c == "estimated").sum())),
            no_evidence=("code", lambda c: int((c == "no_evidence").sum())),
            mean_error=("error/N", "mean"),
            covered=("covers", lambda c: f"{int(c.dropna().astype(bool).sum())}/{c.notna().sum()}"),
        )
        .reset_index()
        .rename(columns={"mean_error": "mean error/N", "covered": "confident runs covering"})
    )
    print("\n## Figure 5 (semi-synthetic Adult) and Section 5.1 (Gaussian), with the verdict\n")
    print(markdown(table))
    confident = runs["covers"].dropna().astype(bool)
    print(
        f"\n{len(runs)} runs; confident verdicts {len(confident)}, truth inside the 95% interval "
        f"in {int(confident.sum())} ({confident.mean():.1%})"
        if len(confident)
        else f"\n{len(runs)} runs; no confident verdict"
    )
    print(f"median seconds per run: {runs['seconds'].median():.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50, help="runs per setting and alpha/N")
    parser.add_argument(
        "--first-run", type=int, default=0, help="index of the first run (seeds follow it)"
    )
    parser.add_argument(
        "--settings",
        default=";".join(SETTINGS),
        help="settings to run, separated by ';' (default: all three)",
    )
    parser.add_argument("--out", type=Path, help="append every run to this CSV as it finishes")
    parser.add_argument(
        "--summarise", type=Path, nargs="+", help="print the table from earlier --out files only"
    )
    args = parser.parse_args()
    if args.summarise:
        summarise(pd.concat([pd.read_csv(p) for p in args.summarise], ignore_index=True))
        return
    settings = [s.strip() for s in args.settings.split(";") if s.strip()]
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        parser.error(f"unknown setting(s) {unknown}; choose from {list(SETTINGS)}")
    adult = load_adult()
    print(
        f"adult.data rows without missing attributes: N = {len(adult)}; {args.runs} run(s) per point\n"
    )
    rows = []
    for setting in settings:
        for rate in RATES:
            for k in range(args.first_run, args.first_run + args.runs):
                row = one_run(adult, setting, rate, seed=10_000 * k + int(10_000 * rate))
                rows.append(row)
                print(
                    f"  {setting:<28} alpha/N {rate:<6g} {row['code']:<14} error/N "
                    f"{row['error/N']:.4f} covers {row['covers']} ({row['seconds']:.1f} s) "
                    f"{row['reason'][:120]}",
                    flush=True,
                )
                if args.out:
                    pd.DataFrame([row]).to_csv(
                        args.out, mode="a", header=not args.out.exists(), index=False
                    )
    summarise(pd.DataFrame(rows))


if __name__ == "__main__":
    main()
