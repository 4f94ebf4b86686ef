"""Validation: the prediction-oriented check of Perry, Matloff & Tendick (2022), Section 8.4.

Perry, Matloff & Tendick (2022) train random forests on data masked by RWN
(q = 0.5, k = 5, 10, 25, 50) and score them on a holdout of original
records, over 25 replications. Their misclassification rates:

    pef  (occ, 6 occupations; holdout 1000):  no SDC 0.628 | 0.627 0.645 0.682 0.659
    Pima (diabetes):                           no SDC 0.241 | 0.242 0.233 0.245 0.241

The paper gives the holdout size only for pef (1000). For Pima we use
min(1000, 10% of n) = 76, the default of the authors' regtools ``qe*``
functions; ``--holdout`` changes it. In each replication the holdout is
drawn first, the remaining training records are masked (response included:
the whole training file is released), and every forest (100 trees) is scored
on the same original holdout.

    .venv/bin/python examples/validation/assess_prediction.py --dataset pima [--reps 25]
    .venv/bin/python examples/validation/assess_prediction.py --dataset pef --holdout 1000 [--min-leaf 20]

Every table also prints the error of a constant prediction (the commonest
class of the training records): a forest that does not beat it has learnt
nothing, and then the comparison says nothing about the masking.
``--min-leaf`` sets scikit-learn's ``min_samples_leaf`` (default 1, fully
grown trees as in the paper's R randomForest).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from sdckit.assess import prediction_experiment

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
PAPER = {
    "pima": {"original": 0.241, "k = 5": 0.242, "k = 10": 0.233, "k = 25": 0.245, "k = 50": 0.241},
    "pef": {"original": 0.628, "k = 5": 0.627, "k = 10": 0.645, "k = 25": 0.682, "k = 50": 0.659},
}


def load(name: str) -> tuple[pd.DataFrame, str]:
    if name == "pima":
        return pd.read_csv(SHARED / "pima_indians_diabetes.csv"), "diabetes"
    data = pd.read_csv(SHARED / "pef.csv")
    data["occ"] = data["occ"].astype(str)  # occupation codes are classes, not numbers
    data["sex"] = data["sex"].astype(str)
    return data, "occ"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", choices=["pima", "pef"], default="pima")
    parser.add_argument("--reps", type=int, default=25)
    parser.add_argument("--holdout", type=int, default=None)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--seed", type=int, default=84)
    parser.add_argument("--min-leaf", type=int, default=1)
    args = parser.parse_args()
    data, response = load(args.dataset)
    settings = {f"k = {k}": {"k": k, "q": 0.5} for k in (5, 10, 25, 50)}
    result = prediction_experiment(
        data,
        response,
        method="rwn",
        settings=settings,
        holdout=args.holdout,
        n_replications=args.reps,
        n_estimators=args.trees,
        min_samples_leaf=args.min_leaf,
        random_state=args.seed,
    )
    sd = result.errors.groupby("training", sort=False)["error"].std()
    print(
        f"{args.dataset}: {len(data)} records, response {response!r}, holdout {result.holdout}, "
        f"{args.reps} replications, {args.trees} trees, min_samples_leaf {args.min_leaf}\n"
    )
    print("| training data | misclassification (mean) | sd over replications | paper |")
    print("|---|---|---|---|")
    for name, value in result.mean_errors.items():
        label = "no SDC" if name == "original" else f"RWN {name}, q = 0.5"
        print(f"| {label} | {value:.3f} | {sd[name]:.3f} | {PAPER[args.dataset][name]:.3f} |")
    print(f"| constant prediction (commonest class) | {result.baseline_error:.3f} | | |")
    errors = result.mean_errors
    unmasked, constant = float(errors["original"]), float(result.baseline_error)
    masked = errors.drop("original")
    if unmasked >= constant:
        print(
            f"\nThe forest on unmasked data errs {unmasked:.3f}, no better than the constant "
            f"prediction's {constant:.3f}: it has learnt nothing, so this table shows nothing "
            "about masking."
        )
    else:
        print(
            f"\nThe forest on unmasked data beats the constant prediction by "
            f"{constant - unmasked:.3f}; masking changes its error by "
            f"{masked.min() - unmasked:+.3f} to {masked.max() - unmasked:+.3f} (sd over "
            f"replications {sd.min():.3f}-{sd.max():.3f})."
        )


if __name__ == "__main__":
    main()
