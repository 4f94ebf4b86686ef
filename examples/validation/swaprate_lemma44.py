"""Kifer (2015), Lemma 4.4: does a correlation between the halves explain Consensus's bias?

On the non-null Adult data (rows of ../shared/data/adult.csv without a missing
value in the seven attributes), ``income`` is swapped by
``sdckit.swaprate.swap_group_count`` with a known group swap count alpha;
Consensus (Algorithm 2) runs on rL = {workclass, relationship, sex} and
rR = {education, marital_status, occupation, race} without its re-swap
calibration. Knowing the original income, the script measures the
correlation beta of the two fitted halves' predictions on the original
classes (mean of M_L(s) M_R(s) minus the product of the means), and prints the
swap count Lemma 4.4 gives at that beta (``CorrelationSensitivity.alpha_at``)
beside the truth and the Consensus estimate (beta = 0).

    .venv/bin/python examples/validation/swaprate_lemma44.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.swaprate import consensus_swap_count, swap_group_count

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LEFT = ["workclass", "relationship", "sex"]
RIGHT = ["education", "marital_status", "occupation", "race"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=2, help="runs per swap rate")
    args = parser.parse_args()
    adult = pd.read_csv(DATA / "adult.csv", na_values=["?"], skipinitialspace=True)
    adult = adult[[*LEFT, *RIGHT, "income"]].dropna().reset_index(drop=True)
    adult["income"] = adult["income"].str.rstrip(".")
    print(f"non-null Adult: N = {len(adult):,}\n")
    print(
        "| alpha/N | seed | true alpha | Consensus (beta = 0) | beta on the original classes "
        "| Lemma 4.4 at that beta | beta that would explain all the agreement |"
    )
    print("|---|---|---|---|---|---|---|")
    found: list[tuple[float, float, float, float]] = []  # Consensus / truth, beta, lemma, beta0
    for rate in (0.01, 0.02, 0.05, 0.1):
        alpha = round(rate * len(adult))
        for seed in range(args.seeds):
            released = swap_group_count(adult, "income", alpha, random_state=seed).data
            result = consensus_swap_count(released, "income", LEFT, RIGHT, calibrate=False)
            swapped = result.left.swapped_class
            one = released["income"].to_numpy()[np.flatnonzero(swapped == 1)[0]]
            original = (adult["income"].to_numpy() == one).astype(np.intp)
            rows = np.arange(len(original))
            left = result.left.class_probabilities()[rows, original]
            right = result.right.class_probabilities()[rows, original]
            beta = float((left * right).mean() - left.mean() * right.mean())
            sensitivity = result.sensitivity
            assert sensitivity is not None
            print(
                f"| {rate:g} | {seed} | {alpha:,} | {result.alpha:,.0f} | {beta:+.4f} | "
                f"{sensitivity.alpha_at(beta):,.0f} | {sensitivity.beta_no_swap:+.4f} |"
            )
            found.append(
                (
                    result.alpha / alpha,
                    beta,
                    sensitivity.alpha_at(beta) / alpha,
                    sensitivity.beta_no_swap,
                )
            )
    share, beta, lemma, beta0 = (np.array(column) for column in zip(*found, strict=True))
    print(
        f"\nConsensus recovers {share.min():.0%}-{share.max():.0%} of the true alpha; the "
        f"measured beta is {beta.min():+.4f} to {beta.max():+.4f}; the lemma at that beta gives "
        f"{lemma.min():.0%}-{lemma.max():.0%} of the truth; a beta of {beta0.min():+.4f} to "
        f"{beta0.max():+.4f} would explain all of the agreement with no swap at all."
    )


if __name__ == "__main__":
    main()
