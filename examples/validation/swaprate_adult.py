"""Kifer (2015), Sections 5.2 and 5.3 on the UCI Adult data.

* Section 5.2: the estimated imbalance |A0 - A1| / N of Algorithm 1 with Naive
  Bayes on rL = {workclass, relationship, sex}: on the real (non-null) Adult
  data (misspecified model; the paper reports about 0.15) and on semi-synthetic
  data resampled from a Naive Bayes model fitted to Adult (well specified;
  the paper reports a very low imbalance).
* Section 5.3: the error |alpha_hat - alpha| / N of Algorithm 1 on rL alone
  ("Naive Bayes 1"), on rR = {education, marital-status, occupation, race}
  alone ("Naive Bayes 2") and of Consensus, for alpha/N from 0.01 to 0.2.

Data: ../shared/data/adult.csv, its first 32,561 rows (the UCI adult.data file
the paper used: its 1,843 records with a missing attribute among those used
match the paper's count), rows with missing values removed (30,162 records).
Swap attribute: income. alpha pairs of records with differing income exchange
it (Kifer 2015, Section 2), averaged over --runs repetitions.

    .venv/bin/python examples/validation/swaprate_adult.py [--runs 5] [--quick]
    .venv/bin/python examples/validation/swaprate_adult.py --with-missing [--runs 5]

``--with-missing`` runs Section 5.4 instead (Figures 8, 11 and 12): the same
32,561 rows with their missing values kept as a category of their own ("?", as
adult.data writes them), where being missing is correlated between rL and rR
(the paper's "assumption violation"). It prints the imbalance of Naive Bayes on
rL (Figure 8), the group swap count of Algorithm 1 on each half and of
Consensus (Figure 11), their errors (Figure 12), and, for one run per rate,
the verdict of the default Consensus with its re-swap calibration, the check
the paper proposes ("re-swapping the (swapped) data and seeing how the
estimator changes").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _shared import markdown, naive_bayes_resample, runs_arguments

from sdckit.swaprate import consensus_swap_count, estimate_swap_count, swap_group_count

LEFT = ["workclass", "relationship", "sex"]
RIGHT = ["education", "marital_status", "occupation", "race"]
DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"


def load_adult() -> pd.DataFrame:
    data = pd.read_csv(DATA).iloc[:32561]
    return data.dropna()[[*LEFT, *RIGHT, "income"]].reset_index(drop=True)


def semi_synthetic(data: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Resample every attribute independently given income (a Laplace-smoothed Naive Bayes)."""
    out = naive_bayes_resample(data, [*LEFT, *RIGHT], rng)
    return pd.DataFrame({col: v if col == "income" else v.astype(str) for col, v in out.items()})


def load_adult_with_missing() -> pd.DataFrame:
    """adult.data's 32,561 rows, a missing attribute value kept as the category "?"."""
    data = pd.read_csv(DATA).iloc[:32561][[*LEFT, *RIGHT, "income"]]
    return data.fillna({c: "?" for c in [*LEFT, *RIGHT]}).reset_index(drop=True)


