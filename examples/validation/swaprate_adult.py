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
"""

from __future__ import annotations

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


def main() -> None:
    args, runs = runs_arguments(__doc__, runs=5, quick=1, quick_help="1 run, three rates")
    rates = [0.01, 0.05, 0.1] if args.quick else [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2]
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