def with_missing(runs: int, rates: list[float]) -> None:
    """Kifer (2015), Section 5.4: Figures 8, 11 and 12 on Adult with its missing values."""
    adult = load_adult_with_missing()
    n = len(adult)
    both = ((adult[LEFT] == "?").any(axis=1) & (adult[RIGHT] == "?").any(axis=1)).sum()
    print(
        f"Adult with missing values (adult.data rows): N = {n}; records missing an attribute "
        f"of rL: {(adult[LEFT] == '?').any(axis=1).sum()}, of rR: "
        f"{(adult[RIGHT] == '?').any(axis=1).sum()}, of both: {both}\n"
    )
    rows, verdicts = [], []
    for rate in [0.0, *rates]:
        for k in range(runs):
            rng = np.random.default_rng(100 * k + int(1000 * rate) + 7)
            alpha = round(rate * n)
            released = swap_group_count(adult, "income", alpha, random_state=rng).data
            result = consensus_swap_count(released, "income", LEFT, RIGHT, calibrate=False)
            rows.append(
                {
                    "alpha/N": rate,
                    "NB1 imbalance": result.left.imbalance,
                    "NB1 alpha/N": result.left.alpha / n,
                    "NB2 alpha/N": result.right.alpha / n,
                    "Consensus alpha/N": result.alpha / n,
                    "NB1 error": abs(result.left.alpha - alpha) / n,
                    "NB2 error": abs(result.right.alpha - alpha) / n,
                    "Consensus error": abs(result.alpha - alpha) / n,
                }
            )
            if k == 0:
                checked = consensus_swap_count(released, "income", LEFT, RIGHT)
                verdicts.append(
                    {"alpha/N": rate, "true alpha": alpha, "verdict": checked.verdict.code,
                     "why": checked.verdict.reasons[0] if checked.verdict.reasons else ""}
                )  # fmt: skip
    means = pd.DataFrame(rows).groupby("alpha/N").mean().reset_index()
    print(f"## Figure 8: imbalance of Naive Bayes on rL, mean of {runs} runs\n")
    print(markdown(means[["alpha/N", "NB1 imbalance"]]))
    print(f"\n## Figure 11: estimated alpha/N, mean of {runs} runs\n")
    print(markdown(means[["alpha/N", "NB1 alpha/N", "NB2 alpha/N", "Consensus alpha/N"]]))
    print(f"\n## Figure 12: error |alpha_hat - alpha| / N, mean of {runs} runs\n")
    print(markdown(means[["alpha/N", "NB1 error", "NB2 error", "Consensus error"]]))
    print("\n## The default Consensus with its re-swap calibration (first run of each rate)\n")
    print(markdown(pd.DataFrame(verdicts)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--with-missing", action="store_true")
    args, runs = runs_arguments(
        __doc__, runs=5, quick=1, quick_help="1 run, three rates", parser=parser
    )
    rates = [0.01, 0.05, 0.1] if args.quick else [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2]
    if args.with_missing:
        with_missing(runs, rates)
        return
    adult = load_adult()
    n = len(adult)
    print(
        f"non-null Adult (adult.data rows): N = {n}, income >50K: {(adult.income == '>50K').sum()}\n"
    )

    rows = []
    for rate in rates:
        for k in range(runs):
            rng = np.random.default_rng(100 * k + int(1000 * rate))
            alpha = round(rate * n)
            for source in ("real", "semi-synthetic"):
                data = adult if source == "real" else semi_synthetic(adult, rng)
                released = swap_group_count(data, "income", alpha, random_state=rng).data
                if source == "real":
                    result = consensus_swap_count(released, "income", LEFT, RIGHT, calibrate=False)
                    left, right = result.left, result.right
                    consensus = result.alpha
                else:
                    left = estimate_swap_count(
                        released, "income", LEFT, profile_se=False, calibrate=False
                    )
                    right = consensus = None
                rows.append(
                    {
                        "data": source,
                        "alpha/N": rate,
                        "NB1 error": abs(left.alpha - alpha) / n,
                        "NB1 imbalance": left.imbalance,
                        "NB2 error": abs(right.alpha - alpha) / n if right else np.nan,
                        "NB2 imbalance": right.imbalance if right else np.nan,
                        "Consensus error": abs(consensus - alpha) / n if right else np.nan,
                        "Consensus alpha/N": consensus / n if right else np.nan,
                    }
                )
    frame = pd.DataFrame(rows)
    means = frame.groupby(["data", "alpha/N"]).mean().reset_index()
    print("## Section 5.2: estimated imbalance of Naive Bayes on rL (Figures 7, 9)\n")
    print(markdown(means[["data", "alpha/N", "NB1 imbalance"]]))
    print("\n## Section 5.3: error |alpha_hat - alpha| / N on non-null Adult (Figure 10)\n")
    real = means[means["data"] == "real"].drop(columns="data")
    print(markdown(real))


if __name__ == "__main__":
    main()
